/*
 * hb_replay.c - the replay that computes vector timestamps: every event of
 * the trace is visited once, in an order where each event comes after the
 * events it depends on (hb_rules.c), and the running clock of its location
 * takes in theirs.
 *
 * The replay follows the total order (timestamps) as long as that order
 * respects the dependencies, which keeps the saved clocks few (only messages
 * and collectives in flight).  When an event depends on one not replayed yet
 * (a receive whose clock ran ahead of its send's, a collective member whose
 * begin carries a later timestamp), its location waits for that event and
 * the total order goes on with the other locations; when the awaited event is
 * replayed, the waiting location catches up to where the total order is.
 * Locations that still wait at the end wait in a cycle, which only an
 * inconsistent trace has: the earliest waiting event is replayed without the
 * dependency it lacks, and a warning counts it.
 *
 * Clocks: entry l of a location's clock is the number of events of location
 * l that happened before the current event or are it.  An event increments
 * its own entry and takes the maximum with its dependencies' saved clocks.
 */
#include <stdlib.h>
#include <string.h>

#include "hb_internal.h"
#include "util.h"

#define BIT_SET(a, i) ((a)[(size_t)(i) >> 3] |= (uint8_t)(1u << ((size_t)(i) & 7)))
#define BIT_GET(a, i) (((a)[(size_t)(i) >> 3] >> ((size_t)(i) & 7)) & 1u)
#define PROGRESS_EVERY ((uint64_t)1 << 20)

typedef struct replay {
    const earl_events *ev;
    hb_rules *rules;
    earl_hb *hb;
    uint32_t width;
    size_t nl;
    uint32_t *clock;         /* nl x width: the running clock of each location */
    size_t *cursor;          /* per location: positions replayed so far */
    uint8_t *done;           /* bit per event: replayed */
    uint8_t *stamped;        /* bit per event: to be stamped */
    earl_eid *waiting_on;    /* per location: the event it waits for, -1 */
    earl_loc *next_waiter;   /* per location: the next location waiting on the same event */
    hb_event_map waiters;    /* awaited event -> first waiting location */
    hb_clock_pool pool;      /* saved clocks */
    hb_event_map saved;      /* event -> slot of its saved clock */
    uint32_t *refs;          /* per slot: takers left, HB_REFS_HELD */
    size_t cap_refs;
    hb_event_map instance_max; /* all-to-all instance -> slot of its members' max begin */
    uint32_t *instance_done; /* per collective instance: member ends replayed */
    earl_loc *work;          /* locations to advance */
    size_t n_work;
    uint64_t replayed;
    const earl_hb_options *opt;
    int nomem;
} replay;

static uint32_t *clock_of(replay *rp, earl_loc l)
{
    return rp->clock + (size_t)l * rp->width;
}

static earl_eid event_at(const replay *rp, earl_loc l, size_t pos)
{
    return rp->ev->loc_events[rp->ev->loc_start[l] + pos];
}

static size_t events_of(const replay *rp, earl_loc l)
{
    return rp->ev->loc_start[l + 1] - rp->ev->loc_start[l];
}

static void save_clock(replay *rp, earl_eid e, const uint32_t *c, uint32_t refs)
{
    uint32_t slot = hb_clock_take(&rp->pool, c);
    if (slot == UINT32_MAX || EARL_GROW(rp->refs, rp->cap_refs, (size_t)slot + 1) != 0 ||
        hb_event_map_put(&rp->saved, e, slot) != 0) {
        rp->nomem = 1;
        return;
    }
    rp->refs[slot] = refs;
}

static void drop_saved(replay *rp, earl_eid e)
{
    uint32_t slot = hb_event_map_take(&rp->saved, e);
    if (slot != UINT32_MAX)
        hb_clock_release(&rp->pool, slot);
}

/* Take in the saved clock of dependency d; the last taker frees it. */
static void take_in(replay *rp, uint32_t *c, earl_eid d)
{
    uint32_t slot = hb_event_map_get(&rp->saved, d);
    if (slot == UINT32_MAX)
        return;
    hb_clock_max(c, hb_clock_at(&rp->pool, slot), rp->width);
    if (rp->refs[slot] != HB_REFS_HELD && --rp->refs[slot] == 0)
        drop_saved(rp, d);
}

static int all_done(const replay *rp, const earl_eid *deps, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!BIT_GET(rp->done, deps[k]))
            return 0;
    return 1;
}

