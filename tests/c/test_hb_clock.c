/*
 * test_hb_clock.c - cmocka tests of hb_clock.c, the saved vector clocks of
 * the causal-order replays: the event map against a plain array under long
 * random sequences of puts and takes (backward-shift deletion keeps every
 * key findable), and the slot pool keeps contents across growth and reuses
 * released slots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hb_clock.h"

#define KEYS 5000

static void test_event_map_matches_an_array(void **state)
{
    (void)state;
    static uint32_t want[KEYS];
    for (size_t k = 0; k < KEYS; k++)
        want[k] = UINT32_MAX;
    hb_event_map map;
    hb_event_map_init(&map);
    srand(7);
    size_t count = 0;
    for (int step = 0; step < 400000; step++) {
        /* keys spread over a wide range collide in the table's low bits */
        earl_eid key = (earl_eid)(rand() % KEYS);
        earl_eid stored = key * 4096 + 3;
        if (rand() % 3) {
            uint32_t v = (uint32_t)rand();
            assert_int_equal(hb_event_map_put(&map, stored, v), 0);
            count += want[key] == UINT32_MAX;
            want[key] = v;
        } else {
            assert_int_equal(hb_event_map_take(&map, stored), want[key]);
            count -= want[key] != UINT32_MAX;
            want[key] = UINT32_MAX;
        }
        if (step % 997 == 0)
            for (size_t k = 0; k < KEYS; k++)
                assert_int_equal(hb_event_map_get(&map, (earl_eid)k * 4096 + 3), want[k]);
        assert_int_equal(map.count, count);
    }
    hb_event_map_free(&map);
    assert_int_equal(hb_event_map_get(&map, 3), UINT32_MAX);
}

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_map_matches_an_array),
        cmocka_unit_test(test_clock_pool_keeps_contents_and_reuses_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
