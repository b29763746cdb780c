/*
 * rc_critical.c - the critical path's walk: from the end of the run back in
 * time, along each location's time until its latest wait state, then on the
 * location waited for, down to MPI_Init; the stretches it passes are the
 * path's activities.
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

void earl_rc_stretches_free(earl_rc_stretches *s)
{
    if (!s)
        return;
    free(s->location);
    free(s->from);
    free(s->to);
    memset(s, 0, sizeof *s);
}

/* Pending path ends: a max-heap of events, each present at most once. */
typedef struct pending {
    int64_t *heap;
    size_t n, cap;
    uint8_t *queued; /* per event */
} pending;

static int pending_push(pending *p, int64_t e)
{
    if (p->queued[e])
        return 0;
    if (EARL_GROW(p->heap, p->cap, p->n + 1) < 0)
        return -1;
    size_t i = p->n++;
    while (i > 0 && p->heap[(i - 1) / 2] < e) {
        p->heap[i] = p->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->heap[i] = e;
    p->queued[e] = 1;
    return 0;
}

static int64_t pending_pop(pending *p)
{
    int64_t top = p->heap[0], last = p->heap[--p->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= p->n)
            break;
        if (c + 1 < p->n && p->heap[c + 1] > p->heap[c])
            c++;
        if (p->heap[c] <= last)
            break;
        p->heap[i] = p->heap[c];
        i = c;
    }
    if (p->n)
        p->heap[i] = last;
    p->queued[top] = 0;
    return top;
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

static int stretch_push(earl_rc_stretches *s, size_t *cap, int64_t loc, int64_t from, int64_t to)
{
    if (s->count == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        int64_t *a;
        if (!(a = realloc(s->location, c * sizeof *a)))
            return -1;
        s->location = a;
        if (!(a = realloc(s->from, c * sizeof *a)))
            return -1;
        s->from = a;
        if (!(a = realloc(s->to, c * sizeof *a)))
            return -1;
        s->to = a;
        *cap = c;
    }
    s->location[s->count] = loc;
    s->from[s->count] = from;
    s->to[s->count] = to;
    s->count++;
    return 0;
}

static int event_ok(const earl_rc_path_graph *g, int64_t e)
{
    return e >= 0 && (size_t)e < g->n_events && g->location[e] >= 0 &&
           (size_t)g->location[e] < g->n_locations;
}

earl_status earl_rc_critical_walk(const earl_rc_path_graph *g, int64_t start_event,
                                  earl_rc_stretches *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!event_ok(g, start_event))
        return earl_fail(err, EARL_ERR_INVALID, "critical path: start event %lld out of range",
                         (long long)start_event);
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
    pending todo = {NULL, 0, 0, calloc(g->n_events ? g->n_events : 1, 1)};
    size_t cap = 0;
    if (!todo.queued || pending_push(&todo, start_event) < 0)
        goto nomem;
    while (todo.n) {
        int64_t end = pending_pop(&todo);
        int64_t cur = g->location[end];
        size_t wi = 0, oi = 0;
        int64_t x_mpi = latest_before(g->wait_key, g->n_waits, g->stride, cur, end, &wi);
        int64_t x_omp = latest_before(g->omp_key, g->n_omp, g->stride, cur, end, &oi);
        if (x_mpi < 0 && x_omp < 0) {
            int64_t init = g->init_event[cur];
            if (init >= 0 && stretch_push(out, &cap, cur, init, end) < 0)
                goto nomem;
            continue;
        }
        int64_t x = x_mpi > x_omp ? x_mpi : x_omp;
        if (stretch_push(out, &cap, cur, x, end) < 0)
            goto nomem;
        if (x == x_mpi) {
            if (pending_push(&todo, g->wait_partner[wi]) < 0)
                goto nomem;
        } else {
            for (int64_t k = g->omp_next_offset[oi]; k < g->omp_next_offset[oi + 1]; k++)
                if (pending_push(&todo, g->omp_next_event[k]) < 0)
                    goto nomem;
        }
    }
    free(todo.heap);
    free(todo.queued);
    return EARL_OK;
nomem:
    free(todo.heap);
    free(todo.queued);
    earl_rc_stretches_free(out);
    return earl_fail(err, EARL_ERR_NOMEM, "critical path: out of memory");
}
