/*
 * details.h - counted lists with details: every item of a code is counted,
 * and the first EARL_WARNING_DETAIL_MAX of each code are kept in detail, so
 * that a user finds them without the list growing with the trace.  The
 * warnings of the reading (warnings.c) and of the states pass count through
 * it.
 */
#ifndef EARL_BASE_DETAILS_H
#define EARL_BASE_DETAILS_H

#include <stddef.h>
#include <stdint.h>

/* Count code in counts[] and, while fewer than EARL_WARNING_DETAIL_MAX of it
 * are kept, return a new zeroed item of item_size bytes appended to *items
 * (a growable array, base/grow.h, of *n items and *cap slots); NULL
 * otherwise, or when out of memory: the count stays exact, only the detail
 * is lost. */
void *earl_detail_slot(uint64_t *counts, int code, void **items, size_t *n, size_t *cap,
                       size_t item_size);

#endif
