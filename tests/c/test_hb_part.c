/*
 * test_hb_part.c - the happened-before replay of a trace in parts
 * (earl_hb.h, "the replay of a part"), driven here in one process, part
 * after part, as any driver other than MPI would run its steps:
 *   - on generated traces of every kind split into 2 and 3 parts, with one
 *     and two column threads, every own event's stamp equals the whole
 *     trace's stamp of the same event (earl_hb_build);
 *   - on inconsistent traces (receives that each wait for the other's send)
 *     the cycles are broken at the same events, with the same count;
 *   - bad steps are refused with a message: a ghost to stamp, a ticket
 *     never given out, forcing an event that does not wait, finishing early;
 *   - the system over the crossing events of the stamps in three exchanges
 *     (earl_hb_frontier_solve) takes the maxima along every path, and leaves
 *     a cycle unsolved;
 *   - a round of its solve split between the parts (earl_hb_frontier_fold)
 *     takes the maximum with the clocks seen, tells a clock that has seen
 *     the event that sees it (a cycle), and refuses a row out of range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "earl.h"
#include "earl_hb.h"
#include "earl_part.h"
#include "earl_states.h"
#include "part_test_util.h"

static void ok(earl_status st)
{
    if (st != EARL_OK)
        fail_msg("status %d: %s", (int)st, err.message);
}

/* The own events of a part, ascending. */
static earl_eid *own_events(const earl_trace *t, size_t *n)
{
    const earl_events *ev = earl_trace_events(t);
    const earl_defs *d = earl_trace_defs(t);
    earl_eid *ids = malloc((ev->count + 1) * sizeof *ids);
    *n = 0;
    for (size_t e = 0; e < ev->count; e++)
        if (d->locations[ev->location[e]].held == EARL_HELD_ALL)
            ids[(*n)++] = (earl_eid)e;
    return ids;
}

typedef struct stepper {
    ptu_parts ps;
    int32_t part_of[PTU_MAX_LOCATIONS];
    earl_states *states[PTU_MAX_PARTS];
    earl_hb_part *hb[PTU_MAX_PARTS];
    earl_eid *stamped[PTU_MAX_PARTS];
    size_t n_stamped[PTU_MAX_PARTS];
    int rounds;
} stepper;

static size_t hb_needs(void *h, const uint8_t **kinds, const earl_eid **events)
{
    *kinds = NULL;
    return earl_hb_part_needs(h, events);
}
static earl_loc hb_producer(const ptu_parts *ps, int p, void *h, uint8_t kind, earl_eid e)
{
    (void)h;
    (void)kind;
    return earl_trace_events(ps->trace[p])->location[e];
}
static earl_status hb_export(void *h, int32_t to, uint8_t kind, earl_eid e, uint64_t ticket)
{
    (void)kind;
    return earl_hb_part_export(h, to, &e, &ticket, 1, &err);
}
static earl_status hb_run(void *h, earl_error *e) { return earl_hb_part_run(h, e); }
static earl_status hb_take(void *h, size_t n, earl_outbox *out, earl_error *e)
{
    return earl_hb_part_take(h, n, out, e);
}
static earl_status hb_receive(void *h, const void *r, size_t bytes, earl_error *e)
{
    return earl_hb_part_receive(h, r, bytes, e);
}
static size_t hb_unfinished(const void *h) { return earl_hb_part_unfinished(h); }
static earl_eid hb_waiting(void *h) { return earl_hb_part_waiting(h); }
static earl_status hb_force(void *h, earl_eid e, earl_error *er)
{
    return earl_hb_part_force(h, e, er);
}

static const ptu_steps HB_STEPS = {hb_needs, hb_producer, hb_export, hb_run, hb_take,
                                   hb_receive, hb_unfinished, hb_waiting, hb_force};

/* Steps 1 to 3: every part's replay, the tickets told to the owners. */
static void start(stepper *s, const char *path, int n, int threads)
{
    memset(s, 0, sizeof *s);
    ptu_open_parts(path, n, s->part_of, &s->ps);
    earl_hb_options o = {threads, NULL, NULL};
    for (int p = 0; p < n; p++) {
        ok(earl_states_build(s->ps.trace[p], NULL, &s->states[p], &err));
        s->stamped[p] = own_events(s->ps.trace[p], &s->n_stamped[p]);
        ok(earl_hb_part_new(s->ps.trace[p], s->states[p], s->stamped[p], s->n_stamped[p], &o,
                            &s->hb[p], &err));
    }
    ptu_tell_needs(&HB_STEPS, &s->ps, s->part_of, (void **)s->hb);
}

static void rounds(stepper *s)
{
    s->rounds = ptu_rounds(&HB_STEPS, &s->ps, (void **)s->hb);
}

static void stop(stepper *s)
{
    for (int p = 0; p < s->ps.n; p++) {
        earl_hb_part_free(s->hb[p]);
        earl_states_free(s->states[p]);
        free(s->stamped[p]);
    }
    ptu_close_parts(&s->ps);
}

