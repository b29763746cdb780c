/*
 * test_states.c - the EARL states pass (earl_states.h) on small traces
 * written with earl_writer into a scratch folder.
 *
 * Every trace uses distinct timestamps, so event ids are the events in time
 * order and the expected pointers can be written down by hand: the
 * situation of the paper's Fig. 4.2 (nested regions, one message) with its
 * stacks and message queue after every event, Fig. 4.3 (a collective on a
 * sub-communicator with a location not involved, twice), and an
 * inconsistent trace (receive without send, send never received, unmatched
 * LEAVE, incomplete collective) with its counted warnings.  The call tree
 * walked on the way by the pass (options.calltree) is the one
 * earl_calltree_build gives, on one thread and beside the two halves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <otf2/otf2.h>

#include "earl.h"
#include "earl_calltree.h"
#include "earl_states.h"
#include "earl_writer.h"
#include "writer_test_util.h"

static earl_error err;

static void ok(earl_status st)
{
    if (st != EARL_OK)
        fail_msg("status %d: %s", (int)st, err.message);
}

/* A writer with `ranks` MPI processes of one thread each. */
typedef struct fixture {
    char *dir;
    char path[512];
    earl_writer *w;
    earl_loc loc[8];
    uint32_t world;
    earl_trace *trace;
    earl_states *states;
    const earl_states_view *v;
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

static uint32_t region(fixture *f, const char *name, uint8_t role)
{
    earl_writer_region_def d = {.name = name, .role = role,
                                .paradigm = strncmp(name, "MPI_", 4) == 0 ? OTF2_PARADIGM_MPI
                                                                          : OTF2_PARADIGM_USER};
    uint32_t ref;
    ok(earl_writer_region(f->w, &d, &ref, &err));
    return ref;
}

static void finish(fixture *f)
{
    ok(earl_writer_close(f->w, &err));
    ok(earl_trace_open(f->path, NULL, &f->trace, &err));
    ok(earl_states_build(f->trace, NULL, &f->states, &err));
    f->v = earl_states_get_view(f->states);
}

static void end(fixture *f)
{
    earl_states_free(f->states);
    earl_trace_close(f->trace);
    wtu_remove_tree(f->dir);
    free(f->dir);
}

/* Pointer p of every event equals want[0 .. n). */
static void check_pointer(fixture *f, earl_pointer p, const earl_eid *want, size_t n)
{
    const earl_eid *a = earl_states_pointer(f->states, p, &err);
    assert_non_null(a);
    assert_int_equal(f->v->count, n);
    for (size_t i = 0; i < n; i++) {
        if (a[i] != want[i])
            fail_msg("%s of event %zu: %lld, wanted %lld", earl_pointer_name(p), i,
                     (long long)a[i], (long long)want[i]);
        assert_int_equal(earl_states_ptr(f->states, p, (earl_eid)i), want[i]);
    }
}

/* The pass's 32-bit enterptr holds want[0 .. n) (EARL_EID32_NONE for -1),
 * and is what earl_states_ptr and earl_states_gather answer from: the dense
 * int64 array is made on the first earl_states_pointer only, 8 bytes an
 * event.  Call before anything asks for that array. */
static void check_enterptr32(fixture *f, const earl_eid *want, size_t n)
{
    assert_int_equal(f->v->count, n);
    size_t bytes = earl_states_bytes(f->states);
    earl_eid ids[64], got[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++) {
        earl_eid32 raw = f->v->enterptr[i];
        assert_int_equal(raw, want[i] < 0 ? EARL_EID32_NONE : (earl_eid32)want[i]);
        assert_int_equal(earl_eid_from32(raw), want[i]);
        assert_int_equal(earl_states_ptr(f->states, EARL_PTR_ENTER, (earl_eid)i), want[i]);
        ids[i] = (earl_eid)i;
    }
    ok(earl_states_gather(f->states, EARL_PTR_ENTER, ids, n, got, &err));
    assert_memory_equal(got, want, n * sizeof *want);
    assert_int_equal(earl_states_bytes(f->states), bytes); /* nothing built */
    const earl_eid *dense = earl_states_pointer(f->states, EARL_PTR_ENTER, &err);
    assert_non_null(dense);
    assert_memory_equal(dense, want, n * sizeof *want);
    assert_int_equal(earl_states_bytes(f->states), bytes + n * sizeof(earl_eid));
}

static void check_stack(fixture *f, earl_eid i, earl_loc l, size_t n, ...)
{
    earl_eid got[16];
    size_t depth = earl_states_stack(f->states, i, l, got, 16);
    if (depth != n)
        fail_msg("stack(%lld, %d): depth %zu, wanted %zu", (long long)i, (int)l, depth, n);
    va_list ap;
    va_start(ap, n);
    for (size_t k = 0; k < n; k++) {
        earl_eid want = va_arg(ap, int);
        if (got[k] != want)
            fail_msg("stack(%lld, %d)[%zu] = %lld, wanted %lld", (long long)i, (int)l, k,
                     (long long)got[k], (long long)want);
    }
    va_end(ap);
}

static size_t queue(fixture *f, earl_eid i, earl_loc s, earl_loc d, earl_eid *out)
{
    size_t n = 0;
    ok(earl_states_queue(f->states, i, s, d, out, 16, &n, &err));
    return n;
}

/* Fig. 4.2: location 0 runs A { B { send } }, location 1 receives in R.
 *   id: 0 ENTER A@1  1 ENTER B@2  2 SEND@3  3 ENTER R@4 (loc 1)  4 LEAVE B@5
 *       5 RECV@6 (loc 1)  6 LEAVE A@7  7 LEAVE R@8 (loc 1) */
static void test_figure_4_2(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 2);
    uint32_t a = region(&f, "A", OTF2_REGION_ROLE_FUNCTION);
    uint32_t b = region(&f, "B", OTF2_REGION_ROLE_FUNCTION);
    uint32_t r = region(&f, "MPI_Recv", OTF2_REGION_ROLE_POINT2POINT);
    earl_writer *w = f.w;
    ok(earl_writer_enter(w, f.loc[0], 1, a, &err));
    ok(earl_writer_enter(w, f.loc[0], 2, b, &err));
    ok(earl_writer_mpi_send(w, f.loc[0], 3, 1, f.world, 42, 100, &err));
    ok(earl_writer_leave(w, f.loc[0], 5, b, &err));
    ok(earl_writer_leave(w, f.loc[0], 7, a, &err));
    ok(earl_writer_enter(w, f.loc[1], 4, r, &err));
    ok(earl_writer_mpi_recv(w, f.loc[1], 6, 0, f.world, 42, 100, &err));
    ok(earl_writer_leave(w, f.loc[1], 8, r, &err));
    finish(&f);

    static const earl_eid enterptr[] = {-1, 0, 1, -1, 1, 3, 0, 3};
    static const earl_eid leaveptr[] = {6, 4, -1, 7, -1, -1, -1, -1};
    static const earl_eid sendptr[] = {-1, -1, -1, -1, -1, 2, -1, -1};
    static const earl_eid recvptr[] = {-1, -1, 5, -1, -1, -1, -1, -1};
    static const earl_eid none[] = {-1, -1, -1, -1, -1, -1, -1, -1};
    check_enterptr32(&f, enterptr, 8);
    check_pointer(&f, EARL_PTR_ENTER, enterptr, 8);
    check_pointer(&f, EARL_PTR_LEAVE, leaveptr, 8);
    check_pointer(&f, EARL_PTR_SEND, sendptr, 8);
    check_pointer(&f, EARL_PTR_RECV, recvptr, 8);
    check_pointer(&f, EARL_PTR_LOCK, none, 8);
    check_pointer(&f, EARL_PTR_FORK, none, 8);

    /* R^0 and R^1 after every event */
    check_stack(&f, -1, 0, 0);
    check_stack(&f, 0, 0, 1, 0);
    check_stack(&f, 1, 0, 2, 0, 1);
    check_stack(&f, 2, 0, 2, 0, 1);
    check_stack(&f, 3, 0, 2, 0, 1);
    check_stack(&f, 4, 0, 1, 0);
    check_stack(&f, 5, 0, 1, 0);
    check_stack(&f, 6, 0, 0);
    check_stack(&f, 7, 0, 0);
    check_stack(&f, 2, 1, 0);
    check_stack(&f, 3, 1, 1, 3);
    check_stack(&f, 6, 1, 1, 3);
    check_stack(&f, 7, 1, 0);

    /* M^{0,1} after every event: the send is in transfer from 2 to 4 */
    earl_eid q[16];
    for (earl_eid i = 0; i < 8; i++) {
        size_t n = queue(&f, i, 0, 1, q);
        if (i >= 2 && i < 5) {
            assert_int_equal(n, 1);
            assert_int_equal(q[0], 2);
        } else {
            assert_int_equal(n, 0);
        }
        assert_int_equal(queue(&f, i, 1, 0, q), 0);
    }
    const earl_eid *members;
    size_t nm;
    assert_int_equal(earl_states_coll(f.states, 5, &members, &nm), -1);
    assert_int_equal(nm, 0);
    assert_int_equal(f.v->n_colls, 0);
    const earl_states_warnings *wr = earl_states_get_warnings(f.states);
    for (int c = 0; c < EARL_STATES_WARNING_CODE_COUNT; c++)
        assert_int_equal(wr->counts[c], 0);
    end(&f);
}

