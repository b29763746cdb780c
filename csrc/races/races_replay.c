/*
 * races_replay.c - the matches-before replay of the race analysis: lazy
 * vector clocks (LVCP) and lazy Lamport clocks (LLCP) of Vo's dissertation,
 * chapter 5, computed together in one replay of the trace.
 *
 * Each MPI location (one that has point-to-point or collective records) is a
 * process with a running clock: `width` vector entries and, last, its
 * Lamport value.  The clocks change only where matches-before orders:
 *   - a receive, when it is matched: a wildcard receive takes the current
 *     own entry and Lamport value as its clock and increments both (rules
 *     R2/R4; other receives are not raced on and need no tick), then the
 *     clock absorbs the clock its send had (the match-set's past, rule C5);
 *   - a blocking receive matches at its record, a non-blocking one at its
 *     completion (MPI_IRECV), or earlier when a receive posted after it
 *     completes and non-overtaking orders it first (rule C4: same
 *     communicator and tag, and it asked for any source or for the source of
 *     the later one): the CompleteNow set of rule R4, matched first, in the
 *     order they were posted;
 *   - a synchronous send completes only once its receive matched (section
 *     5.2.1): after MPI_Ssend (at the MPI_ISEND_COMPLETE of MPI_Issend) the
 *     sender absorbs the receiver's clock just after that match.  The trace
 *     does not say when a non-blocking receive started taking a synchronous
 *     message, so such a receive is taken as matched where it was posted;
 *   - a collective's end absorbs the clocks its members had at their begin,
 *     by the operation's shape: all-to-all every member's, one-to-all the
 *     root's, all-to-one every member's at the root, scan (exscan) those of
 *     lower or equal (lower) rank.
 * Sends change nothing: matches-before does not order what follows a send.
 *
 * Dependency order: a location runs until an event needs what another
 * location has not replayed yet (the clock of a receive's send, the clock
 * after the receive of a synchronous send, the begins of a collective), then
 * waits on that key and is woken when it is published.  The result does not
 * depend on the order the locations run in.  A trace whose dependencies form
 * a cycle (inconsistent) has it broken at the earliest blocked event, which
 * goes on without the missing clock: a counted warning.
 *
 * Saved clocks (a send's until its receive, a collective member's begin
 * until every member ended, the clock a synchronous sender waits for) live in
 * the shared slot pool of hb_clock.h, found by event id.
 *
 * Parts (races_part.c): a run is resumable and replays the locations the
 * trace holds whole.  What another part produces arrives as clocks
 * (races_run_receive): the clock of a send to an own location when it was
 * sent, the clock of the receiver just after it took a synchronous send of
 * an own location, the clock of a collective member at its begin.  What an
 * own location produces for another part is collected as it is replayed
 * (races_run_produced), under the same keys.
 */
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "hb/hb_clock.h"
#include "races_internal.h"

/* A posted non-blocking receive not matched yet. */
typedef struct pending_recv {
    earl_eid completion; /* its MPI_IRECV event */
    size_t row;          /* the message-table row of that event */
    earl_eid send;       /* the send it takes, -1 */
    earl_loc source;     /* actual source location */
    uint32_t comm, tag;
    uint8_t flags;       /* RACES_WILD_SOURCE, RACES_ANY_TAG */
    uint8_t assigned;    /* its clock was taken already (matched by a synchronous send) */
} pending_recv;

/* The replay state of one location. */
typedef struct loc_state {
    size_t pos, end;        /* next position in loc_events, end of the location */
    int32_t vidx;           /* row of the running clock, -1: no MPI records */
    earl_eid await_ack;     /* a synchronous send waiting for its receive's clock, -1 */
    int32_t coll_inst;      /* the collective instance between its BEGIN and END, -1 */
    uint32_t coll_member;   /* its member index there */
    uint8_t done;
    pending_recv *pending;
    size_t n_pending, cap_pending;
} loc_state;

/* The begins of one collective instance, kept until every member ended. */
typedef struct coll_state {
    uint32_t *slot;   /* per member: saved clock at its begin, UINT32_MAX before */
    uint32_t n_begun, n_ended;
    uint32_t n_own;   /* members on replayed locations: their ends release it */
    uint32_t joined;  /* the join of every member's begin, made once all began (an
                         all-to-all end merges one clock, not one per member) */
} coll_state;

