/*
 * grow.h - growable arrays: an array with a capacity that grows by half
 * (plus a little) whenever an append needs more, so that n appends cost
 * O(n) copies.  A first reservation is taken exactly, because callers
 * usually reserve a count they know.
 */
#ifndef EARL_BASE_GROW_H
#define EARL_BASE_GROW_H

#include <stddef.h>

/* The capacity an array of capacity cap takes to hold need items (cap when
 * it already does). */
size_t earl_grow_capacity(size_t cap, size_t need);

/* Grow *p (an array of elem-byte items with *cap slots, from malloc) to hold
 * need items; returns 0, or -1 when out of memory (then *p is unchanged). */
int earl_grow(void **p, size_t *cap, size_t need, size_t elem);
#define EARL_GROW(arr, cap, need) earl_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* The same for an analysis's temporary (earl_mem_realloc_temp; free it with
 * earl_mem_free): a result that goes to numpy, whose freed arrays the block
 * can reuse while they are still warm. */
int earl_grow_temp(void **p, size_t *cap, size_t need, size_t elem);
#define EARL_GROW_TEMP(arr, cap, need) \
    earl_grow_temp((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif
