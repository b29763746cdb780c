/*
 * hb_replay.c - the replay that computes vector timestamps: the visitor of
 * the walk in dependency order (hb_walk.c), which makes the running clock of
 * each event's location take in its dependencies' clocks.
 *
 * Clocks: entry l of a location's clock is the number of events of location
 * l that happened before the current event or are it.  An event increments
 * its own entry and takes the maximum with its dependencies' saved clocks.
 * Saved clocks are few: the walk follows the total order, so only messages
 * and collectives in flight are remembered.  Without cycles the stamps are a
 * function of the dependencies alone, not of the order the events are
 * replayed in; with cycles they depend only on which events were replayed
 * when each cycle is broken, which is every event that can be replayed (all
 * locations wait or are done), whatever the order.
 *
 * Threads: the schedule (which event comes next, who waits, which cycle is
 * broken) depends only on the trace, so several threads replay the same
 * schedule, each for its own range of clock entries (an hb_columns with a
 * walk of its own).  Merging clocks, which dominates with many locations, is
 * divided among them, and the stamps are the same for any number of threads.
 * With too few locations for that, two threads divide the replay by stage
 * instead: one walks, the other computes the clocks (replay_pipelined).
 *
 * Parts (hb_part.c): a replay is resumable.  A part replays its own
 * locations only (hb_scope); a dependency on a ghost event waits until the
 * ghost's clock arrives from its owner (hb_columns_receive), and the clocks
 * of own events that other parts wait for are collected as they are
 * replayed (hb_columns_sent).  hb_columns_run returns when every own
 * location is done or waits, and goes on where it stopped at the next call.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hb_internal.h"

struct hb_columns {
    const earl_events *ev;
    hb_rules *rules;
    const hb_scope *scope;
    earl_hb *hb;
    uint32_t first;          /* the clock entries this replay computes: */
    uint32_t width;          /* [first, first + width) */
    size_t nl;
    int leader;              /* the replay that writes places, warnings, progress */
    hb_walk walk;            /* the schedule; this replay is its visitor */
    uint32_t *clock;         /* scope->n_rows x width: the running clocks */
    uint8_t *stamped;        /* bit per event: to be stamped */
    size_t *stamp_next;      /* per location: its next stamp in stamp_order */
    size_t *stamp_order;     /* stamp indices grouped by location, in program order */
    hb_clock_pool pool;      /* saved clocks */
    hb_event_map saved;      /* event -> slot of its saved clock */
    uint32_t *refs;          /* per slot: takers left, HB_REFS_HELD */
    size_t cap_refs;
    hb_event_map instance_max; /* all-to-all instance -> slot of its members' max begin */
    uint32_t *instance_done; /* per collective instance: own member ends replayed */
    uint32_t *sent;          /* clocks of exported events replayed: n_sent x width */
    earl_eid *sent_event;    /* (leader) their events */
    size_t n_sent, cap_sent, cap_sent_event;
    const earl_hb_options *opt;
    int nomem;
};

static uint32_t *clock_of(hb_columns *rp, earl_loc l)
{
    return rp->clock + (size_t)rp->scope->row[l] * rp->width;
}

static void save_clock(hb_columns *rp, earl_eid e, const uint32_t *c, uint32_t refs)
{
    uint32_t slot = hb_clock_take(&rp->pool, c);
    if (slot == UINT32_MAX || EARL_GROW(rp->refs, rp->cap_refs, (size_t)slot + 1) != 0 ||
        hb_event_map_put(&rp->saved, e, slot) != 0) {
        rp->nomem = 1;
        return;
    }
    rp->refs[slot] = refs;
}

static void drop_saved(hb_columns *rp, earl_eid e)
{
    uint32_t slot = hb_event_map_take(&rp->saved, e);
    if (slot != UINT32_MAX)
        hb_clock_release(&rp->pool, slot);
}

/* Take in the saved clock of dependency d; the last taker frees it. */
static void take_in(hb_columns *rp, uint32_t *c, earl_eid d)
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

/* The maximum of an all-to-all instance's begins, computed once (ready: all
 * of them were visited). */
