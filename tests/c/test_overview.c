/*
 * test_overview.c - the levels of detail of earl_overview.h on a small trace
 * written with earl_writer, worked out by hand.
 *
 * Region A is class 0 (computation), MPI_Recv class 1 (point-to-point):
 *   loc 0: ENTER A@0 ENTER R@10 LEAVE R@12 ENTER R@50 LEAVE R@90 LEAVE A@100
 *   loc 1: ENTER A@20 LEAVE A@30 ENTER A@60 LEAVE A@70   (nothing of its own
 *          open between 30 and 60: idle; no record before 20 and after 70)
 *   loc 2: ENTER A@0 LEAVE A@100
 * With the window [0, 100) in 10 bins of 10 ticks:
 *   row 0: A A A A A R R R R A   (bin 1: A 8 ticks, R 2)
 *   row 1: . . A _ _ _ A . . .   (. empty, _ idle)
 *   row 2: A everywhere
 * In one bin, A wins rows 0 and 2 and idleness row 1; R wins nothing, so it
 * takes the bin where its share is largest: row 0 (42 of 100 ticks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <otf2/otf2.h>

#include "earl.h"
#include "earl_overview.h"
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
    uint32_t a, r;
    uint8_t classes[3]; /* per region ref, and one for undefined refs */
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

