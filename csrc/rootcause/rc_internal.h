/*
 * rc_internal.h - what the files of the root-cause subsystem share: a
 * call-path map under construction (earl_rc_map grown query by query) and a
 * dense per-cnode accumulator that resets only what it touched.
 *
 *   rc_maps.c       building, freeing and subtracting call-path maps
 *   rc_intervals.c  time chunks summed between synchronisation points
 *
 * Not part of the public API.
 */
#ifndef EARL_RC_INTERNAL_H
#define EARL_RC_INTERNAL_H

#include "earl_rootcause.h"
#include "util.h"

/* ---- a map grown one query at a time -------------------------------------- */

typedef struct rc_map_builder {
    earl_rc_map *map;
    size_t cap;  /* entries allocated in map->cnode / map->value */
    size_t done; /* queries closed so far */
} rc_map_builder;

/* Start out (zeroed first) for queries queries; -1 when out of memory. */
int rc_map_begin(rc_map_builder *b, earl_rc_map *out, size_t queries);
/* Append (cnode, value) to the current query; -1 when out of memory. */
int rc_map_push(rc_map_builder *b, int64_t cnode, double value);
/* Close the current query. */
void rc_map_end_query(rc_map_builder *b);

/* ---- dense per-cnode accumulator ------------------------------------------ */

typedef struct rc_accumulator {
    int64_t n_cnodes;
    int64_t *ticks;   /* exact tick sums */
    double *value;    /* the sums as doubles, then corrected */
    uint8_t *touched;
    int64_t *list;    /* the touched cnodes, in first-touch order until sorted */
    size_t n_list;
} rc_accumulator;

int rc_acc_init(rc_accumulator *a, int64_t n_cnodes);
void rc_acc_free(rc_accumulator *a);
static inline void rc_acc_add_ticks(rc_accumulator *a, int64_t cnode, int64_t ticks)
{
    if (!a->touched[cnode]) {
        a->touched[cnode] = 1;
        a->ticks[cnode] = 0;
        a->list[a->n_list++] = cnode;
    }
    a->ticks[cnode] += ticks;
}
/* Sort the touched cnodes ascending. */
void rc_acc_sort(rc_accumulator *a);
/* Forget every touched cnode. */
void rc_acc_clear(rc_accumulator *a);

/* ---- sorted int64 keys ---------------------------------------------------- */

/* The first k in [lo, hi) with a[k] >= x, or hi. */
static inline size_t rc_lower_bound(const int64_t *a, size_t lo, size_t hi, int64_t x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
