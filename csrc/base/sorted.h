/*
 * sorted.h - sorted arrays of event ids and keys: sorting them (qsort's
 * comparison) and searching them.
 */
#ifndef EARL_BASE_SORTED_H
#define EARL_BASE_SORTED_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

/* The first k in [lo, hi) with a[k] >= x, or hi; a sorted ascending there.
 * Events before or at x: earl_eid_lower_bound(a, lo, hi, x + 1). */
size_t earl_eid_lower_bound(const earl_eid *a, size_t lo, size_t hi, earl_eid x);
/* The same over the 32-bit event ids of earl_events.loc_events (x may be
 * any event id, -1 or beyond the last included). */
size_t earl_eid32_lower_bound(const earl_eid32 *a, size_t lo, size_t hi, earl_eid x);
/* The same over unsigned 64-bit keys (timestamps, OTF2 location ids). */
size_t earl_u64_lower_bound(const uint64_t *a, size_t lo, size_t hi, uint64_t x);

/* qsort's comparison of two int64_t (earl_eid): ascending. */
int earl_cmp_i64(const void *x, const void *y);

#endif
