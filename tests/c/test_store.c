/*
 * test_store.c - cmocka tests of the columnar store and the total order:
 * the generic column sets (growing keeps rows), the warning list, the k-way merge of location
 * buffers (ties, back pointers, request partners, side-table rebasing) and,
 * on the reference traces when present, thread-count independence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "base/colset.h"
#include "base/grow.h"

/* ---- column sets ------------------------------------------------------------------ */

static void test_colset_reserve_keeps_rows(void **state)
{
    (void)state;
    earl_msg_table a = {0};
    earl_colset sa;
    msg_table_columns(&a, 0, &sa);
    assert_int_equal(sa.n, 8); /* without requested_source and requested_tag */
    msg_table_columns(&a, 1, &sa);
    assert_int_equal(sa.n, 10); /* with them */
    size_t cap = 0;
    assert_int_equal(earl_colset_reserve(&sa, &cap, 3), 0);
    assert_true(cap >= 3);
    for (int i = 0; i < 3; i++) {
        a.event[i] = i;
        a.tag[i] = (uint32_t)(10 + i);
        a.bytes[i] = (uint64_t)(100 * i);
    }
    /* growing past the large-block size moves every column, rows intact */
    assert_int_equal(earl_colset_reserve(&sa, &cap, 1 << 20), 0);
    assert_true(cap >= 1 << 20);
    assert_int_equal(a.tag[2], 12);
    assert_int_equal(a.bytes[2], 200);
    assert_int_equal(a.event[1], 1);
    a.partner[(1 << 20) - 1] = 5; /* the whole capacity is writable */
    earl_colset_free(&sa);
    assert_null(a.event);
}

/* A first reservation is exact, so known counts cost no slack. */
static void test_grow_exact_first(void **state)
{
    (void)state;
    uint64_t *v = NULL;
    size_t cap = 0;
    assert_int_equal(EARL_GROW(v, cap, 1000), 0);
    assert_int_equal(cap, 1000);
    assert_int_equal(EARL_GROW(v, cap, 1001), 0);
    assert_true(cap > 1001);
    free(v);
}

/* ---- warnings ------------------------------------------------------------------------ */

static void test_warnings_counted_details_capped(void **state)
{
    (void)state;
    warning_list w = {0};
    for (int i = 0; i < EARL_WARNING_DETAIL_MAX + 50; i++)
        warning_add(&w, EARL_WARN_TIME_BACKWARDS, 3, (uint64_t)i, "step %d", i);
    warning_add(&w, EARL_WARN_LEAVE_WITHOUT_ENTER, 1, 9, "x");
    assert_int_equal(w.counts[EARL_WARN_TIME_BACKWARDS], EARL_WARNING_DETAIL_MAX + 50);
    assert_int_equal(w.counts[EARL_WARN_LEAVE_WITHOUT_ENTER], 1);
    assert_int_equal(w.n, EARL_WARNING_DETAIL_MAX + 1);
    assert_string_equal(w.items[5].detail, "step 5");
    assert_int_equal(w.items[5].location, 3);
    assert_int_equal(w.items[EARL_WARNING_DETAIL_MAX].code, EARL_WARN_LEAVE_WITHOUT_ENTER);
    warning_list_free(&w);
}

/* ---- the total order ------------------------------------------------------------------ */

/* Append an event to a hand-made location buffer. */
static void put(loc_events *b, earl_time t, earl_kind kind, uint32_t region)
{
    earl_colset s = {3, {{(void **)&b->time, sizeof *b->time}, {(void **)&b->kind, 1},
                         {(void **)&b->payload, sizeof *b->payload}}};
    assert_int_equal(earl_colset_reserve(&s, &b->cap, b->n + 1), 0);
    b->time[b->n] = t;
    b->kind[b->n] = (uint8_t)kind;
    b->payload[b->n] = region;
    b->n++;
}

/* Give the last event a message row; partner is a position on the
 * location, as the reader stores it, or EARL_EID32_NONE. */
