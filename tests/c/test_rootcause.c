/*
 * test_rootcause.c - cmocka tests of the root-cause subsystem
 * (csrc/include/earl_rootcause.h) on small hand-built cases whose answers
 * are worked out in the comments: the time chunks of two locations' events,
 * their sums with those of a table, the
 * synchronisation intervals (waits in between, the first point's cut,
 * positive times only), raw chunk sums, the excess of one map over another,
 * the group interval starts of collectives, the critical path's walk, the
 * long-term replay and the same replay in parts; and the errors for inputs
 * out of range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "earl_rootcause.h"
#include "rootcause/rc_internal.h"

/* The entries of query q of map m are exactly (cnode[i], value[i]), i < n. */
static void assert_query(const earl_rc_map *m, size_t q, size_t n, const int64_t *cnode,
                         const double *value)
{
    assert_int_equal(m->offset[q + 1] - m->offset[q], n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(m->cnode[m->offset[q] + (int64_t)i], cnode[i]);
        assert_true(m->value[m->offset[q] + (int64_t)i] == value[i]);
    }
}

/* ---- time chunks --------------------------------------------------------------- */

/* Two locations; events in the total order (stride 9):
 *   e0 loc0 ENTER c1 t0    e1 loc1 ENTER c1 t1    e2 loc0 ENTER c2 t5
 *   e3 loc1 MPI_SEND t6    e4 loc0 LEAVE c2 t9    e5 loc1 LEAVE c1 t10
 *   e6 loc0 LEAVE c1 t12   e7 loc0 ENTER c0 t20 (c0 is a root: no caller)
 * parent: c0 -> -1, c1 -> 0, c2 -> 1.  Chunks: loc0 starts at e0; e2 charges
 * 5 to c1 (the caller) before its point, slot 2*2+0; e4 4 to c2 after, slot
 * 2*4+1; e6 3 to c1, slot 13; e7 has no caller.  loc1 starts at e1, skips the
 * send, e5 charges 9 to c1, slot 2*5+1. */
static const int32_t chunk_location[] = {0, 1, 0, 1, 0, 1, 0, 0};
static const uint8_t chunk_kind[] = {EARL_ENTER, EARL_ENTER, EARL_ENTER, EARL_MPI_SEND,
                                     EARL_LEAVE, EARL_LEAVE, EARL_LEAVE, EARL_ENTER};
static const uint64_t chunk_time[] = {0, 1, 5, 6, 9, 10, 12, 20};
static const int32_t chunk_cnode[] = {1, 1, 2, -1, 2, 1, 1, 0};
static const int32_t chunk_parent[] = {-1, 0, 1};

static uint8_t chunk_role[256];

/* The events above as the chunks are built from them (3 call paths). */
static earl_rc_event_columns chunk_columns(void)
{
    memset(chunk_role, EARL_RC_CHUNK_NONE, sizeof chunk_role);
    chunk_role[EARL_ENTER] = EARL_RC_CHUNK_ENTER;
    chunk_role[EARL_LEAVE] = EARL_RC_CHUNK_LEAVE;
    return (earl_rc_event_columns){.n_locations = 2,
                                   .n_events = 8,
                                   .location = chunk_location,
                                   .kind = chunk_kind,
                                   .time = chunk_time,
                                   .cnode = chunk_cnode,
                                   .n_cnodes = 3,
                                   .parent = chunk_parent,
                                   .role = chunk_role,
                                   .program_cnode = -1};
}

/* The chunks of table t as the sums read them: stride 9, 3 call paths. */
static earl_rc_chunks chunks_of(const earl_rc_event_chunk_table *t)
{
    return (earl_rc_chunks){.stride = 9,
                            .n_cnodes = 3,
                            .events = {t->n_locations, t->offset, t->slot, t->cnode, t->ticks,
                                       t->n_far, t->far_chunk, t->far_ticks, t->end}};
}

/* The chunks of the events above, built into t, as the sums read them. */
static earl_rc_chunks build_event_chunks(earl_rc_event_chunk_table *t)
{
    earl_rc_event_columns in = chunk_columns();
    earl_error err;
    assert_int_equal(earl_rc_event_chunks_build(&in, 1, t, &err), EARL_OK);
    return chunks_of(t);
}

/* Each location's part of the table is sized by its events (location 0 has
 * 5, location 1 has 3): location 0's 3 chunks are entries 0..2, entries 3 and
 * 4 are never written, location 1's chunk is entry 5; the table ends with the
 * last location's chunks.  The same on several threads. */
static void test_chunks_of_two_locations(void **state)
{
    (void)state;
    earl_rc_event_chunk_table t;
    build_event_chunks(&t);
    const uint64_t offset[] = {0, 5, 6}, end[] = {3, 6};
    const size_t entry[] = {0, 1, 2, 5};
    const uint32_t slot[] = {4, 9, 13, 11};
    const int32_t cnode[] = {1, 2, 1, 1};
    const int32_t ticks[] = {5, 4, 3, 9};
    assert_int_equal(t.n_locations, 2);
    assert_int_equal(t.n_far, 0);
    assert_int_equal(t.count, 6);
    for (size_t l = 0; l < 3; l++)
        assert_int_equal(t.offset[l], offset[l]);
    for (size_t l = 0; l < 2; l++)
        assert_int_equal(t.end[l], end[l]);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(t.slot[entry[i]], slot[i]);
        assert_int_equal(t.cnode[entry[i]], cnode[i]);
        assert_int_equal(t.ticks[entry[i]], ticks[i]);
    }
    earl_rc_event_chunk_table_free(&t);
}

/* The chunk sums of queries of both locations, interleaved (they are answered
 * location by location, and come back in query order):
 *   q0 location 1 from its start to e8: c1 9
 *   q1 location 0 from its start to e5: e2 and e4, c1 5 and c2 4
 *   q2 location 1 after e4 (not its event) to e8: c1 9
 *   q3 location 0 after e4 to e7: e4's chunk after its point and e6's, c1 3
 *      and c2 4
 * then location 0 again, back over what was summed:
 *   q4 from its start to e2: e2's chunk counts before e2's point, c1 5
 *   q5 after e2 to e4: neither e2's chunk (before its point) nor e4's (after
 *      its point): nothing
 *   q6 after e3 (not its event) to e5 (neither): e4's chunk, c2 4 */
static void test_chunk_sums_of_interleaved_locations(void **state)
{
    (void)state;
    earl_rc_event_chunk_table t;
    earl_rc_chunks chunks = build_event_chunks(&t);
    const int64_t loc[] = {1, 0, 1, 0, 0, 0, 0}, lo[] = {-1, -1, 4, 4, -1, 2, 3},
                  hi[] = {8, 5, 8, 7, 2, 4, 5};
    const earl_rc_spans spans = {7, loc, lo, hi};
    earl_rc_map m;
    earl_error err;
    assert_int_equal(earl_rc_chunk_sums(&chunks, &spans, &m, &err), EARL_OK);
    assert_query(&m, 0, 1, (const int64_t[]){1}, (const double[]){9});
    assert_query(&m, 1, 2, (const int64_t[]){1, 2}, (const double[]){5, 4});
    assert_query(&m, 2, 1, (const int64_t[]){1}, (const double[]){9});
    assert_query(&m, 3, 2, (const int64_t[]){1, 2}, (const double[]){3, 4});
    assert_query(&m, 4, 1, (const int64_t[]){1}, (const double[]){5});
    assert_query(&m, 5, 0, NULL, NULL);
    assert_query(&m, 6, 1, (const int64_t[]){2}, (const double[]){4});
    earl_rc_map_free(&m);
    /* a chunk's call path beyond the sums' call paths */
    chunks.n_cnodes = 2;
    assert_int_equal(earl_rc_chunk_sums(&chunks, &spans, &m, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "has call path 2"));
    /* a stride below 1 */
    chunks.n_cnodes = 3;
    chunks.stride = 0;
    assert_int_equal(earl_rc_chunk_sums(&chunks, &spans, &m, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "stride 0"));
    earl_rc_event_chunk_table_free(&t);
}

