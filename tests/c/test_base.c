/*
 * test_base.c - cmocka tests of the core's primitives (csrc/base): each is
 * written once and every subsystem uses it, so each is tested here once,
 * on the cases its users rely on.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/hashmap.h"
#include "base/parts.h"
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

/* The search from a hint agrees with a plain lower bound for every hint, near
 * and far, on sorted keys with runs of equal values; and the lower bound
 * with a linear scan. */
static void test_gallop_matches_lower_bound(void **state)
{
    (void)state;
    enum { N = 1500 };
    int64_t a[N];
    uint32_t b[N];
    srand(11);
    for (int round = 0; round < 20; round++) {
        int64_t v = rand() % 5;
        for (size_t i = 0; i < N; i++) {
            a[i] = v;
            b[i] = (uint32_t)v;
            v += rand() % 3 == 0 ? rand() % 4 : 0;
        }
        for (int probe = 0; probe < 2000; probe++) {
            int64_t x = rand() % (v + 4) - 2;
            size_t hint = (size_t)rand() % (N + 1), want = 0;
            while (want < N && a[want] < x)
                want++;
            assert_int_equal(earl_i64_gallop_lower_bound(a, N, x, hint), want);
            assert_int_equal(earl_i64_lower_bound(a, 0, N, x), want);
            if (x >= 0) {
                assert_int_equal(earl_u32_gallop_lower_bound(b, N, (uint32_t)x, hint), want);
                assert_int_equal(earl_u32_lower_bound(b, 0, N, (uint32_t)x), want);
            }
            assert_int_equal(earl_eid32_lower_bound(b, 0, N, x), want);
        }
    }
}

/* Sub-ranges, empty ranges and the ends of the 32-bit ids. */
static void test_lower_bound_ranges_and_ends(void **state)
{
    (void)state;
    const uint64_t t[] = {3, 3, 7, 9, UINT64_MAX};
    assert_int_equal(earl_u64_lower_bound(t, 0, 5, 0), 0);
    assert_int_equal(earl_u64_lower_bound(t, 0, 5, 4), 2);
    assert_int_equal(earl_u64_lower_bound(t, 3, 5, 4), 3); /* the answer is at least lo */
    assert_int_equal(earl_u64_lower_bound(t, 0, 2, 9), 2); /* at most hi */
    assert_int_equal(earl_u64_lower_bound(t, 2, 2, 0), 2);
    assert_int_equal(earl_u64_lower_bound(t, 0, 5, UINT64_MAX), 4);
    const earl_eid32 ids[] = {0, 5, UINT32_MAX - 1};
    assert_int_equal(earl_eid32_lower_bound(ids, 0, 3, -1), 0);
    assert_int_equal(earl_eid32_lower_bound(ids, 0, 3, 1), 1);
    assert_int_equal(earl_eid32_lower_bound(ids, 0, 3, (earl_eid)UINT32_MAX), 3);
    assert_int_equal(earl_eid32_lower_bound(ids, 0, 3, (earl_eid)1 << 40), 3);
}

/* A predicate over indices: the first index at which it fails. */
static int below_seven(const void *ctx, size_t k)
{
    (void)ctx;
    return k < 7;
}

static void test_partition_point(void **state)
{
    (void)state;
    assert_int_equal(earl_partition_point(0, 100, below_seven, NULL), 7);
    assert_int_equal(earl_partition_point(7, 100, below_seven, NULL), 7);
    assert_int_equal(earl_partition_point(9, 100, below_seven, NULL), 9);
    assert_int_equal(earl_partition_point(0, 5, below_seven, NULL), 5);
    assert_int_equal(earl_partition_point(3, 3, below_seven, NULL), 3);
    assert_int_equal(earl_partition_point(0, SIZE_MAX, below_seven, NULL), 7);
}

/* ---- the hash map ----------------------------------------------------------------- */

static void test_map_find_and_insert(void **state)
{
    (void)state;
    earl_map m = {0};
    assert_null(earl_map_find(&m, 1, 2));
    assert_int_equal(earl_map_take(&m, 1, 2, NULL), 0);
    assert_int_equal(earl_map_first(&m, 1, 2), EARL_MAP_END);
    int added = -1;
    int64_t *v = earl_map_slot(&m, 1, 2, 42, &added);
    assert_non_null(v);
    assert_int_equal(added, 1);
    assert_int_equal(*v, 42);
    *v = 7;
    assert_ptr_equal(earl_map_slot(&m, 1, 2, 99, &added), v);
    assert_int_equal(added, 0);
    assert_int_equal(*earl_map_find(&m, 1, 2), 7);
    assert_null(earl_map_find(&m, 2, 1)); /* the words of a key are ordered */
    assert_null(earl_map_find(&m, 1, 0));
    assert_int_equal(m.n, 1);
    assert_int_equal(earl_map_bytes(&m), m.cap * sizeof(earl_map_entry));
    earl_map_free(&m);
    assert_int_equal(m.cap, 0);
    assert_int_equal(earl_map_init(&m, 100), 0);
    assert_int_equal(m.cap, 256); /* a power of two, at least twice the entries */
    earl_map_free(&m);
}

