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
 *   rc_longterm.c   the backward replay of long-term delay costs: its handle
 *                   and what one wait state passes on
 *   rc_order.c      the order in which that replay takes the wait states
 *   rc_parts.c      the same replay in parts: each part takes the wait states
 *                   of its own locations once the costs they read are final
 *   rc_heap.c       the max-heap that orders the walk's and the replay's work
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
/* rc_map_push when the columns are full: grow them, then push; -1 when out
 * of memory. */
int rc_map_push_grown(rc_map_builder *b, int64_t cnode, double value);
/* Append (cnode, value) to the current query; -1 when out of memory.  Inline:
 * the intervals push a few entries per query, hundreds of thousands of
 * queries per call, and the call and the two capacity checks of a growing
 * array cost more than the store. */
static inline int rc_map_push(rc_map_builder *b, int64_t cnode, double value)
{
    earl_rc_map *m = b->map;
    size_t n = (size_t)m->offset[b->done + 1];
    if (n >= b->cnode_cap || n >= b->value_cap)
        return rc_map_push_grown(b, cnode, value);
    m->cnode[n] = cnode;
    m->value[n] = value;
    m->offset[b->done + 1] = (int64_t)n + 1;
    return 0;
}
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

/* A CSR table built in parts: part k holds the ranks [first, first + count)
 * of `order`, its rows counted from 0 in its own offset (count + 1) and
 * columns (earl_mem blocks of 8-byte items).  offset_owner and columns point
 * to where the part keeps them: the join frees them and sets them NULL. */
typedef struct rc_csr_part {
    size_t first, count;
    const int64_t *offset;
    int64_t **offset_owner;
    void ***columns;
} rc_csr_part;

/* rc_csr_unorder of a table built in parts (in rank order, together all of
 * [0, queries)): the whole table in query order into *offset and the
 * n_columns *columns[c], each part's column freed once copied.  -1 when out
 * of memory: then *offset is untouched, some *columns[c] may be set and some
 * parts' columns freed (NULL), so the caller frees both. */
int rc_csr_unorder_parts(size_t queries, const size_t *order, rc_csr_part *parts,
                         int n_parts, int n_columns, int64_t **offset, void **columns[]);

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

/* EARL_ERR_INVALID when the chunk offsets are not ascending, the stride is
 * below 1 or n_cnodes negative; `what` names the caller in the message. */
earl_status rc_chunks_check(const earl_rc_chunks *chunks, const char *what, earl_error *err);

/* Add the exclusive time of location loc (not negative) between events lo
 * (exclusive: after its point; -1: the location's start) and hi (before its
 * point) to acc, per call path; cur is the location's cursor (zeroed before
 * its first query).  EARL_ERR_INVALID for a chunk's call path out of range. */
earl_status rc_sum_chunks(const earl_rc_chunks *chunks, int64_t loc, int64_t lo, int64_t hi,
                          rc_accumulator *acc, rc_chunk_cursor *cur, const char *what,
                          earl_error *err);

/* ---- a binary max-heap (rc_heap.c) ---------------------------------------- */

typedef struct rc_heap_entry {
    int64_t key;
    size_t value;
    size_t stamp; /* the user's: for example to tell stale entries */
} rc_heap_entry;

/* Whether x goes after y (the heap's top is an entry nothing goes before). */
typedef int (*rc_heap_less)(const rc_heap_entry *x, const rc_heap_entry *y, const void *ctx);

typedef struct rc_heap {
    rc_heap_entry *a;
    size_t n, cap;
    rc_heap_less less; /* the order, with its context */
    const void *ctx;
} rc_heap;

/* The order by key alone. */
int rc_heap_key_less(const rc_heap_entry *x, const rc_heap_entry *y, const void *ctx);
/* -1 when out of memory. */
int rc_heap_push(rc_heap *h, rc_heap_entry e);
/* The top entry, taken off; the heap must not be empty. */
rc_heap_entry rc_heap_pop(rc_heap *h);
void rc_heap_free(rc_heap *h);

/* ---- the order of the long-term replay (rc_order.c) ---------------------- */

/* A wait state of the replay: where it is taken (its late side's location
 * and point), and the points it reads the arriving cost at, rows
 * [first_read, first_read + n_reads) of the reads. */
typedef struct rc_order_item {
    int64_t location; /* below n_locations */
    int64_t event;
    uint32_t collective;
    size_t first_read, n_reads;
} rc_order_item;

typedef struct rc_order_read {
    int64_t location; /* below n_locations */
    int64_t event;
} rc_order_read;