/* Step 6 and the check: every own stamp is the whole trace's. */
static void check_parts(const char *path, int n, int threads)
{
    earl_trace *whole;
    ok(earl_trace_open(path, NULL, &whole, &err));
    earl_states *ws;
    ok(earl_states_build(whole, NULL, &ws, &err));
    size_t nw = earl_trace_events(whole)->count;
    earl_eid *all = malloc((nw + 1) * sizeof *all);
    for (size_t e = 0; e < nw; e++)
        all[e] = (earl_eid)e;
    earl_hb *want;
    ok(earl_hb_build(whole, ws, all, nw, NULL, &want, &err));
    stepper s;
    start(&s, path, n, threads);
    rounds(&s);
    uint64_t cycles = 0;
    size_t checked = 0;
    for (int p = 0; p < n; p++) {
        earl_hb *got;
        ok(earl_hb_part_finish(s.hb[p], &got, &err));
        assert_int_equal(earl_hb_width(got), earl_hb_width(want));
        cycles += earl_hb_warning_count(got, EARL_HBW_CYCLE_BROKEN);
        for (size_t k = 0; k < earl_hb_count(got); k++) {
            earl_eid w = ptu_whole_event(whole, &s.ps, p, earl_hb_event(got, k));
            int64_t i = earl_hb_index(want, w);
            assert_true(i >= 0);
            assert_int_equal(earl_hb_location(got, k), earl_hb_location(want, (size_t)i));
            assert_int_equal(earl_hb_position(got, k), earl_hb_position(want, (size_t)i));
            assert_memory_equal(earl_hb_stamp(got, k), earl_hb_stamp(want, (size_t)i),
                                earl_hb_width(got) * sizeof(uint32_t));
            checked++;
        }
        earl_hb_free(got);
    }
    assert_int_equal(checked, nw);
    assert_int_equal(cycles, earl_hb_warning_count(want, EARL_HBW_CYCLE_BROKEN));
    stop(&s);
    earl_hb_free(want);
    free(all);
    earl_states_free(ws);
    earl_trace_close(whole);
}

static void check_kind(earl_synth_kind kind, uint32_t ranks, uint32_t threads)
{
    char path[512];
    char *dir = ptu_generate(kind, ranks, threads, path, sizeof path);
    for (int n = 2; n <= 3; n++)
        for (int t = 1; t <= 2; t++)
            check_parts(path, n, t);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_ping_pong(void **s) { (void)s; check_kind(EARL_SYNTH_PINGPONG, 3, 1); }
static void test_ring(void **s) { (void)s; check_kind(EARL_SYNTH_RING, 4, 1); }
static void test_halo(void **s) { (void)s; check_kind(EARL_SYNTH_HALO, 6, 1); }
static void test_master_worker(void **s) { (void)s; check_kind(EARL_SYNTH_MASTER_WORKER, 4, 1); }
static void test_collectives(void **s) { (void)s; check_kind(EARL_SYNTH_COLLECTIVES, 5, 1); }
static void test_hybrid(void **s) { (void)s; check_kind(EARL_SYNTH_HYBRID, 3, 2); }

static void test_cycles_broken_as_in_the_whole_trace(void **state)
{
    (void)state;
    char path[512];
    for (int ranks = 2; ranks <= 4; ranks++) {
        char *dir = ptu_cyclic_trace(ranks, 3, path, sizeof path);
        for (int n = 2; n <= ranks && n <= 3; n++)
            check_parts(path, n, 1);
        wtu_remove_tree(dir);
        free(dir);
    }
}

static void test_bad_steps(void **state)
{
    (void)state;
    char path[512];
    char *dir = ptu_cyclic_trace(2, 1, path, sizeof path);
    stepper s;
    start(&s, path, 2, 1);
    /* a ghost is its owner's to stamp */
    const earl_eid *ghosts;
    assert_int_equal(earl_hb_part_needs(s.hb[0], &ghosts), 1);
    earl_hb_part *bad;
    assert_int_equal(earl_hb_part_new(s.ps.trace[0], s.states[0], ghosts, 1, NULL, &bad, &err),
                     EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "ghost"));
    /* exporting a ghost, receiving a ticket never given out */
    uint64_t ticket = 0;
    assert_int_equal(earl_hb_part_export(s.hb[0], 1, ghosts, &ticket, 1, &err), EARL_ERR_INVALID);
    uint8_t record[8 + 2 * 4] = {0};
    record[0] = 9;
    assert_int_equal(earl_hb_part_receive(s.hb[0], record, sizeof record, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "ticket 9"));
    assert_int_equal(earl_hb_part_receive(s.hb[0], record, 5, &err), EARL_ERR_INVALID);
    /* forcing before anything waits; finishing before the end */
    assert_int_equal(earl_hb_part_force(s.hb[0], s.stamped[0][0], &err), EARL_ERR_INVALID);
    earl_hb *hb;
    assert_int_equal(earl_hb_part_finish(s.hb[0], &hb, &err), EARL_ERR_INVALID);
    ok(earl_hb_part_run(s.hb[0], &err));
    earl_eid waits = earl_hb_part_waiting(s.hb[0]);
    assert_true(waits >= 0);
    assert_int_equal(earl_hb_part_force(s.hb[0], waits + 1, &err), EARL_ERR_INVALID);
    stop(&s);
    wtu_remove_tree(dir);
    free(dir);
}

