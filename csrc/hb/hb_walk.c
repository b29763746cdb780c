/*
 * hb_walk.c - visiting every event of a trace once, each after the events it
 * depends on (the rules of hb_rules.c): the schedule shared by the replays
 * that compute orders over a trace, the vector timestamps (hb_replay.c) and
 * the logical steps (hb_logical.c).  What a replay does with an event is its
 * visitor's business; the order of the visits is decided here, and depends
 * only on the trace.
 *
 * The walk follows the total order (timestamps) as long as that order
 * respects the dependencies, which keeps what replays must remember few
 * (only messages and collectives in flight).  When an event depends on one
 * not visited yet (a receive whose timestamp ran ahead of its send's, a
 * collective member whose begin carries a later timestamp), its location
 * waits for that event and the total order goes on with the other locations;
 * when the awaited event is visited, the waiting location catches up to where
 * the total order is.  Locations that still wait at the end wait in a cycle,
 * which only an inconsistent trace has: the earliest waiting event is visited
 * without the dependency it lacks (the visit is marked forced; the walk
 * counts them).
 *
 * Parts (hb_part.c): a walk may visit some locations only (a part's own,
 * `row`), and is resumable.  A dependency on an event of another location
 * waits until that event is said to have arrived (hb_walk_arrived: its
 * owner replayed it and sent its clock); hb_walk_resume returns when every
 * visited location is done or waits, and goes on where it stopped at the
 * next call.  Breaking cycles is then the driver's choice (hb_walk_earliest,
 * hb_walk_force), since the earliest waiting event may be another part's.
 */
#include <stdlib.h>

#include "hb_internal.h"

#define PROGRESS_EVERY ((uint64_t)1 << 20)

static earl_eid event_at(const hb_walk *w, earl_loc l, size_t pos)
{
    return w->ev->loc_events[w->ev->loc_start[l] + pos];
}

static size_t events_of(const hb_walk *w, earl_loc l)
{
    return w->ev->loc_start[l + 1] - w->ev->loc_start[l];
}

static earl_eid next_event(void *w, int32_t l)
{
    return event_at(w, l, ((hb_walk *)w)->cursor[l]);
}

/* Visit the next event of location l.  Unless forced, returns 0 without
 * visiting when a dependency is not visited yet (l then waits for it). */
static int visit_next(hb_walk *w, earl_loc l, int forced)
{
    hb_step s = {.l = l, .pos = w->cursor[l], .forced = forced};
    s.e = event_at(w, l, s.pos);
    s.prev = s.pos ? event_at(w, l, s.pos - 1) : EARL_NONE;
    s.n = hb_rules_deps(w->rules, s.e, s.prev, &w->deps, &s.merge, &s.instance);
    if (s.n == SIZE_MAX) {
        w->nomem = 1;
        return 0;
    }
    s.deps = w->deps.ids;
    if (!forced) {
        for (size_t k = 0; k < s.n; k++)
            if (!hb_walk_done(w, s.deps[k])) {
                if (hb_wait(&w->waiters, l, s.deps[k]) != 0)
                    w->nomem = 1;
                return 0;
            }
    } else {
        w->forced++;
    }
    if (w->visit(w->data, w, &s) != 0) {
        w->nomem = 1;
        return 0;
    }
    HB_BIT_SET(w->done, s.e);
    w->cursor[l] = s.pos + 1;
    w->n_work += hb_wake(&w->waiters, s.e, w->work + w->n_work);
    if (++w->visited % PROGRESS_EVERY == 0 && w->progress)
        w->progress(w->progress_data, w->phase, w->visited, w->ev->count);
    return 1;
}

/* Visit the locations on the work stack up to event id limit each. */
static void drain(hb_walk *w, earl_eid limit)
{
    while (w->n_work && !w->nomem) {
        earl_loc l = w->work[--w->n_work];
        while (!hb_waiting(&w->waiters, l) && w->cursor[l] < events_of(w, l) &&
               event_at(w, l, w->cursor[l]) <= limit && !w->nomem)
            if (!visit_next(w, l, 0))
                break;
    }
}

