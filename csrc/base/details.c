/*
 * details.c - counted lists with details (details.h).
 */
#include <string.h>

#include "earl.h"
#include "base/details.h"
#include "base/grow.h"

void *earl_detail_slot(uint64_t *counts, int code, void **items, size_t *n, size_t *cap,
                       size_t item_size)
{
    if (counts[code]++ >= EARL_WARNING_DETAIL_MAX)
        return NULL;
    if (earl_grow(items, cap, *n + 1, item_size) != 0)
        return NULL;
    void *it = (char *)*items + (*n)++ * item_size;
    memset(it, 0, item_size);
    return it;
}
