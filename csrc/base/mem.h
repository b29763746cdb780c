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

/* Guard mode, a debugging aid for the lifetime of mapped blocks (which
 * AddressSanitizer cannot follow: under it every block comes from malloc):
 * consumed ranges (earl_mem_discard, earl_mem_bank_deposit) become PROT_NONE
 * instead of reading as zeros, freed large blocks are never reused and leave
 * a PROT_NONE reservation behind, large blocks grow by a copy: a later touch
 * of dead memory faults at once, with the stack of the code that touched it.
 * On when EARLC_MEM_GUARD=1 is in the environment at the first large
 * allocation; earl_mem_guard turns it on or off (tests).  It costs address
 * space and mappings, not resident memory (docs/model.md, "Memory"). */
void earl_mem_guard(int on);

/* A thread's bank of pages to recycle: the whole pages of blocks read front
 * to back (an open's reading buffers) that it has consumed, moved with
 * mremap under output it has not written yet (the trace's columns) instead
 * of given back and faulted in anew, which on the development VM costs
 * about five times as much (mem.c says why).  One bank per thread, no
 * locking: a thread deposits and places only pages no other thread reads or
 * writes.  Each move is a mapping of its own in the destination block (of
 * at most vm.max_map_count, 65,530 by default, per process), so moves are
 * at least min_move bytes: at most about EARL_MEM_BANK_MOVES for the bytes
 * that all the banks of one open expect.  Blocks from malloc are left alone; where mremap is
 * refused (vm.max_map_count reached) the bank gives its pages back as
 * earl_mem_discard does and the output faults its pages in as before. */
#define EARL_MEM_BANK_RANGES 64
#define EARL_MEM_BANK_MOVES 4096
typedef struct earl_mem_bank {
    struct { char *at; size_t bytes; } range[EARL_MEM_BANK_RANGES];
    int n;                 /* banked ranges, resident, their content dead */
    int enabled;
    size_t min_move;
    size_t banked, moved, moves; /* bytes deposited and moved, mremap calls */
} earl_mem_bank;
/* An empty bank, one of those of an open that will consume about
 * expected_bytes in all (not only this bank's share). */
void earl_mem_bank_init(earl_mem_bank *b, size_t expected_bytes);
/* Deposit the whole pages of bytes [from, to) of block p, consumed and never
 * to be read again: as after earl_mem_discard, the range reads as zeros once
 * its pages have been moved away.  Returns the offset up to which the pages were
 * taken, as earl_mem_discard does, or from when the range is shorter than
 * min_move (a later call takes a longer one); with settle set, a short range
 * is given back at once instead (the caller cannot wait: the consumption
 * ends, or waiting ranges would hold too much).  A full bank gives back
 * instead. */
size_t earl_mem_bank_deposit(earl_mem_bank *b, void *p, size_t from, size_t to, int settle);
/* Move banked pages under the whole pages of bytes [from, to) of block p,
 * which the caller will write in full and has not written yet (their
 * content is lost).  Returns the offset up to which pages were placed
 * (page-aligned), or from when none was: the caller continues from there. */
size_t earl_mem_bank_place(earl_mem_bank *b, void *p, size_t from, size_t to);
/* Give back what the bank still holds. */
void earl_mem_bank_empty(earl_mem_bank *b);

#endif