static int visited_here(const hb_walk *w, earl_loc l)
{
    return !w->row || w->row[l] >= 0;
}

int hb_walk_init(hb_walk *w)
{
    size_t nl = w->nl ? w->nl : 1;
    w->cursor = calloc(nl, sizeof *w->cursor);
    w->done = calloc(w->ev->count / 8 + 1, 1);
    /* a location is on the stack at most once: it is pushed when it starts
     * or stops waiting, and popped before either happens again */
    w->work = malloc((nl + 1) * sizeof *w->work);
    w->n_work = 0;
    w->deps = (hb_deps){NULL, 0};
    w->visited = w->forced = 0;
    w->started = w->nomem = 0;
    w->waiters = (hb_waiters){0};
    if (!w->cursor || !w->done || !w->work || hb_waiters_init(&w->waiters, nl) != 0) {
        hb_walk_free(w);
        return -1;
    }
    return 0;
}

void hb_walk_free(hb_walk *w)
{
    free(w->cursor);
    free(w->done);
    free(w->work);
    free(w->deps.ids);
    hb_waiters_free(&w->waiters);
    w->cursor = NULL;
    w->done = NULL;
    w->work = NULL;
    w->deps.ids = NULL;
}

int hb_walk_resume(hb_walk *w)
{
    const earl_events *ev = w->ev;
    if (!w->started) { /* the total order drives; waiting locations catch up when woken */
        w->started = 1;
        for (size_t e = 0; e < ev->count && !w->nomem; e++) {
            earl_loc l = ev->location[e];
            if (!visited_here(w, l) || hb_walk_done(w, (earl_eid)e) ||
                hb_waiting(&w->waiters, l))
                continue;
            if (visit_next(w, l, 0) && w->n_work) /* woke some: they catch up */
                drain(w, (earl_eid)e);
        }
    }
    drain(w, (earl_eid)ev->count);
    return w->nomem ? -1 : 0;
}

earl_loc hb_walk_earliest(hb_walk *w, earl_eid *next)
{
    earl_loc l = hb_waiters_earliest(&w->waiters, next_event, w);
    *next = l >= 0 ? next_event(w, l) : EARL_NONE;
    return l;
}

earl_eid hb_walk_waiting_next(hb_walk *w, earl_loc l)
{
    return hb_waiting(&w->waiters, l) ? next_event(w, l) : EARL_NONE;
}

void hb_walk_force(hb_walk *w, earl_loc l)
{
    hb_unwait(&w->waiters, l);
    visit_next(w, l, 1);
    w->work[w->n_work++] = l;
}

int hb_walk_arrived(hb_walk *w, earl_eid e)
{
    HB_BIT_SET(w->done, e);
    w->n_work += hb_wake(&w->waiters, e, w->work + w->n_work);
    return w->nomem ? -1 : 0;
}

size_t hb_walk_unfinished(const hb_walk *w)
{
    size_t n = 0;
    for (size_t l = 0; l < w->nl; l++)
        n += visited_here(w, (earl_loc)l) && w->cursor[l] < events_of(w, (earl_loc)l);
    return n;
}

int hb_walk_complete(hb_walk *w)
{
    int rc = hb_walk_resume(w);
    /* what still waits, waits in a cycle: break it at the earliest event */
    for (;;) {
        earl_eid next;
        earl_loc pick = rc == 0 ? hb_walk_earliest(w, &next) : -1;
        if (pick < 0)
            break;
        hb_walk_force(w, pick);
        rc = hb_walk_resume(w);
    }
    return rc;
}

int hb_walk_run(hb_walk *w)
{
    if (hb_walk_init(w) != 0)
        return -1;
    int rc = hb_walk_complete(w);
    hb_walk_free(w);
    return rc;
}