static void put_msg(loc_events *b, uint32_t tag, earl_eid32 partner)
{
    earl_colset s;
    msg_table_columns(&b->tables.msg, b->tables.msg_requested, &s);
    size_t r = b->tables.msg.count;
    assert_int_equal(earl_colset_reserve(&s, &b->tables.cap[EARL_FAMILY_MSG], r + 1), 0);
    b->tables.msg.event[r] = (earl_eid)(b->n - 1);
    b->tables.msg.tag[r] = tag;
    b->tables.msg.partner[r] = partner;
    b->tables.msg.count++;
    b->payload[b->n - 1] = (uint32_t)r;
}

static void test_order_ties_and_back_pointers(void **state)
{
    (void)state;
    loc_events bufs[3];
    memset(bufs, 0, sizeof bufs);
    for (int l = 0; l < 3; l++)
        bufs[l].loc = l;
    /* location 0: 10 ENTER, 20 ISEND(tag 5), 20 LEAVE */
    put(&bufs[0], 10, EARL_ENTER, 1);
    put(&bufs[0], 20, EARL_MPI_ISEND, EARL_UNDEFINED_REF);
    put_msg(&bufs[0], 5, EARL_EID32_NONE);
    put(&bufs[0], 20, EARL_LEAVE, 1);
    /* location 1: 5 ENTER, 20 IRECV_REQUEST, 30 IRECV (pairs with position 1) */
    put(&bufs[1], 5, EARL_ENTER, 2);
    put(&bufs[1], 20, EARL_MPI_IRECV_REQUEST, EARL_UNDEFINED_REF);
    put_msg(&bufs[1], 0, 2);
    put(&bufs[1], 30, EARL_MPI_IRECV, EARL_UNDEFINED_REF);
    put_msg(&bufs[1], 5, 1);
    /* location 2: empty */

    earl_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.anchor = (char *)"test";
    earl_error err;
    assert_int_equal(order_events(&tr, bufs, 3, 1, &err), EARL_OK);
    assert_int_equal(tr.view.count, 6);
    /* expected order: (5,l1,0) (10,l0,0) (20,l0,1) (20,l0,2) (20,l1,1) (30,l1,2) */
    const earl_loc want_loc[] = {1, 0, 0, 0, 1, 1};
    const earl_time want_time[] = {5, 10, 20, 20, 20, 30};
    const uint8_t want_kind[] = {EARL_ENTER, EARL_ENTER, EARL_MPI_ISEND, EARL_LEAVE,
                                 EARL_MPI_IRECV_REQUEST, EARL_MPI_IRECV};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(tr.location[i], want_loc[i]);
        assert_int_equal(tr.time[i], want_time[i]);
        assert_int_equal(tr.kind[i], want_kind[i]);
    }
    /* each location's own sequence */
    assert_int_equal(tr.loc_start[0], 0);
    assert_int_equal(tr.loc_start[1], 3);
    assert_int_equal(tr.loc_start[2], 6);
    assert_int_equal(tr.loc_start[3], 6);
    const earl_eid want_seq[] = {1, 2, 3, 0, 4, 5};
    for (int i = 0; i < 6; i++)
        assert_int_equal(tr.loc_events[i], want_seq[i]);
    /* one payload column: ENTER/LEAVE keep their region, the others get their
     * side table rows, rebased by location; events point back, partners are global */
    assert_int_equal(tr.tables.msg.count, 3);
    const uint32_t want_payload[] = {2, 1, 0, 1, 1, 2};
    for (int i = 0; i < 6; i++)
        assert_int_equal(tr.payload[i], want_payload[i]);
    assert_int_equal(tr.tables.msg.event[0], 2);
    assert_int_equal(tr.tables.msg.event[1], 4);
    assert_int_equal(tr.tables.msg.event[2], 5);
    assert_int_equal(tr.tables.msg.partner[0], EARL_EID32_NONE);
    assert_int_equal(tr.tables.msg.partner[1], 5);
    assert_int_equal(tr.tables.msg.partner[2], 4);
    assert_int_equal(earl_msg_partner(&tr.tables.msg, 0), EARL_NONE);
    assert_int_equal(earl_msg_partner(&tr.tables.msg, 1), 5);
    assert_int_equal(earl_msg_partner(&tr.tables.msg, 2), 4);
    assert_int_equal(tr.tables.msg.tag[2], 5);
    /* definitions without the requested-source/tag attributes: no such columns,
     * every row reads as unknown */
    assert_null(tr.tables.msg.requested_source);
    assert_null(tr.tables.msg.requested_tag);
    assert_int_equal(earl_msg_requested_source(&tr.tables.msg, 1), EARL_REQUESTED_UNKNOWN);
    assert_int_equal(earl_msg_requested_tag(&tr.tables.msg, 2), EARL_REQUESTED_UNKNOWN);

    for (int l = 0; l < 3; l++)
        loc_events_free(&bufs[l]);
    tr.anchor = NULL;
    trace_store_free(&tr);
}

