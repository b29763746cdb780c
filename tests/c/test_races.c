/*
 * test_races.c - the message-race analysis (earl_races.h) from C, on small
 * traces written with earl_writer: the crooked barrier of Vo's figures 3.2
 * and 5.2 with every receive a wildcard and with the requested sources
 * passed in, figure 3.1 where Lamport clocks alone miss the race, an
 * inconsistent trace whose dependencies form a cycle, and bad arguments.
 * The Python tests (tests/python/test_races.py) cover the other scenarios
 * and a brute-force check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <otf2/otf2.h>

#include "earl.h"
#include "earl_races.h"
#include "earl_states.h"
#include "earl_writer.h"
#include "writer_test_util.h"

static earl_error err;

static void ok(earl_status st)
{
    if (st != EARL_OK)
        fail_msg("status %d: %s", (int)st, err.message);
}

typedef struct fixture {
    char *dir;
    char path[512];
    earl_writer *w;
    earl_loc loc[4];
    uint32_t world, main_region;
    earl_trace *trace;
    earl_states *states;
} fixture;

static void begin(fixture *f, int ranks)
{
    memset(f, 0, sizeof *f);
    f->dir = wtu_scratch();
    snprintf(f->path, sizeof f->path, "%s/trace", f->dir);
    ok(earl_writer_open(f->path, NULL, 1000, 0, &f->w, &err));
    uint32_t machine, proc;
    ok(earl_writer_system_node(f->w, "machine", "machine", EARL_UNDEFINED_REF, &machine, &err));
    for (int r = 0; r < ranks; r++) {
        char name[32];
        snprintf(name, sizeof name, "rank %d", r);
        ok(earl_writer_process(f->w, name, machine, r, &proc, &err));
        ok(earl_writer_location(f->w, proc, "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                                EARL_WRITER_AUTO_ID, &f->loc[r], &err));
    }
    ok(earl_writer_comm_world(f->w, NULL, &f->world, &err));
}

static void finish(fixture *f)
{
    ok(earl_writer_close(f->w, &err));
    ok(earl_trace_open(f->path, NULL, &f->trace, &err));
    ok(earl_states_build(f->trace, NULL, &f->states, &err));
}

static void end(fixture *f)
{
    earl_states_free(f->states);
    earl_trace_close(f->trace);
    wtu_remove_tree(f->dir);
    free(f->dir);
}

/* The event of kind at time t on rank r's location. */
static earl_eid find(fixture *f, int r, earl_kind kind, earl_time t)
{
    const earl_events *ev = earl_trace_events(f->trace);
    for (size_t i = 0; i < ev->count; i++)
        if (ev->location[i] == f->loc[r] && ev->kind[i] == kind && ev->time[i] == t)
            return (earl_eid)i;
    fail_msg("no %s at %llu on rank %d", earl_kind_name(kind), (unsigned long long)t, r);
    return -1;
}

static void barrier(fixture *f, int ranks, earl_time t)
{
    earl_writer_region_def d = {.name = "MPI_Barrier", .role = OTF2_REGION_ROLE_BARRIER,
                                .paradigm = OTF2_PARADIGM_MPI};
    uint32_t reg;
    ok(earl_writer_region(f->w, &d, &reg, &err));
    for (int r = 0; r < ranks; r++) {
        ok(earl_writer_enter(f->w, f->loc[r], t, reg, &err));
        ok(earl_writer_mpi_collective_begin(f->w, f->loc[r], t + 1, &err));
        ok(earl_writer_mpi_collective_end(f->w, f->loc[r], t + 2, OTF2_COLLECTIVE_OP_BARRIER,
                                          f->world, EARL_UNDEFINED_REF, 0, 0, &err));
        ok(earl_writer_leave(f->w, f->loc[r], t + 3, reg, &err));
    }
}

/* P0 isend(to 1); P1 irecv(*); barrier; P2 isend(to 1); P1 recv(*) takes P2's;
 * P1's wait completes the irecv with P0's message. */
