/*
 * test_hb_clock.c - cmocka tests of hb_clock.c, the saved vector clocks of
 * the causal-order replays: the slot pool keeps contents across growth and
 * reuses released slots, waiting lists wake exactly the locations of a key,
 * and the collective shapes.  (The event map is the core's hash map, tested
 * in test_base.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hb/hb_clock.h"

static void test_clock_pool_keeps_contents_and_reuses_slots(void **state)
{
    (void)state;
    hb_clock_pool pool;
    hb_clock_pool_init(&pool, 5);
    uint32_t src[5], slots[300];
    for (uint32_t s = 0; s < 300; s++) {
        for (uint32_t k = 0; k < 5; k++)
            src[k] = s * 10 + k;
        slots[s] = hb_clock_take(&pool, src);
        assert_int_equal(slots[s], s);
    }
    for (uint32_t s = 0; s < 300; s++)
        for (uint32_t k = 0; k < 5; k++)
            assert_int_equal(hb_clock_at(&pool, slots[s])[k], s * 10 + k);
    hb_clock_release(&pool, slots[17]);
    hb_clock_release(&pool, slots[42]);
    uint32_t again = hb_clock_take(&pool, NULL);
    assert_true(again == 17 || again == 42);
    for (uint32_t k = 0; k < 5; k++)
        assert_int_equal(hb_clock_at(&pool, again)[k], 0);
    assert_int_equal(pool.used, 300);
    uint32_t a[5] = {1, 9, 3, 0, 7}, b[5] = {4, 2, 3, 8, 7};
    hb_clock_max(a, b, 5);
    uint32_t m[5] = {4, 9, 3, 8, 7};
    assert_memory_equal(a, m, sizeof m);
    hb_clock_pool_free(&pool);
}

static earl_eid next_of(void *ctx, int32_t l)
{
    return ((const earl_eid *)ctx)[l];
}

static void test_waiters_wake_exactly_their_key(void **state)
{
    (void)state;
    hb_waiters w;
    assert_int_equal(hb_waiters_init(&w, 6), 0);
    assert_int_equal(hb_wait(&w, 1, 100), 0);
    assert_int_equal(hb_wait(&w, 3, 100), 0);
    assert_int_equal(hb_wait(&w, 4, 100), 0);
    assert_int_equal(hb_wait(&w, 2, 7), 0);
    assert_true(hb_waiting(&w, 3) && !hb_waiting(&w, 0));
    hb_unwait(&w, 3); /* from the middle of a list */
    assert_false(hb_waiting(&w, 3));
    earl_eid next[6] = {0, 50, 20, 90, 40, 0};
    assert_int_equal(hb_waiters_earliest(&w, next_of, next), 2);
    int32_t out[6];
    size_t n = hb_wake(&w, 100, out);
    assert_int_equal(n, 2);
    assert_true((out[0] == 1 && out[1] == 4) || (out[0] == 4 && out[1] == 1));
    assert_int_equal(hb_wake(&w, 100, out), 0);
    hb_unwait(&w, 2); /* the head and only one of its list */
    assert_int_equal(hb_wake(&w, 7, out), 0);
    assert_int_equal(hb_waiters_earliest(&w, next_of, next), -1);
    hb_waiters_free(&w);
}

static void test_collective_shapes(void **state)
{
    (void)state;
    assert_int_equal(hb_collective_shape(0 /* BARRIER */), HB_SHAPE_ALL);
    assert_int_equal(hb_collective_shape(1 /* BCAST */), HB_SHAPE_FROM_ROOT);
    assert_int_equal(hb_collective_shape(5 /* SCATTERV */), HB_SHAPE_FROM_ROOT);
    assert_int_equal(hb_collective_shape(3 /* GATHERV */), HB_SHAPE_TO_ROOT);
    assert_int_equal(hb_collective_shape(12 /* REDUCE */), HB_SHAPE_TO_ROOT);
    assert_int_equal(hb_collective_shape(11 /* ALLREDUCE */), HB_SHAPE_ALL);
    assert_int_equal(hb_collective_shape(14 /* SCAN */), HB_SHAPE_SCAN);
    assert_int_equal(hb_collective_shape(15 /* EXSCAN */), HB_SHAPE_EXSCAN);
    assert_int_equal(hb_collective_shape(17 /* CREATE_HANDLE */), HB_SHAPE_ALL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_pool_keeps_contents_and_reuses_slots),
        cmocka_unit_test(test_waiters_wake_exactly_their_key),
        cmocka_unit_test(test_collective_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