/* loc_events holds 32-bit event ids: a trace with more events than they
 * can number is refused before anything is allocated. */
static void test_order_refuses_more_events_than_32_bits_number(void **state)
{
    (void)state;
    loc_events bufs[2];
    memset(bufs, 0, sizeof bufs);
    bufs[0].n = EARL_MAX_EVENTS / 2 + 1; /* counts only: nothing is read */
    bufs[1].n = EARL_MAX_EVENTS / 2 + 1;
    earl_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.anchor = (char *)"big.otf2";
    earl_error err;
    assert_int_equal(order_events(&tr, bufs, 2, 1, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "big.otf2: the trace has 4294967296 events"));
    assert_null(tr.time);
    assert_null(tr.loc_events);
    tr.anchor = NULL;
    trace_store_free(&tr);
}

static void test_order_empty(void **state)
{
    (void)state;
    loc_events buf;
    memset(&buf, 0, sizeof buf);
    earl_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.anchor = (char *)"test";
    assert_int_equal(order_events(&tr, &buf, 1, 1, NULL), EARL_OK);
    assert_int_equal(tr.view.count, 0);
    assert_int_equal(tr.loc_start[1], 0);
    trace_store_free(&tr);
}

/* ---- real traces: thread-count independence, counts --------------------------------- */

static const char *reference(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "../../../shared/traces/%s/traces.otf2", name);
    return access(path, R_OK) == 0 ? path : NULL;
}

static earl_trace *open_or_fail(const char *path, int threads)
{
    earl_open_options o = {.threads = threads};
    earl_trace *t = NULL;
    earl_error err;
    earl_status s = earl_trace_open(path, &o, &t, &err);
    if (s != EARL_OK)
        fail_msg("%s", err.message);
    return t;
}

static void test_threads_do_not_change_result(void **state)
{
    (void)state;
    const char *path = reference("casita-jacobi-hybrid");
    if (!path)
        skip();
    earl_trace *a = open_or_fail(path, 1);
    for (int threads = 2; threads <= 7; threads += 5) {
        earl_trace *b = open_or_fail(path, threads);
        const earl_events *x = earl_trace_events(a), *y = earl_trace_events(b);
        assert_int_equal(x->count, y->count);
        assert_memory_equal(x->time, y->time, x->count * sizeof *x->time);
        assert_memory_equal(x->location, y->location, x->count * sizeof *x->location);
        assert_memory_equal(x->kind, y->kind, x->count);
        assert_memory_equal(x->payload, y->payload, x->count * sizeof *x->payload);
        assert_memory_equal(x->loc_events, y->loc_events, x->count * sizeof *x->loc_events);
        assert_int_equal(x->sync.count, y->sync.count);
        assert_memory_equal(x->sync.id, y->sync.id, x->sync.count * sizeof *x->sync.id);
        assert_int_equal(x->msg.count, y->msg.count);
        assert_memory_equal(x->msg.partner, y->msg.partner,
                            x->msg.count * sizeof *x->msg.partner);
        earl_trace_close(b);
    }
    earl_trace_close(a);
}

/* The event column and row count of family f's side table. */
static const earl_eid32 *family_events(const earl_events *e, earl_family f, size_t *count)
{
    switch (f) {
    case EARL_FAMILY_MSG: *count = e->msg.count; return e->msg.event;
    case EARL_FAMILY_COLL: *count = e->coll.count; return e->coll.event;
    case EARL_FAMILY_SYNC: *count = e->sync.count; return e->sync.event;
    case EARL_FAMILY_PROGRAM: *count = e->program.count; return e->program.event;
    case EARL_FAMILY_METRIC: *count = e->metric.count; return e->metric.event;
    case EARL_FAMILY_RMA: *count = e->rma.count; return e->rma.event;
    default: *count = 0; return NULL;
    }
}

/* Every event has a region or a row, never both: an ENTER or LEAVE its
 * region (defined, or undefined as recorded), every other kind the row of its
 * family's table whose event is it (-1 for a kind without a table); region
 * and ref are the payload column, and the helpers give each for any kind. */
static void check_payload(const earl_events *e, const earl_defs *d)
{
    assert_ptr_equal(e->region, e->payload);
    assert_ptr_equal((const void *)e->ref, (const void *)e->payload);
    size_t rows = 0, table_rows = 0;
    for (size_t i = 0; i < e->count; i++) {
        uint8_t kind = e->kind[i];
        if (earl_kind_has_region(kind)) {
            uint32_t r = e->region[i];
            assert_true(r < d->n_regions || r == EARL_UNDEFINED_REF);
            assert_int_equal(earl_event_region(e, i), r);
            assert_int_equal(earl_event_row(e, i), -1);
            continue;
        }
        assert_int_equal(earl_event_region(e, i), EARL_UNDEFINED_REF);
        int32_t row = earl_event_row(e, i);
        assert_int_equal(row, e->ref[i]);
        size_t count;
        const earl_eid32 *owner = family_events(e, earl_kind_family((earl_kind)kind), &count);
        if (!owner) {
            assert_int_equal(row, -1);
            continue;
        }
        assert_true(row >= 0 && (size_t)row < count);
        assert_int_equal(owner[row], i);
        rows++;
    }
    for (int f = EARL_FAMILY_MSG; f <= EARL_FAMILY_RMA; f++) {
        size_t count;
        family_events(e, (earl_family)f, &count);
        table_rows += count;
    }
    assert_int_equal(rows, table_rows); /* every row is some event's */
}

static void test_payload_is_a_region_or_a_row(void **state)
{
    (void)state;
    const char *bundled[] = {"../../traces/hybrid/traces.otf2",
                             "../../traces/omp-locks/traces.otf2",
                             "../../traces/ring-late-sender/traces.otf2"};
    for (size_t k = 0; k < sizeof bundled / sizeof *bundled; k++) {
        earl_trace *t = open_or_fail(bundled[k], 0);
        check_payload(earl_trace_events(t), earl_trace_defs(t));
        earl_trace_close(t);
    }
}

static void test_reference_counts_match_definitions(void **state)
{
    (void)state;
    const char *names[] = {"pipit-ping-pong", "pipit-ping-pong-papi", "sstmacro-mpi-coverage",
                           "casita-jacobi-hybrid", "casita-cuda-simple", "casita-ompt-nested"};
    int seen = 0;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        const char *path = reference(names[k]);
        if (!path)
            continue;
        seen++;
        earl_trace *t = open_or_fail(path, 0);
        const earl_defs *d = earl_trace_defs(t);
        const earl_events *e = earl_trace_events(t);
        uint64_t sum = 0;
        for (uint32_t l = 0; l < d->n_locations; l++) {
            assert_int_equal(d->locations[l].events + d->locations[l].other_records,
                             d->locations[l].declared_events);
            assert_int_equal(e->loc_start[l + 1] - e->loc_start[l], d->locations[l].events);
            sum += d->locations[l].events;
        }
        assert_int_equal(sum, e->count);
        check_payload(e, d);
        /* the order: time never decreases; ties by location, then position */
        for (size_t i = 1; i < e->count; i++) {
            assert_true(e->time[i - 1] <= e->time[i]);
            if (e->time[i - 1] == e->time[i])
                assert_true(e->location[i - 1] <= e->location[i]);
        }
        earl_trace_close(t);
    }
    if (!seen)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colset_reserve_keeps_rows),
        cmocka_unit_test(test_grow_exact_first),
        cmocka_unit_test(test_warnings_counted_details_capped),
        cmocka_unit_test(test_order_ties_and_back_pointers),
        cmocka_unit_test(test_order_empty),
        cmocka_unit_test(test_order_refuses_more_events_than_32_bits_number),
        cmocka_unit_test(test_threads_do_not_change_result),
        cmocka_unit_test(test_payload_is_a_region_or_a_row),
        cmocka_unit_test(test_reference_counts_match_definitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
