/*
 * rc_chunks.c - time chunks: the exclusive time of every location as
 * Scalasca's replay counts it, in chunks at ENTER and LEAVE events (the time
 * since the location's previous ENTER or LEAVE, charged at an ENTER to the
 * caller and at a LEAVE to the region left), and their sums per call path
 * between two events of a location.
 *
 * The chunks of the events are built once, passing over the events in the
 * total order (the columns are read sequentially).  Each location's part of
 * the table is sized by its events (a location has at most one chunk per
 * event; counting them reads the location column alone), so that on one
 * thread one pass writes the chunks where they go; the rest of each part,
 * never written, is never touched either: it costs address space, not
 * memory.  On several threads the pass runs in parts of the order (see
 * chunk_part), each part counting its locations' chunks first to know where
 * the next part's start.  The layout is the same for any number of parts.
 * Their table is about as long as the trace and fresh memory costs more on
 * first touch than the passes themselves (docs/benchmarks.md), so it is kept
 * small: 12 bytes a chunk, each located by a 32-bit slot (its event and its
 * side of the event's point) instead of a 64-bit key, with its ticks in 32
 * bits (the rare chunk longer than that in a far table beside).
 * Walking the events afresh for every query instead would need no table,
 * but a location's events are spread over the whole trace, and reading them
 * location by location fetches every cache line of the columns once per
 * location: on 16 ranks and 10M events, 1.2 s for the intervals the table
 * answers in 0.2 s.
 */
#include <stdlib.h>
#include <string.h>

#include "base/parts.h"
#include "rc_internal.h"

/* slots are 2 * event + 1 at most, in 32 bits */
#define MAX_EVENTS ((uint64_t)1 << 31)