struct races_run {
    const earl_events *ev;
    const earl_defs *defs;
    earl_states *states;
    const earl_states_view *view;
    uint8_t *flags;
    races_clocks *out;
    int vector;
    uint32_t width;      /* vector entries (0 for Lamport only) */
    uint32_t w1;         /* entries of a clock: width + the Lamport value */
    int32_t *vidx;       /* per location, -1 */
    uint32_t *clocks;    /* n_clocked x w1 running clocks */
    loc_state *locs;
    uint32_t n_locs;
    hb_clock_pool pool;
    hb_event_map saved;  /* send event -> slot of its clock */
    hb_event_map acks;   /* synchronous send event -> slot of the clock after its receive */
    hb_waiters waiters;  /* locations waiting on a key */
    coll_state **colls;  /* per collective instance, NULL when none is open */
    int32_t *ready;
    size_t n_ready;
    uint8_t *mark;       /* scratch: CompleteNow membership */
    size_t cap_mark;
    int nomem;
    uint64_t processed, next_report;
    const earl_races_options *opts;
    /* parts */
    uint8_t *released;   /* bit per collective instance: its state was freed */
    uint8_t *exported;   /* bit per key (below): another part waits for it */
    int64_t *produced_key; /* keys produced for other parts since the last clear */
    uint32_t *produced;  /* and their clocks, w1 entries each */
    size_t n_produced, cap_produced_key, cap_produced;
};
typedef struct races_run replay;

/* Keys of the waits: a send's clock, a synchronous send's receive clock, a
 * collective instance's begins; and of what crosses parts: a send's clock,
 * a synchronous send's receive clock, a member's begin clock (by its END). */
#define KEY_SENT(e) RACES_KEY(RACES_SENT, e)
#define KEY_ACK(e) RACES_KEY(RACES_ACK, e)
#define KEY_COLL(k) ((int64_t)(k) * 4 + 3)
#define KEY_BEGIN(m) RACES_KEY(RACES_BEGIN, m)

static int own(const replay *R, earl_loc l)
{
    return R->defs->locations[l].held == EARL_HELD_ALL;
}

/* What another part waits for is produced: its clock is kept for the take. */
static void produce(replay *R, int64_t key, const uint32_t *clk)
{
    if (!R->exported || !HB_BIT_GET(R->exported, key))
        return;
    if (EARL_GROW(R->produced_key, R->cap_produced_key, R->n_produced + 1) != 0 ||
        EARL_GROW(R->produced, R->cap_produced, (R->n_produced + 1) * R->w1) != 0) {
        R->nomem = 1;
        return;
    }
    R->produced_key[R->n_produced] = key;
    hb_clock_copy(R->produced + R->n_produced * R->w1, clk, R->w1);
    R->n_produced++;
}

static uint32_t *clock_of(replay *R, int32_t l)
{
    return R->clocks + (size_t)R->locs[l].vidx * R->w1;
}

static uint32_t save(replay *R, const uint32_t *clk)
{
    uint32_t slot = hb_clock_take(&R->pool, clk);
    if (slot == UINT32_MAX)
        R->nomem = 1;
    return slot;
}

static void put(replay *R, hb_event_map *map, earl_eid key, uint32_t value)
{
    if (hb_event_map_put(map, key, value) != 0)
        R->nomem = 1;
}

/* ---- waiting and waking ------------------------------------------------------- */

static void wait_on(replay *R, int32_t l, int64_t key)
{
    if (hb_wait(&R->waiters, l, key) != 0)
        R->nomem = 1;
}

static void wake(replay *R, int64_t key)
{
    R->n_ready += hb_wake(&R->waiters, key, R->ready + R->n_ready);
}

/* The event a waiting location goes on with: its next one, or for a
 * synchronous send at its end that waits for its receive, the send. */
static earl_eid next_event(void *ctx, int32_t l)
{
    const replay *R = ctx;
    const loc_state *st = &R->locs[l];
    return R->ev->loc_events[st->pos < st->end ? st->pos : st->pos - 1];
}

/* ---- point-to-point -------------------------------------------------------------- */

static void on_send(replay *R, int32_t l, earl_eid e, size_t row)
{
    const earl_msg_table *msg = &R->ev->msg;
    uint32_t *clk = clock_of(R, l);
    earl_loc dest = msg->peer[row];
    int32_t dv = dest >= 0 ? R->vidx[dest] : -1;
    earl_eid recv = earl_states_ptr(R->states, EARL_PTR_RECV, e);
    if (R->vector) {
        R->out->own[row] = dv >= 0 ? clk[dv] : 0;
        if (recv >= 0 && own(R, R->ev->location[recv])) /* else its clock goes there */
            put(R, &R->saved, e, save(R, clk));
    }
    R->out->lamport[row] = clk[R->width];
    R->flags[row] |= RACES_REPLAYED;
    produce(R, KEY_SENT(e), clk);
    wake(R, KEY_SENT(e));
    if (R->ev->kind[e] == EARL_MPI_SEND && (R->flags[row] & RACES_SYNC_SEND) && recv >= 0)
        R->locs[l].await_ack = e;
}

