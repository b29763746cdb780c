/*
 * grow.c - growable arrays (grow.h).
 */
#include <stdlib.h>

#include "base/grow.h"
#include "base/mem.h"

size_t earl_grow_capacity(size_t cap, size_t need)
{
    if (need <= cap)
        return cap;
    size_t n = cap ? cap : (need > 16 ? need : 16);
    while (n < need)
        n += n / 2 + 16;
    return n;
}

static int grow_with(void **p, size_t *cap, size_t need, size_t elem,
                     void *(*realloc_block)(void *, size_t))
{
    if (need <= *cap)
        return 0;
    size_t n = earl_grow_capacity(*cap, need);
    void *q = realloc_block(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

int earl_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    return grow_with(p, cap, need, elem, realloc);
}

int earl_grow_temp(void **p, size_t *cap, size_t need, size_t elem)
{
    return grow_with(p, cap, need, elem, earl_mem_realloc_temp);
}