/* The table's chunks add to those of the events: a correction of -2 to c0
 * after e6 (key (0 * 9 + 6) * 2 + 1) and one of location 1 after e3. */
static void test_chunk_sums_add_the_table(void **state)
{
    (void)state;
    earl_rc_event_chunk_table t;
    earl_rc_chunks chunks = build_event_chunks(&t);
    const int64_t key[] = {13, 2 * (9 + 3) + 1}, cnode[] = {0, 2}, ticks[] = {-2, 7};
    chunks.table = (earl_rc_chunk_table){2, key, cnode, ticks};
    const int64_t loc[] = {0, 1}, lo[] = {4, -1}, hi[] = {7, 8};
    const earl_rc_spans spans = {2, loc, lo, hi};
    earl_rc_map m;
    earl_error err;
    assert_int_equal(earl_rc_chunk_sums(&chunks, &spans, &m, &err), EARL_OK);
    assert_query(&m, 0, 3, (const int64_t[]){0, 1, 2}, (const double[]){-2, 3, 4});
    assert_query(&m, 1, 2, (const int64_t[]){1, 2}, (const double[]){9, 7});
    earl_rc_map_free(&m);
    earl_rc_event_chunk_table_free(&t);
}

static void test_chunks_reject_bad_input(void **state)
{
    (void)state;
    earl_rc_event_chunk_table t;
    earl_error err;
    int32_t location[8];
    memcpy(location, chunk_location, sizeof location);
    location[4] = 7; /* no such location */
    earl_rc_event_columns in = chunk_columns();
    in.location = location;
    assert_int_equal(earl_rc_event_chunks_build(&in, 1, &t, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "event 4 has a location out of range"));
    /* a cnode beyond the call tree */
    in = chunk_columns();
    in.n_cnodes = 2;
    assert_int_equal(earl_rc_event_chunks_build(&in, 1, &t, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "event 2 has a call path out of range"));
    /* more events than 32-bit slots tell apart (the columns are not read) */
    in = chunk_columns();
    in.n_events = (size_t)1 << 31;
    assert_int_equal(earl_rc_event_chunks_build(&in, 1, &t, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "2147483648 events"));
    /* chunk offsets out of order */
    const uint64_t offset[] = {0, 5, 4};
    const uint32_t slot[] = {4, 9, 13, 11};
    const int32_t cnode[] = {1, 2, 1, 1};
    const int32_t ticks[] = {5, 4, 3, 9};
    earl_rc_chunks chunks = {.stride = 9, .n_cnodes = 3, .events = {2, offset, slot, cnode, ticks}};
    const int64_t loc[] = {0}, lo[] = {-1}, hi[] = {8};
    const earl_rc_spans spans = {1, loc, lo, hi};
    earl_rc_map m;
    assert_int_equal(earl_rc_chunk_sums(&chunks, &spans, &m, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "offsets of location 1 are not in order"));
    /* a location's end beyond the next location's offset */
    const uint64_t dense[] = {0, 3, 4}, end[] = {4, 4};
    earl_rc_chunks past = {.stride = 9,
                           .n_cnodes = 3,
                           .events = {2, dense, slot, cnode, ticks, 0, NULL, NULL, end}};
    assert_int_equal(earl_rc_chunk_sums(&past, &spans, &m, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "offsets of location 0 are not in order"));
    /* a chunk marked far that the far table does not hold, far chunks out of order */
    const uint64_t good_offset[] = {0, 3, 4}, far_chunk[] = {2, 1};
    const int32_t far_marked[] = {5, EARL_RC_TICKS_FAR, 3, 9};
    const int64_t far_ticks[] = {7, 8};
    earl_rc_chunks missing = {.stride = 9,
                              .n_cnodes = 3,
                              .events = {2, good_offset, slot, cnode, far_marked, 1, far_chunk,
                                         far_ticks}};
    assert_int_equal(earl_rc_chunk_sums(&missing, &spans, &m, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "chunk 1 of location 0 is marked far"));
    earl_rc_chunks unordered = {.stride = 9,
                                .n_cnodes = 3,
                                .events = {2, good_offset, slot, cnode, far_marked, 2, far_chunk,
                                           far_ticks}};
    assert_int_equal(earl_rc_chunk_sums(&unordered, &spans, &m, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "far chunks are not ascending"));
}

/* The whole ticks of entry i of table t (from the far table when marked so). */
static int64_t whole_ticks(const earl_rc_event_chunk_table *t, uint64_t i)
{
    if (t->ticks[i] != EARL_RC_TICKS_FAR)
        return t->ticks[i];
    for (size_t k = 0; k < t->n_far; k++)
        if (t->far_chunk[k] == i)
            return t->far_ticks[k];
    fail_msg("entry %llu is marked far but is not in the far table", (unsigned long long)i);
    return 0;
}

/* Whether two chunk tables are the same: their layouts, and the chunks of
 * every location (the entries between a location's end and the next one's
 * offset are never written). */
static void assert_same_chunks(const earl_rc_event_chunk_table *a,
                               const earl_rc_event_chunk_table *b)
{
    assert_int_equal(a->n_locations, b->n_locations);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->n_far, b->n_far);
    assert_memory_equal(a->offset, b->offset, (a->n_locations + 1) * sizeof *a->offset);
    if (a->n_locations)
        assert_memory_equal(a->end, b->end, a->n_locations * sizeof *a->end);
    if (a->n_far)
        assert_memory_equal(a->far_chunk, b->far_chunk, a->n_far * sizeof *a->far_chunk);
    for (size_t l = 0; l < a->n_locations; l++)
        for (uint64_t i = a->offset[l]; i < a->end[l]; i++) {
            assert_int_equal(a->slot[i], b->slot[i]);
            assert_int_equal(a->cnode[i], b->cnode[i]);
            assert_int_equal(a->ticks[i], b->ticks[i]);
            assert_int_equal(whole_ticks(a, i), whole_ticks(b, i));
        }
}

/* in built on 2, 3 and 8 threads in parts of one event each: the table of
 * one thread, or its error. */
static void check_chunks_in_parts(const earl_rc_event_columns *in)
{
    earl_rc_event_chunk_table one, many;
    earl_error err_one, err_many;
    earl_status st = earl_rc_event_chunks_build(in, 1, &one, &err_one);
    setenv("EARLC_PARALLEL_GRAIN", "1", 1);
    for (int threads = 2; threads <= 8; threads = threads == 2 ? 3 : 8 + (threads == 8)) {
        assert_int_equal(earl_rc_event_chunks_build(in, threads, &many, &err_many), st);
        if (st == EARL_OK) {
            assert_same_chunks(&one, &many);
            earl_rc_event_chunk_table_free(&many);
        } else {
            assert_string_equal(err_one.message, err_many.message);
        }
    }
    unsetenv("EARLC_PARALLEL_GRAIN");
    if (st == EARL_OK)
        earl_rc_event_chunk_table_free(&one);
}

/* The events cut into parts: a location's time runs on from the part before
 * (its first event in a part is a chunk when it started before), and the
 * first problem of the events is the one reported. */
static void test_chunks_in_parts(void **state)
{
    (void)state;
    earl_rc_event_columns in = chunk_columns();
    check_chunks_in_parts(&in);
    /* a cnode beyond the call tree at e2, loc0's second event */
    in.n_cnodes = 2;
    check_chunks_in_parts(&in);
    /* at a location's first event it is not read: no problem */
    int32_t cnode[8];
    memcpy(cnode, chunk_cnode, sizeof cnode);
    cnode[1] = 9;
    in = chunk_columns();
    in.cnode = cnode;
    check_chunks_in_parts(&in);
    /* a location out of range after a cnode out of range at a later event */
    int32_t location[8];
    memcpy(location, chunk_location, sizeof location);
    location[5] = 7;
    cnode[6] = 9;
    in.location = location;
    check_chunks_in_parts(&in);
    /* far chunks, met in several parts */
    const uint64_t big = (uint64_t)1 << 32, half = (uint64_t)1 << 31;
    const uint64_t time[] = {0, half + 100, 5 + big, 6, 5 + big + half, 100, 5 + big + half + 3,
                             5 + big + half + 11};
    in = chunk_columns();
    in.time = time;
    check_chunks_in_parts(&in);
}