/* A wildcard receive takes its clock (rule R4) and the process ticks. */
static void assign(replay *R, int32_t l, size_t row)
{
    if (!(R->flags[row] & RACES_WILD_SOURCE))
        return;
    uint32_t *clk = clock_of(R, l);
    int32_t v = R->locs[l].vidx;
    if (R->vector)
        R->out->own[row] = clk[v]++;
    R->out->lamport[row] = clk[R->width]++;
    R->flags[row] |= RACES_CLOCKED;
}

static void publish_ack(replay *R, int32_t l, earl_eid send)
{
    if (own(R, R->ev->location[send])) {
        put(R, &R->acks, send, save(R, clock_of(R, l)));
        wake(R, KEY_ACK(send));
    } else { /* the sender is another part's */
        produce(R, KEY_ACK(send), clock_of(R, l));
    }
}

static int is_sync(const replay *R, earl_eid send)
{
    return send >= 0 && (R->flags[R->ev->ref[send]] & RACES_SYNC_SEND);
}

/* The receive is matched: its clock, then its message's past. */
static void finish(replay *R, int32_t l, const pending_recv *r)
{
    R->flags[r->row] |= RACES_MATCHED;
    if (!r->assigned)
        assign(R, l, r->row);
    if (r->send < 0)
        return;
    uint32_t *clk = clock_of(R, l);
    if (R->vector) {
        uint32_t slot = hb_event_map_take(&R->saved, r->send);
        if (slot != UINT32_MAX) {
            hb_clock_max(clk, hb_clock_at(&R->pool, slot), R->w1);
            hb_clock_release(&R->pool, slot);
        }
    } else {
        uint32_t m = R->out->lamport[R->ev->ref[r->send]];
        if (m > clk[R->width])
            clk[R->width] = m;
    }
    if (!r->assigned && is_sync(R, r->send))
        publish_ack(R, l, r->send);
}

static void on_post(replay *R, int32_t l, size_t row)
{
    const earl_events *ev = R->ev;
    earl_eid c = earl_msg_partner(&ev->msg, row);
    if (c < 0 || ev->kind[c] != EARL_MPI_IRECV || ev->ref[c] < 0)
        return; /* never completed: a resource error, not a receive */
    loc_state *st = &R->locs[l];
    if (st->n_pending == st->cap_pending &&
        EARL_GROW(st->pending, st->cap_pending, st->n_pending + 1) != 0) {
        R->nomem = 1;
        return;
    }
    size_t crow = (size_t)ev->ref[c];
    pending_recv *p = &st->pending[st->n_pending++];
    p->completion = c;
    p->row = crow;
    p->send = earl_states_ptr(R->states, EARL_PTR_SEND, c);
    p->source = ev->msg.peer[crow];
    p->comm = ev->msg.comm[crow];
    p->tag = ev->msg.tag[crow];
    p->flags = R->flags[crow] & (RACES_WILD_SOURCE | RACES_ANY_TAG);
    p->assigned = 0;
    if (is_sync(R, p->send)) {
        assign(R, l, crow);
        p->assigned = 1;
        publish_ack(R, l, p->send);
    }
}

/* Rule C4 (with C4' once the later one is matched): a, posted before b,
 * matches before b. */
static int matches_before(const pending_recv *a, const pending_recv *b)
{
    return a->comm == b->comm && ((a->flags & RACES_ANY_TAG) || a->tag == b->tag) &&
           ((a->flags & RACES_WILD_SOURCE) || a->source == b->source);
}

static int send_ready(const replay *R, earl_eid send)
{
    return send < 0 || (R->flags[R->ev->ref[send]] & RACES_REPLAYED);
}

/* Complete receive r on l, with the CompleteNow set among the first n_before
 * pending receives (those posted before r).  Returns 1 with *key when a send
 * is not replayed yet (nothing changed then); with force such sends are
 * taken as missing. */