static void begin(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->dir = wtu_scratch();
    char path[512];
    snprintf(path, sizeof path, "%s/trace", f->dir);
    earl_writer *w;
    earl_loc loc[3];
    uint32_t machine, proc, world;
    ok(earl_writer_open(path, NULL, 1000, 0, &w, &err));
    ok(earl_writer_system_node(w, "machine", "machine", EARL_UNDEFINED_REF, &machine, &err));
    for (int r = 0; r < 3; r++) {
        char name[32];
        snprintf(name, sizeof name, "rank %d", r);
        ok(earl_writer_process(w, name, machine, r, &proc, &err));
        ok(earl_writer_location(w, proc, "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                                EARL_WRITER_AUTO_ID, &loc[r], &err));
    }
    ok(earl_writer_comm_world(w, NULL, &world, &err));
    f->a = region(w, "A", OTF2_REGION_ROLE_FUNCTION);
    f->r = region(w, "MPI_Recv", OTF2_REGION_ROLE_POINT2POINT);
    ok(earl_writer_enter(w, loc[0], 0, f->a, &err));
    ok(earl_writer_enter(w, loc[0], 10, f->r, &err));
    ok(earl_writer_leave(w, loc[0], 12, f->r, &err));
    ok(earl_writer_enter(w, loc[0], 50, f->r, &err));
    ok(earl_writer_leave(w, loc[0], 90, f->r, &err));
    ok(earl_writer_leave(w, loc[0], 100, f->a, &err));
    ok(earl_writer_enter(w, loc[1], 20, f->a, &err));
    ok(earl_writer_leave(w, loc[1], 30, f->a, &err));
    ok(earl_writer_enter(w, loc[1], 60, f->a, &err));
    ok(earl_writer_leave(w, loc[1], 70, f->a, &err));
    ok(earl_writer_enter(w, loc[2], 0, f->a, &err));
    ok(earl_writer_leave(w, loc[2], 100, f->a, &err));
    ok(earl_writer_close(w, &err));
    ok(earl_trace_open(path, NULL, &f->trace, &err));
    ok(earl_states_build(f->trace, NULL, &f->states, &err));
    f->classes[f->a] = 0;
    f->classes[f->r] = 1;
    f->classes[2] = 0;
}

static void end(fixture *f)
{
    earl_states_free(f->states);
    earl_trace_close(f->trace);
    wtu_remove_tree(f->dir);
    free(f->dir);
}

#define E EARL_OVERVIEW_EMPTY
#define I EARL_OVERVIEW_IDLE

static int threads = 1;

static earl_status paint(fixture *f, const earl_loc *rows, uint32_t n_rows, int64_t t0,
                         int64_t span, const uint32_t *bins, uint32_t n_levels,
                         uint8_t *const *out)
{
    earl_overview_window w = {.t0 = t0, .span = span};
    return earl_overview_activity(f->trace, earl_states_get_view(f->states)->enterptr,
                                  f->classes, 2, 2, rows, n_rows, &w, bins, n_levels, out,
                                  threads, &err);
}

static void test_dominant_activity(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f);
    const earl_loc rows[3] = {0, 1, 2};
    uint8_t ten[30], one[3], two[6];
    uint8_t *out[3] = {ten, one, two};
    const uint32_t bins[3] = {10, 1, 2};
    ok(paint(&f, rows, 3, 0, 100, bins, 3, out));
    const uint8_t want[30] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 0,
                              E, E, 0, I, I, I, 0, E, E, E,
                              0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(ten, want, sizeof want);
    /* R wins no bin of one: it takes row 0, where its share is largest */
    const uint8_t want_one[3] = {1, I, 0};
    assert_memory_equal(one, want_one, sizeof want_one);
    /* two bins of 50: row 0 is A 48 R 2, then R 40 A 10; row 1 idle 20 A 10,
     * then A 10 idle 10 (a tie, won by the class, not by idleness) */
    const uint8_t want_two[6] = {0, 1, I, 0, 0, 0};
    assert_memory_equal(two, want_two, sizeof want_two);

    /* levels of detail, coarse to fine (each level's bins nest in the previous
     * level's: the shortcut for stretches inside the finest open bin) */
    uint8_t n1[3], n2[6], n10[30];
    uint8_t *nested[3] = {n1, n2, n10};
    const uint32_t nested_bins[3] = {1, 2, 10};
    ok(paint(&f, rows, 3, 0, 100, nested_bins, 3, nested));
    assert_memory_equal(n10, want, sizeof want);
    assert_memory_equal(n1, want_one, sizeof want_one);
    assert_memory_equal(n2, want_two, sizeof want_two);

    /* the same with three threads, a row each */
    uint8_t ten3[30], one3[3], two3[6];
    uint8_t *out3[3] = {ten3, one3, two3};
    threads = 3;
    ok(paint(&f, rows, 3, 0, 100, bins, 3, out3));
    threads = 1;
    assert_memory_equal(ten3, want, sizeof want);
    assert_memory_equal(one3, want_one, sizeof want_one);
    assert_memory_equal(two3, want_two, sizeof want_two);

    /* a level painted alone is the same as among others; rows in any order */
    uint8_t alone[20];
    uint8_t *out_alone[1] = {alone};
    const earl_loc reversed[2] = {1, 0};
    ok(paint(&f, reversed, 2, 0, 100, bins, 1, out_alone));
    assert_memory_equal(alone, want + 10, 10);
    assert_memory_equal(alone + 10, want, 10);
    end(&f);
}

/* Rows painted in parts: no class is given a bin it did not win on these
 * rows (it may win one on the others'); the tallies say what the caller needs
 * to decide that over all rows. */
static void test_rows_painted_in_parts(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f);
    const earl_loc row0[1] = {0};
    const uint32_t bins[1] = {1};
    uint8_t one[1];
    uint8_t *out[1] = {one};
    earl_overview_tally tally;
    earl_overview_window w = {.t0 = 0, .span = 100};
    ok(earl_overview_activity_part(f.trace, earl_states_get_view(f.states)->enterptr,
                                   f.classes, 2, 2, row0, 1, &w, bins, 1, out, &tally, threads,
                                   &err));
    assert_int_equal(one[0], 0); /* A won row 0; R is not rescued here */
    assert_int_equal(tally.won[0], 1);
    assert_int_equal(tally.won[1], 0);
    assert_true(tally.best_share[1] > 0);
    assert_int_equal(tally.best_at[1], 0);
    /* painted at once, the same row gives R its bin */
    ok(paint(&f, row0, 1, 0, 100, bins, 1, out));
    assert_int_equal(one[0], 1);
    /* without tallies, the part is the picture painted at once */
    ok(earl_overview_activity_part(f.trace, earl_states_get_view(f.states)->enterptr,
                                   f.classes, 2, 2, row0, 1, &w, bins, 1, out, NULL, threads,
                                   &err));
    assert_int_equal(one[0], 1);
    end(&f);
}

static void test_windows(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f);
    const earl_loc rows[2] = {0, 1};
    /* [45, 65) in 4 bins of 5: row 0 is A until 50 then R; row 1 is idle
     * until 60, then A (the stretches crossing the window's edges count) */
    uint8_t four[8];
    uint8_t *out[1] = {four};
    const uint32_t bins[1] = {4};
    ok(paint(&f, rows, 2, 45, 20, bins, 1, out));
    const uint8_t want[8] = {0, 1, 1, 1, I, I, I, 0};
    assert_memory_equal(four, want, sizeof want);
    /* more bins than ticks: [45, 50) in 8 bins, some of them no tick wide (they
     * show what the next bin, starting at the same tick, shows) */
    uint8_t eight[16];
    uint8_t *out8[1] = {eight};
    const uint32_t bins8[1] = {8};
    ok(paint(&f, rows, 2, 45, 5, bins8, 1, out8));
    const uint8_t want8[16] = {0, 0, 0, 0, 0, 0, 0, 0, I, I, I, I, I, I, I, I};
    assert_memory_equal(eight, want8, sizeof want8);
    /* a window after every record: nothing */
    ok(paint(&f, rows, 2, 500, 20, bins, 1, out));
    const uint8_t none[8] = {E, E, E, E, E, E, E, E};
    assert_memory_equal(four, none, sizeof none);
    end(&f);
}

