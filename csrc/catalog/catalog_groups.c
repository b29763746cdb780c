/*
 * catalog_groups.c - reductions over runs of rows with equal keys
 * (earl_catalog.h): the most severe row of each run and the running maximum
 * before each row, one pass each.  In numpy both need several temporaries as long as the
 * rows (group starts, group numbers, lifted values).
 */
#include "earl_catalog.h"

size_t earl_first_of_runs(size_t n, const int64_t *keys, const int64_t *values, int64_t *rows)
{
    size_t out = 0;
    for (size_t k = 0; k < n; k++) {
        if (k == 0 || keys[k] != keys[k - 1])
            rows[out++] = (int64_t)k;
        else if (values[k] > values[rows[out - 1]])
            rows[out - 1] = (int64_t)k;
    }
    return out;
}

void earl_exclusive_running_max(size_t n, const int64_t *keys, const int64_t *values,
                                int64_t floor, int64_t *out)
{
    int64_t best = floor;
    for (size_t k = 0; k < n; k++) {
        if (k == 0 || keys[k] != keys[k - 1])
            best = floor;
        out[k] = best;
        if (values[k] > best)
            best = values[k];
    }
}