static int complete(replay *R, int32_t l, pending_recv *r, size_t n_before, int force,
                    int64_t *key)
{
    loc_state *st = &R->locs[l];
    if (n_before > R->cap_mark && EARL_GROW(R->mark, R->cap_mark, n_before) != 0) {
        R->nomem = 1;
        return 0;
    }
    uint8_t *mark = R->mark;
    for (size_t k = n_before; k-- > 0;) {
        mark[k] = (uint8_t)matches_before(&st->pending[k], r);
        for (size_t j = k + 1; !mark[k] && j < n_before; j++)
            if (mark[j] && matches_before(&st->pending[k], &st->pending[j]))
                mark[k] = 1;
    }
    int forced = 0;
    for (size_t k = 0; k <= n_before; k++) {
        pending_recv *p = k < n_before ? &st->pending[k] : r;
        if ((k < n_before && !mark[k]) || send_ready(R, p->send))
            continue;
        if (!force) {
            *key = KEY_SENT(p->send);
            return 1;
        }
        p->send = -1;
        forced = 1;
    }
    if (forced)
        R->out->cycles_broken++;
    for (size_t k = 0; k < n_before; k++)
        if (mark[k])
            finish(R, l, &st->pending[k]);
    finish(R, l, r);
    /* drop the matched ones from the pending list, keeping the order */
    size_t w = 0;
    for (size_t k = 0; k < st->n_pending; k++) {
        int gone = (k < n_before && mark[k]) || &st->pending[k] == r;
        if (!gone)
            st->pending[w++] = st->pending[k];
    }
    st->n_pending = w;
    return 0;
}

/* A blocking receive, or a completion whose posting the trace lacks. */
static int on_recv(replay *R, int32_t l, earl_eid e, size_t row, int force, int64_t *key)
{
    const earl_msg_table *msg = &R->ev->msg;
    pending_recv r = {e, row, earl_states_ptr(R->states, EARL_PTR_SEND, e), msg->peer[row],
                      msg->comm[row], msg->tag[row],
                      (uint8_t)(R->flags[row] & (RACES_WILD_SOURCE | RACES_ANY_TAG)), 0};
    return complete(R, l, &r, R->locs[l].n_pending, force, key);
}

static int on_irecv(replay *R, int32_t l, earl_eid e, size_t row, int force, int64_t *key)
{
    loc_state *st = &R->locs[l];
    for (size_t k = 0; k < st->n_pending; k++)
        if (st->pending[k].completion == e)
            return complete(R, l, &st->pending[k], k, force, key);
    if (R->flags[row] & RACES_MATCHED)
        return 0; /* matched already (CompleteNow) */
    /* no posting record (a request the trace model could not pair): matched here */
    return on_recv(R, l, e, row, force, key);
}

/* ---- collectives ------------------------------------------------------------------- */

static size_t members_of(const replay *R, int32_t inst, const earl_eid **members)
{
    size_t a = R->view->coll_member_start[inst], b = R->view->coll_member_start[inst + 1];
    *members = R->view->coll_members + a;
    return b - a;
}

/* The state of an open instance, made on first need. */
static coll_state *coll_open(replay *R, int32_t inst)
{
    coll_state *cs = R->colls[inst];
    if (cs)
        return cs;
    const earl_eid *members;
    size_t n = members_of(R, inst, &members);
    cs = calloc(1, sizeof *cs);
    uint32_t *slot = cs ? malloc((n ? n : 1) * sizeof *slot) : NULL;
    if (!slot) {
        free(cs);
        R->nomem = 1;
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        slot[k] = UINT32_MAX;
        cs->n_own += own(R, R->ev->location[members[k]]);
    }
    cs->slot = slot;
    cs->joined = UINT32_MAX;
    R->colls[inst] = cs;
    return cs;
}

/* Member mi of instance inst began with clock clk. */
static void coll_begun(replay *R, int32_t inst, size_t mi, const uint32_t *clk)
{
    if (HB_BIT_GET(R->released, inst))
        return; /* every own member ended: none takes it */
    coll_state *cs = coll_open(R, inst);
    if (!cs)
        return;
    if (cs->slot[mi] == UINT32_MAX)
        cs->n_begun++;
    else
        hb_clock_release(&R->pool, cs->slot[mi]);
    cs->slot[mi] = save(R, clk);
    wake(R, KEY_COLL(inst));
}

