/*
 * overview_internal.h - the bins of a window, shared by overview_activity.c
 * and overview_messages.c (see earl_overview.h for what a bin covers).
 */
#ifndef OVERVIEW_INTERNAL_H
#define OVERVIEW_INTERNAL_H

#include "earl_overview.h"
#include "base/errors.h"

#include <stdint.h>

/* A window cut into n bins; wide when span * n does not fit in 64 bits (a
 * long trace in nanoseconds cut into millions of bins): its edges are then
 * computed in 128 bits. */
typedef struct overview_bins {
    int64_t span;
    uint32_t n;
    int wide;
} overview_bins;

static inline overview_bins overview_bins_of(int64_t span, uint32_t n)
{
    return (overview_bins){.span = span, .n = n, .wide = span > INT64_MAX / (int64_t)n};
}

/* edge(b) = floor(b * span / n) */
static inline int64_t overview_edge(const overview_bins *w, uint64_t b)
{
    if (w->wide)
        return (int64_t)((__int128)b * w->span / w->n);
    return (int64_t)b * w->span / (int64_t)w->n;
}

/* The bin holding t (0 <= t < span): the last b with edge(b) <= t. */
static inline uint32_t overview_bin_of(const overview_bins *w, int64_t t)
{
    uint64_t b = w->wide ? (uint64_t)((__int128)t * w->n / w->span)
                         : (uint64_t)(t * (int64_t)w->n / w->span);
    if (b >= w->n)
        b = w->n - 1;
    while (b + 1 < w->n && overview_edge(w, b + 1) <= t)
        b++;
    while (b > 0 && overview_edge(w, b) > t)
        b--;
    return (uint32_t)b;
}

/* EARL_OK, or EARL_ERR_INVALID for a window without ticks or bins. */
static inline earl_status overview_check_window(const earl_overview_window *w, uint32_t n_bins,
                                                const char *who, earl_error *err)
{
    if (w->span < 1 || n_bins < 1)
        return earl_fail(err, EARL_ERR_INVALID,
                         "%s: a window needs at least one bin and a span of at least one "
                         "tick (got %u bins, span %lld)", who, n_bins, (long long)w->span);
    return EARL_OK;
}

#endif
