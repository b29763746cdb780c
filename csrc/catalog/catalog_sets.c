/*
 * catalog_sets.c - whether ids are in a set of ids (earl_catalog.h), for the
 * catalog's tests of "is this call one of those": Late Receiver leaves out
 * the calls that also wait for a Late Sender.
 *
 * numpy answers with a binary search per value (np.searchsorted), whose last
 * probes each miss the cache when the set is large and the values come in no
 * order.  The ids of a set usually lie in a range a bit per id covers in a
 * little memory (event ids of one trace: a megabyte for 8 M events), so the
 * set is marked in a bitmap of its range and every value tested with one
 * read of it.  A set whose range would take more bits than 64 per id asked
 * and held (sparse ids, or values that are no event ids), or whose bitmap
 * cannot be had, is searched instead: the same answers.
 */
#include <stdint.h>
#include <string.h>

#include "earl_catalog.h"
#include "base/mem.h"
#include "base/sorted.h"

/* Bits of bitmap allowed per value asked and per id of the set. */
#define SETS_BITS_PER_ITEM 64

/* Whether v is in set[0 .. m), ascending: the first id not below v. */
static uint8_t searched(int64_t v, const int64_t *set, size_t m)
{
    size_t k = earl_i64_lower_bound(set, 0, m, v);
    return k < m && set[k] == v;
}

void earl_ids_in_set(size_t n, const int64_t *values, size_t m, const int64_t *set,
                     uint8_t *out)
{
    if (!m) {
        memset(out, 0, n);
        return;
    }
    int64_t lo = set[0], hi = set[m - 1];
    /* the range in bits, as unsigned: hi - lo may not fit an int64 */
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    uint64_t *bits = NULL;
    if (span != 0 && span / SETS_BITS_PER_ITEM <= (uint64_t)(n + m))
        bits = earl_mem_calloc_temp((size_t)(span / 64 + 1), sizeof *bits);
    if (!bits) {
        for (size_t k = 0; k < n; k++)
            out[k] = searched(values[k], set, m);
        return;
    }
    for (size_t j = 0; j < m; j++) {
        uint64_t at = (uint64_t)set[j] - (uint64_t)lo;
        bits[at >> 6] |= (uint64_t)1 << (at & 63);
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t at = (uint64_t)values[k] - (uint64_t)lo; /* below lo: wraps past span */
        out[k] = at < span && (bits[at >> 6] >> (at & 63) & 1);
    }
    earl_mem_free(bits);
}