/* The maximum of an all-to-all instance's begins, computed once. */
static void take_in_instance(replay *rp, uint32_t *c, int32_t k, const earl_eid *deps, size_t n)
{
    uint32_t slot = hb_event_map_get(&rp->instance_max, k);
    if (slot == UINT32_MAX) {
        if (!all_done(rp, deps, n)) { /* a broken cycle: take what there is */
            for (size_t j = 0; j < n; j++)
                take_in(rp, c, deps[j]);
            return;
        }
        slot = hb_clock_take(&rp->pool, NULL);
        if (slot == UINT32_MAX || hb_event_map_put(&rp->instance_max, k, slot) != 0) {
            rp->nomem = 1;
            return;
        }
        for (size_t j = 0; j < n; j++) {
            uint32_t b = hb_event_map_get(&rp->saved, deps[j]);
            if (b != UINT32_MAX) /* the pool may have moved: take both pointers now */
                hb_clock_max(hb_clock_at(&rp->pool, slot), hb_clock_at(&rp->pool, b), rp->width);
        }
    }
    hb_clock_max(c, hb_clock_at(&rp->pool, slot), rp->width);
}

/* Member k's ends are all replayed: its saved begins are of no further use. */
static void instance_finished(replay *rp, int32_t k)
{
    const earl_states_view *v = rp->rules->view;
    size_t first = v->coll_member_start[k], last = v->coll_member_start[k + 1];
    if (++rp->instance_done[k] < last - first)
        return;
    for (size_t j = first; j < last; j++)
        if (rp->rules->member_begin[j] >= 0)
            drop_saved(rp, rp->rules->member_begin[j]);
    uint32_t slot = hb_event_map_take(&rp->instance_max, k);
    if (slot != UINT32_MAX)
        hb_clock_release(&rp->pool, slot);
}

static void wake_waiters(replay *rp, earl_eid e)
{
    uint32_t first = hb_event_map_take(&rp->waiters, e);
    for (earl_loc w = first == UINT32_MAX ? EARL_NONE : (earl_loc)first; w >= 0;) {
        earl_loc next = rp->next_waiter[w];
        rp->waiting_on[w] = EARL_NONE;
        rp->next_waiter[w] = EARL_NONE;
        rp->work[rp->n_work++] = w;
        w = next;
    }
}

static void wait_for(replay *rp, earl_loc l, earl_eid d)
{
    uint32_t first = hb_event_map_get(&rp->waiters, d);
    rp->next_waiter[l] = first == UINT32_MAX ? EARL_NONE : (earl_loc)first;
    rp->waiting_on[l] = d;
    if (hb_event_map_put(&rp->waiters, d, (uint32_t)l) != 0)
        rp->nomem = 1;
}

/* Stop location l waiting (its wait is being broken). */
static void unwait(replay *rp, earl_loc l)
{
    earl_eid d = rp->waiting_on[l];
    uint32_t first = hb_event_map_get(&rp->waiters, d);
    if (first == (uint32_t)l) {
        if (rp->next_waiter[l] >= 0)
            hb_event_map_put(&rp->waiters, d, (uint32_t)rp->next_waiter[l]);
        else
            hb_event_map_take(&rp->waiters, d);
    } else {
        for (earl_loc w = (earl_loc)first; w >= 0; w = rp->next_waiter[w])
            if (rp->next_waiter[w] == l) {
                rp->next_waiter[w] = rp->next_waiter[l];
                break;
            }
    }
    rp->waiting_on[l] = EARL_NONE;
    rp->next_waiter[l] = EARL_NONE;
}

/* Replay the next event of location l.  Unless forced, returns 0 without
 * replaying when a dependency is not replayed yet (l then waits for it). */
static int replay_next(replay *rp, earl_loc l, int forced)
{
    size_t pos = rp->cursor[l];
    earl_eid e = event_at(rp, l, pos);
    earl_eid prev = pos ? event_at(rp, l, pos - 1) : EARL_NONE;
    const earl_eid *deps;
    hb_merge merge;
    int32_t instance;
    size_t n = hb_rules_deps(rp->rules, e, prev, &deps, &merge, &instance);
    if (n == SIZE_MAX) {
        rp->nomem = 1;
        return 0;
    }
    if (!forced) {
        for (size_t k = 0; k < n; k++)
            if (!BIT_GET(rp->done, deps[k])) {
                wait_for(rp, l, deps[k]);
                return 0;
            }
    } else {
        rp->hb->warnings[EARL_HBW_CYCLE_BROKEN]++;
    }
    uint32_t *c = clock_of(rp, l);
    c[l]++;
    if (merge == HB_MERGE_INSTANCE) {
        take_in_instance(rp, c, instance, deps, n);
    } else {
        for (size_t k = 0; k < n; k++)
            if (BIT_GET(rp->done, deps[k]))
                take_in(rp, c, deps[k]);
    }
    if (BIT_GET(rp->stamped, e)) {
        earl_hb *hb = rp->hb;
        size_t k = earl_eid_lower_bound(hb->events, 0, hb->n, e);
        hb_clock_copy(hb->stamps + k * hb->width, c, hb->width);
        hb->location[k] = l;
        hb->position[k] = (uint32_t)pos;
    }
    uint32_t refs = hb_rules_saves(rp->rules, e);
    if (refs)
        save_clock(rp, e, c, refs);
    if (instance >= 0)
        instance_finished(rp, instance);
    uint8_t kind = rp->ev->kind[e];
    if (kind == EARL_OMP_JOIN || kind == EARL_THREAD_JOIN) {
        earl_eid f = hb_rules_join_fork(rp->rules, e);
        if (f >= 0)
            drop_saved(rp, f); /* every run of the team took it before the join */
    }
    BIT_SET(rp->done, e);
    rp->cursor[l] = pos + 1;
    wake_waiters(rp, e);
    if (++rp->replayed % PROGRESS_EVERY == 0 && rp->opt && rp->opt->progress)
        rp->opt->progress(rp->opt->progress_data, "clocks", rp->replayed, rp->ev->count);
    return 1;
}

