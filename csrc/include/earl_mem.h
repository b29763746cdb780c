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
} earl_mem_stats;

/* Unmap every kept block now. */
EARL_API void earl_mem_release(void);
/* Give the free pages of malloc's heap back to the kernel: after a burst of
 * temporaries (an analysis's), which come from it below 32 MB. */
EARL_API void earl_mem_trim(void);
EARL_API earl_mem_stats earl_mem_get_stats(void);

/* An analysis's temporaries, of sizes no one can predict: below 32 MB from
 * malloc, whose heap reuses freed memory for requests of any size (free its
 * pages with earl_mem_trim afterwards); larger ones from the kept blocks.
 * NULL when out of memory.  A block from these must be freed with
 * earl_mem_free, never free(). */
EARL_API void *earl_mem_alloc_temp(size_t bytes);
EARL_API void *earl_mem_realloc_temp(void *p, size_t bytes);
EARL_API void *earl_mem_calloc_temp(size_t n, size_t size);
/* Free a block of the core's allocator (NULL: nothing). */
EARL_API void earl_mem_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* EARL_MEM_H */