/* Chunks longer than 32 bits of ticks (a location idle for seconds at a fine
 * timer, or a damaged clock running backwards) are summed whole, from the far
 * table: location 0's e2 comes 5 + 2^32 ticks after e0, and e4 2^31 after e2;
 * location 1's e5 comes -2^31 after e1 (int64 arithmetic, as everywhere). */
static void test_chunks_longer_than_32_bits(void **state)
{
    (void)state;
    const uint64_t big = (uint64_t)1 << 32, half = (uint64_t)1 << 31;
    const uint64_t time[] = {0, half + 100, 5 + big, 6, 5 + big + half, 100, 5 + big + half + 3,
                             5 + big + half + 11};
    earl_rc_event_chunk_table t;
    earl_error err;
    earl_rc_event_columns in = chunk_columns();
    in.time = time;
    assert_int_equal(earl_rc_event_chunks_build(&in, 1, &t, &err), EARL_OK);
    /* far: entry 0 (e2: 5 + 2^32), entry 1 (e4: 2^31), entry 5 (e5: -2^31,
     * location 1's first, after location 0's part of 5 entries) */
    assert_int_equal(t.n_far, 3);
    assert_int_equal(t.far_chunk[0], 0);
    assert_int_equal(t.far_chunk[1], 1);
    assert_int_equal(t.far_chunk[2], 5);
    assert_int_equal(t.ticks[2], 3);
    earl_rc_chunks chunks = chunks_of(&t);
    const int64_t loc[] = {0, 1}, lo[] = {-1, -1}, hi[] = {8, 8};
    const earl_rc_spans spans = {2, loc, lo, hi};
    earl_rc_map m;
    assert_int_equal(earl_rc_chunk_sums(&chunks, &spans, &m, &err), EARL_OK);
    /* location 0: c1 5 + 2^32 + 3, c2 2^31; location 1: c1 -2^31 */
    assert_int_equal(m.offset[1], 2);
    assert_int_equal(m.cnode[0], 1);
    assert_true(m.value[0] == (double)(5 + big + 3));
    assert_int_equal(m.cnode[1], 2);
    assert_true(m.value[1] == (double)half);
    assert_int_equal(m.offset[2], 3);
    assert_true(m.value[2] == -(double)half);
    earl_rc_map_free(&m);
    earl_rc_event_chunk_table_free(&t);
}

/* ---- intervals ------------------------------------------------------------------ */

/* Location 0, stride 100.  Chunks (key = 2 * event + after):
 *   e11 after c1 10 | e12 before c2 5 | e13 after c2 7 | e15 before c1 4 |
 *   e15 after c3 0  | e20 after c3 6
 * Points: e10 (c1, wait 0, its call's time before completion 3), e14 (c2,
 * wait 2), e16 (c3, wait 0.5), e20 (c3, wait 1). */
static const int64_t iv_chunk_key[] = {23, 24, 27, 30, 31, 41};
static const int64_t iv_chunk_cnode[] = {1, 2, 2, 1, 3, 3};
static const int64_t iv_chunk_ticks[] = {10, 5, 7, 4, 0, 6};
static const int64_t iv_point_key[] = {10, 14, 16, 20};
static const int64_t iv_point_row[] = {100, 101, 102, 103};
static const int64_t iv_point_cnode[] = {1, 2, 3, 3};
static const double iv_point_wait[] = {0, 2, 0.5, 1};
static const double iv_point_cut[] = {3, 0, 0, 0};

/* no event chunks: the table only */
static const earl_rc_chunks iv_chunks = {
    .stride = 100, .n_cnodes = 4, .table = {6, iv_chunk_key, iv_chunk_cnode, iv_chunk_ticks}};
static const earl_rc_points iv_points = {4,           iv_point_key,  iv_point_row,
                                         iv_point_cnode, iv_point_wait, iv_point_cut};

/* The intervals of the three queries below on `threads` threads. */
static void check_interval_times(int threads)
{
    /* q0: e10..e20: c1 10+4 = 14 minus the cut 3 of e10's call = 11; c2 5+7 = 12
     *     minus the wait 2 at e14 = 10; c3 0 - 0.5 at e16 is not positive.  The
     *     waits in between: 2.5 at rows 101, 102 (e20 itself is the end).
     * q1: start..e14: c1 10, c2 12; e10 waits 0: nothing in between.
     * q2: e10..e12 (after e10's point, before e12's): c1 10 - 3 = 7, c2 5. */
    const int64_t loc[] = {0, 0, 0}, prev[] = {10, -1, 10}, at[] = {20, 14, 12};
    const earl_rc_spans spans = {3, loc, prev, at};
    earl_rc_intervals iv;
    earl_error err;
    assert_int_equal(earl_rc_interval_times(&iv_chunks, &iv_points, &spans, threads, &iv, &err),
                     EARL_OK);
    assert_query(&iv.time, 0, 2, (const int64_t[]){1, 2}, (const double[]){11, 10});
    assert_query(&iv.time, 1, 2, (const int64_t[]){1, 2}, (const double[]){10, 12});
    assert_query(&iv.time, 2, 2, (const int64_t[]){1, 2}, (const double[]){7, 5});
    assert_true(iv.wait_sum[0] == 2.5);
    assert_true(iv.wait_sum[1] == 0.0);
    assert_true(iv.wait_sum[2] == 0.0);
    assert_int_equal(iv.between_offset[1], 2);
    assert_int_equal(iv.between_offset[3], 2);
    assert_int_equal(iv.between_row[0], 101);
    assert_int_equal(iv.between_row[1], 102);
    earl_rc_intervals_free(&iv);
}

static void test_interval_times(void **state)
{
    (void)state;
    check_interval_times(1);
}

/* Cut into parts of one query each (one location's queries split between
 * parts, each part with hints of its own), the same intervals in the same
 * order. */
static void test_interval_times_in_parts(void **state)
{
    (void)state;
    setenv("EARLC_PARALLEL_GRAIN", "1", 1);
    check_interval_times(2);
    check_interval_times(3);
    check_interval_times(8);
    unsetenv("EARLC_PARALLEL_GRAIN");
}

static void test_chunk_sums_keep_every_call_path(void **state)
{
    (void)state;
    /* e11..e16: c1 14, c2 12 and c3 with 0 ticks (raw sums keep it) */
    const int64_t loc[] = {0}, lo[] = {11}, hi[] = {16};
    const earl_rc_spans spans = {1, loc, lo, hi};
    earl_rc_map m;
    earl_error err;
    assert_int_equal(earl_rc_chunk_sums(&iv_chunks, &spans, &m, &err), EARL_OK);
    assert_query(&m, 0, 3, (const int64_t[]){1, 2, 3}, (const double[]){14, 12, 0});
    earl_rc_map_free(&m);
    /* a chunk's call path beyond the call tree */
    earl_rc_chunks fewer = iv_chunks;
    fewer.n_cnodes = 3;
    assert_int_equal(earl_rc_chunk_sums(&fewer, &spans, &m, &err), EARL_ERR_INVALID);
    const int64_t bad_loc[] = {-1};
    const earl_rc_spans bad = {1, bad_loc, lo, hi};
    assert_int_equal(earl_rc_chunk_sums(&iv_chunks, &bad, &m, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "query 0 has location -1"));
}

/* ---- excess ------------------------------------------------------------------- */