static void test_bad_arguments(void **unused)
{
    (void)unused;
    fixture f;
    begin(&f);
    uint8_t buf[64];
    uint8_t *out[1] = {buf};
    const earl_loc twice[2] = {0, 0}, beyond[1] = {7};
    const uint32_t bins[1] = {4}, none[1] = {0};
    assert_int_equal(paint(&f, twice, 2, 0, 100, bins, 1, out), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "drawn twice"));
    assert_int_equal(paint(&f, beyond, 1, 0, 100, bins, 1, out), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "3 locations"));
    assert_int_equal(paint(&f, twice, 1, 0, 100, none, 1, out), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "at least one bin"));
    assert_int_equal(paint(&f, twice, 1, 0, 0, bins, 1, out), EARL_ERR_INVALID);
    f.classes[f.r] = 2; /* only 2 classes */
    assert_int_equal(paint(&f, twice, 1, 0, 100, bins, 1, out), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "has class 2"));
    end(&f);
}

static void test_message_bundles(void **unused)
{
    (void)unused;
    /* window [0, 100) in 10 bins, bundles of 2 bins: the sends at 5 and 6 from
     * row 0 to row 1 share a bundle, the one at 30 does not, nor does 7 from
     * row 1 to row 0; the send at 200 is outside the window */
    const int64_t send[5] = {30, 5, 200, 7, 6}, recv[5] = {40, 15, 210, 8, 17};
    const uint32_t src[5] = {0, 0, 0, 1, 0}, dst[5] = {1, 1, 1, 0, 1};
    earl_overview_window w = {.t0 = 0, .span = 100};
    earl_overview_bundle *b;
    size_t n;
    ok(earl_overview_messages(send, recv, src, dst, 5, &w, 10, 2, &b, &n, &err));
    assert_int_equal(n, 3);
    assert_int_equal(b[0].src, 0);
    assert_int_equal(b[0].dst, 1);
    assert_int_equal(b[0].count, 2);
    assert_int_equal(b[0].send_first, 5);
    assert_int_equal(b[0].send_last, 6);
    assert_int_equal(b[0].recv_first, 15);
    assert_int_equal(b[0].recv_last, 17);
    assert_int_equal(b[1].count, 1);
    assert_int_equal(b[1].send_first, 30);
    assert_int_equal(b[2].src, 1);
    assert_int_equal(b[2].recv_last, 8);
    /* the same messages in time order (as a trace gives them) take the counting
     * sort by pair: the same bundles */
    const int64_t send_t[5] = {5, 6, 7, 30, 200}, recv_t[5] = {15, 17, 8, 40, 210};
    const uint32_t src_t[5] = {0, 0, 1, 0, 0}, dst_t[5] = {1, 1, 0, 1, 1};
    earl_overview_bundle *c;
    size_t nc;
    ok(earl_overview_messages(send_t, recv_t, src_t, dst_t, 5, &w, 10, 2, &c, &nc, &err));
    assert_int_equal(nc, 3);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(c[k].src, b[k].src);
        assert_int_equal(c[k].dst, b[k].dst);
        assert_int_equal(c[k].count, b[k].count);
        assert_int_equal(c[k].send_first, b[k].send_first);
        assert_int_equal(c[k].send_last, b[k].send_last);
        assert_int_equal(c[k].recv_first, b[k].recv_first);
        assert_int_equal(c[k].recv_last, b[k].recv_last);
    }
    free(c);
    free(b);
    /* one bin per bundle and per message: every bundle is one message */
    ok(earl_overview_messages(send, recv, src, dst, 5, &w, 100, 1, &b, &n, &err));
    assert_int_equal(n, 4);
    free(b);
    assert_int_equal(earl_overview_messages(send, recv, src, dst, 5, &w, 10, 0, &b, &n, &err),
                     EARL_ERR_INVALID);
    assert_int_equal(earl_overview_messages(NULL, recv, src, dst, 5, &w, 10, 1, &b, &n, &err),
                     EARL_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dominant_activity),
        cmocka_unit_test(test_rows_painted_in_parts),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_message_bundles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
