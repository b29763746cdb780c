/*
 * test_base.c - cmocka tests of the core's primitives (csrc/base): each is
 * written once and every subsystem uses it, so each is tested here once,
 * on the cases its users rely on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/sorted.h"

/* ---- sorted arrays ----------------------------------------------------------- */

static void test_cmp_i64_sorts_ascending(void **state)
{
    (void)state;
    int64_t a[] = {5, -1, INT64_MAX, 0, INT64_MIN, 5, 3};
    qsort(a, sizeof a / sizeof *a, sizeof *a, earl_cmp_i64);
    int64_t want[] = {INT64_MIN, -1, 0, 3, 5, 5, INT64_MAX};
    assert_memory_equal(a, want, sizeof a);
}

/* ---- clocks ---------------------------------------------------------------------- */

static void test_clocks_run_forward(void **state)
{
    (void)state;
    double t0 = earl_now_seconds(), c0 = earl_thread_cpu_seconds();
    volatile uint64_t x = 0;
    for (uint64_t k = 0; k < 20000000; k++)
        x += k;
    double t1 = earl_now_seconds(), c1 = earl_thread_cpu_seconds();
    assert_true(t1 > t0);
    assert_true(c1 > c0);
    assert_true(c1 - c0 <= (t1 - t0) * 1.5 + 0.01); /* one thread: no more cpu than wall */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmp_i64_sorts_ascending),
        cmocka_unit_test(test_clocks_run_forward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