static void take_in_instance(hb_columns *rp, uint32_t *c, int32_t k, const earl_eid *deps,
                             size_t n, int ready)
{
    uint32_t slot = hb_event_map_get(&rp->instance_max, k);
    if (slot == UINT32_MAX) {
        if (!ready) { /* a broken cycle: take what there is */
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

/* The replayed members' ends of instance k are all replayed: its saved
 * begins are of no further use. */
static void instance_finished(hb_columns *rp, int32_t k)
{
    const earl_states_view *v = rp->rules->view;
    size_t first = v->coll_member_start[k], last = v->coll_member_start[k + 1];
    if (++rp->instance_done[k] < rp->scope->instance_members[k])
        return;
    for (size_t j = first; j < last; j++)
        if (rp->rules->member_begin[j] >= 0)
            drop_saved(rp, rp->rules->member_begin[j]);
    uint32_t slot = hb_event_map_take(&rp->instance_max, k);
    if (slot != UINT32_MAX)
        hb_clock_release(&rp->pool, slot);
}

/* An exported event's clock, kept for the parts that wait for it. */
static void send_clock(hb_columns *rp, earl_eid e, const uint32_t *c)
{
    if (EARL_GROW(rp->sent, rp->cap_sent, (rp->n_sent + 1) * rp->width + 1) != 0 ||
        (rp->leader && EARL_GROW(rp->sent_event, rp->cap_sent_event, rp->n_sent + 1) != 0)) {
        rp->nomem = 1;
        return;
    }
    hb_clock_copy(rp->sent + rp->n_sent * rp->width, c, rp->width);
    if (rp->leader)
        rp->sent_event[rp->n_sent] = e;
    rp->n_sent++;
}

/* The clock of event s->e from its location's and its dependencies',
 * stamped when asked for, sent when other parts wait for it, and saved when a
 * later event takes it.  Which dependencies were visited when the walk came
 * to s->e is told by the walk w, or, without one (the pipeline below), by s
 * itself: its deps are those visited, and ready says whether all members'
 * begins of its all-to-all instance were. */
static int replay_step(hb_columns *rp, const hb_walk *w, const hb_step *s, int ready)
{
    earl_loc l = s->l;
    earl_eid e = s->e;
    if (s->forced && rp->leader)
        rp->hb->warnings[EARL_HBW_CYCLE_BROKEN]++;
    uint32_t *c = clock_of(rp, l);
    if ((uint32_t)l - rp->first < rp->width)
        c[l - rp->first]++;
    if (s->merge == HB_MERGE_INSTANCE) {
        take_in_instance(rp, c, s->instance, s->deps, s->n, ready);
    } else {
        for (size_t k = 0; k < s->n; k++)
            if (!w || hb_walk_done(w, s->deps[k]))
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
    if (rp->scope->exported && HB_BIT_GET(rp->scope->exported, e))
        send_clock(rp, e, c);
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

/* The visitor of the walk. */
static int replay_event(void *data, hb_walk *w, const hb_step *s)
{
    return replay_step(data, w, s, s->merge == HB_MERGE_INSTANCE && all_done(w, s->deps, s->n));
}

int hb_columns_run(hb_columns *rp)
{
    return hb_walk_resume(&rp->walk) != 0 || rp->nomem ? -1 : 0;
}

earl_loc hb_columns_earliest(hb_columns *rp, earl_eid *next)
{
    return hb_walk_earliest(&rp->walk, next);
}

earl_eid hb_columns_waiting_next(hb_columns *rp, earl_loc l)
{
    return hb_walk_waiting_next(&rp->walk, l);
}

void hb_columns_force(hb_columns *rp, earl_loc l)
{
    hb_walk_force(&rp->walk, l);
}

int hb_columns_receive(hb_columns *rp, earl_eid e, const uint32_t *entries)
{
    if (hb_walk_done(&rp->walk, e))
        return 0; /* sent twice: the first is the clock */
    uint32_t refs = hb_rules_saves(rp->rules, e);
    if (refs)
        save_clock(rp, e, entries, refs);
    return hb_walk_arrived(&rp->walk, e) != 0 || rp->nomem ? -1 : 0;
}

size_t hb_columns_sent(const hb_columns *rp, const uint32_t **entries, const earl_eid **events)
{
    *entries = rp->sent;
    if (events)
        *events = rp->sent_event;
    return rp->n_sent;
}

void hb_columns_clear_sent(hb_columns *rp)
{
    rp->n_sent = 0;
}

size_t hb_columns_unfinished(const hb_columns *rp)
{
    return hb_walk_unfinished(&rp->walk);
}

void hb_columns_free(hb_columns *rp)
{
    if (!rp)
        return;
    hb_walk_free(&rp->walk);
    free(rp->clock);
    free(rp->stamped);
    free(rp->stamp_next);
    free(rp->stamp_order);
    free(rp->instance_done);
    free(rp->refs);
    free(rp->sent);
    free(rp->sent_event);
    hb_clock_pool_free(&rp->pool);
    hb_event_map_free(&rp->saved);
    hb_event_map_free(&rp->instance_max);
    free(rp);
}

hb_columns *hb_columns_new(earl_hb *hb, const earl_trace *trace, hb_rules *rules,
                           const hb_scope *scope, uint32_t first, uint32_t width, int leader,
                           const earl_hb_options *options)
{
    hb_columns *rp = calloc(1, sizeof *rp);
    if (!rp)
        return NULL;
    const earl_events *ev = earl_trace_events(trace);
    *rp = (hb_columns){.ev = ev, .rules = rules, .scope = scope, .hb = hb, .first = first,
                       .width = width, .nl = earl_trace_defs(trace)->n_locations,
                       .leader = leader, .opt = options};
    size_t nl = rp->nl ? rp->nl : 1;
    rp->clock = calloc((size_t)scope->n_rows * width + 1, sizeof *rp->clock);
    rp->stamped = calloc(ev->count / 8 + 1, 1);
    rp->stamp_next = calloc(nl + 1, sizeof *rp->stamp_next);
    rp->stamp_order = malloc((hb->n ? hb->n : 1) * sizeof *rp->stamp_order);
    rp->instance_done = calloc(rules->view->n_colls + 1, sizeof *rp->instance_done);
    hb_clock_pool_init(&rp->pool, width);
    hb_event_map_init(&rp->saved);
    hb_event_map_init(&rp->instance_max);
    rp->walk = (hb_walk){.ev = ev, .rules = rules, .nl = rp->nl, .row = scope->row,
                         .visit = replay_event, .data = rp, .phase = "clocks",
                         .progress = leader && options ? options->progress : NULL,
                         .progress_data = options ? options->progress_data : NULL};
    if (!rp->clock || !rp->stamped || !rp->stamp_next || !rp->stamp_order ||
        !rp->instance_done || hb_walk_init(&rp->walk) != 0) {
        hb_columns_free(rp);
        return NULL;
    }
    /* stamps grouped by location (a counting sort): a location meets its
     * stamped events in program order, so each takes the next of its group */
    for (size_t k = 0; k < hb->n; k++) {
        HB_BIT_SET(rp->stamped, hb->events[k]);
        rp->stamp_next[ev->location[hb->events[k]] + 1]++;
    }
    for (size_t l = 0; l < rp->nl; l++)
        rp->stamp_next[l + 1] += rp->stamp_next[l];
    for (size_t k = 0; k < hb->n; k++)
        rp->stamp_order[rp->stamp_next[ev->location[hb->events[k]]]++] = k;
    for (size_t l = rp->nl; l > 0; l--)
        rp->stamp_next[l] = rp->stamp_next[l - 1];
    rp->stamp_next[0] = 0;
    return rp;
}

/* ---- the scope of a replay ------------------------------------------------------- */

earl_status hb_scope_init(hb_scope *s, const earl_trace *trace, const hb_rules *rules,
                          earl_error *err)
{
    memset(s, 0, sizeof *s);
    size_t nl = earl_trace_defs(trace)->n_locations;
    const earl_states_view *v = rules->view;
    s->row = malloc((nl ? nl : 1) * sizeof *s->row);
    s->instance_members = calloc(v->n_colls + 1, sizeof *s->instance_members);
    if (!s->row || !s->instance_members) {
        hb_scope_free(s);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the happened-before replay");
    }
    for (size_t l = 0; l < nl; l++)
        s->row[l] = hb_rules_own(rules, (earl_loc)l) ? (int32_t)s->n_rows++ : -1;
    const earl_loc *loc = rules->ev->location;
    for (size_t k = 0; k < v->n_colls; k++)
        for (size_t j = v->coll_member_start[k]; j < v->coll_member_start[k + 1]; j++)
            s->instance_members[k] += s->row[loc[v->coll_members[j]]] >= 0;
    return EARL_OK;
}

void hb_scope_free(hb_scope *s)
{
    free(s->row);
    free(s->instance_members);
    free(s->exported);
    memset(s, 0, sizeof *s);
}

/* ---- the replay of a whole trace ------------------------------------------------- */

typedef struct whole_job {
    hb_columns *c;
    int failed;
} whole_job;

/* One column replay to the end, cycles broken at the earliest waiting event. */
static void *replay_whole(void *arg)
{
    whole_job *job = arg;
    job->failed = hb_walk_complete(&job->c->walk) != 0 || job->c->nomem;
    return NULL;
}

/* ---- the replay of a whole trace in two stages ----------------------------------- */

/*
 * With few locations the replay cannot be divided by clock entries: every
 * thread would walk every event for the merging of a few entries (see
 * hb_replay_threads).  Two threads divide it by stage instead, in a
 * pipeline: the calling thread walks (which event comes next, its
 * dependencies and which of them were visited: the schedule, a function of
 * the trace alone), a helper takes the steps in the same order and computes
 * the clocks (replay_step).  The steps cross in batches, so that the threads
 * meet once per PIPE_BATCH events; the helper's clocks, saved clocks and
 * stamps are exactly those of the replay on one thread, since it replays
 * the same steps in the same order with the same dependencies.  The two
 * stages cost about the same (the walk a little more), so the replay takes
 * a little more than half its time on one thread.
 */
#define PIPE_BATCH 4096
#define PIPE_BATCHES 4
/* Below this many events the helper's start costs more than it saves. */
#define PIPE_MIN_EVENTS 16384

/* A step as it crosses: its dependencies (those visited, or all members'
 * begins of an all-to-all instance, with ready) are in its batch's deps. */
typedef struct pipe_step {
    earl_eid e, prev;
    size_t pos;
    size_t dep_at;
    uint32_t n_deps;
    earl_loc l;
    int32_t instance;
    uint8_t merge, forced, ready;
} pipe_step;

typedef struct pipe_batch {
    pipe_step steps[PIPE_BATCH];
    size_t n;
    earl_eid *deps;
    size_t n_deps, cap_deps;
} pipe_batch;

/* The batches form a ring: the walk fills batch[filled % PIPE_BATCHES], the
 * clocks take batch[taken % PIPE_BATCHES]; filled - taken <= PIPE_BATCHES. */
typedef struct pipe {
    hb_columns *rp;
    pipe_batch *batch;
    size_t filled, taken;
    int walked;     /* the walk is over: no batch comes after `filled` */
    int failed;     /* the clocks ran out of memory: the walk stops */
    pthread_mutex_t lock;
    pthread_cond_t changed;
} pipe;

/* Hand the batch being filled to the clocks and wait for a free one. */
static int pipe_publish(pipe *p, int last)
{
    pthread_mutex_lock(&p->lock);
    p->filled++;
    p->walked = last;
    pthread_cond_broadcast(&p->changed);
    while (!p->failed && p->filled - p->taken == PIPE_BATCHES)
        pthread_cond_wait(&p->changed, &p->lock);
    int failed = p->failed;
    pthread_mutex_unlock(&p->lock);
    pipe_batch *b = &p->batch[p->filled % PIPE_BATCHES];
    b->n = b->n_deps = 0;
    return failed ? -1 : 0;
}

/* The walk's visitor: the step into the batch being filled. */
static int pipe_record(void *data, hb_walk *w, const hb_step *s)
{
    pipe *p = data;
    pipe_batch *b = &p->batch[p->filled % PIPE_BATCHES];
    if (b->n == PIPE_BATCH) {
        if (pipe_publish(p, 0) != 0)
            return -1;
        b = &p->batch[p->filled % PIPE_BATCHES];
    }
    if (EARL_GROW(b->deps, b->cap_deps, b->n_deps + s->n + 1) != 0)
        return -1;
    pipe_step *t = &b->steps[b->n++];
    *t = (pipe_step){.e = s->e, .prev = s->prev, .pos = s->pos, .dep_at = b->n_deps, .l = s->l,
                     .instance = s->instance, .merge = (uint8_t)s->merge,
                     .forced = (uint8_t)s->forced};
    int instance = s->merge == HB_MERGE_INSTANCE;
    t->ready = instance && all_done(w, s->deps, s->n);
    for (size_t k = 0; k < s->n; k++)
        if (instance || hb_walk_done(w, s->deps[k]))
            b->deps[b->n_deps++] = s->deps[k];
    t->n_deps = (uint32_t)(b->n_deps - t->dep_at);
    return 0;
}

/* The clocks' stage, on the helper thread. */
static void *pipe_clocks(void *arg)
{
    pipe *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->taken == p->filled && !p->walked)
            pthread_cond_wait(&p->changed, &p->lock);
        if (p->taken == p->filled)
            break; /* walked, and every batch taken */
        pthread_mutex_unlock(&p->lock);
        pipe_batch *b = &p->batch[p->taken % PIPE_BATCHES];
        int rc = 0;
        for (size_t k = 0; k < b->n && rc == 0; k++) {
            const pipe_step *t = &b->steps[k];
            hb_step s = {.e = t->e, .l = t->l, .pos = t->pos, .prev = t->prev,
                         .deps = b->deps + t->dep_at, .n = t->n_deps,
                         .merge = (hb_merge)t->merge, .instance = t->instance,
                         .forced = t->forced};
            rc = replay_step(p->rp, NULL, &s, t->ready);
        }
        pthread_mutex_lock(&p->lock);
        p->taken++;
        if (rc != 0) {
            p->failed = 1;
            pthread_cond_broadcast(&p->changed);
            break;
        }
        pthread_cond_broadcast(&p->changed);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* The whole replay of rp in the two stages; -1 when out of memory. */
static int replay_pipelined(hb_columns *rp)
{
    pipe p = {.rp = rp};
    p.batch = calloc(PIPE_BATCHES, sizeof *p.batch);
    if (!p.batch)
        return -1;
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.changed, NULL);
    pthread_t helper;
    int rc;
    if (pthread_create(&helper, NULL, pipe_clocks, &p) != 0) {
        rc = hb_walk_complete(&rp->walk); /* no helper: the clocks as the walk goes */
    } else {
        rp->walk.visit = pipe_record;
        rp->walk.data = &p;
        rc = hb_walk_complete(&rp->walk);
        if (pipe_publish(&p, 1) != 0) /* the last batch, however full */
            rc = -1;
        pthread_join(helper, NULL);
        rp->walk.visit = replay_event;
        rp->walk.data = rp;
    }
    for (size_t k = 0; k < PIPE_BATCHES; k++)
        free(p.batch[k].deps);
    free(p.batch);
    pthread_cond_destroy(&p.changed);
    pthread_mutex_destroy(&p.lock);
    return rc != 0 || p.failed || rp->nomem ? -1 : 0;
}

/* Fault in one thread's share of the stamps' rows.  Every replay writes into
 * every row, and pages faulted by one thread at a time would serialise the
 * threads on the kernel's page zeroing. */
typedef struct fault_job {
    earl_hb *hb;
    uint32_t index, n;
} fault_job;

static void *fault_rows(void *arg)
{
    fault_job *f = arg;
    earl_hb *hb = f->hb;
    size_t rows = hb->n / f->n, from = rows * f->index;
    if (f->index + 1 == f->n)
        rows = hb->n - from;
    memset(hb->stamps + from * hb->width, 0, rows * hb->width * sizeof *hb->stamps);
    return NULL;
}

/* Threads for the replay: as asked (0: one per core), at most one per 256
 * entries (base/parts.h's earl_parallel_parts), below which a thread's share
 * of the merging does not pay for its scheduling: every thread walks all the
 * events. */
uint32_t hb_replay_threads(const earl_hb_options *options, uint32_t width)
{
    return (uint32_t)earl_parallel_parts(options ? options->threads : 0, width, 256);
}

earl_status hb_replay(earl_hb *hb, const earl_trace *trace, hb_rules *rules,
                      const earl_hb_options *options, earl_error *err)
{
    uint32_t nt = hb_replay_threads(options, hb->width);
    hb_scope scope;
    earl_status st = hb_scope_init(&scope, trace, rules, err);
    if (st != EARL_OK)
        return st;
    whole_job *jobs = calloc(nt, sizeof *jobs);
    fault_job *faults = calloc(nt, sizeof *faults);
    int nomem = !jobs || !faults;
    uint32_t first = 0;
    for (uint32_t t = 0; t < nt && !nomem; t++) {
        uint32_t w = hb->width / nt + (t < hb->width % nt);
        jobs[t].c = hb_columns_new(hb, trace, rules, &scope, first, w, t == 0, options);
        faults[t] = (fault_job){hb, t, nt};
        nomem |= !jobs[t].c;
        first += w;
    }
    if (!nomem) {
        if (nt > 1)
            earl_parts_run(fault_rows, faults, sizeof *faults, nt);
        if (nt == 1 && earl_threads_or_cores(options ? options->threads : 0) > 1 &&
            earl_trace_events(trace)->count >= PIPE_MIN_EVENTS)
            jobs[0].failed = replay_pipelined(jobs[0].c) != 0;
        else
            earl_parts_run(replay_whole, jobs, sizeof *jobs, nt);
    }
    for (uint32_t t = 0; jobs && t < nt; t++) {
        nomem |= jobs[t].failed;
        hb_columns_free(jobs[t].c);
    }
    free(jobs);
    free(faults);
    hb_scope_free(&scope);
    if (nomem)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the vector clocks of %u locations",
                         (unsigned)hb->width);
    if (options && options->progress)
        options->progress(options->progress_data, "clocks", earl_trace_events(trace)->count,
                          earl_trace_events(trace)->count);
    return EARL_OK;
}