/* Fig. 4.3: ranks 0..2 call MPI_Allreduce on their sub-communicator twice;
 * rank 3 is not involved.
 *   round 1: r0 ENTER@1 BEGIN@2 END@20 LEAVE@21, r1 @5 @6 @22 @23,
 *            r2 @10 @11 @24 @25, r3 ENTER work@3
 *   round 2: the same +100; r3 LEAVE work@200 */
static void test_figure_4_3(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 4);
    uint32_t red = region(&f, "MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL);
    uint32_t work = region(&f, "work", OTF2_REGION_ROLE_FUNCTION);
    uint32_t sub;
    static const uint32_t ranks[] = {0, 1, 2};
    ok(earl_writer_comm(f.w, "sub", f.world, 3, ranks, &sub, &err));
    static const earl_time enter_t[] = {1, 5, 10};
    ok(earl_writer_enter(f.w, f.loc[3], 3, work, &err));
    for (int round = 0; round < 2; round++) {
        for (int r = 0; r < 3; r++) {
            earl_time o = round * 100;
            ok(earl_writer_enter(f.w, f.loc[r], o + enter_t[r], red, &err));
            ok(earl_writer_mpi_collective_begin(f.w, f.loc[r], o + enter_t[r] + 1, &err));
            ok(earl_writer_mpi_collective_end(f.w, f.loc[r], o + 20 + 2 * r,
                                              OTF2_COLLECTIVE_OP_ALLREDUCE, sub,
                                              EARL_UNDEFINED_REF, 8, 8, &err));
            ok(earl_writer_leave(f.w, f.loc[r], o + 21 + 2 * r, red, &err));
        }
    }
    ok(earl_writer_leave(f.w, f.loc[3], 200, work, &err));
    finish(&f);

    const earl_events *ev = earl_trace_events(f.trace);
    assert_int_equal(f.v->n_colls, 2);
    for (size_t k = 0; k < 2; k++) {
        assert_int_equal(f.v->coll_type[k], EARL_COLL_MPI);
        assert_int_equal(f.v->coll_comm[k], sub);
        assert_int_equal(f.v->coll_expected[k], 3);
        assert_int_equal(f.v->coll_op[k], OTF2_COLLECTIVE_OP_ALLREDUCE);
        assert_int_equal(f.v->coll_member_start[k + 1] - f.v->coll_member_start[k], 3);
        /* members: the ends of ranks 0, 1, 2 in this round, in time order */
        for (int r = 0; r < 3; r++) {
            earl_eid e = f.v->coll_members[f.v->coll_member_start[k] + r];
            assert_int_equal(ev->kind[e], EARL_MPI_COLLECTIVE_END);
            assert_int_equal(ev->location[e], f.loc[r]);
            assert_int_equal(ev->time[e], k * 100 + 20 + 2 * r);
            earl_eid enter = earl_eid_from32(f.v->enterptr[e]);
            assert_int_equal(ev->kind[enter], EARL_ENTER);
            assert_int_equal(ev->time[enter], k * 100 + enter_t[r]);
            assert_int_equal(earl_states_instance_of(f.states, e), (int32_t)k);
            const earl_eid *members;
            size_t n;
            int32_t c = earl_states_coll(f.states, e, &members, &n);
            if (r < 2) { /* coll(e) is empty until the instance is complete */
                assert_int_equal(c, -1);
                assert_int_equal(n, 0);
            } else {
                assert_int_equal(c, (int32_t)k);
                assert_int_equal(n, 3);
                assert_int_equal(f.v->coll_complete[k], e);
                assert_ptr_equal(members, f.v->coll_members + f.v->coll_member_start[k]);
            }
        }
    }
    const int32_t *inst = earl_states_coll_instances(f.states, &err);
    assert_non_null(inst);
    size_t n_members = 0;
    for (size_t i = 0; i < f.v->count; i++) {
        if (ev->kind[i] == EARL_MPI_COLLECTIVE_END) {
            assert_true(inst[i] >= 0);
            n_members++;
        } else {
            assert_int_equal(inst[i], -1);
        }
    }
    assert_int_equal(n_members, 6);
    /* rank 3 is not involved: its stack holds work throughout */
    check_stack(&f, (earl_eid)f.v->count - 2, 3, 1,
                (int)earl_eid_from32(f.v->enterptr[f.v->count - 1]));
    end(&f);
}

