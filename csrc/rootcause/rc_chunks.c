/*
 * rc_chunks.c - time chunks: the exclusive time of every location as
 * Scalasca's replay counts it, in chunks at ENTER and LEAVE events (the time
 * since the location's previous ENTER or LEAVE, charged at an ENTER to the
 * caller and at a LEAVE to the region left), and their sums per call path
 * between two events of a location.
 *
 * The chunks of the events are built once, in two passes over the events in
 * the total order (the columns are read sequentially): one counts each
 * location's chunks, the other writes them where they go.  Their table is
 * about as long as the trace and fresh memory costs more on first touch than
 * the passes themselves (docs/benchmarks.md), so it is kept small: exactly as
 * many chunks as there are, 12 bytes each, each located by a 32-bit slot (its
 * event and its side of the event's point) instead of a 64-bit key, with its
 * ticks in 32 bits (the rare chunk longer than that in a far table beside).
 * Walking the events afresh for every query instead would need no table,
 * but a location's events are spread over the whole trace, and reading them
 * location by location fetches every cache line of the columns once per
 * location: on 16 ranks and 10M events, 1.2 s for the intervals the table
 * answers in 0.2 s.
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

/* slots are 2 * event + 1 at most, in 32 bits */
#define MAX_EVENTS ((uint64_t)1 << 31)

void earl_rc_event_chunk_table_free(earl_rc_event_chunk_table *t)
{
    if (!t)
        return;
    free(t->offset);
    earl_mem_free(t->slot);
    earl_mem_free(t->cnode);
    earl_mem_free(t->ticks);
    free(t->far_chunk);
    free(t->far_ticks);
    memset(t, 0, sizeof *t);
}

/* A chunk whose ticks do not fit 32 bits: kept whole, in the far table. */
typedef struct far_entry {
    uint64_t chunk;
    int64_t ticks;
} far_entry;

static int by_chunk(const void *a, const void *b)
{
    uint64_t x = ((const far_entry *)a)->chunk, y = ((const far_entry *)b)->chunk;
    return (x > y) - (x < y);
}

/* Per location while the events pass: how many chunks it has had, and the
 * time of its previous ENTER/LEAVE. */
typedef struct location_clock {
    uint64_t chunks;
    uint64_t last_time;
    int started;
} location_clock;

/* One pass over the events: counts each location's chunks into clock (table
 * NULL), or writes them into table at table->offset (then the counts must be
 * those of the counting pass), the far ones into *far (n_far of cap_far).  A
 * problem found is described in *problem with the event in *bad; -1 when out
 * of memory. */
static int chunk_pass(const earl_rc_event_columns *in, location_clock *clock,
                      earl_rc_event_chunk_table *table, far_entry **far, size_t *n_far,
                      size_t *cap_far, const char **problem, size_t *bad)
{
    const int32_t *location = in->location, *event_cnode = in->cnode;
    const uint64_t *time = in->time;
    for (size_t e = 0; e < in->n_events; e++) {
        int32_t l = location[e];
        if (l < 0 || (size_t)l >= in->n_locations) {
            *problem = "has a location out of range";
            *bad = e;
            return 0;
        }
        location_clock *c = &clock[l];
        uint8_t r = in->role[in->kind[e]];
        if (r == EARL_RC_CHUNK_NONE)
            continue;
        /* the same wrap-around as int64 arithmetic on damaged timestamps */
        int64_t dt = (int64_t)(time[e] - c->last_time);
        c->last_time = time[e];
        if (!c->started) {
            c->started = 1;
            continue;
        }
        int64_t cn = r == EARL_RC_CHUNK_PROGRAM_END ? in->program_cnode : event_cnode[e];
        if (cn >= (int64_t)in->n_cnodes) {
            *problem = "has a call path out of range";
            *bad = e;
            return 0;
        }
        if (r == EARL_RC_CHUNK_ENTER && cn >= 0)
            cn = in->parent[cn];
        if (cn < 0)
            continue;
        if (table) {
            int before = r == EARL_RC_CHUNK_ENTER || r == EARL_RC_CHUNK_JOIN;
            size_t i = (size_t)(table->offset[l] + c->chunks);
            table->slot[i] = (uint32_t)(2 * e + (before ? 0 : 1));
            table->cnode[i] = (int32_t)cn;
            if (dt > EARL_RC_TICKS_FAR && dt <= INT32_MAX) {
                table->ticks[i] = (int32_t)dt;
            } else {
                table->ticks[i] = EARL_RC_TICKS_FAR;
                if (EARL_GROW(*far, *cap_far, *n_far + 1) != 0)
                    return -1;
                (*far)[(*n_far)++] = (far_entry){i, dt};
            }
        }
        c->chunks++;
    }
    return 0;
}