static void on_coll_begin(replay *R, int32_t l)
{
    loc_state *st = &R->locs[l];
    const earl_events *ev = R->ev;
    st->coll_inst = -1;
    earl_eid end = -1;
    for (size_t p = st->pos + 1; p < st->end; p++) {
        uint8_t k = ev->kind[ev->loc_events[p]];
        if (k == EARL_MPI_COLLECTIVE_END)
            end = ev->loc_events[p];
        if (k == EARL_MPI_COLLECTIVE_END || k == EARL_MPI_COLLECTIVE_BEGIN)
            break;
    }
    if (end < 0)
        return;
    int32_t inst = earl_states_instance_of(R->states, end);
    if (inst < 0 || R->view->coll_type[inst] != EARL_COLL_MPI)
        return;
    const earl_eid *members;
    size_t n = members_of(R, inst, &members);
    size_t mi = earl_i64_lower_bound(members, 0, n, end);
    if (mi >= n || members[mi] != end)
        return;
    coll_begun(R, inst, mi, clock_of(R, l));
    produce(R, KEY_BEGIN(end), clock_of(R, l));
    st->coll_inst = inst;
    st->coll_member = (uint32_t)mi;
}

/* Does the end of member mi wait for the begin of member j (the shapes that
 * name single members)? */
static int depends(const replay *R, int32_t inst, hb_shape shape, const earl_eid *members,
                   size_t mi, size_t j)
{
    if (j == mi)
        return 0;
    const earl_loc *loc = R->ev->location;
    if (shape == HB_SHAPE_FROM_ROOT)
        return loc[members[j]] == R->view->coll_root[inst];
    uint32_t comm = R->view->coll_comm[inst];
    int64_t rj = hb_comm_rank(R->defs, comm, loc[members[j]]);
    int64_t ri = hb_comm_rank(R->defs, comm, loc[members[mi]]);
    if (rj < 0 || ri < 0) /* not resolved: no order claimed */
        return 0;
    return shape == HB_SHAPE_SCAN ? rj <= ri : rj < ri;
}

static void release_coll(replay *R, int32_t inst, size_t n)
{
    coll_state *cs = R->colls[inst];
    HB_BIT_SET(R->released, inst);
    for (size_t k = 0; k < n; k++)
        if (cs->slot[k] != UINT32_MAX)
            hb_clock_release(&R->pool, cs->slot[k]);
    if (cs->joined != UINT32_MAX)
        hb_clock_release(&R->pool, cs->joined);
    free(cs->slot);
    free(cs);
    R->colls[inst] = NULL;
}

/* The join of every member's begin, made on first need once all began. */
static const uint32_t *joined_begins(replay *R, coll_state *cs, size_t n)
{
    if (cs->joined == UINT32_MAX) {
        cs->joined = save(R, NULL);
        if (cs->joined == UINT32_MAX)
            return NULL;
        for (size_t j = 0; j < n; j++)
            hb_clock_max(hb_clock_at(&R->pool, cs->joined), hb_clock_at(&R->pool, cs->slot[j]),
                         R->w1);
    }
    return hb_clock_at(&R->pool, cs->joined);
}

static int on_coll_end(replay *R, int32_t l, int force, int64_t *key)
{
    loc_state *st = &R->locs[l];
    int32_t inst = st->coll_inst;
    if (inst < 0 || !R->colls[inst])
        return 0;
    coll_state *cs = R->colls[inst];
    const earl_eid *members;
    size_t n = members_of(R, inst, &members), mi = st->coll_member;
    hb_shape shape = hb_collective_shape(R->view->coll_op[inst]);
    int at_root = R->ev->location[members[mi]] == R->view->coll_root[inst];
    int all = shape == HB_SHAPE_ALL || (shape == HB_SHAPE_TO_ROOT && at_root);
    int missing = 0;
    if (all)
        missing = cs->n_begun < n;
    else if (shape != HB_SHAPE_TO_ROOT)
        for (size_t j = 0; j < n && !missing; j++)
            missing = cs->slot[j] == UINT32_MAX && depends(R, inst, shape, members, mi, j);
    if (missing && !force) {
        *key = KEY_COLL(inst);
        return 1;
    }
    if (missing)
        R->out->cycles_broken++;
    uint32_t *clk = clock_of(R, l);
    if (all && !missing) {
        const uint32_t *join = joined_begins(R, cs, n);
        if (join)
            hb_clock_max(clock_of(R, l), join, R->w1);
    } else if (all || shape != HB_SHAPE_TO_ROOT) {
        for (size_t j = 0; j < n; j++)
            if (cs->slot[j] != UINT32_MAX && (all || depends(R, inst, shape, members, mi, j)))
                hb_clock_max(clk, hb_clock_at(&R->pool, cs->slot[j]), R->w1);
    }
    st->coll_inst = -1;
    if (++cs->n_ended == cs->n_own)
        release_coll(R, inst, n);
    return 0;
}