/* A receive with no send, a send never received, a LEAVE with no ENTER, a
 * collective that one member never calls: counted warnings with their
 * events, pointers -1, the rest computed.
 *   id: 0 ENTER main@1 (r0)  1 RECV tag 5@2 (r0)  2 SEND tag 6@3 (r1)
 *       3 SEND tag 7@4 (r1)  4 RECV tag 7@5 (r0)  5 COLL_END@6 (r0)
 *       6 LEAVE main@7 (r0)  7 LEAVE work@8 (r1) */
static void test_inconsistent(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 2);
    uint32_t mainr = region(&f, "main", OTF2_REGION_ROLE_FUNCTION);
    uint32_t work = region(&f, "work", OTF2_REGION_ROLE_FUNCTION);
    ok(earl_writer_enter(f.w, f.loc[0], 1, mainr, &err));
    ok(earl_writer_mpi_recv(f.w, f.loc[0], 2, 1, f.world, 5, 4, &err));
    ok(earl_writer_mpi_send(f.w, f.loc[1], 3, 0, f.world, 6, 4, &err));
    ok(earl_writer_mpi_send(f.w, f.loc[1], 4, 0, f.world, 7, 4, &err));
    ok(earl_writer_mpi_recv(f.w, f.loc[0], 5, 1, f.world, 7, 4, &err));
    ok(earl_writer_mpi_collective_end(f.w, f.loc[0], 6, OTF2_COLLECTIVE_OP_BARRIER, f.world,
                                      EARL_UNDEFINED_REF, 0, 0, &err));
    ok(earl_writer_leave(f.w, f.loc[0], 7, mainr, &err));
    ok(earl_writer_leave(f.w, f.loc[1], 8, work, &err));
    finish(&f);

    const earl_states_warnings *wr = earl_states_get_warnings(f.states);
    assert_int_equal(wr->counts[EARL_SW_RECV_WITHOUT_SEND], 1);
    assert_int_equal(wr->counts[EARL_SW_SEND_NOT_RECEIVED], 1);
    assert_int_equal(wr->counts[EARL_SW_LEAVE_UNMATCHED], 1);
    assert_int_equal(wr->counts[EARL_SW_COLL_INCOMPLETE], 1);
    assert_int_equal(wr->n_details, 4);
    for (size_t k = 0; k < wr->n_details; k++) {
        const earl_states_warning *d = &wr->details[k];
        earl_eid want = d->code == EARL_SW_RECV_WITHOUT_SEND   ? 1
                        : d->code == EARL_SW_SEND_NOT_RECEIVED ? 2
                        : d->code == EARL_SW_LEAVE_UNMATCHED   ? 7
                                                               : 5; /* its first member */
        assert_int_equal(d->event, want);
        assert_true(strlen(d->detail) > 0);
    }
    static const earl_eid enterptr[] = {-1, 0, -1, -1, 0, 0, 0, -1};
    static const earl_eid sendptr[] = {-1, -1, -1, -1, 3, -1, -1, -1};
    static const earl_eid recvptr[] = {-1, -1, -1, 4, -1, -1, -1, -1};
    check_enterptr32(&f, enterptr, 8); /* -1 of the unmatched LEAVE too */
    check_pointer(&f, EARL_PTR_ENTER, enterptr, 8);
    check_pointer(&f, EARL_PTR_SEND, sendptr, 8);
    check_pointer(&f, EARL_PTR_RECV, recvptr, 8);
    assert_int_equal(f.v->n_colls, 1);
    assert_int_equal(f.v->coll_complete[0], -1);
    const earl_eid *members;
    size_t n;
    assert_int_equal(earl_states_coll(f.states, 5, &members, &n), -1);
    /* the lost send stays in transfer to the end */
    earl_eid q[16];
    assert_int_equal(queue(&f, 7, 1, 0, q), 1);
    assert_int_equal(q[0], 2);
    check_stack(&f, 7, 1, 0);
    end(&f);
}