static void test_excess(void **state)
{
    (void)state;
    /* late q0 {1: 5, 2: 3, 4: 1}, q1 {2: 2}; early q0 {1: 2, 2: 3}; within q0 {1, 2} */
    int64_t l_off[] = {0, 3, 4}, l_cn[] = {1, 2, 4, 2};
    double l_val[] = {5, 3, 1, 2};
    int64_t e_off[] = {0, 2}, e_cn[] = {1, 2};
    double e_val[] = {2, 3};
    int64_t w_off[] = {0, 2}, w_cn[] = {1, 2};
    double w_val[] = {1, 1};
    earl_rc_map late = {2, l_off, l_cn, l_val}, early = {1, e_off, e_cn, e_val},
                within = {1, w_off, w_cn, w_val};
    const int64_t late_q[] = {0, 1, 0}, early_q[] = {0, 0, 0}, within_q[] = {0, 0, 0};
    earl_rc_map out;
    double sum[3];
    earl_error err;
    /* pair 0: {1: 3, 4: 1} (c2 gives 0); pair 1: 2 - 3 < 0: nothing */
    earl_rc_excess_pairs pairs = {2, &late, late_q, &early, early_q, NULL, NULL};
    assert_int_equal(earl_rc_excess(&pairs, &out, sum, &err), EARL_OK);
    assert_query(&out, 0, 2, (const int64_t[]){1, 4}, (const double[]){3, 1});
    assert_query(&out, 1, 0, NULL, NULL);
    assert_true(sum[0] == 4 && sum[1] == 0);
    earl_rc_map_free(&out);
    /* within {1, 2}: only c1 */
    pairs = (earl_rc_excess_pairs){1, &late, late_q, &early, early_q, &within, within_q};
    assert_int_equal(earl_rc_excess(&pairs, &out, sum, &err), EARL_OK);
    assert_query(&out, 0, 1, (const int64_t[]){1}, (const double[]){3});
    assert_true(sum[0] == 3);
    earl_rc_map_free(&out);
    const int64_t bad_q[] = {2};
    pairs = (earl_rc_excess_pairs){1, &late, bad_q, &early, early_q, NULL, NULL};
    assert_int_equal(earl_rc_excess(&pairs, &out, sum, &err), EARL_ERR_INVALID);
}

/* ---- previous points of a pair ------------------------------------------------- */

static void test_previous_points(void **state)
{
    (void)state;
    /* 3 locations (pair multiplier 3), stride 100.  Location 0 met location 1
     * alone at e4 and e9; a group {0, 1} met at e6 (location 0's key 6, location
     * 1's key 106); a group {1, 2} at e7 (keys 107, 207).
     *   (0, 1) before e10: 9;  before e9: the group point 6;  before e4: -1.
     *   (0, 2) before e10: no shared group, no pair: -1.
     *   (1, 2) before e8: the group point 7. */
    const int64_t pair_key[] = {(0 * 3 + 1) * 100 + 4, (0 * 3 + 1) * 100 + 9};
    const int64_t member_offset[] = {0, 2, 4}, member_location[] = {0, 1, 1, 2};
    const int64_t key_offset[] = {0, 2, 4}, group_key[] = {6, 106, 107, 207};
    earl_rc_pair_points pp = {.stride = 100,
                              .n_locations = 3,
                              .n_pairs = 2,
                              .pair_key = pair_key,
                              .n_groups = 2,
                              .member_offset = member_offset,
                              .member_location = member_location,
                              .key_offset = key_offset,
                              .group_key = group_key};
    const int64_t loc[] = {0, 0, 0, 0, 1}, partner[] = {1, 1, 1, 2, 2}, at[] = {10, 9, 4, 10, 8};
    const earl_rc_meeting_queries queries = {5, loc, partner, at};
    int64_t out[5];
    earl_error err;
    assert_int_equal(earl_rc_previous_points(&pp, &queries, out, &err), EARL_OK);
    const int64_t want[] = {9, 6, -1, -1, 7};
    for (size_t q = 0; q < 5; q++)
        assert_int_equal(out[q], want[q]);
    const int64_t far[] = {3};
    const earl_rc_meeting_queries beyond = {1, loc, far, at};
    assert_int_equal(earl_rc_previous_points(&pp, &beyond, out, &err), EARL_ERR_INVALID);
}

/* ---- group interval starts ------------------------------------------------------ */

static void test_group_starts(void **state)
{
    (void)state;
    /* stride 100.  Location 0's points: e5 (a group point of set 0, everybody)
     * and e8 (with location 1 alone); location 1's: e3 (with location 0).
     * Instance 0, delayer 0 at e12: e8 meets 1, then e5 the rest: start 5,
     *   location 1 met at 8.
     * Instance 1, delayer 0 at e7: e5 meets both: start 5.
     * Instance 2, delayer 1 at e20: e3 meets 0, nobody meets 2: start -1. */
    const int64_t point_key[] = {5, 8, 103};
    const int64_t point_set[] = {0, -1, -1};
    /* the pairs in any order; e8 meets location 1 twice (counted once) */
    const int64_t partner_key[] = {103, 8, 8}, partner_location[] = {0, 1, 1};
    const int64_t set_offset[] = {0, 3, 6}, set_location[] = {0, 1, 2, 0, 1, 2};
    earl_rc_meetings m = {.stride = 100,
                          .n_points = 3,
                          .point_key = point_key,
                          .point_set = point_set,
                          .n_partners = 3,
                          .partner_key = partner_key,
                          .partner_location = partner_location,
                          .n_sets = 2,
                          .set_offset = set_offset,
                          .set_location = set_location,
                          .n_locations = 3};
    const int64_t d_loc[] = {0, 0, 1}, d_ev[] = {12, 7, 20}, member_set[] = {1, 1, 1};
    const earl_rc_group_queries instances = {3, d_loc, d_ev, member_set};
    earl_rc_group_starts out;
    earl_error err;
    assert_int_equal(earl_rc_find_group_starts(&m, &instances, &out, &err), EARL_OK);
    assert_int_equal(out.start[0], 5);
    assert_int_equal(out.start[1], 5);
    assert_int_equal(out.start[2], -1);
    assert_int_equal(out.n_met, 2);
    assert_int_equal(out.met_instance[0], 0);
    assert_int_equal(out.met_location[0], 1);
    assert_int_equal(out.met_event[0], 8);
    assert_int_equal(out.met_instance[1], 2);
    assert_int_equal(out.met_location[1], 0);
    assert_int_equal(out.met_event[1], 3);
    earl_rc_group_starts_free(&out);
    const int64_t bad_set[] = {1, 1, 5};
    const earl_rc_group_queries bad = {3, d_loc, d_ev, bad_set};
    assert_int_equal(earl_rc_find_group_starts(&m, &bad, &out, &err), EARL_ERR_INVALID);
    /* a pair of no point */
    const int64_t stray_key[] = {103, 9, 8};
    m.partner_key = stray_key;
    assert_int_equal(earl_rc_find_group_starts(&m, &instances, &out, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "pair 1"));
}

/* ---- critical path --------------------------------------------------------------- */