static void crooked_barrier(fixture *f)
{
    begin(f, 3);
    ok(earl_writer_mpi_isend(f->w, f->loc[0], 10, 1, f->world, 0, 4, 1, &err));
    ok(earl_writer_mpi_irecv_request(f->w, f->loc[1], 11, 2, &err));
    barrier(f, 3, 20);
    ok(earl_writer_mpi_isend(f->w, f->loc[2], 30, 1, f->world, 0, 4, 3, &err));
    ok(earl_writer_mpi_recv(f->w, f->loc[1], 40, 2, f->world, 0, 4, &err));
    ok(earl_writer_mpi_irecv(f->w, f->loc[1], 50, 0, f->world, 0, 4, 2, &err));
    ok(earl_writer_mpi_isend_complete(f->w, f->loc[0], 51, 1, &err));
    ok(earl_writer_mpi_isend_complete(f->w, f->loc[2], 52, 3, &err));
    finish(f);
}

static void test_crooked_barrier(void **unused)
{
    (void)unused;
    fixture f;
    crooked_barrier(&f);
    earl_races *r = NULL;
    ok(earl_races_build(f.trace, f.states, NULL, &r, &err));
    const earl_races_view *v = earl_races_get_view(r);
    earl_eid irecv = find(&f, 1, EARL_MPI_IRECV, 50), recv = find(&f, 1, EARL_MPI_RECV, 40);
    earl_eid isend0 = find(&f, 0, EARL_MPI_ISEND, 10), isend2 = find(&f, 2, EARL_MPI_ISEND, 30);
    assert_int_equal(v->n_receives, 2);
    assert_int_equal(v->n_pairs, 1);
    /* the receive with an alternative first */
    assert_int_equal(v->recv[0], irecv);
    assert_int_equal(v->recv_posted[0], find(&f, 1, EARL_MPI_IRECV_REQUEST, 11));
    assert_int_equal(v->recv_send[0], isend0);
    assert_int_equal(v->alt_start[0], 0);
    assert_int_equal(v->alt_start[1], 1);
    assert_int_equal(v->alt_send[0], isend2);
    assert_int_equal(v->alt_lamport[0], 1);
    assert_int_equal(v->recv[1], recv);
    assert_int_equal(v->alt_start[2], 1);
    assert_int_equal(v->n_findings, 0);
    assert_true(earl_races_peak_bytes(r) > 0);
    earl_races_free(r);

    /* requested sources passed in: only the blocking recv asked for any source */
    const earl_events *ev = earl_trace_events(f.trace);
    int32_t *source = malloc(ev->msg.count * sizeof *source);
    for (size_t m = 0; m < ev->msg.count; m++)
        source[m] = EARL_RACES_NOT_RECORDED;
    source[ev->ref[recv]] = EARL_RACES_WILDCARD;
    earl_races_options o = {.requested_source = source};
    ok(earl_races_build(f.trace, f.states, &o, &r, &err));
    v = earl_races_get_view(r);
    assert_int_equal(v->n_receives, 1);
    assert_int_equal(v->recv[0], recv);
    assert_int_equal(v->n_pairs, 0);
    earl_races_free(r);
    /* the request row says any source: the irecv is a wildcard again */
    source[ev->ref[recv]] = EARL_RACES_NOT_RECORDED;
    source[ev->ref[find(&f, 1, EARL_MPI_IRECV_REQUEST, 11)]] = EARL_RACES_WILDCARD;
    ok(earl_races_build(f.trace, f.states, &o, &r, &err));
    v = earl_races_get_view(r);
    assert_int_equal(v->n_receives, 1);
    assert_int_equal(v->recv[0], irecv);
    assert_int_equal(v->n_pairs, 1);
    earl_races_free(r);
    /* a value that is no rank, -1 or -2 */
    source[0] = -3;
    assert_int_equal(earl_races_build(f.trace, f.states, &o, &r, &err), EARL_ERR_INVALID);
    assert_null(r);
    assert_non_null(strstr(err.message, "not a rank or tag"));
    free(source);
    end(&f);
}

