/*
 * sorted.h - sorted arrays: sorting them (qsort's comparison) and searching
 * them.
 *
 * Every search of a sorted array in the core is a partition point: the
 * first index at which a predicate that holds on a prefix of the range (for
 * an ascending array, "a[k] < x") fails.  earl_partition_point is that
 * binary search, written once; the typed lower bounds are made of it, and so
 * is the galloping search that starts from the answer of a nearby earlier
 * search.  Everything here is inline, so that each call's predicate is
 * inlined into its loop.
 */
#ifndef EARL_BASE_SORTED_H
#define EARL_BASE_SORTED_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

/* qsort's comparison of two int64_t (earl_eid): ascending. */
int earl_cmp_i64(const void *x, const void *y);

/* The first k in [lo, hi) at which below(ctx, k) is false, or hi when there
 * is none; below must hold for a prefix of [lo, hi) and for nothing after
 * it.  O(log(hi - lo)) calls of below. */
static inline size_t earl_partition_point(size_t lo, size_t hi,
                                          int (*below)(const void *ctx, size_t k),
                                          const void *ctx)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (below(ctx, mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Answers this close to a galloping search's hint are found by a plain scan:
 * sequential reads and one mispredicted branch, where a galloping search
 * mispredicts at every step. */
#define EARL_GALLOP_SCAN 64

/* The searches of an array of type, named by suffix:
 *
 *   earl_<suffix>_lower_bound(a, lo, hi, x)
 *       the first k in [lo, hi) with a[k] >= x, or hi (a ascending there);
 *       the first k with a[k] > x is the lower bound of x + 1;
 *   earl_<suffix>_gallop_lower_bound(a, n, x, hint)
 *       the same over a[0..n), searched outward from hint (the answer of a
 *       nearby earlier search): queries that move forward a little each
 *       time touch only the cache lines around their answers. */
#define EARL_DEFINE_SEARCHES(suffix, type)                                                       \
    typedef struct earl_bound_##suffix {                                                         \
        const type *a;                                                                           \
        type x;                                                                                  \
    } earl_bound_##suffix;                                                                       \
                                                                                                 \
    static inline int earl_below_##suffix(const void *ctx, size_t k)                             \
    {                                                                                            \
        const earl_bound_##suffix *b = ctx;                                                      \
        return b->a[k] < b->x;                                                                   \
    }                                                                                            \
                                                                                                 \
    static inline size_t earl_##suffix##_lower_bound(const type *a, size_t lo, size_t hi,       \
                                                     type x)                                     \
    {                                                                                            \
        earl_bound_##suffix b = {a, x};                                                          \
        return earl_partition_point(lo, hi, earl_below_##suffix, &b);                           \
    }                                                                                            \
                                                                                                 \
    static inline size_t earl_##suffix##_gallop_lower_bound(const type *a, size_t n, type x,    \
                                                            size_t hint)                         \
    {                                                                                            \
        if (hint > n)                                                                            \
            hint = n;                                                                            \
        size_t lo, hi, step = 1;                                                                 \
        if (hint < n && a[hint] < x) {                                                           \
            /* forward: a[lo] < x */                                                             \
            size_t near = n - hint < EARL_GALLOP_SCAN ? n : hint + EARL_GALLOP_SCAN;             \
            for (size_t i = hint + 1; i < near; i++)                                             \
                if (a[i] >= x)                                                                   \
                    return i;                                                                    \
            if (near == n)                                                                       \
                return n;                                                                        \
            lo = near - 1;                                                                       \
            hi = near;                                                                           \
            while (hi < n && a[hi] < x) {                                                        \
                lo = hi;                                                                         \
                step *= 2;                                                                       \
                hi = near + step < n ? near + step : n;                                          \
            }                                                                                    \
            return earl_##suffix##_lower_bound(a, lo + 1, hi, x);                                \
        }                                                                                        \
        /* backward: the answer is at most hint */                                               \
        size_t near = hint < EARL_GALLOP_SCAN ? 0 : hint - EARL_GALLOP_SCAN;                     \
        for (size_t i = hint; i > near; i--)                                                     \
            if (a[i - 1] < x)                                                                    \
                return i;                                                                        \
        if (near == 0)                                                                           \
            return 0;                                                                            \
        hint = near;                                                                             \
        hi = hint;                                                                               \
        lo = hint;                                                                               \
        while (lo > 0 && a[lo - 1] >= x) {                                                       \
            hi = lo - 1;                                                                         \
            lo = step <= hint ? hint - step : 0;                                                 \
            step *= 2;                                                                           \
        }                                                                                        \
        return earl_##suffix##_lower_bound(a, lo, hi, x);                                        \
    }

/* int64_t: event ids (earl_eid) and the root causes' keys; uint64_t:
 * timestamps, OTF2 location ids, chunk indices; uint32_t: chunk slots. */
EARL_DEFINE_SEARCHES(i64, int64_t)
EARL_DEFINE_SEARCHES(u64, uint64_t)
EARL_DEFINE_SEARCHES(u32, uint32_t)

/* The first k in [lo, hi) with a[k] >= x over 32-bit event ids
 * (earl_events.loc_events), or hi; x may be any event id, -1 or beyond the
 * last one a 32-bit id holds. */
static inline size_t earl_eid32_lower_bound(const earl_eid32 *a, size_t lo, size_t hi, earl_eid x)
{
    if (x <= 0)
        return lo;
    if (x > (earl_eid)UINT32_MAX)
        return hi;
    return earl_u32_lower_bound(a, lo, hi, (uint32_t)x);
}

#endif
