/*
 * hb_logical.c - logical time: the steps of the communication and
 * synchronisation events, and their lateness (earl_hb.h states the rules).
 *
 * The walk of hb_walk.c visits every event after the events it depends on,
 * with the rules of hb_rules.c told to align collectives (every member's end
 * depends on every member's begin).  The visitor keeps one counter per
 * location and writes the counter C(e) of every event into an array of the
 * trace's length: a dependency's counter is then one array read, whatever
 * kind of event it is (a send, a collective begin, a fork, the last event of
 * a thread's run in a team).  Two passes in id order follow: the stepped
 * events with their steps, the earliest timestamp of each step, and each
 * event's lateness against it.
 */
#include <stdlib.h>
#include <string.h>

#include "hb_internal.h"
#include "base/errors.h"
#include "base/mem.h"

struct earl_logical {
    size_t count;
    earl_eid *events;
    uint32_t *step;
    int64_t *lateness;
    uint32_t n_steps;
    uint64_t cycles_broken;
};

/* The kinds that always get a step: message ends, forks, joins, lock
 * acquisitions.  The members of collective instances (MPI_COLLECTIVE_END, the
 * LEAVE of a team barrier) get one too, found by the rules' member bits. */
static const uint8_t stepped_kinds[] = {
    EARL_MPI_SEND, EARL_MPI_ISEND, EARL_MPI_RECV, EARL_MPI_IRECV, EARL_OMP_FORK,
    EARL_THREAD_FORK, EARL_OMP_JOIN, EARL_THREAD_JOIN, EARL_OMP_ACQUIRE_LOCK,
    EARL_THREAD_ACQUIRE_LOCK};

typedef struct logical_walk {
    const hb_rules *rules;
    uint8_t stepped[EARL_KIND_COUNT]; /* per kind: 1 when every event of it is stepped */
    uint32_t *c;        /* per event: C(e) once visited */
    uint32_t *running;  /* per location: C of its last visited event */
} logical_walk;

static int is_stepped(const logical_walk *lw, earl_eid e)
{
    return lw->stepped[lw->rules->ev->kind[e]] || HB_BIT_GET(lw->rules->member, e);
}

/* The visitor: C(e) from the location's counter and the dependencies'. */
static int step_event(void *data, hb_walk *w, const hb_step *s)
{
    logical_walk *lw = data;
    uint32_t c = lw->running[s->l];
    for (size_t k = 0; k < s->n; k++) /* a forced visit lacks some: take the others */
        if (hb_walk_done(w, s->deps[k]) && lw->c[s->deps[k]] > c)
            c = lw->c[s->deps[k]];
    c += (uint32_t)is_stepped(lw, s->e);
    lw->c[s->e] = c;
    lw->running[s->l] = c;
    return 0;
}

/* The stepped events in id order with their steps, then their lateness.  Their
 * number is known beforehand: the events of the stepped kinds and the members
 * of collective instances. */
static earl_status collect(earl_logical *lt, const logical_walk *lw, earl_error *err)
{
    const hb_rules *r = lw->rules;
    const earl_events *ev = r->ev;
    const earl_states_view *v = r->view;
    size_t n = v->n_colls ? v->coll_member_start[v->n_colls] : 0;
    for (size_t k = 0; k < sizeof stepped_kinds; k++)
        n += ev->kind_counts[stepped_kinds[k]];
    lt->events = malloc((n ? n : 1) * sizeof *lt->events);
    lt->step = malloc((n ? n : 1) * sizeof *lt->step);
    lt->lateness = malloc((n ? n : 1) * sizeof *lt->lateness);
    if (!lt->events || !lt->step || !lt->lateness)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the logical steps of %zu events",
                         n);
    uint32_t top = 0;
    size_t k = 0;
    for (size_t e = 0; e < ev->count && k < n; e++) {
        if (!is_stepped(lw, (earl_eid)e))
            continue;
        lt->events[k] = (earl_eid)e;
        lt->step[k] = lw->c[e] - 1;
        if (lw->c[e] > top)
            top = lw->c[e];
        k++;
    }
    lt->count = k;
    lt->n_steps = top;
    earl_time *first = malloc((top ? top : 1) * sizeof *first);
    if (!first)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the first times of %u steps",
                         (unsigned)top);
    memset(first, 0xff, (top ? top : 1) * sizeof *first);
    for (size_t j = 0; j < k; j++) {
        earl_time t = ev->time[lt->events[j]];
        if (t < first[lt->step[j]])
            first[lt->step[j]] = t;
    }
    for (size_t j = 0; j < k; j++)
        lt->lateness[j] = (int64_t)(ev->time[lt->events[j]] - first[lt->step[j]]);
    free(first);
    return EARL_OK;
}

earl_status earl_logical_build(const earl_trace *trace, earl_states *states,
                               const earl_hb_options *options, earl_logical **out,
                               earl_error *err)
{
    *out = NULL;
    earl_logical *lt = calloc(1, sizeof *lt);
    if (!lt)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the logical steps");
    const earl_events *ev = earl_trace_events(trace);
    size_t nl = earl_trace_defs(trace)->n_locations;
    hb_rules rules;
    earl_status rc = hb_rules_init(&rules, trace, states, err);
    rules.align_collectives = 1;
    logical_walk lw = {.rules = &rules};
    for (size_t k = 0; k < sizeof stepped_kinds; k++)
        lw.stepped[stepped_kinds[k]] = 1;
    if (rc == EARL_OK) {
        lw.c = earl_mem_alloc_temp((ev->count ? ev->count : 1) * sizeof *lw.c);
        lw.running = calloc(nl ? nl : 1, sizeof *lw.running);
        if (!lw.c || !lw.running)
            rc = earl_fail(err, EARL_ERR_NOMEM, "out of memory for the logical time of %zu events",
                           ev->count);
    }
    if (rc == EARL_OK) {
        hb_walk walk = {.ev = ev, .rules = &rules, .nl = nl, .visit = step_event, .data = &lw,
                        .phase = "logical time",
                        .progress = options ? options->progress : NULL,
                        .progress_data = options ? options->progress_data : NULL};
        if (hb_walk_run(&walk) != 0)
            rc = earl_fail(err, EARL_ERR_NOMEM, "out of memory for the logical time of %zu events",
                           ev->count);
        lt->cycles_broken = walk.forced;
    }
    if (rc == EARL_OK)
        rc = collect(lt, &lw, err);
    earl_mem_free(lw.c);
    free(lw.running);
    hb_rules_free(&rules);
    if (rc != EARL_OK) {
        earl_logical_free(lt);
        return rc;
    }
    if (options && options->progress)
        options->progress(options->progress_data, "logical time", ev->count, ev->count);
    *out = lt;
    return EARL_OK;
}

void earl_logical_free(earl_logical *lt)
{
    if (!lt)
        return;
    free(lt->events);
    free(lt->step);
    free(lt->lateness);
    free(lt);
}

size_t earl_logical_count(const earl_logical *lt) { return lt->count; }
const earl_eid *earl_logical_events(const earl_logical *lt) { return lt->events; }
const uint32_t *earl_logical_steps(const earl_logical *lt) { return lt->step; }
const int64_t *earl_logical_lateness(const earl_logical *lt) { return lt->lateness; }
uint32_t earl_logical_n_steps(const earl_logical *lt) { return lt->n_steps; }
uint64_t earl_logical_cycles_broken(const earl_logical *lt) { return lt->cycles_broken; }

size_t earl_logical_bytes(const earl_logical *lt)
{
    return sizeof *lt + lt->count * (sizeof *lt->events + sizeof *lt->step +
                                     sizeof *lt->lateness);
}
