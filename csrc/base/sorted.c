/*
 * sorted.c - searching sorted arrays (sorted.h).
 */
#include "base/sorted.h"

int earl_cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

size_t earl_eid_lower_bound(const earl_eid *a, size_t lo, size_t hi, earl_eid x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t earl_eid32_lower_bound(const earl_eid32 *a, size_t lo, size_t hi, earl_eid x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((earl_eid)a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t earl_u64_lower_bound(const uint64_t *a, size_t lo, size_t hi, uint64_t x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