earl_status earl_rc_event_chunks_build(const earl_rc_event_columns *in,
                                       earl_rc_event_chunk_table *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n_locations = in->n_locations, n_events = in->n_events;
    if ((uint64_t)n_events >= MAX_EVENTS)
        return earl_fail(err, EARL_ERR_INVALID,
                         "root-cause chunks: %zu events, more than the %llu the chunks can tell "
                         "apart",
                         n_events, (unsigned long long)MAX_EVENTS - 1);
    location_clock *clock = calloc(n_locations ? n_locations : 1, sizeof *clock);
    out->offset = calloc(n_locations + 1, sizeof *out->offset);
    if (!clock || !out->offset)
        goto nomem;
    const char *problem = NULL;
    size_t bad = 0, n_far = 0, cap_far = 0;
    far_entry *far = NULL;
    chunk_pass(in, clock, NULL, &far, &n_far, &cap_far, &problem, &bad);
    if (problem) {
        free(clock);
        earl_rc_event_chunk_table_free(out);
        return earl_fail(err, EARL_ERR_INVALID, "root-cause chunks: event %zu %s", bad, problem);
    }
    for (size_t l = 0; l < n_locations; l++)
        out->offset[l + 1] = out->offset[l] + clock[l].chunks;
    out->n_locations = n_locations;
    out->count = (size_t)out->offset[n_locations];
    size_t cap = out->count ? out->count : 1;
    out->slot = earl_mem_alloc_temp(cap * sizeof *out->slot);
    out->cnode = earl_mem_alloc_temp(cap * sizeof *out->cnode);
    out->ticks = earl_mem_alloc_temp(cap * sizeof *out->ticks);
    if (!out->slot || !out->cnode || !out->ticks)
        goto nomem;
    memset(clock, 0, n_locations * sizeof *clock);
    if (chunk_pass(in, clock, out, &far, &n_far, &cap_far, &problem, &bad) != 0)
        goto nomem;
    if (n_far) {
        /* the far chunks were met in the total order, not location by location */
        qsort(far, n_far, sizeof *far, by_chunk);
        out->far_chunk = malloc(n_far * sizeof *out->far_chunk);
        out->far_ticks = malloc(n_far * sizeof *out->far_ticks);
        if (!out->far_chunk || !out->far_ticks)
            goto nomem;
        for (size_t k = 0; k < n_far; k++) {
            out->far_chunk[k] = far[k].chunk;
            out->far_ticks[k] = far[k].ticks;
        }
        out->n_far = n_far;
    }
    free(far);
    free(clock);
    return EARL_OK;
nomem:
    free(far);
    free(clock);
    earl_rc_event_chunk_table_free(out);
    return earl_fail(err, EARL_ERR_NOMEM, "root-cause chunks: out of memory");
}

earl_status rc_chunks_check(const earl_rc_chunks *chunks, const char *what, earl_error *err)
{
    if (chunks->stride <= 0 || chunks->n_cnodes < 0)
        return earl_fail(err, EARL_ERR_INVALID, "%s: stride %lld and %lld call paths are invalid",
                         what, (long long)chunks->stride, (long long)chunks->n_cnodes);
    const earl_rc_event_chunks *ev = &chunks->events;
    for (size_t l = 0; l < ev->n_locations; l++)
        if (ev->offset[l] > ev->offset[l + 1])
            return earl_fail(err, EARL_ERR_INVALID,
                             "%s: the chunk offsets of location %zu are not in order", what, l);
    uint64_t count = ev->n_locations ? ev->offset[ev->n_locations] : 0;
    for (size_t k = 0; k < ev->n_far; k++)
        if (ev->far_chunk[k] >= count || (k && ev->far_chunk[k] <= ev->far_chunk[k - 1]))
            return earl_fail(err, EARL_ERR_INVALID,
                             "%s: the far chunks are not ascending chunk indices", what);
    return EARL_OK;
}

/* The whole ticks of far chunk i into *ticks; -1 when the far table does not
 * hold it. */
