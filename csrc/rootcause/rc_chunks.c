/*
 * rc_chunks.c - time chunks: the exclusive time of every location as
 * Scalasca's replay counts it, in chunks at ENTER and LEAVE events (the time
 * since the location's previous ENTER or LEAVE, charged at an ENTER to the
 * caller and at a LEAVE to the region left), keyed so that the time between
 * two synchronisation points is one contiguous range.
 *
 * One pass over the events in the total order (the columns are read
 * sequentially), each location's chunks written to a bucket of its own,
 * then the buckets closed up.
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

void earl_rc_chunk_table_free(earl_rc_chunk_table *t)
{
    if (!t)
        return;
    earl_mem_free(t->key);
    earl_mem_free(t->cnode);
    earl_mem_free(t->ticks);
    memset(t, 0, sizeof *t);
}

/* Per location while the events pass: where its next chunk goes, and the
 * time of its previous ENTER/LEAVE. */
typedef struct location_clock {
    size_t next;
    uint64_t last_time;
    int started;
} location_clock;

earl_status earl_rc_chunks_build(size_t n_locations, const uint64_t *loc_start, size_t n_events,
                                 const int32_t *location, const uint8_t *kind,
                                 const uint64_t *time, const int32_t *event_cnode,
                                 const int32_t *parent, size_t n_cnodes, const uint8_t role[256],
                                 int64_t program_cnode, earl_rc_chunk_table *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t stride = (int64_t)n_events + 1;
    if (loc_start[0] != 0 || loc_start[n_locations] != n_events)
        return earl_fail(err, EARL_ERR_INVALID,
                         "root-cause chunks: the locations hold %llu events, not %zu",
                         (unsigned long long)(loc_start[n_locations] - loc_start[0]), n_events);
    for (size_t l = 0; l < n_locations; l++)
        if (loc_start[l] > loc_start[l + 1])
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause chunks: the event counts of location %zu are negative", l);
    /* at most one chunk per event: location l's bucket starts at loc_start[l] */
    size_t cap = n_events ? n_events : 1;
    location_clock *clock = calloc(n_locations ? n_locations : 1, sizeof *clock);
    /* the table is as large as the trace: blocks kept warm by mem.c */
    out->key = earl_mem_alloc_scratch(cap * sizeof *out->key);
    out->cnode = earl_mem_alloc_scratch(cap * sizeof *out->cnode);
    out->ticks = earl_mem_alloc_scratch(cap * sizeof *out->ticks);
    if (!clock || !out->key || !out->cnode || !out->ticks) {
        free(clock);
        earl_rc_chunk_table_free(out);
        return earl_fail(err, EARL_ERR_NOMEM, "root-cause chunks: out of memory");
    }
    for (size_t l = 0; l < n_locations; l++)
        clock[l].next = (size_t)loc_start[l];
    const char *problem = NULL;
    size_t bad = 0;
    for (size_t e = 0; e < n_events; e++) {
        uint8_t r = role[kind[e]];
        if (r == EARL_RC_CHUNK_NONE)
            continue;
        int32_t l = location[e];
        if (l < 0 || (size_t)l >= n_locations) {
            problem = "has a location out of range";
            bad = e;
            break;
        }
        location_clock *c = &clock[l];
        /* the same wrap-around as int64 arithmetic on damaged timestamps */
        int64_t dt = (int64_t)(time[e] - c->last_time);
        c->last_time = time[e];
        if (!c->started) {
            c->started = 1;
            continue;
        }
        int64_t cn = r == EARL_RC_CHUNK_PROGRAM_END ? program_cnode : event_cnode[e];
        if (cn >= (int64_t)n_cnodes) {
            problem = "has a call path out of range";
            bad = e;
            break;
        }
        if (r == EARL_RC_CHUNK_ENTER && cn >= 0)
            cn = parent[cn];
        if (cn < 0)
            continue;
        if (c->next >= loc_start[l + 1]) {
            problem = "is one more than its location's event count";
            bad = e;
            break;
        }
        int before = r == EARL_RC_CHUNK_ENTER || r == EARL_RC_CHUNK_JOIN;
        out->key[c->next] = ((int64_t)l * stride + (int64_t)e) * 2 + (before ? 0 : 1);
        out->cnode[c->next] = cn;
        out->ticks[c->next] = dt;
        c->next++;
    }
    if (problem) {
        free(clock);
        earl_rc_chunk_table_free(out);
        return earl_fail(err, EARL_ERR_INVALID, "root-cause chunks: event %zu %s", bad, problem);
    }
    /* close the buckets up, location by location */
    size_t n = 0;
    for (size_t l = 0; l < n_locations; l++) {
        size_t from = (size_t)loc_start[l], count = clock[l].next - from;
        if (count && from != n) {
            memmove(out->key + n, out->key + from, count * sizeof *out->key);
            memmove(out->cnode + n, out->cnode + from, count * sizeof *out->cnode);
            memmove(out->ticks + n, out->ticks + from, count * sizeof *out->ticks);
        }
        n += count;
    }
    free(clock);
    out->count = n;
    return EARL_OK;
}
