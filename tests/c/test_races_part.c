/*
 * test_races_part.c - the race analysis of a trace in parts (earl_races.h,
 * "the race analysis of a part"), its steps driven in one process, part after
 * part (part_test_util.h): on generated traces of every message kind split
 * into 2 and 3 parts, on synchronous sends that cross parts (the receiver's
 * clock travels back) and on inconsistent traces (cycles), with vector and
 * Lamport clocks, the union of the parts' results is the whole trace's: the
 * same wildcard receives with the same alternatives in the same order, the
 * same findings, the same counts.  Bad steps are refused.  What a part
 * exports before anyone asked (earl_races_part_export_crossing) is what the
 * other parts wait for.
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
#include "earl_part.h"
#include "earl_races.h"
#include "earl_states.h"
#include "part_test_util.h"

static void ok(earl_status st)
{
    if (st != EARL_OK)
        fail_msg("status %d: %s", (int)st, err.message);
}

/* ---- the steps on void handles ---------------------------------------------------- */

static size_t r_needs(void *h, const uint8_t **kinds, const earl_eid **events)
{
    return earl_races_part_needs(h, kinds, events);
}


static earl_states *states_of[PTU_MAX_PARTS];

/* The location whose part produces what part p waits for: a send's clock
 * comes from its sender, a synchronous send's receiver clock from its
 * receiver, a member's begin from the member. */
static earl_loc r_producer(const ptu_parts *ps, int p, void *h, uint8_t kind, earl_eid e)
{
    (void)h;
    const earl_events *ev = earl_trace_events(ps->trace[p]);
    if (kind == EARL_RACES_ACK_CLOCK)
        return ev->location[earl_states_ptr(states_of[p], EARL_PTR_RECV, e)];
    return ev->location[e];
}
static earl_status r_export(void *h, int32_t to, uint8_t kind, earl_eid e, uint64_t ticket)
{
    return earl_races_part_export(h, to, &kind, &e, &ticket, 1, &err);
}
static earl_status r_run(void *h, earl_error *e) { return earl_races_part_run(h, e); }
static earl_status r_take(void *h, size_t n, earl_outbox *out, earl_error *e)
{
    return earl_races_part_take(h, n, out, e);
}
static earl_status r_receive(void *h, const void *r, size_t bytes, earl_error *e)
{
    return earl_races_part_receive(h, r, bytes, e);
}
static size_t r_unfinished(const void *h) { return earl_races_part_unfinished(h); }
static earl_eid r_waiting(void *h) { return earl_races_part_waiting(h); }
static earl_status r_force(void *h, earl_eid e, earl_error *er)
{
    return earl_races_part_force(h, e, er);
}

static const ptu_steps RACES_STEPS = {r_needs, r_producer, r_export, r_run, r_take,
                                      r_receive, r_unfinished, r_waiting, r_force};

/* ---- the check ------------------------------------------------------------------------ */

static void check_crossing(const char *path, int n);

/* Locations with MPI records in the whole trace. */
static void clocked_of(const earl_trace *whole, uint8_t *clocked)
{
    const earl_events *ev = earl_trace_events(whole);
    memset(clocked, 0, PTU_MAX_LOCATIONS);
    for (size_t m = 0; m < ev->msg.count; m++)
        clocked[ev->location[ev->msg.event[m]]] = 1;
    for (size_t m = 0; m < ev->coll.count; m++)
        clocked[ev->location[ev->coll.event[m]]] = 1;
}

static size_t find_receive(const earl_races_view *v, earl_eid recv)
{
    for (size_t k = 0; k < v->n_receives; k++)
        if (v->recv[k] == recv)
            return k;
    fail_msg("receive %lld is no wildcard receive of the whole trace", (long long)recv);
    return 0;
}

static earl_eid whole_or_none(const earl_trace *whole, const ptu_parts *ps, int p, earl_eid e)
{
    return e < 0 ? e : ptu_whole_event(whole, ps, p, e);
}