static void test_critical_walk(void **state)
{
    (void)state;
    /* Events 0..9 alternate between locations 0 and 1 (stride 100); MPI_Init
     * ends at e0 and e1.  Location 0 waits at e6 for e3 of location 1; an
     * OpenMP point at e4 of location 0 is earlier than that wait.  From e8:
     * location 0 back to e6, then location 1 from e3 back to its init e1. */
    const int32_t location[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    const int64_t init_event[] = {0, 1};
    const int64_t wait_key[] = {6}, wait_partner[] = {3};
    const int64_t omp_key[] = {4}, omp_next_offset[] = {0, 1}, omp_next_event[] = {5};
    earl_rc_path_graph g = {100,      10, location, 2, init_event, 0, 1, wait_key, wait_partner,
                            1, omp_key, omp_next_offset, omp_next_event};
    earl_rc_stretches s;
    earl_error err;
    assert_int_equal(earl_rc_critical_walk(&g, 0, 8, &s, &err), EARL_OK);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.location[0], 0);
    assert_int_equal(s.start[0], 6);
    assert_int_equal(s.end[0], 8);
    assert_int_equal(s.location[1], 1);
    assert_int_equal(s.start[1], 1);
    assert_int_equal(s.end[1], 3);
    earl_rc_stretches_free(&s);
    /* from e5 (location 1): back to the OpenMP point e4?  No: e4 is location
     * 0's; location 1 has none before e5 and ends at its init */
    assert_int_equal(earl_rc_critical_walk(&g, 1, 5, &s, &err), EARL_OK);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.start[0], 1);
    earl_rc_stretches_free(&s);
    assert_int_equal(earl_rc_critical_walk(&g, 0, 10, &s, &err), EARL_ERR_INVALID);
    assert_int_equal(earl_rc_critical_walk(&g, 2, -1, &s, &err), EARL_ERR_INVALID);
    /* from the end of location 0 (after e8, up to 99 = stride - 1), without init
     * events and ending at the start: location 0 back to its wait at e6,
     * location 1 from e3 back to its start (-1) */
    const int64_t no_init[] = {-1, -1};
    g.init_event = no_init;
    g.ends_at_start = 1;
    assert_int_equal(earl_rc_critical_walk(&g, 0, -1, &s, &err), EARL_OK);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.location[0], 0);
    assert_int_equal(s.start[0], 6);
    assert_int_equal(s.end[0], 99);
    assert_int_equal(s.location[1], 1);
    assert_int_equal(s.start[1], -1);
    assert_int_equal(s.end[1], 3);
    earl_rc_stretches_free(&s);
    /* without ends_at_start the last stretch is dropped */
    g.ends_at_start = 0;
    assert_int_equal(earl_rc_critical_walk(&g, 0, -1, &s, &err), EARL_OK);
    assert_int_equal(s.count, 1);
    earl_rc_stretches_free(&s);
    /* wait states waiting for each other in a circle (a violated clock
     * condition: location 0 at e4 waits for e7, location 1 at e5 for e6): every
     * event is taken once, and the walk ends */
    const int64_t circle_key[] = {4, 100 + 5}, circle_partner[] = {7, 6};
    earl_rc_path_graph c = {100, 10, location, 2, no_init, 1, 2, circle_key, circle_partner,
                            0, NULL, omp_next_offset, NULL};
    assert_int_equal(earl_rc_critical_walk(&c, 1, -1, &s, &err), EARL_OK);
    /* location 1 from its end to e5; location 0 from e6 to e4; location 1 from e7
     * to e5; location 0's e6 again is not taken twice */
    assert_int_equal(s.count, 3);
    assert_int_equal(s.location[2], 1);
    assert_int_equal(s.start[2], 5);
    assert_int_equal(s.end[2], 7);
    earl_rc_stretches_free(&s);
}

/* ---- long-term replay ----------------------------------------------------------- */

static void test_long_term_replay(void **state)
{
    (void)state;
    /* Two sources: 0 point-to-point, 1 a collective kind.  Points (rows):
     * e10 wait 0 (location 0), e20 wait 4 (location 1), e30 wait 6 (location
     * 0), e25 wait 1 (location 3).
     * Wait states of source 0:
     *   W1 waiting at e30 (row 2): scale 0.5, denominator 12, delays {c7: 12}
     *      on location 1, whose point is e28; it waited at row 1 (e20) in
     *      between;
     *   W3 waiting at e25 (row 3): scale 0, denominator 2, delays {c11: 2} on
     *      location 4, at e22;
     *   W2 waiting at e20 (row 1): scale 1, denominator 8, delays {c9: 8} on
     *      location 2, at e18.
     * A collective of kind 1 ending at e40: delayer location 3 (delays {c5: 5},
     * sum 5), one waiter (e35, waiting 2.5, delays {c5: 5}, sum 5); the delayer
     * waited at row 3 (e25) in between.
     * Latest late point first, a wait state once its waiting point is complete:
     * the collective at e40 (source 1 takes the waits: scale 2.5 / 5 = 0.5,
     * cost 0.5 * 1 at row 3); W1 at e28 (cost 0.5 * 4 = 2 at row 1 for source
     * 0); W3 at e22 (source 1's cost 0.5 / 2 = 0.25 scales its delays: c11 on
     * location 4 gets 0.5); W2 at e18 (source 0's cost 2 / 8 = 0.25: c9 on
     * location 2 gets 2). */
    const int64_t point_event[] = {10, 20, 30, 25}, point_location[] = {0, 1, 0, 3};
    const double point_wait[] = {0, 4, 6, 1};
    const earl_rc_replay_points points = {4, point_event, point_location, point_wait};
    earl_rc_replay *r;
    earl_error err;
    assert_int_equal(earl_rc_replay_new(2, &points, &r, &err), EARL_OK);
    const int64_t w_event[] = {30, 25, 20}, w_row[] = {2, 3, 1}, w_loc[] = {1, 4, 2},
                  w_at[] = {28, 22, 18};
    const double w_scale[] = {0.5, 0, 1}, w_den[] = {12, 2, 8};
    int64_t d_off[] = {0, 1, 2, 3}, d_cn[] = {7, 11, 9};
    double d_val[] = {12, 2, 8};
    earl_rc_map delays = {3, d_off, d_cn, d_val};
    const int64_t b_off[] = {0, 1, 1, 1}, b_row[] = {1};
    earl_rc_waits waits = {0,     3,     w_event, w_row, w_loc, w_at,
                           w_scale, w_den, &delays, b_off, b_row};
    assert_int_equal(earl_rc_replay_add_waits(r, &waits, &err), EARL_OK);
    int64_t m_off[] = {0, 1, 2}, m_cn[] = {5, 5};
    double m_val[] = {5, 5};
    earl_rc_map member_delays = {2, m_off, m_cn, m_val};
    const int64_t kind[] = {1}, dloc[] = {3}, d_at[] = {40}, member_offset[] = {0, 2},
                  cb_off[] = {0, 1}, cb_row[] = {3}, m_event[] = {40, 35}, m_row[] = {-1, -1},
                  m_met[] = {-1, -1}, m_query[] = {0, 1};
    const double m_wait[] = {0, 2.5}, m_sum[] = {5, 5}, m_prop[] = {0, 0};
    earl_rc_collectives c = {1,     kind,   dloc,   d_at,   member_offset, cb_off,  cb_row,
                             2,     m_event, m_row, m_wait, m_sum,         m_prop,  m_met,
                             m_query, &member_delays};
    assert_int_equal(earl_rc_replay_add_collectives(r, &c, &err), EARL_OK);
    earl_rc_severity sev[2];
    assert_int_equal(earl_rc_replay_run(r, sev, &err), EARL_OK);
    assert_int_equal(sev[0].count, 1);
    assert_int_equal(sev[0].location[0], 2);
    assert_int_equal(sev[0].cnode[0], 9);
    assert_true(sev[0].value[0] == 2.0);
    assert_int_equal(sev[1].count, 1);
    assert_int_equal(sev[1].location[0], 4);
    assert_int_equal(sev[1].cnode[0], 11);
    assert_true(sev[1].value[0] == 0.5);
    assert_int_equal(earl_rc_replay_out_of_order(r), 0);
    earl_rc_severity_free(&sev[0]);
    earl_rc_severity_free(&sev[1]);
    /* bad input: a kind beyond the sources, a point row out of range */
    assert_int_equal(earl_rc_replay_set_input(r, 2, 0, EARL_RC_INPUT_COST, &err),
                     EARL_ERR_INVALID);
    const int64_t bad_row[] = {2, 9, 1};
    waits.row = bad_row;
    assert_int_equal(earl_rc_replay_add_waits(r, &waits, &err), EARL_ERR_INVALID);
    earl_rc_replay_free(r);
}

