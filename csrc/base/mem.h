/*
 * mem.h - the core's allocator for large arrays (mem.c): the event store's
 * columns, an open's reading buffers and an analysis's temporaries, in
 * blocks that stay warm after they are freed.  The public part (statistics,
 * release, temporaries) is earl_mem.h.
 */
#ifndef EARL_BASE_MEM_H
#define EARL_BASE_MEM_H

#include <stddef.h>

#include "earl_mem.h"

/* Seconds a freed large block is kept for reuse (EARLC_KEEP_MEMORY
 * overrides it). */
#define EARL_MEM_KEEP_SECONDS 10.0

/* Blocks for the event store's columns: large ones are mapped directly and
 * kept warm after earl_mem_free for the next large request.  A block from
 * earl_mem_alloc/earl_mem_realloc must be freed with earl_mem_free, never
 * free(). */
void *earl_mem_alloc(size_t bytes);
void *earl_mem_realloc(void *p, size_t bytes);
void *earl_mem_calloc(size_t n, size_t size);
/* The same for short-lived arrays (an open's reading buffers): a request no
 * kept block fits first gives kept blocks back, so that the kernel recycles
 * their still-warm pages for it. */
void *earl_mem_alloc_scratch(size_t bytes);
void *earl_mem_realloc_scratch(void *p, size_t bytes);
void *earl_mem_calloc_scratch(size_t n, size_t size);
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

#endif
