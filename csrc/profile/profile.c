/*
 * profile.c - time profiles and inclusive time per region: the profiles of
 * python/earlc/profiles.py that need a pass over every event.  See
 * earl_profile.h.
 *
 * Each location's events are walked in their own order, so the time between
 * two consecutive events is charged once, to the region the location has
 * innermost open in between; the bins of a stretch are found by binary search
 * over the bin edges.  Integer sums: the result does not depend on the order
 * of the additions.
 */
#include <stdlib.h>

#include "earl_profile.h"
#include "earl_states.h"
#include "base/errors.h"
#include "base/sorted.h"

/* Bin edges below a time t (strict), or at or below it. */
typedef struct edge_bound {
    const int64_t *edges;
    int64_t t;
    int strict;
} edge_bound;

static int edge_before(const void *ctx, size_t k)
{
    const edge_bound *b = ctx;
    return b->strict ? b->edges[k] < b->t : b->edges[k] <= b->t;
}

/* The last bin whose edge is <= t (strict: < t), clipped to the bins. */
static uint32_t bin_of(const int64_t *edges, uint32_t n_bins, int64_t t, int strict)
{
    edge_bound b = {edges, t, strict};
    size_t lo = earl_partition_point(0, (size_t)n_bins + 1, edge_before, &b);
    if (lo == 0)
        return 0;
    return lo - 1 < n_bins ? (uint32_t)(lo - 1) : n_bins - 1;
}

earl_status earl_profile_time(const earl_trace *trace, const earl_eid32 *enterptr,
                              const earl_profile_bins *bins, uint32_t n_regions,
                              int64_t *totals, uint8_t *present, earl_error *err)
{
    if (!trace || !enterptr || !bins || !totals || !present)
        return earl_fail(err, EARL_ERR_INVALID, "earl_profile_time: a required argument is NULL");
    if (bins->n_bins < 1 || bins->span < 1)
        return earl_fail(err, EARL_ERR_INVALID,
                         "earl_profile_time: needs at least one bin and a span of at least "
                         "one tick (got %u bins, span %lld)", bins->n_bins,
                         (long long)bins->span);
    const uint32_t nb = bins->n_bins;
    int64_t *edges = malloc(((size_t)nb + 1) * sizeof *edges);
    if (!edges)
        return earl_fail(err, EARL_ERR_NOMEM, "earl_profile_time: out of memory for %u bins", nb);
    for (uint32_t b = 0; b <= nb; b++)
        edges[b] = (int64_t)b * bins->span / (int64_t)nb;

    const earl_events *ev = earl_trace_events(trace);
    const uint32_t n_loc = earl_trace_defs(trace)->n_locations;
    for (uint32_t l = 0; l < n_loc; l++) {
        const earl_eid32 *ids = ev->loc_events + ev->loc_start[l];
        size_t n = ev->loc_start[l + 1] - ev->loc_start[l];
        for (size_t k = 0; k + 1 < n; k++) {
            earl_eid e = earl_states_own_innermost(ev, enterptr, ids[k]);
            if (e < 0)
                continue;
            int64_t start = (int64_t)ev->time[ids[k]] - bins->t0;
            int64_t end = (int64_t)ev->time[ids[k + 1]] - bins->t0;
            if (end <= start)
                continue;
            uint32_t ref = ev->region[e];
            size_t row = ref < n_regions ? ref : n_regions;
            int64_t *out = totals + row * nb;
            present[row] = 1;
            uint32_t b0 = bin_of(edges, nb, start, 0), b1 = bin_of(edges, nb, end, 1);
            if (b0 >= b1) { /* most stretches lie in one bin */
                out[b0] += end - start;
                continue;
            }
            for (uint32_t b = b0; b <= b1; b++) {
                int64_t from = start > edges[b] ? start : edges[b];
                int64_t to = end < edges[b + 1] ? end : edges[b + 1];
                out[b] += to - from;
            }
        }
    }
    free(edges);
    return EARL_OK;
}

earl_status earl_profile_inclusive(const earl_trace *trace, const earl_eid *leaveptr,
                                   uint32_t n_regions, int per_location, int64_t *totals,
                                   earl_error *err)
{
    if (!trace || !leaveptr || !totals)
        return earl_fail(err, EARL_ERR_INVALID,
                         "earl_profile_inclusive: a required argument is NULL");
    const earl_events *ev = earl_trace_events(trace);
    const uint32_t n_loc = earl_trace_defs(trace)->n_locations;
    int64_t *last = malloc(((size_t)n_loc + 1) * sizeof *last);
    if (!last)
        return earl_fail(err, EARL_ERR_NOMEM, "earl_profile_inclusive: out of memory");
    for (uint32_t l = 0; l < n_loc; l++) {
        size_t end = ev->loc_start[l + 1];
        last[l] = end > ev->loc_start[l] ? (int64_t)ev->time[ev->loc_events[end - 1]] : 0;
    }
    for (size_t i = 0; i < ev->count; i++) {
        if (ev->kind[i] != EARL_ENTER || ev->region[i] >= n_regions)
            continue;
        earl_loc l = ev->location[i];
        earl_eid leave = leaveptr[i];
        int64_t end = leave >= 0 ? (int64_t)ev->time[leave] : last[l];
        size_t key = per_location ? (size_t)ev->region[i] * n_loc + (size_t)l : ev->region[i];
        totals[key] += end - (int64_t)ev->time[i];
    }
    free(last);
    return EARL_OK;
}