/* ---- the driver ------------------------------------------------------------------------ */

/* Replay event e of location l; 1 with *key when it must wait. */
static int handle(replay *R, int32_t l, earl_eid e, int force, int64_t *key)
{
    const earl_events *ev = R->ev;
    int32_t ref = earl_event_row(ev, (size_t)e);
    switch (ev->kind[e]) {
    case EARL_MPI_SEND:
    case EARL_MPI_ISEND:
        if (ref >= 0)
            on_send(R, l, e, (size_t)ref);
        return 0;
    case EARL_MPI_ISEND_COMPLETE: {
        earl_eid s = ref >= 0 ? earl_msg_partner(&ev->msg, (size_t)ref) : -1;
        if (is_sync(R, s) && earl_states_ptr(R->states, EARL_PTR_RECV, s) >= 0)
            R->locs[l].await_ack = s;
        return 0;
    }
    case EARL_MPI_IRECV_REQUEST:
        if (ref >= 0)
            on_post(R, l, (size_t)ref);
        return 0;
    case EARL_MPI_RECV:
        return ref >= 0 ? on_recv(R, l, e, (size_t)ref, force, key) : 0;
    case EARL_MPI_IRECV:
        return ref >= 0 ? on_irecv(R, l, e, (size_t)ref, force, key) : 0;
    case EARL_MPI_COLLECTIVE_BEGIN:
        on_coll_begin(R, l);
        return 0;
    case EARL_MPI_COLLECTIVE_END:
        return on_coll_end(R, l, force, key);
    default:
        return 0;
    }
}

static void report(replay *R)
{
    if (R->opts->progress && R->processed >= R->next_report) {
        R->opts->progress(R->opts->progress_data, "races", R->processed, R->ev->count);
        R->next_report = R->processed + (1u << 20);
    }
}

/* Run l until it must wait or ends; force lets its first wait go. */
static void run(replay *R, int32_t l, int force)
{
    loc_state *st = &R->locs[l];
    const earl_eid32 *events = R->ev->loc_events;
    while (!R->nomem) {
        if (st->await_ack >= 0) {
            uint32_t slot = hb_event_map_take(&R->acks, st->await_ack);
            if (slot != UINT32_MAX) {
                hb_clock_max(clock_of(R, l), hb_clock_at(&R->pool, slot), R->w1);
                hb_clock_release(&R->pool, slot);
            } else if (!force) {
                wait_on(R, l, KEY_ACK(st->await_ack));
                return;
            } else {
                R->out->cycles_broken++;
                force = 0;
            }
            st->await_ack = -1;
        }
        if (st->pos == st->end) {
            st->done = 1;
            return;
        }
        int64_t key = -1;
        if (handle(R, l, events[st->pos], force, &key)) {
            wait_on(R, l, key);
            return;
        }
        force = 0;
        st->pos++;
        if ((++R->processed & 0xffff) == 0)
            report(R);
    }
}