static void check_parts(const char *path, int n, earl_races_clocks clocks)
{
    earl_trace *whole;
    ok(earl_trace_open(path, NULL, &whole, &err));
    earl_states *ws;
    ok(earl_states_build(whole, NULL, &ws, &err));
    uint8_t clocked[PTU_MAX_LOCATIONS];
    clocked_of(whole, clocked);
    earl_races_options o = {.clocks = clocks, .clocked = clocked};
    earl_races *want;
    ok(earl_races_build(whole, ws, &o, &want, &err));
    const earl_races_view *wv = earl_races_get_view(want);

    ptu_parts ps;
    int32_t part_of[PTU_MAX_LOCATIONS];
    ptu_open_parts(path, n, part_of, &ps);
    earl_races_part *h[PTU_MAX_PARTS];
    for (int p = 0; p < n; p++) {
        ok(earl_states_build(ps.trace[p], NULL, &states_of[p], &err));
        ok(earl_races_part_new(ps.trace[p], states_of[p], &o, &h[p], &err));
    }
    ptu_tell_needs(&RACES_STEPS, &ps, part_of, (void **)h);
    ptu_rounds(&RACES_STEPS, &ps, (void **)h);
    size_t receives = 0, pairs = 0, findings = 0;
    uint64_t cycles = 0, without = 0, missed = 0;
    for (int p = 0; p < n; p++) {
        earl_races *got;
        ok(earl_races_part_finish(h[p], &got, &err));
        const earl_races_view *v = earl_races_get_view(got);
        receives += v->n_receives;
        pairs += v->n_pairs;
        missed += v->lamport_missed;
        cycles += earl_races_warning_count(got, EARL_RACES_W_CYCLE_BROKEN);
        without += earl_races_warning_count(got, EARL_RACES_W_RECV_WITHOUT_SEND);
        for (size_t k = 0; k < v->n_receives; k++) {
            size_t w = find_receive(wv, ptu_whole_event(whole, &ps, p, v->recv[k]));
            assert_int_equal(ptu_whole_event(whole, &ps, p, v->recv_posted[k]), wv->recv_posted[w]);
            assert_int_equal(whole_or_none(whole, &ps, p, v->recv_send[k]), wv->recv_send[w]);
            assert_int_equal(v->recv_any_tag[k], wv->recv_any_tag[w]);
            size_t a = v->alt_start[k], b = v->alt_start[k + 1];
            assert_int_equal(b - a, wv->alt_start[w + 1] - wv->alt_start[w]);
            for (size_t j = 0; j < b - a; j++) {
                assert_int_equal(ptu_whole_event(whole, &ps, p, v->alt_send[a + j]),
                                 wv->alt_send[wv->alt_start[w] + j]);
                assert_int_equal(v->alt_lamport[a + j], wv->alt_lamport[wv->alt_start[w] + j]);
            }
        }
        for (size_t k = 0; k < v->n_findings; k++) {
            earl_eid e = ptu_whole_event(whole, &ps, p, v->finding_event[k]);
            int found = 0;
            for (size_t j = 0; j < wv->n_findings; j++)
                found |= wv->finding_kind[j] == v->finding_kind[k] &&
                         wv->finding_location[j] == v->finding_location[k] &&
                         wv->finding_event[j] == e && wv->finding_count[j] == v->finding_count[k];
            assert_true(found);
        }
        findings += v->n_findings;
        earl_races_free(got);
        earl_races_part_free(h[p]);
        earl_states_free(states_of[p]);
    }
    assert_int_equal(receives, wv->n_receives);
    assert_int_equal(pairs, wv->n_pairs);
    assert_int_equal(findings, wv->n_findings);
    assert_int_equal(missed, wv->lamport_missed);
    assert_int_equal(cycles, earl_races_warning_count(want, EARL_RACES_W_CYCLE_BROKEN));
    assert_int_equal(without, earl_races_warning_count(want, EARL_RACES_W_RECV_WITHOUT_SEND));
    ptu_close_parts(&ps);
    earl_races_free(want);
    earl_states_free(ws);
    earl_trace_close(whole);
}

static void check_path(const char *path, int max_parts)
{
    for (int n = 2; n <= max_parts; n++) {
        check_parts(path, n, EARL_RACES_VECTOR);
        check_parts(path, n, EARL_RACES_LAMPORT);
    }
}