static int far_ticks_of(const earl_rc_event_chunks *ev, uint64_t i, int64_t *ticks)
{
    size_t lo = earl_u64_lower_bound(ev->far_chunk, 0, ev->n_far, i);
    if (lo == ev->n_far || ev->far_chunk[lo] != i)
        return -1;
    *ticks = ev->far_ticks[lo];
    return 0;
}

/* The slot after event's point (-1: before every event), as a search bound. */
static uint32_t slot_after(int64_t event)
{
    int64_t slot = 2 * event + 1;
    return slot < 0 ? 0 : slot > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)slot;
}

/* The chunks of location loc's events after lo's point and before hi's,
 * added to acc. */
static earl_status sum_event_chunks(const earl_rc_event_chunks *ev, int64_t loc, int64_t lo,
                                    int64_t hi, rc_accumulator *acc, rc_chunk_cursor *cur,
                                    const char *what, earl_error *err)
{
    uint32_t from = slot_after(lo), to = slot_after(hi);
    const uint32_t *slot = ev->slot + ev->offset[loc];
    size_t count = (size_t)(ev->offset[loc + 1] - ev->offset[loc]);
    size_t first = earl_u32_gallop_lower_bound(slot, count, from, cur->chunk);
    cur->chunk = first; /* the location's next query starts near this one */
    const int32_t *cnode = ev->cnode + ev->offset[loc];
    const int32_t *ticks = ev->ticks + ev->offset[loc];
    const uint64_t n_cnodes = (uint64_t)acc->n_cnodes;
    /* the sum reads every chunk up to the end: no search for it */
    for (size_t i = first; i < count && slot[i] < to; i++) {
        int64_t c = cnode[i];
        if ((uint64_t)c >= n_cnodes)
            return earl_fail(err, EARL_ERR_INVALID,
                             "%s: time chunk %zu of location %lld has call path %lld, not in "
                             "0..%lld",
                             what, i, (long long)loc, (long long)c, (long long)acc->n_cnodes - 1);
        int64_t t = ticks[i];
        if (t == EARL_RC_TICKS_FAR && far_ticks_of(ev, ev->offset[loc] + i, &t) != 0)
            return earl_fail(err, EARL_ERR_INVALID,
                             "%s: time chunk %zu of location %lld is marked far but is not in "
                             "the far table",
                             what, i, (long long)loc);
        rc_acc_add_ticks(acc, c, t);
    }
    return EARL_OK;
}

/* The table's chunks with keys in [(loc * stride + lo) * 2 + 1,
 * (loc * stride + hi) * 2 + 1), added to acc. */
static earl_status sum_table_chunks(const earl_rc_chunk_table *t, int64_t stride, int64_t loc,
                                    int64_t lo, int64_t hi, rc_accumulator *acc, size_t *hint,
                                    const char *what, earl_error *err)
{
    if (!t->count)
        return EARL_OK;
    size_t first = earl_i64_gallop_lower_bound(t->key, t->count, (loc * stride + lo) * 2 + 1, *hint);
    size_t end = earl_i64_gallop_lower_bound(t->key, t->count, (loc * stride + hi) * 2 + 1, first);
    const uint64_t n_cnodes = (uint64_t)acc->n_cnodes;
    for (size_t i = first; i < end; i++) {
        int64_t c = t->cnode[i];
        if ((uint64_t)c >= n_cnodes)
            return earl_fail(err, EARL_ERR_INVALID,
                             "%s: time chunk %zu has call path %lld, not in 0..%lld", what, i,
                             (long long)c, (long long)acc->n_cnodes - 1);
        rc_acc_add_ticks(acc, c, t->ticks[i]);
    }
    *hint = first; /* the location's next query starts near this one */
    return EARL_OK;
}

earl_status rc_sum_chunks(const earl_rc_chunks *chunks, int64_t loc, int64_t lo, int64_t hi,
                          rc_accumulator *acc, rc_chunk_cursor *cur, const char *what,
                          earl_error *err)
{
    if ((uint64_t)loc < chunks->events.n_locations) {
        earl_status st = sum_event_chunks(&chunks->events, loc, lo, hi, acc, cur, what, err);
        if (st != EARL_OK)
            return st;
    }
    return sum_table_chunks(&chunks->table, chunks->stride, loc, lo, hi, acc, &cur->table, what,
                            err);
}
