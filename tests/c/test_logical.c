/*
 * test_logical.c - logical time (earl_logical_build): on generated traces the
 * rules of earl_hb.h hold (a receive after its send, steps growing along each
 * location, a collective's members on one step, lateness measured from the
 * earliest event of the step), and every stepped event is there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "earl_hb.h"
#include "earl_states.h"
#include "earl_synth.h"
#include "writer_test_util.h"

static void ok(earl_status st, const earl_error *err)
{
    if (st != EARL_OK)
        fail_msg("%s", err->message);
}

typedef struct fixture {
    char *dir;
    earl_trace *trace;
    earl_states *states;
    earl_logical *lt;
} fixture;

static void open_synth(fixture *f, earl_synth_kind kind, uint32_t ranks)
{
    f->dir = wtu_scratch();
    char path[4096];
    snprintf(path, sizeof path, "%s/t", f->dir);
    earl_synth_options o;
    earl_synth_defaults(kind, &o);
    o.ranks = ranks;
    o.iterations = 3;
    o.delay = 300;
    o.delay_rank = 1;
    earl_synth_result r;
    earl_error err;
    ok(earl_synth_run(&o, path, &r, &err), &err);
    ok(earl_trace_open(path, NULL, &f->trace, &err), &err);
    ok(earl_states_build(f->trace, NULL, &f->states, &err), &err);
    ok(earl_logical_build(f->trace, f->states, NULL, &f->lt, &err), &err);
}

static void close_fixture(fixture *f)
{
    earl_logical_free(f->lt);
    earl_states_free(f->states);
    earl_trace_close(f->trace);
    wtu_remove_tree(f->dir);
    free(f->dir);
}

/* The row of event e among the stepped events, -1. */
static int64_t row_of(const earl_logical *lt, earl_eid e)
{
    const earl_eid *ev = earl_logical_events(lt);
    size_t lo = 0, hi = earl_logical_count(lt);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ev[mid] < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < earl_logical_count(lt) && ev[lo] == e ? (int64_t)lo : -1;
}

static void check_rules(const fixture *f)
{
    const earl_events *ev = earl_trace_events(f->trace);
    const earl_logical *lt = f->lt;
    size_t n = earl_logical_count(lt);
    const uint32_t *step = earl_logical_steps(lt);
    const int64_t *late = earl_logical_lateness(lt);
    assert_int_equal(earl_logical_cycles_broken(lt), 0);
    size_t messages = ev->kind_counts[EARL_MPI_SEND] + ev->kind_counts[EARL_MPI_ISEND] +
                      ev->kind_counts[EARL_MPI_RECV] + ev->kind_counts[EARL_MPI_IRECV];
    assert_true(n >= messages);
    /* steps grow along each location; receives come after their sends */
    uint32_t n_loc = earl_trace_defs(f->trace)->n_locations;
    int64_t *last = malloc(n_loc * sizeof *last);
    for (uint32_t l = 0; l < n_loc; l++)
        last[l] = -1;
    uint64_t *first = calloc(earl_logical_n_steps(lt), sizeof *first);
    for (uint32_t s = 0; s < earl_logical_n_steps(lt); s++)
        first[s] = UINT64_MAX;
    for (size_t k = 0; k < n; k++) {
        earl_eid e = earl_logical_events(lt)[k];
        earl_loc l = ev->location[e];
        assert_true((int64_t)step[k] > last[l]);
        last[l] = step[k];
        if (ev->time[e] < first[step[k]])
            first[step[k]] = ev->time[e];
        if (ev->kind[e] == EARL_MPI_RECV || ev->kind[e] == EARL_MPI_IRECV) {
            earl_eid s = earl_states_ptr(f->states, EARL_PTR_SEND, e);
            if (s >= 0)
                assert_true(step[k] >= step[row_of(lt, s)] + 1);
        }
    }
    for (size_t k = 0; k < n; k++)
        assert_int_equal(late[k], (int64_t)(ev->time[earl_logical_events(lt)[k]] -
                                            first[step[k]]));
    /* the members of each collective instance share a step */
    const earl_states_view *v = earl_states_get_view(f->states);
    for (size_t c = 0; c < v->n_colls; c++) {
        int64_t s0 = -1;
        for (size_t j = v->coll_member_start[c]; j < v->coll_member_start[c + 1]; j++) {
            int64_t r = row_of(lt, v->coll_members[j]);
            assert_true(r >= 0);
            if (s0 < 0)
                s0 = step[r];
            assert_int_equal(step[r], s0);
        }
    }
    free(last);
    free(first);
}

static void test_ring(void **state)
{
    (void)state;
    fixture f = {0};
    open_synth(&f, EARL_SYNTH_RING, 4);
    check_rules(&f);
    /* a ring of 4 ranks, 3 iterations: a send and a receive per rank and iteration,
     * each iteration two steps */
    assert_int_equal(earl_logical_count(f.lt), 24);
    assert_int_equal(earl_logical_n_steps(f.lt), 6);
    close_fixture(&f);
}

static void test_collectives_and_threads(void **state)
{
    (void)state;
    fixture f = {0};
    open_synth(&f, EARL_SYNTH_COLLECTIVES, 5);
    check_rules(&f);
    close_fixture(&f);
    open_synth(&f, EARL_SYNTH_HYBRID, 3);
    check_rules(&f);
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_collectives_and_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