static void check_kind(earl_synth_kind kind, uint32_t ranks, uint32_t threads)
{
    char path[512];
    char *dir = ptu_generate(kind, ranks, threads, path, sizeof path);
    check_path(path, 3);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_master_worker(void **s) { (void)s; check_kind(EARL_SYNTH_MASTER_WORKER, 4, 1); }
static void test_ping_pong(void **s) { (void)s; check_kind(EARL_SYNTH_PINGPONG, 3, 1); }
static void test_halo(void **s) { (void)s; check_kind(EARL_SYNTH_HALO, 6, 1); }
static void test_collectives(void **s) { (void)s; check_kind(EARL_SYNTH_COLLECTIVES, 5, 1); }
static void test_hybrid(void **s) { (void)s; check_kind(EARL_SYNTH_HYBRID, 3, 2); }

static void test_cycles(void **s)
{
    (void)s;
    char path[512];
    for (int ranks = 2; ranks <= 4; ranks++) {
        char *dir = ptu_cyclic_trace(ranks, 3, path, sizeof path);
        check_path(path, ranks < 3 ? ranks : 3);
        wtu_remove_tree(dir);
        free(dir);
    }
}

/* Ranks 0 and 2 send synchronously to rank 1 (MPI_Ssend), which receives
 * both with wildcards; rank 2 then sends again, non-blocking and
 * synchronous (MPI_Issend).  The receiver's clock goes back to the senders. */
static void test_synchronous_sends(void **s)
{
    (void)s;
    char path[512];
    char *dir = wtu_scratch();
    snprintf(path, sizeof path, "%s/t", dir);
    earl_writer *w;
    ok(earl_writer_open(path, NULL, 1000, 0, &w, &err));
    uint32_t machine, proc, world, ssend, issend, wait;
    earl_loc loc[3];
    ok(earl_writer_system_node(w, "machine", "machine", EARL_UNDEFINED_REF, &machine, &err));
    for (int r = 0; r < 3; r++) {
        char name[32];
        snprintf(name, sizeof name, "rank %d", r);
        ok(earl_writer_process(w, name, machine, r, &proc, &err));
        ok(earl_writer_location(w, proc, "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                                EARL_WRITER_AUTO_ID, &loc[r], &err));
    }
    ok(earl_writer_comm_world(w, NULL, &world, &err));
    earl_writer_region_def d = {.name = "MPI_Ssend", .role = OTF2_REGION_ROLE_POINT2POINT,
                                .paradigm = OTF2_PARADIGM_MPI};
    ok(earl_writer_region(w, &d, &ssend, &err));
    d.name = "MPI_Issend";
    ok(earl_writer_region(w, &d, &issend, &err));
    d.name = "MPI_Wait";
    ok(earl_writer_region(w, &d, &wait, &err));
    for (int r = 0; r < 3; r += 2) {
        ok(earl_writer_enter(w, loc[r], 10 + r, ssend, &err));
        ok(earl_writer_mpi_send(w, loc[r], 11 + r, 1, world, 0, 4, &err));
        ok(earl_writer_leave(w, loc[r], 40 + r, ssend, &err));
    }
    ok(earl_writer_enter(w, loc[2], 50, issend, &err));
    ok(earl_writer_mpi_isend(w, loc[2], 51, 1, world, 0, 4, 7, &err));
    ok(earl_writer_leave(w, loc[2], 52, issend, &err));
    ok(earl_writer_enter(w, loc[2], 53, wait, &err));
    ok(earl_writer_mpi_isend_complete(w, loc[2], 70, 7, &err));
    ok(earl_writer_leave(w, loc[2], 71, wait, &err));
    ok(earl_writer_mpi_send(w, loc[0], 60, 1, world, 0, 4, &err));
    ok(earl_writer_mpi_recv(w, loc[1], 30, 0, world, 0, 4, &err));
    ok(earl_writer_mpi_recv(w, loc[1], 35, 2, world, 0, 4, &err));
    ok(earl_writer_mpi_recv(w, loc[1], 65, 2, world, 0, 4, &err));
    ok(earl_writer_mpi_recv(w, loc[1], 66, 0, world, 0, 4, &err));
    ok(earl_writer_close(w, &err));
    check_path(path, 3);
    check_crossing(path, 2); /* the receiver's clocks go back (ACK) */
    check_crossing(path, 3);
    wtu_remove_tree(dir);
    free(dir);
}

/* Every part's earl_races_part_export_crossing, replayed with a zero clock
 * for each of its needs, produces exactly the clocks the other parts wait
 * for (by kind and event of the whole trace): what a driver of the parts one
 * after another learns before any part asked. */
static void check_crossing(const char *path, int n)
{
    earl_trace *whole;
    ok(earl_trace_open(path, NULL, &whole, &err));
    uint8_t clocked[PTU_MAX_LOCATIONS];
    clocked_of(whole, clocked);
    size_t w1 = 1;
    for (size_t l = 0; l < earl_trace_defs(whole)->n_locations; l++)
        w1 += clocked[l];
    earl_races_options o = {.clocks = EARL_RACES_VECTOR, .clocked = clocked};
    ptu_parts ps;
    int32_t part_of[PTU_MAX_LOCATIONS];
    ptu_open_parts(path, n, part_of, &ps);
    size_t cap = earl_trace_events(whole)->count * 4 + 4;
    uint8_t *produced = calloc(cap, 1), *needed = calloc(cap, 1);
    earl_races_part *h[PTU_MAX_PARTS];
    for (int p = 0; p < n; p++) {
        ok(earl_states_build(ps.trace[p], NULL, &states_of[p], &err));
        ok(earl_races_part_new(ps.trace[p], states_of[p], &o, &h[p], &err));
        const uint8_t *kinds;
        const earl_eid *events;
        size_t nn = earl_races_part_needs(h[p], &kinds, &events);
        size_t rec = 8 + 4 * w1;
        uint8_t *records = calloc(nn + 1, rec);
        for (size_t k = 0; k < nn; k++) {
            uint64_t ticket = k;
            memcpy(records + k * rec, &ticket, 8);
            needed[ptu_whole_event(whole, &ps, p, events[k]) * 4 + kinds[k]] = 1;
        }
        size_t exported;
        ok(earl_races_part_export_crossing(h[p], &exported, &err));
        ok(earl_races_part_receive(h[p], records, nn * rec, &err));
        free(records);
        ok(earl_races_part_run(h[p], &err));
        assert_int_equal(earl_races_part_unfinished(h[p]), 0);
        earl_outbox out;
        ok(earl_races_part_take(h[p], 1, &out, &err));
        size_t got = out.offset[1];
        assert_true(got <= exported);
        for (size_t k = 0; k < got; k++) {
            uint64_t key;
            memcpy(&key, out.records + k * out.record_bytes, 8);
            earl_eid e = ptu_whole_event(whole, &ps, p, (earl_eid)(key >> 2));
            produced[e * 4 + (key & 3)] = 1;
        }
        earl_outbox_free(&out);
        earl_races_part_free(h[p]);
        earl_states_free(states_of[p]);
    }
    assert_memory_equal(produced, needed, cap);
    free(produced);
    free(needed);
    ptu_close_parts(&ps);
    earl_trace_close(whole);
}

static void test_export_crossing(void **s)
{
    (void)s;
    const earl_synth_kind kinds[] = {EARL_SYNTH_HALO, EARL_SYNTH_COLLECTIVES,
                                     EARL_SYNTH_MASTER_WORKER, EARL_SYNTH_HYBRID};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        char path[512];
        char *dir = ptu_generate(kinds[k], 4, kinds[k] == EARL_SYNTH_HYBRID ? 2 : 1, path,
                                 sizeof path);
        for (int n = 2; n <= 4; n++)
            check_crossing(path, n);
        wtu_remove_tree(dir);
        free(dir);
    }
}

static void test_bad_steps(void **s)
{
    (void)s;
    char path[512];
    char *dir = ptu_cyclic_trace(2, 1, path, sizeof path);
    ptu_parts ps;
    int32_t part_of[PTU_MAX_LOCATIONS];
    ptu_open_parts(path, 2, part_of, &ps);
    earl_states *st;
    ok(earl_states_build(ps.trace[0], NULL, &st, &err));
    earl_races_part *h;
    ok(earl_races_part_new(ps.trace[0], st, NULL, &h, &err));
    const uint8_t *kinds;
    const earl_eid *events;
    assert_int_equal(earl_races_part_needs(h, &kinds, &events), 1);
    assert_int_equal(kinds[0], EARL_RACES_SENT_CLOCK);
    /* a ghost's send clock is its owner's to produce */
    uint64_t ticket = 0;
    assert_int_equal(earl_races_part_export(h, 1, kinds, events, &ticket, 1, &err),
                     EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "does not produce"));
    uint8_t record[8 + 3 * 4] = {0};
    record[0] = 5;
    assert_int_equal(earl_races_part_receive(h, record, sizeof record, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "ticket 5"));
    earl_races *r;
    assert_int_equal(earl_races_part_finish(h, &r, &err), EARL_ERR_INVALID);
    ok(earl_races_part_run(h, &err));
    earl_eid e = earl_races_part_waiting(h);
    assert_true(e >= 0);
    assert_int_equal(earl_races_part_force(h, e + 1, &err), EARL_ERR_INVALID);
    earl_races_part_free(h);
    earl_states_free(st);
    ptu_close_parts(&ps);
    wtu_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_master_worker), cmocka_unit_test(test_ping_pong),
        cmocka_unit_test(test_halo),          cmocka_unit_test(test_collectives),
        cmocka_unit_test(test_hybrid),        cmocka_unit_test(test_cycles),
        cmocka_unit_test(test_synchronous_sends), cmocka_unit_test(test_bad_steps),
        cmocka_unit_test(test_export_crossing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
