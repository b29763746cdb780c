/*
 * colset.c - struct-of-arrays tables (colset.h).
 */
#include <stdlib.h>

#include "base/colset.h"
#include "base/grow.h"
#include "base/mem.h"

static int colset_reserve_with(const earl_colset *set, size_t *cap, size_t need,
                               void *(*realloc_block)(void *, size_t))
{
    if (need <= *cap)
        return 0;
    size_t n = earl_grow_capacity(*cap, need);
    for (int i = 0; i < set->n; i++) {
        void *q = realloc_block(*set->col[i].data, n * set->col[i].width);
        if (!q)
            return -1;
        *set->col[i].data = q;
    }
    *cap = n;
    return 0;
}

int earl_colset_reserve(const earl_colset *set, size_t *cap, size_t need)
{
    return colset_reserve_with(set, cap, need, earl_mem_realloc);
}

int earl_colset_reserve_scratch(const earl_colset *set, size_t *cap, size_t need)
{
    return colset_reserve_with(set, cap, need, earl_mem_realloc_scratch);
}

static void colset_free_with(const earl_colset *set, void (*free_block)(void *))
{
    for (int i = 0; i < set->n; i++) {
        free_block(*set->col[i].data);
        *set->col[i].data = NULL;
    }
}

void earl_colset_free(const earl_colset *set) { colset_free_with(set, earl_mem_free); }
void earl_colset_free_unkept(const earl_colset *set) { colset_free_with(set, earl_mem_free_unkept); }