/* The call tree the pass walks on the way (threads 1: one pass; 2: beside
 * the region stacks' half) equals earl_calltree_build's, is handed over
 * once, and only when asked for. */
static void check_walked_calltree(const earl_trace *trace, int threads)
{
    earl_states *s = NULL;
    earl_states_options o = {.threads = threads, .calltree = 1};
    ok(earl_states_build(trace, &o, &s, &err));
    earl_calltree *walked = earl_states_take_calltree(s), *built = NULL;
    assert_non_null(walked);
    assert_null(earl_states_take_calltree(s));
    ok(earl_calltree_build(trace, earl_states_get_view(s)->enterptr, 1, &built, &err));
    const earl_calltree_view *a = earl_calltree_get_view(walked), *b = earl_calltree_get_view(built);
    assert_true(a->n_cnodes > 2);
    assert_int_equal(a->n_cnodes, b->n_cnodes);
    assert_memory_equal(a->parent, b->parent, a->n_cnodes * sizeof *a->parent);
    assert_memory_equal(a->region, b->region, a->n_cnodes * sizeof *a->region);
    assert_int_equal(a->n_events, b->n_events);
    assert_memory_equal(a->event_cnode, b->event_cnode, a->n_events * sizeof *a->event_cnode);
    assert_int_equal(a->n_rows, b->n_rows);
    assert_memory_equal(a->row_cnode, b->row_cnode, a->n_rows * sizeof *a->row_cnode);
    assert_memory_equal(a->row_location, b->row_location, a->n_rows * sizeof *a->row_location);
    assert_memory_equal(a->row_time, b->row_time, a->n_rows * sizeof *a->row_time);
    assert_memory_equal(a->row_visits, b->row_visits, a->n_rows * sizeof *a->row_visits);
    assert_memory_equal(a->row_idle, b->row_idle, a->n_rows * sizeof *a->row_idle);
    earl_calltree_free(walked);
    earl_calltree_free(built);
    earl_states_free(s);
    earl_states_options plain = {.threads = threads};
    ok(earl_states_build(trace, &plain, &s, &err));
    assert_null(earl_states_take_calltree(s)); /* not asked for */
    earl_states_free(s);
}