void earl_rc_event_chunk_table_free(earl_rc_event_chunk_table *t)
{
    if (!t)
        return;
    free(t->offset);
    free(t->end);
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
 * time of its previous ENTER/LEAVE.  For the events of a part (see below):
 * whether its first event there would give a chunk were the location started
 * in an earlier part (first_chunk), or has a call path out of range
 * (first_bad: the event, -1 when none). */
typedef struct location_clock {
    uint64_t chunks;
    uint64_t last_time;
    int started;
    int first_chunk;
    int64_t first_bad;
} location_clock;

/* The call path an event with role r is charged to (-1: none); -2 when its
 * own call path is out of range. */
static int64_t charged_cnode(const earl_rc_event_columns *in, uint8_t r, size_t e)
{
    int64_t cn = r == EARL_RC_CHUNK_PROGRAM_END ? in->program_cnode : in->cnode[e];
    if (cn >= (int64_t)in->n_cnodes)
        return -2;
    if (r == EARL_RC_CHUNK_ENTER && cn >= 0)
        cn = in->parent[cn];
    return cn < 0 ? -1 : cn;
}

/* One pass over the events [from, to): counts each location's chunks into
 * clock (table NULL), or writes them into table at table->offset (then the
 * counts must be those of the counting pass), the far ones into *far (n_far
 * of cap_far).  A problem found is described in *problem with the event in
 * *bad; -1 when out of memory. */
static int chunk_pass(const earl_rc_event_columns *in, size_t from, size_t to,
                      location_clock *clock, earl_rc_event_chunk_table *table, far_entry **far,
                      size_t *n_far, size_t *cap_far, const char **problem, size_t *bad)
{
    /* the columns in locals: the table's stores could otherwise alias them,
     * and the compiler would load every pointer again at each event */
    const int32_t *location = in->location;
    const uint64_t *time = in->time;
    const uint8_t *kind = in->kind, *role = in->role;
    const size_t n_locations = in->n_locations;
    const uint64_t *offset = table ? table->offset : NULL;
    uint32_t *slot = table ? table->slot : NULL;
    int32_t *cnode = table ? table->cnode : NULL, *ticks = table ? table->ticks : NULL;
    for (size_t e = from; e < to; e++) {
        int32_t l = location[e];
        if (l < 0 || (size_t)l >= n_locations) {
            *problem = "has a location out of range";
            *bad = e;
            return 0;
        }
        uint8_t r = role[kind[e]];
        if (r == EARL_RC_CHUNK_NONE)
            continue;
        location_clock *c = &clock[l];
        /* the same wrap-around as int64 arithmetic on damaged timestamps */
        int64_t dt = (int64_t)(time[e] - c->last_time);
        c->last_time = time[e];
        int64_t cn = charged_cnode(in, r, e);
        if (!c->started) {
            c->started = 1;
            c->first_chunk = cn >= 0;
            c->first_bad = cn == -2 ? (int64_t)e : -1;
            continue;
        }
        if (cn == -2) {
            *problem = "has a call path out of range";
            *bad = e;
            return 0;
        }
        if (cn < 0)
            continue;
        if (table) {
            int before = r == EARL_RC_CHUNK_ENTER || r == EARL_RC_CHUNK_JOIN;
            size_t i = (size_t)(offset[l] + c->chunks);
            slot[i] = (uint32_t)(2 * e + (before ? 0 : 1));
            cnode[i] = (int32_t)cn;
            if (dt > EARL_RC_TICKS_FAR && dt <= INT32_MAX) {
                ticks[i] = (int32_t)dt;
            } else {
                ticks[i] = EARL_RC_TICKS_FAR;
                if (EARL_GROW(*far, *cap_far, *n_far + 1) != 0)
                    return -1;
                (*far)[(*n_far)++] = (far_entry){i, dt};
            }
        }
        c->chunks++;
    }
    return 0;
}

/* The events are cut into ranges of the total order, one part each, passed
 * on threads of their own: a part first counts its locations' chunks as if
 * each started in it; then every part learns from the parts before it where
 * each location stands at its start (started, the time of its last chunk
 * event, the chunks before it), and writes its chunks there.  The table is
 * the one pass over all events writes, for any number of parts; the far
 * chunks, met part by part, are sorted by chunk at the end as before. */
typedef struct chunk_part {
    size_t from, to;
    location_clock *clock; /* n_locations */
    far_entry *far;
    size_t n_far, cap_far;
    const char *problem;
    size_t bad;
    int nomem;
} chunk_part;

typedef struct chunk_job {
    const earl_rc_event_columns *in;
    earl_rc_event_chunk_table *out; /* NULL while counting */
    chunk_part part[EARL_MAX_PARTS];
} chunk_job;

static void chunk_part_run(void *arg, int k)
{
    chunk_job *j = arg;
    chunk_part *p = &j->part[k];
    if (chunk_pass(j->in, p->from, p->to, p->clock, j->out, &p->far, &p->n_far, &p->cap_far,
                   &p->problem, &p->bad) != 0)
        p->nomem = 1;
}

/* The first problem of the events in the total order, from the counting
 * passes of the parts (a part's first event of a location is a problem only
 * when the location started before the part); 0 when none. */
static int first_problem(const chunk_job *j, int n_parts, size_t n_locations,
                         const char **problem, size_t *bad)
{
    for (int k = 0; k < n_parts; k++) {
        const chunk_part *p = &j->part[k];
        int found = p->problem != NULL;
        if (found) {
            *problem = p->problem;
            *bad = p->bad;
        }
        for (size_t l = 0; l < n_locations && k > 0; l++) {
            int64_t e = p->clock[l].started ? p->clock[l].first_bad : -1;
            if (e < 0 || (found && (size_t)e >= *bad))
                continue;
            int before = 0;
            for (int i = 0; i < k && !before; i++)
                before = j->part[i].clock[l].started;
            if (before) {
                found = 1;
                *problem = "has a call path out of range";
                *bad = (size_t)e;
            }
        }
        if (found)
            return 1;
    }
    return 0;
}

/* Turn the counting clocks of the parts into where each part starts: per
 * location its chunks before the part, started, the time of its last chunk
 * event. */
static void starts_of_parts(chunk_job *j, int n_parts, size_t n_locations)
{
    for (size_t l = 0; l < n_locations; l++) {
        location_clock at = {0, 0, 0, 0, -1};
        for (int k = 0; k < n_parts; k++) {
            location_clock *c = &j->part[k].clock[l];
            location_clock counted = *c;
            *c = at;
            if (!counted.started)
                continue;
            at.chunks += counted.chunks + (at.started && counted.first_chunk ? 1 : 0);
            at.last_time = counted.last_time;
            at.started = 1;
        }
    }
}

/* Where each location's part of the table starts: where the events of the
 * locations before it end (into out->offset; the events are counted up to
 * the first one whose location is out of range, which the passes report, so
 * that no chunk is written beyond its location's part). */
static void size_by_events(const earl_rc_event_columns *in, earl_rc_event_chunk_table *out)
{
    uint64_t *count = out->offset + 1;
    for (size_t e = 0; e < in->n_events; e++) {
        int32_t l = in->location[e];
        if (l < 0 || (size_t)l >= in->n_locations)
            break;
        count[l]++;
    }
    for (size_t l = 0; l < in->n_locations; l++)
        out->offset[l + 1] += out->offset[l];
}

/* After the writing pass: where each location's chunks end (the last part's
 * clock has counted them all), and the table's count up to the last
 * location's end (its part holds nothing beyond). */
static void ends_of_locations(const location_clock *clock, earl_rc_event_chunk_table *out)
{
    size_t n = out->n_locations;
    for (size_t l = 0; l < n; l++)
        out->end[l] = out->offset[l] + clock[l].chunks;
    if (n)
        out->offset[n] = out->end[n - 1];
    out->count = (size_t)out->offset[n];
}

/* The far chunks of every part, met in the total order, sorted by chunk into
 * out's far table; -1 when out of memory. */
static int join_far(const chunk_job *j, int n_parts, earl_rc_event_chunk_table *out)
{
    size_t n_far = 0;
    for (int k = 0; k < n_parts; k++)
        n_far += j->part[k].n_far;
    if (!n_far)
        return 0;
    far_entry *far = malloc(n_far * sizeof *far);
    out->far_chunk = malloc(n_far * sizeof *out->far_chunk);
    out->far_ticks = malloc(n_far * sizeof *out->far_ticks);
    if (!far || !out->far_chunk || !out->far_ticks) {
        free(far);
        return -1;
    }
    size_t n = 0;
    for (int k = 0; k < n_parts; k++) {
        memcpy(far + n, j->part[k].far, j->part[k].n_far * sizeof *far);
        n += j->part[k].n_far;
    }
    qsort(far, n_far, sizeof *far, by_chunk);
    for (size_t k = 0; k < n_far; k++) {
        out->far_chunk[k] = far[k].chunk;
        out->far_ticks[k] = far[k].ticks;
    }
    out->n_far = n_far;
    free(far);
    return 0;
}

static void chunk_job_free(chunk_job *j, int n_parts)
{
    for (int k = 0; j && k < n_parts; k++) {
        free(j->part[k].clock);
        free(j->part[k].far);
    }
    free(j);
}

earl_status earl_rc_event_chunks_build(const earl_rc_event_columns *in, int threads,
                                       earl_rc_event_chunk_table *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n_locations = in->n_locations, n_events = in->n_events;
    if ((uint64_t)n_events >= MAX_EVENTS)
        return earl_fail(err, EARL_ERR_INVALID,
                         "root-cause chunks: %zu events, more than the %llu the chunks can tell "
                         "apart",
                         n_events, (unsigned long long)MAX_EVENTS - 1);
    int n_parts = earl_parallel_parts(threads, n_events, (size_t)1 << 18);
    /* a clock per part and location: no more parts than a few million clocks */
    while (n_parts > 1 && (size_t)n_parts * n_locations > ((size_t)1 << 22))
        n_parts /= 2;
    chunk_job *j = calloc(1, sizeof *j);
    out->offset = calloc(n_locations + 1, sizeof *out->offset);
    out->end = calloc(n_locations ? n_locations : 1, sizeof *out->end);
    if (!j || !out->offset || !out->end)
        goto nomem;
    out->n_locations = n_locations;
    j->in = in;
    for (int k = 0; k < n_parts; k++) {
        chunk_part *p = &j->part[k];
        p->from = earl_part_start(n_events, k, n_parts);
        p->to = earl_part_start(n_events, k + 1, n_parts);
        if (!(p->clock = calloc(n_locations ? n_locations : 1, sizeof *p->clock)))
            goto nomem;
    }
    const char *problem = NULL;
    size_t bad = 0;
    size_by_events(in, out);
    if (n_parts > 1) {
        earl_parallel(n_parts, chunk_part_run, j);
        if (first_problem(j, n_parts, n_locations, &problem, &bad))
            goto invalid;
        starts_of_parts(j, n_parts, n_locations);
    }
    size_t cap = n_events ? n_events : 1;
    out->slot = earl_mem_alloc_temp(cap * sizeof *out->slot);
    out->cnode = earl_mem_alloc_temp(cap * sizeof *out->cnode);
    out->ticks = earl_mem_alloc_temp(cap * sizeof *out->ticks);
    if (!out->slot || !out->cnode || !out->ticks)
        goto nomem;
    j->out = out;
    earl_parallel(n_parts, chunk_part_run, j);
    for (int k = 0; k < n_parts; k++)
        if (j->part[k].nomem)
            goto nomem;
    if (n_parts == 1 && j->part[0].problem) {
        /* the one pass found the problems (the parts' counting did, else) */
        problem = j->part[0].problem;
        bad = j->part[0].bad;
        goto invalid;
    }
    ends_of_locations(j->part[n_parts - 1].clock, out);
    if (join_far(j, n_parts, out) < 0)
        goto nomem;
    chunk_job_free(j, n_parts);
    return EARL_OK;
invalid:
    chunk_job_free(j, n_parts);
    earl_rc_event_chunk_table_free(out);
    return earl_fail(err, EARL_ERR_INVALID, "root-cause chunks: event %zu %s", bad, problem);
nomem:
    chunk_job_free(j, n_parts);
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
        if (ev->offset[l] > ev->offset[l + 1] ||
            (ev->end && (ev->end[l] < ev->offset[l] || ev->end[l] > ev->offset[l + 1])))
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
    size_t count = (size_t)((ev->end ? ev->end[loc] : ev->offset[loc + 1]) - ev->offset[loc]);
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
