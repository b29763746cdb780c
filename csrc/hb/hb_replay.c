/*
 * hb_replay.c - the replay that computes vector timestamps: every event of
 * the trace is visited once, in an order where each event comes after the
 * events it depends on (the walk of hb_walk.c over the rules of hb_rules.c),
 * and the running clock of its location takes in theirs.  A cycle the walk
 * breaks (an inconsistent trace) is counted as a warning.
 *
 * Clocks: entry l of a location's clock is the number of events of location
 * l that happened before the current event or are it.  An event increments
 * its own entry and takes the maximum with its dependencies' saved clocks.
 * Saved clocks are few: the walk follows the total order, so only messages
 * and collectives in flight are remembered.
 *
 * Threads: the schedule (which event comes next, who waits, which cycle is
 * broken) depends only on the trace, so several threads replay the same
 * schedule, each for its own range of clock entries.  Merging clocks, which
 * dominates with many locations, is divided among them, and the stamps are
 * the same for any number of threads.
 */
#include <stdlib.h>
#include <string.h>

#include "hb_internal.h"

typedef struct replay {
    const earl_events *ev;
    hb_rules *rules;
    earl_hb *hb;
    uint32_t first;          /* the clock entries this replay computes: */
    uint32_t width;          /* [first, first + width) */
    size_t nl;
    int leader;              /* the replay that writes places, warnings, progress */
    uint32_t index, n_threads;
    uint32_t *clock;         /* nl x width: the running clock of each location */
    uint8_t *stamped;        /* bit per event: to be stamped */
    size_t *stamp_next;      /* per location: its next stamp in stamp_order */
    size_t *stamp_order;     /* stamp indices grouped by location, in program order */
    hb_clock_pool pool;      /* saved clocks */
    hb_event_map saved;      /* event -> slot of its saved clock */
    uint32_t *refs;          /* per slot: takers left, HB_REFS_HELD */
    size_t cap_refs;
    hb_event_map instance_max; /* all-to-all instance -> slot of its members' max begin */
    uint32_t *instance_done; /* per collective instance: member ends replayed */
    const earl_hb_options *opt;
    int nomem;
} replay;

static uint32_t *clock_of(replay *rp, earl_loc l)
{
    return rp->clock + (size_t)l * rp->width;
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

static int all_done(const hb_walk *w, const earl_eid *deps, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!hb_walk_done(w, deps[k]))
            return 0;
    return 1;
}