/* The order to take the items in (order: n_items item indices), as
 * Scalasca's parallel backward replay takes them (see rc_order.c); the items
 * taken before their reads were complete (a cycle) are counted in
 * *out_of_order.  -1 when out of memory. */
int rc_replay_order(size_t n_items, const rc_order_item *items, const rc_order_read *reads,
                    size_t n_locations, size_t *order, size_t *out_of_order);

/* ---- the long-term replay (rc_longterm.c, rc_parts.c) -------------------- */

typedef struct rc_wait_batch {
    earl_rc_waits w;
    earl_rc_map delays;   /* w.delays points here: the caller's arrays */
    size_t between_base;  /* the number of its first between entry (see below) */
} rc_wait_batch;

typedef struct rc_collective_batch {
    earl_rc_collectives c;
    earl_rc_map delays;   /* c.delays points here */
    size_t between_base;
} rc_collective_batch;

/* A wait state of the replay: its batch and its index there. */
typedef struct rc_replay_item {
    uint32_t collective;
    uint32_t batch;
    uint64_t index;
} rc_replay_item;

/* Severities: (source, location, cnode) -> value, in first-touch order. */
typedef struct rc_severity_table {
    earl_map index; /* (source << 40 | location + 1, cnode + 1) -> entry */
    earl_rc_severity *per_source;
    size_t *entry_cap;
} rc_severity_table;

/* The delays of query q of map, scaled by factor, into the severity of source
 * on location; -1 when out of memory. */
int rc_severity_add_delays(rc_severity_table *t, size_t source, int64_t location,
                           const earl_rc_map *map, int64_t q, double factor);
void rc_severity_table_free(rc_severity_table *t);

/* Where a wait state's results go.  A wait state passes on, per source, the
 * cost that arrived at it: to the severity of its delays (`severity`), and to
 * the costs of its late side's points in between (`cost`: entry `entry` of
 * the replay's between entries, point row `row`, the m-th amount it adds
 * there (0, then 1 for the second input of a collective), which is
 * `factor * point_wait[row]`).  The replay on one process adds both at once
 * (rc_longterm.c); the replay in parts keeps the costs per entry until the
 * point is final and the severities until every wait state is done
 * (rc_parts.c).  Either returns -1 when out of memory; NULL: not wanted. */
typedef struct rc_sink {
    int (*severity)(void *ctx, size_t source, int64_t location, const earl_rc_map *map,
                    int64_t q, double factor);
    int (*cost)(void *ctx, size_t source, size_t entry, int64_t row, int m, double factor);
    void *ctx;
} rc_sink;

/* Scratch space of the collectives' passing on (grown as needed). */
typedef struct rc_scratch {
    double *scales;
    struct rc_met_scale *met;
    double *values; /* the scale sum in force from each mark on */
    size_t cap;
} rc_scratch;

void rc_scratch_free(rc_scratch *s);

/* The state of a replay in parts (rc_parts.c), NULL until earl_rc_replay_start. */
typedef struct rc_parts rc_parts;

struct earl_rc_replay {
    size_t n_sources, n_points;
    const int64_t *point_event, *point_location;
    const double *point_wait;
    size_t n_locations;  /* every point's and delayer's location is below it */
    size_t out_of_order; /* of the last run */
    uint8_t *inputs; /* [kind * n_sources + source] */
    double **costs;  /* [source][row]; NULL until the source's first cost */
    rc_wait_batch *waits;
    size_t n_wait_batches;
    rc_collective_batch *collectives;
    size_t n_collective_batches;
    size_t n_between;    /* between entries of every batch, numbered batch by batch */
    rc_parts *parts;
};

/* The costs of a source, allocated (zero) at its first cost; NULL when out of
 * memory. */
double *rc_costs_of(earl_rc_replay *r, size_t source);

/* The wait states in the order given (the waits' batches, then the
 * collectives'), n of them into *items (malloc'ed), with what rc_replay_order
 * needs of each (order_items, reads: malloc'ed; NULL: not wanted); the
 * delaying locations grow r->n_locations.  -1 when out of memory. */
int rc_list_items(earl_rc_replay *r, size_t *n, rc_replay_item **items,
                  rc_order_item **order_items, rc_order_read **reads);

/* Pass on what arrived at one wait state (read with cost_at: the costs the
 * replay holds now) into sink.  -1 when out of memory. */
int rc_pass_on(earl_rc_replay *r, const rc_replay_item *it, const rc_sink *sink,
               rc_scratch *scratch);

/* The ranks of the items in the order of their location's queue: latest
 * point first, a collective before a point-to-point wait state at one event,
 * else in the order given (rc_order.c's). */
int rc_later_first(const rc_order_item *a, const rc_order_item *b);

void rc_parts_free(rc_parts *p);

#endif
