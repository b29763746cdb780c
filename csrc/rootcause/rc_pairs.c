/*
 * rc_pairs.c - where two locations last met: the latest synchronisation
 * point of a location with a partner before an event, at a point-to-point
 * meeting of the two or at a group point of a set holding both (the start
 * of a wait state's synchronisation interval).
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

/* Queries of one location pair mostly come in event order: searches start
 * from the previous answer of the pair (or of the location, for a group's
 * points) when the table of hints is small enough to keep. */
#define RC_MAX_PAIR_HINTS ((size_t)1 << 22)

/* The latest key in [base, base + at) of keys[0..n), minus base; -1 if none. */
static int64_t latest_before(const int64_t *keys, size_t n, int64_t base, int64_t at,
                             size_t *hint)
{
    size_t i = hint ? earl_i64_gallop_lower_bound(keys, n, base + at, *hint)
                    : earl_i64_lower_bound(keys, 0, n, base + at);
    if (hint)
        *hint = i;
    if (i == 0 || keys[i - 1] < base)
        return -1;
    return keys[i - 1] - base;
}

earl_status earl_rc_previous_points(const earl_rc_pair_points *pp,
                                    const earl_rc_meeting_queries *queries, int64_t *out,
                                    earl_error *err)
{
    const size_t nl = pp->n_locations, n_queries = queries->count;
    const int64_t stride = pp->stride;
    const int64_t *loc = queries->location, *partner = queries->partner, *at = queries->before;
    for (size_t q = 0; q < n_queries; q++)
        if (loc[q] < 0 || (size_t)loc[q] >= nl || partner[q] < 0 || (size_t)partner[q] >= nl)
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause previous points: query %zu pairs locations %lld and "
                             "%lld, not below %zu", q, (long long)loc[q], (long long)partner[q],
                             nl);
    for (size_t g = 0; g < pp->n_groups; g++)
        for (int64_t i = pp->member_offset[g]; i < pp->member_offset[g + 1]; i++)
            if (pp->member_location[i] < 0 || (size_t)pp->member_location[i] >= nl)
                return earl_fail(err, EARL_ERR_INVALID,
                                 "root-cause previous points: group %zu has member %lld", g,
                                 (long long)pp->member_location[i]);
    /* membership of every group, one byte per (group, location) */
    uint8_t *member = calloc(pp->n_groups * nl + 1, 1);
    size_t *pair_hint = nl * nl <= RC_MAX_PAIR_HINTS ? calloc(nl * nl, sizeof *pair_hint) : NULL;
    size_t *group_hint = pp->n_groups * nl <= RC_MAX_PAIR_HINTS
                             ? calloc(pp->n_groups * nl + 1, sizeof *group_hint)
                             : NULL;
    if (!member || (!pair_hint && nl * nl <= RC_MAX_PAIR_HINTS) ||
        (!group_hint && pp->n_groups * nl <= RC_MAX_PAIR_HINTS)) {
        free(member);
        free(pair_hint);
        free(group_hint);
        return earl_fail(err, EARL_ERR_NOMEM, "root-cause previous points: out of memory");
    }
    for (size_t g = 0; g < pp->n_groups; g++)
        for (int64_t i = pp->member_offset[g]; i < pp->member_offset[g + 1]; i++)
            member[g * nl + (size_t)pp->member_location[i]] = 1;
    for (size_t q = 0; q < n_queries; q++) {
        size_t l = (size_t)loc[q], r = (size_t)partner[q];
        int64_t best = latest_before(pp->pair_key, pp->n_pairs, (int64_t)(l * nl + r) * stride,
                                     at[q], pair_hint ? &pair_hint[l * nl + r] : NULL);
        for (size_t g = 0; g < pp->n_groups; g++) {
            if (!member[g * nl + l] || !member[g * nl + r])
                continue;
            const int64_t *keys = pp->group_key + pp->key_offset[g];
            size_t n = (size_t)(pp->key_offset[g + 1] - pp->key_offset[g]);
            int64_t found = latest_before(keys, n, (int64_t)l * stride, at[q],
                                          group_hint ? &group_hint[g * nl + l] : NULL);
            if (found > best)
                best = found;
        }
        out[q] = best;
    }
    free(member);
    free(pair_hint);
    free(group_hint);
    return EARL_OK;
}