static earl_status setup(replay *R, const earl_trace *trace, earl_error *err)
{
    const earl_events *ev = R->ev;
    R->n_locs = R->defs->n_locations;
    R->vidx = malloc((R->n_locs ? R->n_locs : 1) * sizeof *R->vidx);
    R->locs = calloc(R->n_locs ? R->n_locs : 1, sizeof *R->locs);
    R->ready = malloc((R->n_locs ? R->n_locs : 1) * sizeof *R->ready);
    R->colls = calloc(R->view->n_colls ? R->view->n_colls : 1, sizeof *R->colls);
    R->released = calloc(R->view->n_colls / 8 + 1, 1);
    if (!R->vidx || !R->locs || !R->ready || !R->colls || !R->released)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the race replay",
                         earl_trace_path(trace));
    /* a clock per MPI location: of the whole trace when a part's caller says
     * which those are, else the locations with MPI records here */
    const uint8_t *clocked = R->opts->clocked;
    for (uint32_t l = 0; l < R->n_locs; l++)
        R->vidx[l] = clocked && clocked[l] ? 0 : -1;
    for (size_t m = 0; !clocked && m < ev->msg.count; m++)
        R->vidx[ev->location[ev->msg.event[m]]] = 0;
    for (size_t m = 0; !clocked && m < ev->coll.count; m++)
        R->vidx[ev->location[ev->coll.event[m]]] = 0;
    uint32_t n_clocked = 0;
    for (uint32_t l = 0; l < R->n_locs; l++)
        if (R->vidx[l] == 0)
            R->vidx[l] = (int32_t)n_clocked++;
    R->width = R->vector ? n_clocked : 0;
    R->w1 = R->width + 1;
    R->clocks = calloc((size_t)(n_clocked ? n_clocked : 1) * R->w1, sizeof *R->clocks);
    if (!R->clocks)
        return earl_fail(err, EARL_ERR_NOMEM,
                         "%s: out of memory for %u vector clocks of %u entries",
                         earl_trace_path(trace), n_clocked, R->w1);
    for (uint32_t l = 0; l < R->n_locs; l++) {
        loc_state *st = &R->locs[l];
        st->pos = ev->loc_start[l];
        st->end = ev->loc_start[l + 1];
        st->vidx = R->vidx[l];
        st->await_ack = -1;
        st->coll_inst = -1;
        st->done = st->vidx < 0 || !own(R, (earl_loc)l);
    }
    hb_clock_pool_init(&R->pool, R->w1);
    hb_event_map_init(&R->saved);
    hb_event_map_init(&R->acks);
    if (hb_waiters_init(&R->waiters, R->n_locs) != 0)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the race replay",
                         earl_trace_path(trace));
    for (uint32_t l = R->n_locs; l-- > 0;)
        if (!R->locs[l].done)
            R->ready[R->n_ready++] = (int32_t)l;
    return EARL_OK;
}

static size_t working_bytes(const replay *R)
{
    size_t b = hb_clock_pool_bytes(&R->pool) + hb_event_map_bytes(&R->saved) +
               hb_event_map_bytes(&R->acks) + hb_waiters_bytes(&R->waiters);
    b += (size_t)R->n_locs * (sizeof *R->locs + sizeof *R->vidx + sizeof *R->ready);
    b += R->view->n_colls * sizeof *R->colls + R->cap_mark;
    size_t n_clocked = 0;
    for (uint32_t l = 0; l < R->n_locs; l++) {
        n_clocked += R->locs[l].vidx >= 0;
        b += R->locs[l].cap_pending * sizeof(pending_recv);
    }
    return b + n_clocked * R->w1 * sizeof(uint32_t);
}

void races_run_free(replay *R)
{
    if (!R)
        return;
    if (R->colls)
        for (size_t k = 0; k < R->view->n_colls; k++)
            if (R->colls[k]) {
                free(R->colls[k]->slot);
                free(R->colls[k]);
            }
    if (R->locs)
        for (uint32_t l = 0; l < R->n_locs; l++)
            free(R->locs[l].pending);
    free(R->colls);
    free(R->released);
    free(R->exported);
    free(R->produced_key);
    free(R->produced);
    free(R->locs);
    free(R->vidx);
    free(R->ready);
    free(R->clocks);
    free(R->mark);
    hb_clock_pool_free(&R->pool);
    hb_event_map_free(&R->saved);
    hb_event_map_free(&R->acks);
    hb_waiters_free(&R->waiters);
    free(R);
}

earl_status races_run_new(const earl_trace *trace, earl_states *states,
                          const earl_races_options *opts, uint8_t *flags, races_clocks *out,
                          races_run **run, earl_error *err)
{
    *run = NULL;
    memset(out, 0, sizeof *out);
    replay *R = calloc(1, sizeof *R);
    if (!R)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the race replay",
                         earl_trace_path(trace));
    R->ev = earl_trace_events(trace);
    R->defs = earl_trace_defs(trace);
    R->states = states;
    R->view = earl_states_get_view(states);
    R->flags = flags;
    R->out = out;
    R->opts = opts;
    R->vector = opts->clocks == EARL_RACES_VECTOR;
    size_t rows = R->ev->msg.count ? R->ev->msg.count : 1;
    /* per-row arrays from the store's warm blocks (the open's reading buffers) */
    out->lamport = earl_mem_calloc(rows, sizeof *out->lamport);
    out->own = R->vector ? earl_mem_calloc(rows, sizeof *out->own) : NULL;
    earl_status st = EARL_OK;
    if (!out->lamport || (R->vector && !out->own))
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the message clocks",
                       earl_trace_path(trace));
    if (st == EARL_OK)
        st = setup(R, trace, err);
    if (st != EARL_OK) {
        races_run_free(R);
        races_clocks_free(out);
        return st;
    }
    *run = R;
    return EARL_OK;
}