static void test_known_costs_and_inputs(void **state)
{
    (void)state;
    /* One source; the collective kind takes only the arriving cost (no waits):
     * a cost of 3 known at its waiter's point (row 0) scales the waiter's
     * delays {c2: 4} (sum 4, prop 2; query 1 of the map, the delayer's query 0
     * is empty) by 3 / 6 = 0.5 onto the delayer (location 5): 2 ticks on c2. */
    const int64_t point_event[] = {7}, point_location[] = {4};
    const double point_wait[] = {1};
    const earl_rc_replay_points points = {1, point_event, point_location, point_wait};
    earl_rc_replay *r;
    earl_error err;
    assert_int_equal(earl_rc_replay_new(1, &points, &r, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_set_input(r, 0, 0, EARL_RC_INPUT_COST, &err), EARL_OK);
    const int64_t cost_row[] = {0};
    const double cost_value[] = {3};
    const earl_rc_costs costs = {0, 1, cost_row, cost_value};
    assert_int_equal(earl_rc_replay_add_costs(r, &costs, &err), EARL_OK);
    int64_t m_off[] = {0, 0, 1}, m_cn[] = {2};
    double m_val[] = {4};
    earl_rc_map member_delays = {2, m_off, m_cn, m_val};
    const int64_t kind[] = {0}, dloc[] = {5}, d_at[] = {9}, member_offset[] = {0, 2},
                  cb_off[] = {0, 0}, m_event[] = {9, 7}, m_row[] = {-1, 0}, m_met[] = {-1, -1},
                  m_query[] = {0, 1};
    const double m_wait[] = {0, 100}, m_sum[] = {0, 4}, m_prop[] = {0, 2};
    earl_rc_collectives c = {1,     kind,    dloc,  d_at,   member_offset, cb_off, NULL,
                             2,     m_event, m_row, m_wait, m_sum,         m_prop, m_met,
                             m_query, &member_delays};
    assert_int_equal(earl_rc_replay_add_collectives(r, &c, &err), EARL_OK);
    earl_rc_severity sev[1];
    assert_int_equal(earl_rc_replay_run(r, sev, &err), EARL_OK);
    assert_int_equal(sev[0].count, 1);
    assert_int_equal(sev[0].location[0], 5);
    assert_int_equal(sev[0].cnode[0], 2);
    assert_true(sev[0].value[0] == 2.0);
    earl_rc_severity_free(&sev[0]);
    earl_rc_replay_free(r);
}

static void test_collective_batches_added_one_by_one(void **state)
{
    (void)state;
    /* Three batches of one collective each, as the analysis adds them: each
     * batch keeps its own copy of the map it was given (the caller's struct
     * is reused), also after later batches moved the earlier ones in memory.
     * Batch k: a cost of 3 known at its waiter's point (row k) scales the
     * waiter's delays {c(2 + k): 4} (sum 4, prop 2) by 3 / 6 = 0.5 onto the
     * delayer (location 5 + k): 2 ticks on c(2 + k). */
    enum { BATCHES = 3 };
    const int64_t point_event[BATCHES] = {7, 17, 27}, point_location[BATCHES] = {0, 0, 0};
    const double point_wait[BATCHES] = {1, 1, 1};
    const earl_rc_replay_points points = {BATCHES, point_event, point_location, point_wait};
    earl_rc_replay *r;
    earl_error err;
    assert_int_equal(earl_rc_replay_new(1, &points, &r, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_set_input(r, 0, 0, EARL_RC_INPUT_COST, &err), EARL_OK);
    const int64_t cost_row[BATCHES] = {0, 1, 2};
    const double cost_value[BATCHES] = {3, 3, 3};
    const earl_rc_costs costs = {0, BATCHES, cost_row, cost_value};
    assert_int_equal(earl_rc_replay_add_costs(r, &costs, &err), EARL_OK);
    int64_t m_off[] = {0, 0, 1};
    int64_t m_cn[BATCHES][1] = {{2}, {3}, {4}};
    double m_val[] = {4};
    const int64_t kind[] = {0}, member_offset[] = {0, 2}, cb_off[] = {0, 0}, m_met[] = {-1, -1},
                  m_query[] = {0, 1};
    int64_t dloc[BATCHES][1] = {{5}, {6}, {7}}, d_at[BATCHES][1] = {{9}, {19}, {29}};
    int64_t m_event[BATCHES][2] = {{9, 7}, {19, 17}, {29, 27}};
    int64_t m_row[BATCHES][2] = {{-1, 0}, {-1, 1}, {-1, 2}};
    const double m_wait[] = {0, 100}, m_sum[] = {0, 4}, m_prop[] = {0, 2};
    earl_rc_map member_delays;
    for (int k = 0; k < BATCHES; k++) {
        member_delays = (earl_rc_map){2, m_off, m_cn[k], m_val};
        earl_rc_collectives c = {1,         kind,     dloc[k], d_at[k], member_offset,
                                 cb_off,    NULL,     2,       m_event[k], m_row[k],
                                 m_wait,    m_sum,    m_prop,  m_met,   m_query,
                                 &member_delays};
        assert_int_equal(earl_rc_replay_add_collectives(r, &c, &err), EARL_OK);
    }
    member_delays = (earl_rc_map){0};
    earl_rc_severity sev[1];
    assert_int_equal(earl_rc_replay_run(r, sev, &err), EARL_OK);
    assert_int_equal(sev[0].count, BATCHES);
    int seen = 0;
    for (size_t i = 0; i < sev[0].count; i++) {
        assert_int_equal(sev[0].cnode[i], sev[0].location[i] - 3);
        assert_true(sev[0].value[i] == 2.0);
        seen |= 1 << (sev[0].location[i] - 5);
    }
    assert_int_equal(seen, 7);
    earl_rc_severity_free(&sev[0]);
    earl_rc_replay_free(r);
}

static void test_wait_batches_added_one_by_one(void **state)
{
    (void)state;
    /* As the collectives: three batches of one wait state each, added with one
     * earl_rc_waits and one map struct the caller reuses.  Batch k: a cost of 1
     * known at its waiting point (row k) over the denominator 2 scales its
     * delays {c(2 + k): 4} by 0.5 onto the delaying location 5 + k: 2 ticks. */
    enum { BATCHES = 3 };
    const int64_t point_event[BATCHES] = {10, 20, 30}, point_location[BATCHES] = {0, 0, 0};
    const double point_wait[BATCHES] = {1, 1, 1};
    const earl_rc_replay_points points = {BATCHES, point_event, point_location, point_wait};
    earl_rc_replay *r;
    earl_error err;
    assert_int_equal(earl_rc_replay_new(1, &points, &r, &err), EARL_OK);
    const int64_t cost_row[BATCHES] = {0, 1, 2};
    const double cost_value[BATCHES] = {1, 1, 1};
    const earl_rc_costs costs = {0, BATCHES, cost_row, cost_value};
    assert_int_equal(earl_rc_replay_add_costs(r, &costs, &err), EARL_OK);
    int64_t d_off[] = {0, 1};
    int64_t d_cn[BATCHES][1] = {{2}, {3}, {4}};
    double d_val[] = {4};
    int64_t w_row[BATCHES][1] = {{0}, {1}, {2}}, w_loc[BATCHES][1] = {{5}, {6}, {7}};
    const int64_t w_at[] = {5};
    const double w_scale[] = {0}, w_den[] = {2};
    const int64_t b_off[] = {0, 0};
    earl_rc_map delays;
    earl_rc_waits waits;
    for (int k = 0; k < BATCHES; k++) {
        delays = (earl_rc_map){1, d_off, d_cn[k], d_val};
        waits = (earl_rc_waits){0,     1,     &point_event[k], w_row[k], w_loc[k], w_at,
                                w_scale, w_den, &delays,         b_off,    NULL};
        assert_int_equal(earl_rc_replay_add_waits(r, &waits, &err), EARL_OK);
    }
    delays = (earl_rc_map){0};
    earl_rc_severity sev[1];
    assert_int_equal(earl_rc_replay_run(r, sev, &err), EARL_OK);
    assert_int_equal(sev[0].count, BATCHES);
    int seen = 0;
    for (size_t i = 0; i < sev[0].count; i++) {
        assert_int_equal(sev[0].cnode[i], sev[0].location[i] - 3);
        assert_true(sev[0].value[i] == 2.0);
        seen |= 1 << (sev[0].location[i] - 5);
    }
    assert_int_equal(seen, 7);
    earl_rc_severity_free(&sev[0]);
    /* a delays map of another length than the batch */
    delays = (earl_rc_map){1, d_off, d_cn[0], d_val};
    waits.count = 0;
    assert_int_equal(earl_rc_replay_add_waits(r, &waits, &err), EARL_ERR_INVALID);
    earl_rc_replay_free(r);
}

/* ---- the order of the long-term replay ------------------------------------------- */

/* Three locations.  W1: a Late Receiver whose waiting point (the send's
 * completion, location 0, e10, row 0, waiting 5) comes before its late side's
 * point (location 1's receive request, e30): source 1, scale 1, denominator
 * 10, delays {c1: 10}; location 1 waited at e20 (row 2, waiting 4) in
 * between.  W2: a Late Sender waiting at that point e20 for location 2's send
 * at e15: source 0, scale 0.5, denominator 8, delays {c2: 8}.
 * Location 1 walks back from e30 first: W1 puts 1 * 4 of source 1 on row 2;
 * then W2 reads it there: 4 / 8 = 0.5 of its delays, 4 ticks of source 1 on
 * c2 of location 2.  (Taken by waiting event, latest first, W2 at e20 would
 * go before W1 at e10 and read nothing.) */
static void test_replay_takes_a_wait_state_at_its_late_point(void **state)
{
    (void)state;
    const int64_t point_event[] = {10, 30, 20, 15}, point_location[] = {0, 1, 1, 2};
    const double point_wait[] = {5, 0, 4, 0};
    const earl_rc_replay_points points = {4, point_event, point_location, point_wait};
    earl_rc_replay *r;
    earl_error err;
    assert_int_equal(earl_rc_replay_new(2, &points, &r, &err), EARL_OK);
    int64_t d_off[] = {0, 1}, lr_cn[] = {1}, ls_cn[] = {2};
    double lr_val[] = {10}, ls_val[] = {8};
    earl_rc_map ls_delays = {1, d_off, ls_cn, ls_val}, lr_delays = {1, d_off, lr_cn, lr_val};
    const int64_t ls_event[] = {20}, ls_row[] = {2}, ls_loc[] = {2}, ls_at[] = {15},
                  ls_between[] = {0, 0};
    const double ls_scale[] = {0.5}, ls_den[] = {8};
    const earl_rc_waits ls = {0,        1,      ls_event,   ls_row, ls_loc, ls_at,
                              ls_scale, ls_den, &ls_delays, ls_between, NULL};
    const int64_t lr_event[] = {10}, lr_row[] = {0}, lr_loc[] = {1}, lr_at[] = {30},
                  lr_between[] = {0, 1}, lr_rows[] = {2};
    const double lr_scale[] = {1}, lr_den[] = {10};
    const earl_rc_waits lr = {1,        1,      lr_event,   lr_row,     lr_loc, lr_at,
                              lr_scale, lr_den, &lr_delays, lr_between, lr_rows};
    assert_int_equal(earl_rc_replay_add_waits(r, &ls, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_add_waits(r, &lr, &err), EARL_OK);
    earl_rc_severity sev[2];
    assert_int_equal(earl_rc_replay_run(r, sev, &err), EARL_OK);
    assert_int_equal(sev[0].count, 0);
    assert_int_equal(sev[1].count, 1);
    assert_int_equal(sev[1].location[0], 2);
    assert_int_equal(sev[1].cnode[0], 2);
    assert_true(sev[1].value[0] == 4.0);
    assert_int_equal(earl_rc_replay_out_of_order(r), 0);
    earl_rc_severity_free(&sev[0]);
    earl_rc_severity_free(&sev[1]);
    earl_rc_replay_free(r);
}

/* rc_replay_order on its own: the queues, the waits for another location,
 * the choice among ready heads, and a cycle. */
static void test_replay_order(void **state)
{
    (void)state;
    size_t order[4], late;
    /* location 0: items 0 (e40) and 1 (e12, reads location 1 at e20); location
     * 1: item 2 (e30) and item 3 (e10, reads location 0 at e35): 0 (e40, the
     * latest), then 3 may not go before 0 has (location 0's head e40 > e35) and
     * 1 not before 2 (location 1's head e30 > e20): 0, 2, 1, 3 (1 at e12
     * before 3 at e10) */
    const rc_order_read reads[] = {{1, 20}, {0, 35}};
    rc_order_item items[] = {{0, 40, 0, 0, 0}, {0, 12, 0, 0, 1}, {1, 30, 0, 0, 0},
                             {1, 10, 0, 1, 1}};
    assert_int_equal(rc_replay_order(4, items, reads, 2, order, &late), 0);
    const size_t want[] = {0, 2, 1, 3};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(order[i], want[i]);
    assert_int_equal(late, 0);
    /* at one event a collective first, else in the order given */
    rc_order_item tied[] = {{0, 5, 0, 0, 0}, {1, 5, 1, 0, 0}, {0, 5, 0, 0, 0}};
    assert_int_equal(rc_replay_order(3, tied, reads, 2, order, &late), 0);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 0);
    assert_int_equal(order[2], 2);
    /* a cycle: location 0's e40 reads location 1 at e20 (its head is e30), and
     * location 1's e30 reads location 0 at e35: the latest goes anyway */
    const rc_order_read cycle_reads[] = {{1, 20}, {0, 35}};
    rc_order_item cycle[] = {{0, 40, 0, 0, 1}, {1, 30, 0, 1, 1}};
    assert_int_equal(rc_replay_order(2, cycle, cycle_reads, 2, order, &late), 0);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 1);
    assert_int_equal(late, 1);
}

/* ---- the long-term replay in parts ------------------------------------------ */

/* The inputs of test_long_term_replay, for the wait states `which` selects
 * (bit 0: W1, bit 1: W3, bit 2: W2, bit 3: the collective), added to r; the
 * replay borrows the arrays of `in` (one per replay). */
static const int64_t lt_point_event[] = {10, 20, 30, 25}, lt_point_location[] = {0, 1, 0, 3};
static const double lt_point_wait[] = {0, 4, 6, 1};

typedef struct lt_inputs {
    int64_t ev[3], row[3], loc[3], at[3], d_off[4], d_cn[3], b_off[4], b_row[1];
    double scale[3], den[3], d_val[3];
    earl_rc_map delays;
} lt_inputs;

static void add_long_term_inputs(earl_rc_replay *r, unsigned which, lt_inputs *in)
{
    static const int64_t w_event[] = {30, 25, 20}, w_row[] = {2, 3, 1}, w_loc[] = {1, 4, 2},
                         w_at[] = {28, 22, 18};
    static const double w_scale[] = {0.5, 0, 1}, w_den[] = {12, 2, 8};
    static const int64_t d_cn[] = {7, 11, 9};
    static const double d_val[] = {12, 2, 8};
    size_t n = 0, nb = 0;
    earl_error err;
    in->d_off[0] = in->b_off[0] = 0;
    for (size_t i = 0; i < 3; i++) {
        if (!(which & (1u << i)))
            continue;
        in->ev[n] = w_event[i], in->row[n] = w_row[i], in->loc[n] = w_loc[i];
        in->at[n] = w_at[i], in->scale[n] = w_scale[i], in->den[n] = w_den[i];
        in->d_cn[n] = d_cn[i], in->d_val[n] = d_val[i];
        in->d_off[n + 1] = (int64_t)n + 1;
        if (i == 0) /* W1 waited at row 1 in between */
            in->b_row[nb++] = 1;
        in->b_off[n + 1] = (int64_t)nb;
        n++;
    }
    in->delays = (earl_rc_map){n, in->d_off, in->d_cn, in->d_val};
    earl_rc_waits waits = {0,         n,        in->ev,     in->row,   in->loc,  in->at,
                           in->scale, in->den, &in->delays, in->b_off, in->b_row};
    if (n)
        assert_int_equal(earl_rc_replay_add_waits(r, &waits, &err), EARL_OK);
    if (which & 8u) {
        static int64_t m_off[] = {0, 1, 2}, m_cn[] = {5, 5};
        static double m_val[] = {5, 5};
        static earl_rc_map member_delays = {2, m_off, m_cn, m_val};
        static const int64_t kind[] = {1}, dloc[] = {3}, d_at[] = {40}, member_offset[] = {0, 2},
                             cb_off[] = {0, 1}, cb_row[] = {3}, m_event[] = {40, 35},
                             m_row[] = {-1, -1}, m_met[] = {-1, -1}, m_query[] = {0, 1};
        static const double m_wait[] = {0, 2.5}, m_sum[] = {5, 5}, m_prop[] = {0, 0};
        earl_rc_collectives c = {1,      kind,    dloc,    d_at,  member_offset, cb_off,
                                 cb_row, 2,       m_event, m_row, m_wait,        m_sum,
                                 m_prop, m_met,   m_query, &member_delays};
        assert_int_equal(earl_rc_replay_add_collectives(r, &c, &err), EARL_OK);
    }
}

/* The wait states of test_long_term_replay in two parts: part A holds
 * locations 1 and 2 (W1, W2), part B locations 0, 3 and 4 (W3, the
 * collective).  W1 reads row 2 (location 0): B sends its cost (complete from
 * the start: nobody adds to it); W2 reads row 1, which W1 adds to; W3 reads
 * row 3, which the collective adds to.  The severities are those of the
 * replay on one process, each part holding its own locations'. */
static void test_replay_in_parts(void **state)
{
    (void)state;
    const earl_rc_replay_points points = {4, lt_point_event, lt_point_location, lt_point_wait};
    earl_rc_replay *a, *b;
    earl_error err;
    assert_int_equal(earl_rc_replay_new(2, &points, &a, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_new(2, &points, &b, &err), EARL_OK);
    lt_inputs in_a, in_b;
    add_long_term_inputs(a, 1u | 4u, &in_a);
    const uint8_t held_a[] = {0, 1, 1, 0, 0}, held_b[] = {1, 0, 0, 1, 1};
    const int64_t watch_b[] = {2};
    assert_int_equal(earl_rc_replay_start(a, held_a, 5, NULL, 0, &err), EARL_OK);
    /* batches come before the start, costs of the part's own points from itself */
    assert_int_equal(earl_rc_replay_add_waits(a, &(earl_rc_waits){0}, &err), EARL_ERR_INVALID);
    assert_int_equal(earl_rc_replay_start(a, held_a, 5, NULL, 0, &err), EARL_ERR_INVALID);
    size_t taken;
    assert_int_equal(earl_rc_replay_advance(a, &taken, &err), EARL_OK);
    assert_int_equal(taken, 0); /* W1 waits for row 2, W2 for W1 */
    assert_int_equal(earl_rc_replay_remaining(a), 2);
    earl_rc_severity sev[2];
    assert_int_equal(earl_rc_replay_finish(a, sev, &err), EARL_ERR_INVALID);
    add_long_term_inputs(b, 2u | 8u, &in_b);
    assert_int_equal(earl_rc_replay_start(b, held_b, 5, watch_b, 1, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_advance(b, &taken, &err), EARL_OK);
    assert_int_equal(taken, 2);
    earl_rc_completed done;
    assert_int_equal(earl_rc_replay_completed(b, &done, &err), EARL_OK);
    assert_int_equal(done.count, 1);
    assert_int_equal(done.watch[0], 0);
    assert_true(done.cost[0] == 0.0 && done.cost[1] == 0.0);
    /* a cost of a part's own point, or one received twice, is refused */
    const int64_t own_row[] = {1};
    assert_int_equal(earl_rc_replay_receive(a, 1, own_row, done.cost, &err), EARL_ERR_INVALID);
    const int64_t row2[] = {2};
    assert_int_equal(earl_rc_replay_receive(a, 1, row2, done.cost, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_receive(a, 1, row2, done.cost, &err), EARL_ERR_INVALID);
    earl_rc_completed_free(&done);
    assert_int_equal(earl_rc_replay_advance(a, &taken, &err), EARL_OK);
    assert_int_equal(taken, 2);
    assert_int_equal(earl_rc_replay_remaining(a), 0);
    /* part A: W2 on location 2 (source 0: 2 on c9); part B: W3 on location 4
     * (source 1: 0.5 on c11) */
    assert_int_equal(earl_rc_replay_finish(a, sev, &err), EARL_OK);
    assert_int_equal(sev[0].count, 1);
    assert_int_equal(sev[0].location[0], 2);
    assert_int_equal(sev[0].cnode[0], 9);
    assert_true(sev[0].value[0] == 2.0);
    assert_int_equal(sev[1].count, 0);
    earl_rc_severity_free(&sev[0]);
    earl_rc_severity_free(&sev[1]);
    assert_int_equal(earl_rc_replay_finish(b, sev, &err), EARL_OK);
    assert_int_equal(sev[0].count, 0);
    assert_int_equal(sev[1].count, 1);
    assert_int_equal(sev[1].location[0], 4);
    assert_int_equal(sev[1].cnode[0], 11);
    assert_true(sev[1].value[0] == 0.5);
    earl_rc_severity_free(&sev[0]);
    earl_rc_severity_free(&sev[1]);
    earl_rc_replay_free(a);
    earl_rc_replay_free(b);
}

/* One part holding every location gives the replay on one process, to the
 * bit, and a wait state of a location it does not hold is refused. */
static void test_replay_in_one_part(void **state)
{
    (void)state;
    const earl_rc_replay_points points = {4, lt_point_event, lt_point_location, lt_point_wait};
    earl_rc_replay *one, *whole;
    earl_error err;
    assert_int_equal(earl_rc_replay_new(2, &points, &one, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_new(2, &points, &whole, &err), EARL_OK);
    lt_inputs in_one, in_whole;
    add_long_term_inputs(one, 15u, &in_one);
    add_long_term_inputs(whole, 15u, &in_whole);
    const uint8_t all[] = {1, 1, 1, 1, 1}, some[] = {1, 1, 0, 1, 1};
    assert_int_equal(earl_rc_replay_start(one, some, 5, NULL, 0, &err), EARL_ERR_INVALID);
    assert_int_equal(earl_rc_replay_start(one, all, 5, NULL, 0, &err), EARL_OK);
    size_t taken;
    assert_int_equal(earl_rc_replay_advance(one, &taken, &err), EARL_OK);
    assert_int_equal(taken, 4);
    earl_rc_severity got[2], want[2];
    assert_int_equal(earl_rc_replay_finish(one, got, &err), EARL_OK);
    assert_int_equal(earl_rc_replay_run(whole, want, &err), EARL_OK);
    for (int s = 0; s < 2; s++) {
        assert_int_equal(got[s].count, want[s].count);
        for (size_t i = 0; i < got[s].count; i++) {
            assert_int_equal(got[s].location[i], want[s].location[i]);
            assert_int_equal(got[s].cnode[i], want[s].cnode[i]);
            assert_memory_equal(&got[s].value[i], &want[s].value[i], sizeof(double));
        }
        earl_rc_severity_free(&got[s]);
        earl_rc_severity_free(&want[s]);
    }
    earl_rc_replay_free(one);
    earl_rc_replay_free(whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunks_of_two_locations),
        cmocka_unit_test(test_chunk_sums_of_interleaved_locations),
        cmocka_unit_test(test_chunk_sums_add_the_table),
        cmocka_unit_test(test_chunks_reject_bad_input),
        cmocka_unit_test(test_chunks_longer_than_32_bits),
        cmocka_unit_test(test_chunks_in_parts),
        cmocka_unit_test(test_interval_times),
        cmocka_unit_test(test_interval_times_in_parts),
        cmocka_unit_test(test_chunk_sums_keep_every_call_path),
        cmocka_unit_test(test_excess),
        cmocka_unit_test(test_previous_points),
        cmocka_unit_test(test_group_starts),
        cmocka_unit_test(test_critical_walk),
        cmocka_unit_test(test_long_term_replay),
        cmocka_unit_test(test_known_costs_and_inputs),
        cmocka_unit_test(test_collective_batches_added_one_by_one),
        cmocka_unit_test(test_wait_batches_added_one_by_one),
        cmocka_unit_test(test_replay_takes_a_wait_state_at_its_late_point),
        cmocka_unit_test(test_replay_order),
        cmocka_unit_test(test_replay_in_parts),
        cmocka_unit_test(test_replay_in_one_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
