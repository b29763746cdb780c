/*
 * test_profile.c - the time profile and inclusive time of earl_profile.h on
 * a small trace written with earl_writer, worked out by hand.
 *
 * Location 0 runs A { B { send } }, location 1 receives in MPI_Recv (the
 * situation of the EARL paper's Fig. 4.2, as in test_states.c):
 *   loc 0: ENTER A@1 ENTER B@2 SEND@3 LEAVE B@5 LEAVE A@7
 *   loc 1: ENTER R@4 RECV@6 LEAVE R@8
 * With t0 = 1, span 7 and two bins (edges 0, 3, 7 from t0), the exclusive
 * stretches are A [0,1) [4,6), B [1,2) [2,4) (split at 3), R [3,5) [5,7).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <otf2/otf2.h>

#include "earl.h"
#include "earl_profile.h"
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
    earl_trace *trace;
    earl_states *states;
    uint32_t a, b, r;
} fixture;

static uint32_t region(earl_writer *w, const char *name, uint8_t role)
{
    earl_writer_region_def d = {.name = name, .role = role,
                                .paradigm = strncmp(name, "MPI_", 4) == 0 ? OTF2_PARADIGM_MPI
                                                                          : OTF2_PARADIGM_USER};
    uint32_t ref;
    ok(earl_writer_region(w, &d, &ref, &err));
    return ref;
}

static void begin(fixture *f, int close_a)
{
    memset(f, 0, sizeof *f);
    f->dir = wtu_scratch();
    char path[512];
    snprintf(path, sizeof path, "%s/trace", f->dir);
    earl_writer *w;
    earl_loc loc[2];
    uint32_t machine, proc, world;
    ok(earl_writer_open(path, NULL, 1000, 0, &w, &err));
    ok(earl_writer_system_node(w, "machine", "machine", EARL_UNDEFINED_REF, &machine, &err));
    for (int r = 0; r < 2; r++) {
        char name[32];
        snprintf(name, sizeof name, "rank %d", r);
        ok(earl_writer_process(w, name, machine, r, &proc, &err));
        ok(earl_writer_location(w, proc, "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                                EARL_WRITER_AUTO_ID, &loc[r], &err));
    }
    ok(earl_writer_comm_world(w, NULL, &world, &err));
    f->a = region(w, "A", OTF2_REGION_ROLE_FUNCTION);
    f->b = region(w, "B", OTF2_REGION_ROLE_FUNCTION);
    f->r = region(w, "MPI_Recv", OTF2_REGION_ROLE_POINT2POINT);
    ok(earl_writer_enter(w, loc[0], 1, f->a, &err));
    ok(earl_writer_enter(w, loc[0], 2, f->b, &err));
    ok(earl_writer_mpi_send(w, loc[0], 3, 1, world, 42, 100, &err));
    ok(earl_writer_leave(w, loc[0], 5, f->b, &err));
    if (close_a)
        ok(earl_writer_leave(w, loc[0], 7, f->a, &err));
    ok(earl_writer_enter(w, loc[1], 4, f->r, &err));
    ok(earl_writer_mpi_recv(w, loc[1], 6, 0, world, 42, 100, &err));
    ok(earl_writer_leave(w, loc[1], 8, f->r, &err));
    ok(earl_writer_close(w, &err));
    ok(earl_trace_open(path, NULL, &f->trace, &err));
    ok(earl_states_build(f->trace, NULL, &f->states, &err));
}

static void end(fixture *f)
{
    earl_states_free(f->states);
    earl_trace_close(f->trace);
    wtu_remove_tree(f->dir);
    free(f->dir);
}

static void test_time_bins(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 1);
    const earl_eid32 *enterptr = earl_states_get_view(f.states)->enterptr;
    earl_profile_bins bins = {.t0 = 1, .span = 7, .n_bins = 2};
    int64_t totals[4 * 2] = {0};
    uint8_t present[4] = {0};
    ok(earl_profile_time(f.trace, enterptr, &bins, 3, totals, present, &err));
    assert_int_equal(totals[f.a * 2 + 0], 1);
    assert_int_equal(totals[f.a * 2 + 1], 2);
    assert_int_equal(totals[f.b * 2 + 0], 2);  /* [1,2) and the part of [2,4) before 3 */
    assert_int_equal(totals[f.b * 2 + 1], 1);
    assert_int_equal(totals[f.r * 2 + 0], 0);
    assert_int_equal(totals[f.r * 2 + 1], 4);
    assert_true(present[f.a] && present[f.b] && present[f.r] && !present[3]);

    /* one bin holds everything: 6 ticks on location 0, 4 on location 1 */
    bins.n_bins = 1;
    int64_t one[4] = {0};
    memset(present, 0, sizeof present);
    ok(earl_profile_time(f.trace, enterptr, &bins, 3, one, present, &err));
    assert_int_equal(one[f.a] + one[f.b] + one[f.r], 10);

    /* regions numbered past n_regions fall to the last row */
    int64_t spare[2 * 2] = {0};
    uint8_t seen[2] = {0};
    bins.n_bins = 2;
    ok(earl_profile_time(f.trace, enterptr, &bins, 1, spare, seen, &err));
    assert_int_equal(spare[0] + spare[1], 3);             /* A (ref 0) */
    assert_int_equal(spare[2] + spare[3], 3 + 4);         /* B and MPI_Recv */
    end(&f);
}

static void test_inclusive(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 0); /* A never left: it ends at location 0's last event (LEAVE B@5) */
    const earl_eid *leaveptr = earl_states_pointer(f.states, EARL_PTR_LEAVE, &err);
    assert_non_null(leaveptr);
    int64_t per_region[3] = {0};
    ok(earl_profile_inclusive(f.trace, leaveptr, 3, 0, per_region, &err));
    assert_int_equal(per_region[f.a], 5 - 1);
    assert_int_equal(per_region[f.b], 5 - 2);
    assert_int_equal(per_region[f.r], 8 - 4);
    int64_t per_location[3 * 2] = {0};
    ok(earl_profile_inclusive(f.trace, leaveptr, 3, 1, per_location, &err));
    assert_int_equal(per_location[f.a * 2 + 0], 4);
    assert_int_equal(per_location[f.a * 2 + 1], 0);
    assert_int_equal(per_location[f.r * 2 + 1], 4);
    end(&f);
}

static void test_bad_arguments(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f, 1);
    const earl_eid32 *enterptr = earl_states_get_view(f.states)->enterptr;
    int64_t totals[8] = {0};
    uint8_t present[4] = {0};
    earl_profile_bins none = {.t0 = 1, .span = 7, .n_bins = 0};
    assert_int_equal(earl_profile_time(f.trace, enterptr, &none, 3, totals, present, &err),
                     EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "at least one bin"));
    assert_int_equal(earl_profile_time(NULL, enterptr, &none, 3, totals, present, &err),
                     EARL_ERR_INVALID);
    assert_int_equal(earl_profile_inclusive(f.trace, NULL, 3, 0, totals, &err),
                     EARL_ERR_INVALID);
    end(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_bins),
        cmocka_unit_test(test_inclusive),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