int races_run_go(replay *R)
{
    while (R->n_ready && !R->nomem)
        run(R, R->ready[--R->n_ready], 0);
    return R->nomem ? -1 : 0;
}

earl_eid races_run_waiting(replay *R, int32_t *location)
{
    int32_t l = hb_waiters_earliest(&R->waiters, next_event, R);
    *location = l;
    return l >= 0 ? next_event(R, l) : EARL_NONE;
}

earl_eid races_run_waiting_at(replay *R, int32_t l)
{
    return l >= 0 && (uint32_t)l < R->n_locs && hb_waiting(&R->waiters, l) ? next_event(R, l)
                                                                            : EARL_NONE;
}

void races_run_force(replay *R, int32_t l)
{
    hb_unwait(&R->waiters, l);
    run(R, l, 1);
}

size_t races_run_unfinished(const replay *R)
{
    size_t n = 0;
    for (uint32_t l = 0; l < R->n_locs; l++)
        n += !R->locs[l].done;
    return n;
}

uint32_t races_run_clock_entries(const replay *R)
{
    return R->w1;
}

int races_run_export(replay *R, int64_t key)
{
    size_t bits = R->ev->count * 4 + 4;
    if (!R->exported && !(R->exported = calloc(bits / 8 + 1, 1)))
        return -1;
    HB_BIT_SET(R->exported, key);
    return 0;
}

size_t races_run_produced(const replay *R, const int64_t **keys, const uint32_t **clocks)
{
    *keys = R->produced_key;
    *clocks = R->produced;
    return R->n_produced;
}

void races_run_clear_produced(replay *R)
{
    R->n_produced = 0;
}

int races_run_receive(replay *R, int64_t key, const uint32_t *clk)
{
    earl_eid e = RACES_KEY_EVENT(key);
    const earl_events *ev = R->ev;
    switch (RACES_KEY_KIND(key)) {
    case RACES_SENT: { /* another part's send to an own location was sent */
        int32_t row = ev->ref[e];
        if (row < 0 || (R->flags[row] & RACES_REPLAYED))
            break;
        earl_loc dest = ev->msg.peer[row];
        int32_t dv = dest >= 0 ? R->vidx[dest] : -1;
        if (R->vector) {
            R->out->own[row] = dv >= 0 ? clk[dv] : 0;
            if (earl_states_ptr(R->states, EARL_PTR_RECV, e) >= 0)
                put(R, &R->saved, e, save(R, clk));
        }
        R->out->lamport[row] = clk[R->width];
        R->flags[row] |= RACES_REPLAYED;
        wake(R, KEY_SENT(e));
        break;
    }
    case RACES_ACK: /* another part took an own synchronous send */
        put(R, &R->acks, e, save(R, clk));
        wake(R, KEY_ACK(e));
        break;
    case RACES_BEGIN: { /* another part's collective member began */
        int32_t inst = earl_states_instance_of(R->states, e);
        if (inst < 0 || R->view->coll_type[inst] != EARL_COLL_MPI)
            break;
        const earl_eid *members;
        size_t n = members_of(R, inst, &members);
        size_t mi = earl_i64_lower_bound(members, 0, n, e);
        if (mi < n && members[mi] == e)
            coll_begun(R, inst, mi, clk);
        break;
    }
    default:
        break;
    }
    return R->nomem ? -1 : 0;
}

size_t races_run_peak_bytes(const replay *R)
{
    return working_bytes(R);
}

earl_status races_replay(const earl_trace *trace, earl_states *states,
                         const earl_races_options *opts, uint8_t *flags, races_clocks *out,
                         earl_error *err)
{
    replay *R;
    earl_status st = races_run_new(trace, states, opts, flags, out, &R, err);
    if (st != EARL_OK)
        return st;
    for (;;) {
        races_run_go(R);
        if (R->nomem)
            break;
        /* everything left waits: a cycle; go on at the earliest blocked event */
        int32_t first;
        if (races_run_waiting(R, &first) < 0)
            break;
        races_run_force(R, first);
    }
    if (R->nomem)
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory in the race replay",
                       earl_trace_path(trace));
    out->peak_bytes = working_bytes(R);
    if (opts->progress)
        opts->progress(opts->progress_data, "races", R->ev->count, R->ev->count);
    races_run_free(R);
    if (st != EARL_OK)
        races_clocks_free(out);
    return st;
}

void races_clocks_free(races_clocks *c)
{
    earl_mem_free(c->own);
    earl_mem_free(c->lamport);
    c->own = c->lamport = NULL;
}