/* The maximum of an all-to-all instance's begins, computed once. */
static void take_in_instance(replay *rp, const hb_walk *w, uint32_t *c, int32_t k,
                             const earl_eid *deps, size_t n)
{
    uint32_t slot = hb_event_map_get(&rp->instance_max, k);
    if (slot == UINT32_MAX) {
        if (!all_done(w, deps, n)) { /* a broken cycle: take what there is */
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

/* The visitor of the walk: the clock of event s->e from its location's and
 * its dependencies', stamped when asked for and saved when a later event
 * takes it. */
static int replay_event(void *data, hb_walk *w, const hb_step *s)
{
    replay *rp = data;
    earl_loc l = s->l;
    earl_eid e = s->e;
    uint32_t *c = clock_of(rp, l);
    if ((uint32_t)l - rp->first < rp->width)
        c[l - rp->first]++;
    if (s->merge == HB_MERGE_INSTANCE) {
        take_in_instance(rp, w, c, s->instance, s->deps, s->n);
    } else {
        for (size_t k = 0; k < s->n; k++)
            if (hb_walk_done(w, s->deps[k]))
                take_in(rp, c, s->deps[k]);
    }
    if (HB_BIT_GET(rp->stamped, e)) {
        earl_hb *hb = rp->hb;
        size_t k = rp->stamp_order[rp->stamp_next[l]++];
        hb_clock_copy(hb->stamps + k * hb->width + rp->first, c, rp->width);
        if (rp->leader) {
            hb->location[k] = l;
            hb->position[k] = (uint32_t)s->pos;
        }
    }
    uint32_t refs = hb_rules_saves(rp->rules, e);
    if (refs)
        save_clock(rp, e, c, refs);
    if (s->instance >= 0)
        instance_finished(rp, s->instance);
    uint8_t kind = rp->ev->kind[e];
    if (kind == EARL_OMP_JOIN || kind == EARL_THREAD_JOIN) {
        earl_eid f = hb_rules_join_fork(rp->rules, e);
        if (f >= 0)
            drop_saved(rp, f); /* every run of the team took it before the join */
    }
    return rp->nomem ? -1 : 0;
}

/* One replay over the clock entries [rp->first, rp->first + rp->width):
 * 0, or -1 when out of memory. */
static int replay_columns(replay *base)
{
    replay rp = *base;
    const earl_events *ev = rp.ev;
    earl_hb *hb = rp.hb;
    size_t nl = rp.nl ? rp.nl : 1;
    int rc = 0;
    rp.clock = calloc(nl * (size_t)rp.width + 1, sizeof *rp.clock);
    rp.stamped = calloc(ev->count / 8 + 1, 1);
    rp.stamp_next = calloc(nl + 1, sizeof *rp.stamp_next);
    rp.stamp_order = malloc((hb->n ? hb->n : 1) * sizeof *rp.stamp_order);
    rp.instance_done = calloc(rp.rules->view->n_colls + 1, sizeof *rp.instance_done);
    hb_clock_pool_init(&rp.pool, rp.width);
    hb_event_map_init(&rp.saved);
    hb_event_map_init(&rp.instance_max);
    if (!rp.clock || !rp.stamped || !rp.stamp_next || !rp.stamp_order || !rp.instance_done) {
        rc = -1;
        goto done;
    }
    /* stamps grouped by location (a counting sort): a location meets its
     * stamped events in program order, so each takes the next of its group */
    for (size_t k = 0; k < hb->n; k++) {
        HB_BIT_SET(rp.stamped, hb->events[k]);
        rp.stamp_next[ev->location[hb->events[k]] + 1]++;
    }
    for (size_t l = 0; l < nl; l++)
        rp.stamp_next[l + 1] += rp.stamp_next[l];
    for (size_t k = 0; k < hb->n; k++)
        rp.stamp_order[rp.stamp_next[ev->location[hb->events[k]]]++] = k;
    for (size_t l = nl; l > 0; l--)
        rp.stamp_next[l] = rp.stamp_next[l - 1];
    rp.stamp_next[0] = 0;

    const earl_hb_options *o = rp.opt;
    hb_walk walk = {.ev = ev, .rules = rp.rules, .nl = rp.nl, .visit = replay_event,
                    .data = &rp, .phase = "clocks",
                    .progress = rp.leader && o ? o->progress : NULL,
                    .progress_data = o ? o->progress_data : NULL};
    if (hb_walk_run(&walk) != 0 || rp.nomem)
        rc = -1;
    else if (rp.leader)
        hb->warnings[EARL_HBW_CYCLE_BROKEN] += walk.forced;
done:
    free(rp.clock);
    free(rp.stamped);
    free(rp.stamp_next);
    free(rp.stamp_order);
    free(rp.instance_done);
    free(rp.refs);
    hb_clock_pool_free(&rp.pool);
    hb_event_map_free(&rp.saved);
    hb_event_map_free(&rp.instance_max);
    return rc;
}

static void *replay_thread(void *arg)
{
    replay *rp = arg;
    rp->nomem = replay_columns(rp) != 0;
    return NULL;
}

/* Fault in one thread's share of the stamps' rows.  Every replay writes into
 * every row, and pages faulted by one thread at a time would serialise the
 * threads on the kernel's page zeroing. */
static void *fault_rows(void *arg)
{
    replay *rp = arg;
    earl_hb *hb = rp->hb;
    size_t rows = hb->n / rp->n_threads, from = rows * rp->index;
    if (rp->index + 1 == rp->n_threads)
        rows = hb->n - from;
    memset(hb->stamps + from * hb->width, 0, rows * hb->width * sizeof *hb->stamps);
    return NULL;
}

/* Threads for the replay: as asked (0: one per core), never more than
 * locations, and when chosen automatically at least 256 entries each, below
 * which a thread's share of the merging does not pay for its scheduling. */
static uint32_t replay_threads(const earl_hb_options *options, uint32_t width)
{
    long asked = options ? options->threads : 0;
    if (asked <= 0) {
        asked = earl_online_cores();
        if (asked > (long)(width / 256))
            asked = (long)(width / 256);
    }
    if (asked > (long)width)
        asked = (long)width;
    return asked < 1 ? 1 : (uint32_t)asked;
}

earl_status hb_replay(earl_hb *hb, const earl_trace *trace, hb_rules *rules,
                      const earl_hb_options *options, earl_error *err)
{
    uint32_t nt = replay_threads(options, hb->width);
    replay *parts = calloc(nt, sizeof *parts);
    if (!parts)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the vector clock threads");
    uint32_t first = 0;
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t w = hb->width / nt + (t < hb->width % nt);
        parts[t] = (replay){.ev = earl_trace_events(trace), .rules = rules, .hb = hb,
                            .first = first, .width = w, .nl = earl_trace_defs(trace)->n_locations,
                            .leader = t == 0, .index = t, .n_threads = nt, .opt = options};
        first += w;
    }
    if (nt > 1)
        earl_parts_run(fault_rows, parts, sizeof *parts, nt);
    earl_parts_run(replay_thread, parts, sizeof *parts, nt);
    int nomem = 0;
    for (uint32_t t = 0; t < nt; t++)
        nomem |= parts[t].nomem;
    free(parts);
    if (nomem)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the vector clocks of %u locations",
                         (unsigned)hb->width);
    if (options && options->progress)
        options->progress(options->progress_data, "clocks", earl_trace_events(trace)->count,
                          earl_trace_events(trace)->count);
    return EARL_OK;
}