/* The pass as two concurrent halves (region stacks; messages and
 * collectives) gives what one thread gives: a trace large enough for the
 * split, with warnings of both halves interleaved in event order. */
static void test_halves_equal_one_pass(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 4);
    uint32_t mainr = region(&f, "main", OTF2_REGION_ROLE_FUNCTION);
    uint32_t sendr = region(&f, "MPI_Send", OTF2_REGION_ROLE_POINT2POINT);
    uint32_t recvr = region(&f, "MPI_Recv", OTF2_REGION_ROLE_POINT2POINT);
    uint32_t barr = region(&f, "MPI_Barrier", OTF2_REGION_ROLE_BARRIER);
    uint64_t t = 1;
    for (int r = 0; r < 4; r++)
        ok(earl_writer_enter(f.w, f.loc[r], t, mainr, &err));
    for (int it = 0; it < 3000; it++) {
        t += 10;
        for (int r = 0; r < 4; r++) {
            uint64_t s = t + (uint64_t)r;
            int to = (r + 1) % 4, from = (r + 3) % 4;
            int lost = it % 700 == 3 && r == 0; /* a send nobody receives, a receive without send */
            int stray = it % 900 == 5 && r == 2;     /* a LEAVE with nothing open */
            ok(earl_writer_enter(f.w, f.loc[r], s, sendr, &err));
            ok(earl_writer_mpi_send(f.w, f.loc[r], s + 1, (uint32_t)to, f.world,
                                    lost ? 99 : 1, 8, &err));
            ok(earl_writer_leave(f.w, f.loc[r], s + 2, sendr, &err));
            ok(earl_writer_enter(f.w, f.loc[r], s + 3, recvr, &err));
            ok(earl_writer_mpi_recv(f.w, f.loc[r], s + 5, (uint32_t)from, f.world,
                                    (r == 1 && it % 700 == 3) ? 98 : 1, 8, &err));
            ok(earl_writer_leave(f.w, f.loc[r], s + 6, recvr, &err));
            if (stray)
                ok(earl_writer_leave(f.w, f.loc[r], s + 7, barr, &err));
        }
        if (it % 10 == 0) {
            t += 10;
            for (int r = 0; r < 4; r++) {
                if (it % 1000 == 500 && r == 3)
                    continue; /* an incomplete barrier */
                ok(earl_writer_enter(f.w, f.loc[r], t + (uint64_t)r, barr, &err));
                ok(earl_writer_mpi_collective_begin(f.w, f.loc[r], t + 4, &err));
                ok(earl_writer_mpi_collective_end(f.w, f.loc[r], t + 5, OTF2_COLLECTIVE_OP_BARRIER,
                                                  f.world, EARL_UNDEFINED_REF, 0, 0, &err));
                ok(earl_writer_leave(f.w, f.loc[r], t + 6, barr, &err));
            }
        }
    }
    t += 10;
    for (int r = 0; r < 4; r++)
        ok(earl_writer_leave(f.w, f.loc[r], t, mainr, &err));
    ok(earl_writer_close(f.w, &err));
    ok(earl_trace_open(f.path, NULL, &f.trace, &err));
    size_t n = earl_trace_events(f.trace)->count;
    assert_true(n >= ((size_t)1 << 16)); /* large enough for the halves */

    earl_states *one = NULL, *two = NULL;
    earl_states_options o1 = {.threads = 1}, o2 = {.threads = 2};
    ok(earl_states_build(f.trace, &o1, &one, &err));
    ok(earl_states_build(f.trace, &o2, &two, &err));
    for (int p = 0; p < EARL_POINTER_COUNT; p++) {
        const earl_eid *a = earl_states_pointer(one, (earl_pointer)p, &err);
        const earl_eid *b = earl_states_pointer(two, (earl_pointer)p, &err);
        assert_non_null(a);
        assert_non_null(b);
        assert_memory_equal(a, b, n * sizeof *a);
    }
    const earl_states_view *va = earl_states_get_view(one), *vb = earl_states_get_view(two);
    assert_memory_equal(va->enterptr, vb->enterptr, n * sizeof *va->enterptr);
    assert_int_equal(va->n_colls, vb->n_colls);
    assert_memory_equal(va->coll_complete, vb->coll_complete, va->n_colls * sizeof *va->coll_complete);
    const earl_states_warnings *wa = earl_states_get_warnings(one);
    const earl_states_warnings *wb = earl_states_get_warnings(two);
    assert_memory_equal(wa->counts, wb->counts, sizeof wa->counts);
    assert_true(wa->counts[EARL_SW_LEAVE_UNMATCHED] > 0);
    assert_true(wa->counts[EARL_SW_SEND_NOT_RECEIVED] > 0);
    assert_true(wa->counts[EARL_SW_COLL_INCOMPLETE] > 0);
    assert_int_equal(wa->n_details, wb->n_details);
    for (size_t k = 0; k < wa->n_details; k++) {
        assert_int_equal(wa->details[k].code, wb->details[k].code);
        assert_int_equal(wa->details[k].event, wb->details[k].event);
        assert_string_equal(wa->details[k].detail, wb->details[k].detail);
    }
    earl_states_free(one);
    earl_states_free(two);
    check_walked_calltree(f.trace, 1);
    check_walked_calltree(f.trace, 2);
    end(&f);
}