/* Replay the locations on the work stack up to event id limit each. */
static void drain(replay *rp, earl_eid limit)
{
    while (rp->n_work && !rp->nomem) {
        earl_loc l = rp->work[--rp->n_work];
        while (rp->waiting_on[l] < 0 && rp->cursor[l] < events_of(rp, l) &&
               event_at(rp, l, rp->cursor[l]) <= limit && !rp->nomem)
            if (!replay_next(rp, l, 0))
                break;
    }
}

earl_status hb_replay(earl_hb *hb, const earl_trace *trace, hb_rules *rules,
                      const earl_hb_options *options, earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    replay rp = {.ev = ev, .rules = rules, .hb = hb, .width = hb->width,
                 .nl = earl_trace_defs(trace)->n_locations, .opt = options};
    size_t nl = rp.nl ? rp.nl : 1;
    earl_status rc = EARL_OK;
    rp.clock = calloc(nl * (size_t)rp.width + 1, sizeof *rp.clock);
    rp.cursor = calloc(nl, sizeof *rp.cursor);
    rp.done = calloc(ev->count / 8 + 1, 1);
    rp.stamped = calloc(ev->count / 8 + 1, 1);
    rp.waiting_on = malloc(nl * sizeof *rp.waiting_on);
    rp.next_waiter = malloc(nl * sizeof *rp.next_waiter);
    /* a location is on the stack at most once: it is pushed when it starts
     * or stops waiting, and popped before either happens again */
    rp.work = malloc((nl + 1) * sizeof *rp.work);
    rp.instance_done = calloc(rules->view->n_colls + 1, sizeof *rp.instance_done);
    hb_clock_pool_init(&rp.pool, rp.width);
    hb_event_map_init(&rp.saved);
    hb_event_map_init(&rp.waiters);
    hb_event_map_init(&rp.instance_max);
    if (!rp.clock || !rp.cursor || !rp.done || !rp.stamped || !rp.waiting_on ||
        !rp.next_waiter || !rp.work || !rp.instance_done) {
        rc = earl_fail(err, EARL_ERR_NOMEM, "out of memory for the vector clocks of %zu locations",
                       rp.nl);
        goto done;
    }
    for (size_t l = 0; l < nl; l++)
        rp.waiting_on[l] = rp.next_waiter[l] = EARL_NONE;
    for (size_t k = 0; k < hb->n; k++)
        BIT_SET(rp.stamped, hb->events[k]);

    /* the total order drives; waiting locations catch up when woken */
    for (size_t e = 0; e < ev->count && !rp.nomem; e++) {
        earl_loc l = ev->location[e];
        if (BIT_GET(rp.done, e) || rp.waiting_on[l] >= 0)
            continue;
        rp.work[rp.n_work++] = l;
        drain(&rp, (earl_eid)e);
    }
    /* what still waits, waits in a cycle: break it at the earliest event */
    for (;;) {
        earl_loc pick = EARL_NONE;
        earl_eid first = EARL_NONE;
        for (size_t l = 0; l < rp.nl; l++)
            if (rp.waiting_on[l] >= 0) {
                earl_eid x = event_at(&rp, (earl_loc)l, rp.cursor[l]);
                if (first < 0 || x < first) {
                    first = x;
                    pick = (earl_loc)l;
                }
            }
        if (pick < 0 || rp.nomem)
            break;
        unwait(&rp, pick);
        replay_next(&rp, pick, 1);
        rp.work[rp.n_work++] = pick;
        drain(&rp, (earl_eid)ev->count);
    }
    if (rp.nomem)
        rc = earl_fail(err, EARL_ERR_NOMEM, "out of memory while computing vector clocks");
    if (rc == EARL_OK && options && options->progress)
        options->progress(options->progress_data, "clocks", ev->count, ev->count);
done:
    free(rp.clock);
    free(rp.cursor);
    free(rp.done);
    free(rp.stamped);
    free(rp.waiting_on);
    free(rp.next_waiter);
    free(rp.work);
    free(rp.instance_done);
    free(rp.refs);
    hb_clock_pool_free(&rp.pool);
    hb_event_map_free(&rp.saved);
    hb_event_map_free(&rp.waiters);
    hb_event_map_free(&rp.instance_max);
    return rc;
}
