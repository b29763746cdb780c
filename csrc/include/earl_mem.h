/*
 * earl_mem.h - public API of the core's memory: the blocks the event store
 * and the analyses take, and what a host program can do with them.
 *
 * The event store's large columns are kept mapped for a while after a trace
 * is closed, so that the next open or analysis reuses pages the process has
 * already touched (docs/model.md, "Memory").  A host that makes many
 * short-lived arrays of its own during an analysis (the Python extension:
 * numpy's arrays) can take them from the same blocks, as temporaries.
 *
 * Thread-safe: every function may be called from any thread.
 */
#ifndef EARL_MEM_H
#define EARL_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "earl_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earl_mem_stats {
    uint64_t mapped;       /* large blocks newly mapped */
    uint64_t reused;       /* large blocks served from the kept ones */
    size_t kept_blocks;    /* blocks kept now */
    size_t kept_bytes;
    uint64_t moved_bytes;  /* pages an open moved from its reading buffers
                              into the trace's columns instead of faulting
                              new ones (docs/model.md, "Memory") */
} earl_mem_stats;

/**
 * Unmap every block kept for reuse, now (they are unmapped on their own
 * after EARL_MEM_KEEP_SECONDS, 10 s, or EARLC_KEEP_MEMORY seconds).
 *
 * @since 0.1.0
 */
EARL_API void earl_mem_release(void);

/**
 * Give the free pages of malloc's heap back to the kernel: after a burst of
 * temporaries (an analysis's), which come from it below 32 MB.
 *
 * @since 0.1.0
 */
EARL_API void earl_mem_trim(void);

/**
 * Make every thread's malloc use one heap (glibc's arena), so that what one
 * thread frees serves the next request of any other: a process analysing on
 * several threads then holds no more memory than on one (docs/model.md,
 * "Memory").  Process-wide, and left as it is when MALLOC_ARENA_MAX or
 * glibc.malloc.arena_max is set in the environment; call it before threads
 * start.  The Python extension calls it when it is imported.
 *
 * @return 1 when applied, 0 when left to the environment or not glibc
 * @since 0.1.0
 */
EARL_API int earl_mem_one_heap(void);

/**
 * What the allocator has done so far in this process.
 *
 * @return blocks mapped and reused, blocks and bytes kept now, bytes moved
 * @since 0.1.0
 */
EARL_API earl_mem_stats earl_mem_get_stats(void);

/**
 * A temporary block, of a size no one can predict: below 32 MB from malloc,
 * whose heap reuses freed memory for requests of any size (give its pages
 * back with earl_mem_trim afterwards); larger ones from the kept blocks.
 * Free it with earl_mem_free, never free().
 *
 * @param bytes  its size
 * @return the block, or NULL when out of memory
 * @since 0.1.0
 */
EARL_API void *earl_mem_alloc_temp(size_t bytes);

/**
 * Resize a temporary block, as realloc does.
 *
 * @param p      a block of earl_mem_alloc_temp/_calloc_temp/_realloc_temp, or
 *               NULL for a new one
 * @param bytes  its new size
 * @return the block (moved or not), or NULL when out of memory (p is then
 *         unchanged)
 * @since 0.1.0
 */
EARL_API void *earl_mem_realloc_temp(void *p, size_t bytes);

/**
 * A zeroed temporary block of n items, as calloc gives.
 *
 * @param n     items
 * @param size  bytes per item
 * @return the block, or NULL when out of memory or when n * size overflows
 * @since 0.1.0
 */
EARL_API void *earl_mem_calloc_temp(size_t n, size_t size);

/**
 * Free a block of the core's allocator; a large one is kept for reuse for a
 * while.
 *
 * @param p  the block, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_mem_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* EARL_MEM_H */