/* Random inserts, finds and removals in a small key space (long probe runs
 * that wrap around the table) against a plain array. */
static void test_map_against_an_array(void **state)
{
    (void)state;
    enum { KEYS = 3000 };
    static int64_t ref[KEYS]; /* value, -1: absent */
    for (size_t k = 0; k < KEYS; k++)
        ref[k] = -1;
    earl_map m = {0};
    size_t n = 0;
    srand(5);
    for (int op = 0; op < 400000; op++) {
        size_t k = (size_t)rand() % KEYS;
        uint64_t a = k % 7, b = k / 7 * 0x100000001ull; /* two words both in play */
        int what = rand() % 3;
        if (what == 0) {
            int added;
            int64_t *v = earl_map_slot(&m, a, b, op, &added);
            assert_non_null(v);
            assert_int_equal(added, ref[k] < 0);
            if (added) {
                ref[k] = op;
                n++;
            }
            assert_int_equal(*v, ref[k]);
        } else if (what == 1) {
            int64_t *v = earl_map_find(&m, a, b);
            if (ref[k] < 0)
                assert_null(v);
            else
                assert_int_equal(*v, ref[k]);
        } else {
            int64_t v = -5;
            assert_int_equal(earl_map_take(&m, a, b, &v), ref[k] >= 0);
            if (ref[k] >= 0) {
                assert_int_equal(v, ref[k]);
                ref[k] = -1;
                n--;
            }
        }
        assert_int_equal(m.n, n);
        assert_true(2 * m.n <= m.cap);
    }
    for (size_t k = 0; k < KEYS; k++) {
        int64_t *v = earl_map_find(&m, k % 7, k / 7 * 0x100000001ull);
        if (ref[k] < 0)
            assert_null(v);
        else
            assert_int_equal(*v, ref[k]);
    }
    earl_map_free(&m);
}

/* Entries of one key come out in the order they went in, through removals
 * of other keys and the growth of the table. */
static void test_map_keeps_the_order_of_a_keys_entries(void **state)
{
    (void)state;
    earl_map m = {0};
    int64_t next_in[4] = {0}, next_out[4] = {0};
    srand(9);
    for (int op = 0; op < 200000; op++) {
        uint64_t key = (uint64_t)(rand() % 4);
        if (rand() % 5 < 3) {
            assert_int_equal(earl_map_add(&m, key, 0, next_in[key]++), 0);
        } else {
            int64_t v;
            int had = next_out[key] < next_in[key];
            assert_int_equal(earl_map_take(&m, key, 0, &v), had);
            if (had)
                assert_int_equal(v, next_out[key]++);
        }
        if (op % 1000 == 0) { /* the entries of a key, in order */
            int64_t want = next_out[key];
            for (size_t j = earl_map_first(&m, key, 0); j != EARL_MAP_END;
                 j = earl_map_next(&m, j, key, 0))
                assert_int_equal(m.slots[j].val, want++);
            assert_int_equal(want, next_in[key]);
            if (next_out[key] < next_in[key])
                assert_int_equal(*earl_map_find(&m, key, 0), next_out[key]);
        }
    }
    earl_map_free(&m);
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

/* ---- parts on threads ------------------------------------------------------------ */

typedef struct part {
    int runs;
    pthread_t thread;
    uint64_t sum;
} part;

static void *run_part(void *arg)
{
    part *p = arg;
    p->runs++;
    p->thread = pthread_self();
    for (uint64_t k = 0; k < 100000; k++)
        p->sum += k;
    return NULL;
}

static void test_cores_and_threads_asked(void **state)
{
    (void)state;
    int cores = earl_online_cores();
    assert_true(cores >= 1);
    assert_int_equal(earl_threads_or_cores(0), cores);
    assert_int_equal(earl_threads_or_cores(-3), cores);
    assert_int_equal(earl_threads_or_cores(1), 1);
    assert_int_equal(earl_threads_or_cores(7), 7);
}

static void test_parts_run_once_each_part_0_on_the_caller(void **state)
{
    (void)state;
    for (size_t n = 0; n <= 9; n++) {
        part parts[9];
        memset(parts, 0, sizeof parts);
        size_t on_threads = earl_parts_run(run_part, parts, sizeof *parts, n);
        assert_true(on_threads <= (n ? n - 1 : 0));
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(parts[k].runs, 1);
            assert_int_equal(parts[k].sum, 100000ull * 99999ull / 2);
        }
        for (size_t k = n; k < 9; k++)
            assert_int_equal(parts[k].runs, 0);
        if (n)
            assert_true(pthread_equal(parts[0].thread, pthread_self()));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmp_i64_sorts_ascending),
        cmocka_unit_test(test_gallop_matches_lower_bound),
        cmocka_unit_test(test_lower_bound_ranges_and_ends),
        cmocka_unit_test(test_partition_point),
        cmocka_unit_test(test_map_find_and_insert),
        cmocka_unit_test(test_map_against_an_array),
        cmocka_unit_test(test_map_keeps_the_order_of_a_keys_entries),
        cmocka_unit_test(test_clocks_run_forward),
        cmocka_unit_test(test_cores_and_threads_asked),
        cmocka_unit_test(test_parts_run_once_each_part_0_on_the_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
