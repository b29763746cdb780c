/*
 * rc_chunks.c - time chunks: the exclusive time of every location as
 * Scalasca's replay counts it, in chunks at ENTER and LEAVE events (the time
 * since the location's previous ENTER or LEAVE, charged at an ENTER to the
 * caller and at a LEAVE to the region left), keyed so that the time between
 * two synchronisation points is one contiguous range.
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

void earl_rc_chunk_table_free(earl_rc_chunk_table *t)
{
    if (!t)
        return;
    free(t->key);
    free(t->cnode);
    free(t->ticks);
    memset(t, 0, sizeof *t);
}

earl_status earl_rc_chunks_build(size_t n_locations, const uint64_t *loc_start,
                                 const int64_t *loc_events, size_t n_events, const uint8_t *kind,
                                 const uint64_t *time, const int32_t *event_cnode,
                                 const int32_t *parent, size_t n_cnodes, const uint8_t role[256],
                                 int64_t program_cnode, earl_rc_chunk_table *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t stride = (int64_t)n_events + 1;
    /* at most one chunk per listed event */
    size_t listed = (size_t)loc_start[n_locations];
    for (size_t l = 0; l < n_locations; l++)
        if (loc_start[l] > loc_start[l + 1] || loc_start[l + 1] > listed)
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause chunks: the event ranges of location %zu are not ascending",
                             l);
    size_t cap = listed ? listed : 1;
    out->key = malloc(cap * sizeof *out->key);
    out->cnode = malloc(cap * sizeof *out->cnode);
    out->ticks = malloc(cap * sizeof *out->ticks);
    if (!out->key || !out->cnode || !out->ticks) {
        earl_rc_chunk_table_free(out);
        return earl_fail(err, EARL_ERR_NOMEM, "root-cause chunks: out of memory");
    }
    size_t n = 0;
    for (size_t l = 0; l < n_locations; l++) {
        int started = 0;
        uint64_t last_time = 0;
        for (uint64_t i = loc_start[l]; i < loc_start[l + 1]; i++) {
            int64_t e = loc_events[i];
            if (e < 0 || (size_t)e >= n_events) {
                earl_rc_chunk_table_free(out);
                return earl_fail(err, EARL_ERR_INVALID,
                                 "root-cause chunks: event id %lld of location %zu out of range",
                                 (long long)e, l);
            }
            uint8_t r = role[kind[e]];
            if (r == EARL_RC_CHUNK_NONE)
                continue;
            /* the same wrap-around as int64 arithmetic on damaged timestamps */
            int64_t dt = (int64_t)(time[e] - last_time);
            last_time = time[e];
            if (!started) {
                started = 1;
                continue;
            }
            int64_t c = r == EARL_RC_CHUNK_PROGRAM_END ? program_cnode : event_cnode[e];
            if (c >= (int64_t)n_cnodes) {
                earl_rc_chunk_table_free(out);
                return earl_fail(err, EARL_ERR_INVALID,
                                 "root-cause chunks: event %lld has call path %lld, not below %zu",
                                 (long long)e, (long long)c, n_cnodes);
            }
            if (r == EARL_RC_CHUNK_ENTER && c >= 0)
                c = parent[c];
            if (c < 0)
                continue;
            int before = r == EARL_RC_CHUNK_ENTER || r == EARL_RC_CHUNK_JOIN;
            out->key[n] = ((int64_t)l * stride + e) * 2 + (before ? 0 : 1);
            out->cnode[n] = c;
            out->ticks[n] = dt;
            n++;
        }
    }
    out->count = n;
    return EARL_OK;
}