/* enterptr's 32 bits: "none" is no event id, the largest id a trace can
 * hold converts exactly. */
static void test_eid32_conversion(void **unused)
{
    (void)unused;
    assert_int_equal(earl_eid_from32(EARL_EID32_NONE), EARL_NONE);
    assert_int_equal(earl_eid_from32(0), 0);
    assert_int_equal(earl_eid_from32((earl_eid32)(EARL_MAX_EVENTS - 1)),
                     (earl_eid)EARL_MAX_EVENTS - 1);
    assert_true((size_t)EARL_EID32_NONE >= EARL_MAX_EVENTS); /* ids end below it */
}

static void test_bad_arguments(void **unused)
{
    (void)unused;
    earl_states *s = (earl_states *)1;
    assert_int_equal(earl_states_build(NULL, NULL, &s, &err), EARL_ERR_INVALID);
    assert_null(s);
    earl_states_free(NULL);
    assert_string_equal(earl_states_warning_code_name(EARL_SW_COLL_INCOMPLETE),
                        "coll_incomplete");
    assert_string_equal(earl_pointer_name(EARL_PTR_FORK), "forkptr");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figure_4_2),
        cmocka_unit_test(test_figure_4_3),
        cmocka_unit_test(test_inconsistent),
        cmocka_unit_test(test_halves_equal_one_pass),
        cmocka_unit_test(test_eid32_conversion),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
