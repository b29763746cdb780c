/*
 * rc_internal.h - what the files of the root-cause subsystem share: a
 * call-path map under construction (earl_rc_map grown query by query) and a
 * dense per-cnode accumulator that resets only what it touched.
 *
 *   rc_maps.c       building, freeing and subtracting call-path maps
 *   rc_chunks.c     the time chunks of every location, summed between two events
 *   rc_intervals.c  time chunks summed between synchronisation points
 *   rc_pairs.c      where two locations last met before an event
 *   rc_groups.c     where a collective's delayer last met its communicator
 *   rc_longterm.c   the backward replay of long-term delay costs
 *   rc_critical.c   the critical path's walk
 *
 * Not part of the public API.
 */
#ifndef EARL_RC_INTERNAL_H
#define EARL_RC_INTERNAL_H

#include "earl_rootcause.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/mem.h"
#include "base/sorted.h"

/* ---- a map grown one query at a time -------------------------------------- */

typedef struct rc_map_builder {
    earl_rc_map *map;
    size_t cnode_cap, value_cap; /* entries allocated in map->cnode, map->value */
    size_t done;                 /* queries closed so far */
} rc_map_builder;

/* Start out (zeroed first) for queries queries; -1 when out of memory. */
int rc_map_begin(rc_map_builder *b, earl_rc_map *out, size_t queries);
/* Append (cnode, value) to the current query; -1 when out of memory. */
int rc_map_push(rc_map_builder *b, int64_t cnode, double value);
/* Close the current query. */
void rc_map_end_query(rc_map_builder *b);

/* The queries in the order to answer them: grouped by location (a stable
 * counting sort; each location's queries keep their order, mostly ascending
 * in time), so that a location's chunks and points are read front to back
 * instead of in the interleaved order of the caller.  NULL when out of
 * memory; locations are below n_locations. */
size_t *rc_order_by_location(const int64_t *loc, size_t queries, int64_t n_locations);

/* Reorder a CSR table built in the order `order` (its query r holds the
 * rows of query order[r]) into query order: offset (queries + 1) and the
 * n_columns arrays of 8-byte items (earl_mem blocks) are replaced by new ones, one column
 * after the other.  -1 when out of memory: then the offsets are unchanged but
 * some columns may be reordered already, so the caller frees the table. */
int rc_csr_unorder(size_t queries, const size_t *order, int64_t **offset, int n_columns,
                   void **columns[]);

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

/* ---- time chunks (rc_chunks.c) ------------------------------------------- */

/* Where the previous query of a location found its chunks and its table
 * chunks: a location's queries mostly come in time order, so the next
 * searches start there. */
typedef struct rc_chunk_cursor {
    size_t chunk;
    size_t table;
} rc_chunk_cursor;

/* EARL_ERR_INVALID when the chunk offsets are not ascending; `what` names
 * the caller in the message. */
earl_status rc_chunks_check(const earl_rc_chunks *chunks, const char *what, earl_error *err);

/* Add the exclusive time of location loc (not negative) between events lo
 * (exclusive: after its point; -1: the location's start) and hi (before its
 * point) to acc, per call path; cur is the location's cursor (zeroed before
 * its first query).  EARL_ERR_INVALID for a chunk's call path out of range. */
earl_status rc_sum_chunks(const earl_rc_chunks *chunks, int64_t stride, int64_t loc, int64_t lo,
                          int64_t hi, rc_accumulator *acc, rc_chunk_cursor *cur, const char *what,
                          earl_error *err);

#endif
