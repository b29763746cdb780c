/*
 * colset.h - struct-of-arrays tables described by their columns, so that
 * reserving, appending and freeing are written once for every side table of
 * the event store (internal.h) and its reading buffers.  A table's columns
 * are earl_mem blocks (base/mem.h) that grow together, by the policy of
 * grow.h.
 */
#ifndef EARL_BASE_COLSET_H
#define EARL_BASE_COLSET_H

#include <stddef.h>

#define EARL_MAX_COLUMNS 12

typedef struct earl_colspec {
    void **data;  /* address of the column pointer */
    size_t width; /* bytes per item */
} earl_colspec;

typedef struct earl_colset {
    int n;
    earl_colspec col[EARL_MAX_COLUMNS];
} earl_colset;

/* Make every column hold need items (capacity tracked in *cap); 0, or -1
 * when out of memory (columns already grown keep their larger blocks).
 * Free the columns with earl_colset_free. */
int earl_colset_reserve(const earl_colset *set, size_t *cap, size_t need);
/* The same for short-lived tables (an open's reading buffers), with
 * earl_mem_realloc_scratch. */
int earl_colset_reserve_scratch(const earl_colset *set, size_t *cap, size_t need);
void earl_colset_free(const earl_colset *set);
/* The same with earl_mem_free_unkept. */
void earl_colset_free_unkept(const earl_colset *set);

#endif