/* Stamps gathered elsewhere make a handle that answers as a built one. */
static void test_from_stamps(void **state)
{
    (void)state;
    earl_eid events[3] = {4, 9, 12};
    earl_loc loc[3] = {0, 1, 1};
    uint32_t pos[3] = {0, 2, 3};
    uint32_t stamps[6] = {1, 0, 1, 3, 1, 4};
    earl_hb *hb;
    ok(earl_hb_from_stamps(2, 3, events, loc, pos, stamps, &hb, &err));
    assert_int_equal(earl_hb_index(hb, 9), 1);
    assert_true(earl_hb_before(hb, 0, 1));   /* 4 --> 9: stamp of 9 has 1 > 0 at location 0 */
    assert_true(earl_hb_before(hb, 1, 2));   /* program order on location 1 */
    assert_false(earl_hb_before(hb, 2, 1));
    earl_hb_free(hb);
    earl_eid unsorted[2] = {5, 5};
    assert_int_equal(earl_hb_from_stamps(2, 2, unsorted, loc, pos, stamps, &hb, &err),
                     EARL_ERR_INVALID);
    loc[0] = 2;
    assert_int_equal(earl_hb_from_stamps(2, 1, events, loc, pos, stamps, &hb, &err),
                     EARL_ERR_INVALID);
}

/* The crossing events' system (earl_hb_frontier_solve): a diamond 0 -> 1, 0
 * -> 2, 1 -> 3, 2 -> 3 takes the maxima along every path; a cycle leaves its
 * events unsolved and says so; an edge naming no event is refused. */
static void test_frontier_solve(void **state)
{
    (void)state;
    uint32_t c[4 * 3] = {1, 0, 0, /**/ 0, 2, 0, /**/ 0, 0, 3, /**/ 0, 1, 1};
    int64_t src[] = {0, 0, 1, 2}, dst[] = {1, 2, 3, 3};
    size_t solved = 0;
    ok(earl_hb_frontier_solve(c, 4, 3, src, dst, 4, &solved, &err));
    assert_int_equal(solved, 4);
    uint32_t want[4 * 3] = {1, 0, 0, /**/ 1, 2, 0, /**/ 1, 0, 3, /**/ 1, 2, 3};
    assert_memory_equal(c, want, sizeof want);
    /* 1 and 2 wait for each other: only 0 is solved */
    int64_t csrc[] = {0, 1, 2}, cdst[] = {1, 2, 1};
    ok(earl_hb_frontier_solve(c, 3, 3, csrc, cdst, 3, &solved, &err));
    assert_int_equal(solved, 1);
    int64_t bad[] = {7};
    assert_int_equal(earl_hb_frontier_solve(c, 3, 3, bad, dst, 1, &solved, &err),
                     EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "of 3 events"));
    ok(earl_hb_frontier_solve(c, 0, 3, NULL, NULL, 0, &solved, &err));
    assert_int_equal(solved, 0);
}

/* A round of the solve in parts (earl_hb_frontier_fold): event 0 (location
 * 0, position 4) sees row 1, event 1 sees nothing, event 2 (location 1,
 * position 2) sees row 0; then a row that counts event 0 itself: a cycle. */
static void test_frontier_fold(void **state)
{
    (void)state;
    uint32_t next[3 * 3] = {5, 1, 0, /**/ 2, 0, 0, /**/ 0, 3, 1};
    uint32_t rows[2 * 3] = {0, 2, 4, /**/ 3, 2, 2};
    int64_t row_of[] = {1, -1, 0}, pos[] = {4, 1, 2};
    int32_t loc[] = {0, 0, 1};
    int cycle = 1;
    ok(earl_hb_frontier_fold(next, 3, 3, rows, 2, row_of, loc, pos, &cycle, &err));
    assert_int_equal(cycle, 0);
    uint32_t want[3 * 3] = {5, 2, 2, /**/ 2, 0, 0, /**/ 0, 3, 4};
    assert_memory_equal(next, want, sizeof want);
    rows[3] = 5; /* row 1 counts event 0 (position 4: entry 5) */
    ok(earl_hb_frontier_fold(next, 3, 3, rows, 2, row_of, loc, pos, &cycle, &err));
    assert_int_equal(cycle, 1);
    row_of[2] = 2;
    assert_int_equal(earl_hb_frontier_fold(next, 3, 3, rows, 2, row_of, loc, pos, &cycle, &err),
                     EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "row 2 of 2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping_pong),     cmocka_unit_test(test_ring),
        cmocka_unit_test(test_halo),          cmocka_unit_test(test_master_worker),
        cmocka_unit_test(test_collectives),   cmocka_unit_test(test_hybrid),
        cmocka_unit_test(test_cycles_broken_as_in_the_whole_trace),
        cmocka_unit_test(test_bad_steps),     cmocka_unit_test(test_from_stamps),
        cmocka_unit_test(test_frontier_solve), cmocka_unit_test(test_frontier_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