/* Figure 3.1: P1 send(0), P0 recv(*), P1 send(2), P2 recv(*), P2 send(0), P0 recv(*). */
static void test_lamport_misses(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 3);
    ok(earl_writer_mpi_send(f.w, f.loc[1], 10, 0, f.world, 0, 4, &err));
    ok(earl_writer_mpi_recv(f.w, f.loc[0], 11, 1, f.world, 0, 4, &err));
    ok(earl_writer_mpi_send(f.w, f.loc[1], 20, 2, f.world, 0, 4, &err));
    ok(earl_writer_mpi_recv(f.w, f.loc[2], 21, 1, f.world, 0, 4, &err));
    ok(earl_writer_mpi_send(f.w, f.loc[2], 30, 0, f.world, 0, 4, &err));
    ok(earl_writer_mpi_recv(f.w, f.loc[0], 31, 2, f.world, 0, 4, &err));
    finish(&f);
    earl_races *r = NULL;
    ok(earl_races_build(f.trace, f.states, NULL, &r, &err));
    const earl_races_view *v = earl_races_get_view(r);
    assert_int_equal(v->n_pairs, 1);
    assert_int_equal(v->recv[0], find(&f, 0, EARL_MPI_RECV, 11));
    assert_int_equal(v->alt_send[0], find(&f, 2, EARL_MPI_SEND, 30));
    assert_int_equal(v->alt_lamport[0], 0);
    assert_int_equal(v->lamport_missed, 1);
    earl_races_free(r);
    earl_races_options o = {.clocks = EARL_RACES_LAMPORT};
    ok(earl_races_build(f.trace, f.states, &o, &r, &err));
    v = earl_races_get_view(r);
    assert_int_equal(v->clocks, EARL_RACES_LAMPORT);
    assert_int_equal(v->n_receives, 3);
    assert_int_equal(v->n_pairs, 0);
    earl_races_free(r);
    end(&f);
}

/* Each rank receives the other's message before sending its own: a cycle the
 * replay breaks with a counted warning, and a receive without a send. */
static void test_inconsistent(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 2);
    ok(earl_writer_mpi_recv(f.w, f.loc[0], 10, 1, f.world, 0, 4, &err));
    ok(earl_writer_mpi_recv(f.w, f.loc[1], 11, 0, f.world, 0, 4, &err));
    ok(earl_writer_mpi_send(f.w, f.loc[0], 20, 1, f.world, 0, 4, &err));
    ok(earl_writer_mpi_send(f.w, f.loc[1], 21, 0, f.world, 0, 4, &err));
    ok(earl_writer_mpi_recv(f.w, f.loc[0], 30, 1, f.world, 9, 4, &err));
    finish(&f);
    earl_races *r = NULL;
    ok(earl_races_build(f.trace, f.states, NULL, &r, &err));
    assert_true(earl_races_warning_count(r, EARL_RACES_W_CYCLE_BROKEN) >= 1);
    assert_int_equal(earl_races_warning_count(r, EARL_RACES_W_RECV_WITHOUT_SEND), 1);
    assert_int_equal(earl_races_get_view(r)->n_receives, 3);
    assert_string_equal(earl_races_warning_code_name(EARL_RACES_W_CYCLE_BROKEN), "cycle_broken");
    earl_races_free(r);
    end(&f);
}

static void test_bad_arguments(void **unused)
{
    (void)unused;
    fixture f;
    crooked_barrier(&f);
    earl_races *r = (earl_races *)&f;
    assert_int_equal(earl_races_build(NULL, f.states, NULL, &r, &err), EARL_ERR_INVALID);
    assert_null(r);
    earl_races_options o = {.clocks = (earl_races_clocks)7};
    assert_int_equal(earl_races_build(f.trace, f.states, &o, &r, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "clocks"));
    assert_string_equal(earl_races_finding_kind_name(EARL_RACES_COMM_NOT_FREED),
                        "comm_not_freed");
    assert_string_equal(earl_races_finding_kind_name((earl_races_finding_kind)99), "unknown");
    earl_races_free(NULL);
    end(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crooked_barrier),
        cmocka_unit_test(test_lamport_misses),
        cmocka_unit_test(test_inconsistent),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
