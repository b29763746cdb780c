/*
 * rc_critical.c - the critical path's walk: from the end of the run back in
 * time, along each location's time until its latest wait state, then on the
 * location waited for, down to MPI_Init (or the start of the trace); the
 * stretches it passes are the path's activities.
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

void earl_rc_stretches_free(earl_rc_stretches *s)
{
    if (!s)
        return;
    free(s->location);
    free(s->start);
    free(s->end);
    memset(s, 0, sizeof *s);
}

/* Pending path ends: a max-heap of events, each taken at most once (a trace
 * whose wait states wait for each other in a circle, against the clock
 * condition, would make the path go round it for ever). */
typedef struct pending {
    rc_heap heap;
    uint8_t *queued; /* per event: pushed once */
} pending;

static int pending_push(pending *p, int64_t e)
{
    if (p->queued[e])
        return 0;
    p->queued[e] = 1;
    return rc_heap_push(&p->heap, (rc_heap_entry){e, 0, 0});
}

/* The latest key of location loc before event end, as an event; -1 if none. */
static int64_t latest_before(const int64_t *keys, size_t n, int64_t stride, int64_t loc,
                             int64_t end, size_t *index)
{
    size_t i = earl_i64_lower_bound(keys, 0, n, loc * stride + end);
    if (i == 0 || keys[i - 1] < loc * stride)
        return -1;
    *index = i - 1;
    return keys[i - 1] - loc * stride;
}

static int stretch_push(earl_rc_stretches *s, size_t *cap, int64_t loc, int64_t start,
                        int64_t end)
{
    if (s->count == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        int64_t *a;
        if (!(a = realloc(s->location, c * sizeof *a)))
            return -1;
        s->location = a;
        if (!(a = realloc(s->start, c * sizeof *a)))
            return -1;
        s->start = a;
        if (!(a = realloc(s->end, c * sizeof *a)))
            return -1;
        s->end = a;
        *cap = c;
    }
    s->location[s->count] = loc;
    s->start[s->count] = start;
    s->end[s->count] = end;
    s->count++;
    return 0;
}

static int event_ok(const earl_rc_path_graph *g, int64_t e)
{
    return e >= 0 && (size_t)e < g->n_events && g->location[e] >= 0 &&
           (size_t)g->location[e] < g->n_locations;
}

/* One step of the walk: location cur, back from event end. */
static int walk_step(const earl_rc_path_graph *g, int64_t cur, int64_t end, pending *todo,
                     earl_rc_stretches *out, size_t *cap)
{
    size_t wi = 0, oi = 0;
    int64_t x_mpi = latest_before(g->wait_key, g->n_waits, g->stride, cur, end, &wi);
    int64_t x_omp = latest_before(g->omp_key, g->n_omp, g->stride, cur, end, &oi);
    if (x_mpi < 0 && x_omp < 0) {
        int64_t init = g->init_event[cur];
        if (init >= 0 || g->ends_at_start)
            return stretch_push(out, cap, cur, init, end);
        return 0;
    }
    int64_t x = x_mpi > x_omp ? x_mpi : x_omp;
    if (stretch_push(out, cap, cur, x, end) < 0)
        return -1;
    if (x == x_mpi)
        return pending_push(todo, g->wait_partner[wi]);
    for (int64_t k = g->omp_next_offset[oi]; k < g->omp_next_offset[oi + 1]; k++)
        if (pending_push(todo, g->omp_next_event[k]) < 0)
            return -1;
    return 0;
}

earl_status earl_rc_critical_walk(const earl_rc_path_graph *g, int64_t start_location,
                                  int64_t start_event, earl_rc_stretches *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    if (start_event >= 0 ? !event_ok(g, start_event)
                         : start_event != -1 || start_location < 0 ||
                               (size_t)start_location >= g->n_locations ||
                               g->n_events + 1 > (size_t)g->stride)
        return earl_fail(err, EARL_ERR_INVALID,
                         "critical path: start event %lld of location %lld out of range",
                         (long long)start_event, (long long)start_location);
    for (size_t i = 0; i < g->n_waits; i++)
        if (!event_ok(g, g->wait_partner[i]))
            return earl_fail(err, EARL_ERR_INVALID,
                             "critical path: wait state %zu continues at event %lld", i,
                             (long long)g->wait_partner[i]);
    for (size_t i = 0; g->n_omp && i < (size_t)g->omp_next_offset[g->n_omp]; i++)
        if (!event_ok(g, g->omp_next_event[i]))
            return earl_fail(err, EARL_ERR_INVALID,
                             "critical path: an OpenMP point continues at event %lld",
                             (long long)g->omp_next_event[i]);
    pending todo = {{NULL, 0, 0, rc_heap_key_less, NULL},
                    calloc(g->n_events ? g->n_events : 1, 1)};
    size_t cap = 0;
    if (!todo.queued)
        goto nomem;
    /* a start at a location's end: after every event, the last key of the
     * location being stride - 1 */
    if (start_event < 0 ? walk_step(g, start_location, g->stride - 1, &todo, out, &cap) < 0
                        : pending_push(&todo, start_event) < 0)
        goto nomem;
    while (todo.heap.n) {
        int64_t end = rc_heap_pop(&todo.heap).key;
        if (walk_step(g, g->location[end], end, &todo, out, &cap) < 0)
            goto nomem;
    }
    rc_heap_free(&todo.heap);
    free(todo.queued);
    return EARL_OK;
nomem:
    rc_heap_free(&todo.heap);
    free(todo.queued);
    earl_rc_stretches_free(out);
    return earl_fail(err, EARL_ERR_NOMEM, "critical path: out of memory");
}
