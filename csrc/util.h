/*
 * util.h - small internal helpers shared by the core's files: error
 * reporting, growable arrays and growable struct-of-arrays tables.
 * Not part of the public API.
 */
#ifndef EARL_UTIL_H
#define EARL_UTIL_H

#include <stdarg.h>
#include <stddef.h>

#include "earl.h"

#if defined(__GNUC__)
#define EARL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define EARL_LIKELY(x) __builtin_expect(!!(x), 1)
#define EARL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define EARL_PRINTF(f, a)
#define EARL_LIKELY(x) (x)
#define EARL_UNLIKELY(x) (x)
#endif

/* Fill err (may be NULL) and return code. */
earl_status earl_fail(earl_error *err, earl_status code, const char *fmt, ...)
    EARL_PRINTF(3, 4);

/* The last message libotf2 reported on this thread ("" if none), captured by
 * an error handler that also keeps libotf2 from printing to stderr. */
const char *earl_otf2_last_message(void);
void earl_otf2_clear_message(void);
void earl_otf2_install_error_handler(void);

/* Blocks for the event store's columns (mem.c): large ones are mapped
 * directly and kept warm after earl_mem_free for the next large request.
 * A block from earl_mem_alloc/earl_mem_realloc must be freed with
 * earl_mem_free, never free(). */
#define EARL_MEM_KEEP_SECONDS 10.0
void *earl_mem_alloc(size_t bytes);
void *earl_mem_realloc(void *p, size_t bytes);
void *earl_mem_calloc(size_t n, size_t size);
/* The same for short-lived arrays (an open's reading buffers): a request no
 * kept block fits first gives kept blocks back, so that the kernel recycles
 * their still-warm pages for it. */
void *earl_mem_alloc_scratch(size_t bytes);
void *earl_mem_realloc_scratch(void *p, size_t bytes);
void *earl_mem_calloc_scratch(size_t n, size_t size);
/* An analysis's temporaries, of sizes no one can predict (numpy's arrays
 * during earlc.analyze, the analysis kernels' tables): below 32 MB from
 * malloc, whose heap reuses freed memory for requests of any size (free its
 * pages with earl_mem_trim afterwards); larger ones as scratch arrays. */
void *earl_mem_alloc_temp(size_t bytes);
void *earl_mem_realloc_temp(void *p, size_t bytes);
void *earl_mem_calloc_temp(size_t n, size_t size);
void earl_mem_free(void *p);
/* Give back the whole pages of bytes [from, to) of block p (the pages at the
 * ends, partly outside the range, stay), for a block read front to back whose
 * consumed part is no longer needed; the range reads as zeros afterwards.
 * Returns the offset up to which pages were given back (page-aligned), or
 * from when none was: a later call continues from there.  Blocks that came
 * from malloc (small ones) are left alone. */
size_t earl_mem_discard(void *p, size_t from, size_t to);
/* Free a block without keeping it for reuse: for blocks whose pages were
 * given back with earl_mem_discard, which a later request would find cold. */
void earl_mem_free_unkept(void *p);

/* Grow *p (an array of elem-byte items with *cap slots) to hold need items;
 * returns 0, or -1 when out of memory (then *p is unchanged). */
int earl_grow(void **p, size_t *cap, size_t need, size_t elem);
#define EARL_GROW(arr, cap, need) earl_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))
/* The same for an analysis's temporary (earl_mem_realloc_temp; free it with
 * earl_mem_free): a result that goes to numpy, whose freed arrays the block
 * can reuse while they are still warm. */
int earl_grow_temp(void **p, size_t *cap, size_t need, size_t elem);
#define EARL_GROW_TEMP(arr, cap, need) \
    earl_grow_temp((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* A struct-of-arrays table described by its columns, so that reserving,
 * appending and freeing are written once for every side table. */
#define EARL_MAX_COLUMNS 12
typedef struct earl_colspec {
    void **data;  /* address of the column pointer */
    size_t width; /* bytes per item */
} earl_colspec;

typedef struct earl_colset {
    int n;
    earl_colspec col[EARL_MAX_COLUMNS];
} earl_colset;

/* Make every column hold need items (capacity tracked in *cap).  Columns
 * are earl_mem blocks: free them with earl_colset_free. */
int earl_colset_reserve(const earl_colset *set, size_t *cap, size_t need);
/* The same for short-lived tables (an open's reading buffers), with
 * earl_mem_realloc_scratch. */
int earl_colset_reserve_scratch(const earl_colset *set, size_t *cap, size_t need);
void earl_colset_free(const earl_colset *set);
/* The same with earl_mem_free_unkept. */
void earl_colset_free_unkept(const earl_colset *set);

/* A map from 64-bit keys to small non-negative ints (keymap.c); zero-
 * initialised it is empty. */
typedef struct earl_keymap {
    uint64_t *keys;
    int32_t *slots; /* value + 1, 0 for an empty slot */
    size_t n_slots, n_used;
} earl_keymap;
/* The value of key; when absent, key gets the value `fresh` (*added = 1).
 * -1 when out of memory. */
int32_t earl_keymap_get(earl_keymap *m, uint64_t key, int32_t fresh, int *added);
void earl_keymap_free(earl_keymap *m);

char *earl_strdup(const char *s);

/* ---- work on several threads (parallel.c) ----------------------------------
 * A kernel with `threads` (0: one per core) cuts its items into
 * earl_parallel_parts(threads, items, min_items) parts of at least min_items
 * each (fewer items: fewer parts, at least one) and runs fn(arg, part) for
 * every part with earl_parallel, which returns once all are done.  Part k of
 * n items over P parts is [earl_part_start(n, k, P), earl_part_start(n, k + 1, P)).
 * A kernel's result must not depend on P: each part writes to places of its
 * own, joined in part order.  The environment variable EARLC_PARALLEL_GRAIN
 * (items) replaces every min_items, so that tests cut small inputs into
 * parts. */
#define EARL_MAX_PARTS 64
int earl_cores(void);
int earl_parallel_parts(int threads, size_t items, size_t min_items);
void earl_parallel(int parts, void (*fn)(void *arg, int part), void *arg);
static inline size_t earl_part_start(size_t n, int part, int parts)
{
    return (size_t)((unsigned __int128)n * (unsigned)part / (unsigned)parts);
}

/* The first k in [lo, hi) with a[k] >= x, or hi; a sorted ascending there.
 * Events before or at x: earl_eid_lower_bound(a, lo, hi, x + 1). */
size_t earl_eid_lower_bound(const earl_eid *a, size_t lo, size_t hi, earl_eid x);
/* The same over the 32-bit event ids of earl_events.loc_events (x may be
 * any event id, -1 or beyond the last included). */
size_t earl_eid32_lower_bound(const earl_eid32 *a, size_t lo, size_t hi, earl_eid x);
/* The same over unsigned 64-bit keys (timestamps, OTF2 location ids). */
size_t earl_u64_lower_bound(const uint64_t *a, size_t lo, size_t hi, uint64_t x);

#endif
