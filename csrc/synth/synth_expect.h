/*
 * synth_expect.h - the generator's bookkeeping (internal): call paths,
 * per-location region stacks with exclusive time, and the accumulators of
 * expected.json, one (severity, instances) cell per (property, call path,
 * location).  Used by synth.c; written out by synth_expect.c.
 */
#ifndef EARL_SYNTH_EXPECT_H
#define EARL_SYNTH_EXPECT_H

#include <stdint.h>
#include <stdio.h>

#include "earl.h"

typedef enum sx_prop {
    SX_TIME = 0,
    SX_VISITS,
    SX_LATE_SENDER,
    SX_LS_WO_SAME,
    SX_LS_WO_DIFF,
    SX_LATE_RECEIVER,
    SX_MSG_WRONG_ORDER,
    SX_WAIT_BARRIER,
    SX_BARRIER_COMPLETION,
    SX_WAIT_NXN,
    SX_NXN_COMPLETION,
    SX_LATE_BROADCAST,
    SX_EARLY_REDUCE,
    SX_EARLY_SCAN,
    SX_OMP_BARRIER_EXPLICIT,
    SX_OMP_BARRIER_IMPLICIT,
    SX_LOCK_CONTENTION,
    SX_LOCK_CRITICAL,
    SX_LOCK_API,
    SX_PROP_COUNT
} sx_prop;

extern const char *const sx_prop_names[SX_PROP_COUNT];

#define SX_MAX_DEPTH 16
#define SX_MAX_REGIONS 64
#define SX_MAX_PATHS 1024

typedef struct sx_cell {
    int64_t severity;
    uint64_t instances;
} sx_cell;

typedef struct sx_stack {
    uint32_t depth;
    uint32_t base;                    /* path the stack starts from (inherited at fork) */
    uint32_t path[SX_MAX_DEPTH];
    uint64_t enter[SX_MAX_DEPTH];
    uint64_t child[SX_MAX_DEPTH];
} sx_stack;

typedef struct sx_book {
    uint32_t n_locs;
    uint32_t n_regions;
    const char *region_names[SX_MAX_REGIONS];
    uint32_t n_paths;                 /* path 0: the empty path (no region) */
    uint32_t path_parent[SX_MAX_PATHS];
    uint16_t path_region[SX_MAX_PATHS];
    uint16_t *child;                  /* [path * SX_MAX_REGIONS + region] = id (0: none) */
    sx_cell **cells;                  /* [path * SX_PROP_COUNT + prop] -> [loc], lazily */
    sx_stack *stacks;                 /* per location */
} sx_book;

int sx_init(sx_book *b, uint32_t n_locs);
void sx_free(sx_book *b);
/* The path of region under parent; UINT32_MAX when the table is full. */
uint32_t sx_child(sx_book *b, uint32_t parent, uint32_t region);
/* The per-location cells of (path, property), or NULL if none was ever added. */
static inline const sx_cell *sx_cells(const sx_book *b, uint32_t path, int prop)
{
    return b->cells[(size_t)path * SX_PROP_COUNT + (size_t)prop];
}
/* Add to a cell (a (path, property) row is allocated on first use). */
int sx_add(sx_book *b, sx_prop p, uint32_t path, uint32_t loc, int64_t severity);
/* The current path of a location (its stack top, or its base). */
static inline uint32_t sx_top(const sx_book *b, uint32_t loc)
{
    const sx_stack *s = &b->stacks[loc];
    return s->depth ? s->path[s->depth - 1] : s->base;
}
/* Push / pop a region instance (time and visits accounted); return the path
 * or UINT32_MAX on overflow. */
uint32_t sx_push(sx_book *b, uint32_t loc, uint32_t region, uint64_t t);
uint32_t sx_pop(sx_book *b, uint32_t loc, uint64_t t);

/* Write the "properties" object (no trailing newline). */
void sx_write_properties(const sx_book *b, FILE *f, uint32_t threads_per_rank);
/* "a/b/c" of a path into buf. */
void sx_path_string(const sx_book *b, uint32_t path, char *buf, size_t size);

#endif
