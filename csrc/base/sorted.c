/*
 * sorted.c - sorting sorted arrays (sorted.h; the searches are inline).
 */
#include "base/sorted.h"

int earl_cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}
