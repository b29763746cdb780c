/*
 * synth_engine.c - the generator's engine: advances every rank's script of
 * operations until it blocks on a peer, wakes it when a posted message, a
 * matched synchronous send or the last member of a collective can unblock it,
 * decides MPI_ANY_SOURCE receives when nothing else can move, simulates
 * OpenMP parallel regions (imbalanced loops, team barriers, critical sections
 * and locks), and writes each operation's events when it completes while
 * adding its severities to the expected values (synth_expect.c).
 */
#include "synth_internal.h"

/* ------------------------------------------------------------------------ */
/* Emitting events (written and accounted)                                    */
/* ------------------------------------------------------------------------ */


void fail_internal(sim *s, const char *what)
{
    if (OK(s))
        s->st = earl_fail(s->err, EARL_ERR_INVALID, "synth: %s", what);
}

static inline void count(sim *s, earl_kind k)
{
    s->kind_counts[k]++;
    s->events++;
}

uint32_t ev_enter(sim *s, uint32_t loc, uint64_t t, uint32_t region)
{
    if (!OK(s))
        return 0;
    uint32_t path = sx_push(&s->book, loc, region, t);
    if (path == UINT32_MAX) {
        fail_internal(s, "call path table full");
        return 0;
    }
    s->st = earl_writer_enter(s->w, s->locs[loc], t, s->regions[region], s->err);
    count(s, EARL_ENTER);
    return path;
}

void ev_leave(sim *s, uint32_t loc, uint64_t t, uint32_t region)
{
    if (!OK(s))
        return;
    if (sx_pop(&s->book, loc, t) == UINT32_MAX) {
        fail_internal(s, "region stack underflow");
        return;
    }
    s->st = earl_writer_leave(s->w, s->locs[loc], t, s->regions[region], s->err);
    count(s, EARL_LEAVE);
}

static void ev(sim *s, earl_kind k, uint32_t loc, uint64_t t, const earl_writer_record *rec)
{
    if (!OK(s))
        return;
    s->st = earl_writer_event(s->w, k, s->locs[loc], t, rec, s->err);
    count(s, k);
}

/* A property occurrence: only positive severities count (as instances too). */
static void add(sim *s, sx_prop p, uint32_t path, uint32_t loc, int64_t sev)
{
    if (sev > 0 && OK(s) && sx_add(&s->book, p, path, loc, sev) < 0)
        s->st = earl_fail(s->err, EARL_ERR_NOMEM, "synth: out of memory");
}

/* ------------------------------------------------------------------------ */
/* OpenMP parallel region on one rank                                         */
/* ------------------------------------------------------------------------ */


static int delayed(const sim *s, uint32_t r)
{
    uint32_t every = s->o.delay_every ? s->o.delay_every : 1;
    return s->o.delay && s->o.delay_rank == (int32_t)r && s->iter % every == 0;
}

static uint64_t work(sim *s, uint32_t r, uint32_t thread)
{
    uint64_t c = (uint64_t)s->o.compute;
    uint64_t d = c + rnd_range(s, c * s->o.imbalance / 100);
    if (delayed(s, r) && (int32_t)thread == s->o.delay_thread)
        d += (uint64_t)s->o.delay;
    return d;
}

/* Team barrier: every thread entered at tclock[i]; all leave at max + 1. */
static void team_barrier(sim *s, uint32_t r, uint32_t region, sx_prop prop)
{
    uint32_t T = s->T;
    uint64_t m = 0;
    for (uint32_t i = 0; i < T; i++)
        if (s->tclock[i] > m)
            m = s->tclock[i];
    for (uint32_t i = 0; i < T; i++) {
        uint32_t loc = r * T + i;
        uint32_t path = ev_enter(s, loc, s->tclock[i], region);
        add(s, prop, path, loc, (int64_t)(m - s->tclock[i]));
        ev_leave(s, loc, m + 1, region);
        s->tclock[i] = m + 1;
    }
}

static void lock_rounds(sim *s, uint32_t r, int api)
{
    uint32_t T = s->T;
    uint32_t lock = api ? 1 : 0;
    uint64_t *last = &s->lock_release[r * 2 + lock];
    uint64_t *order = &s->lock_order[r * 2 + lock];
    uint64_t hold = (uint64_t)s->o.hold;
    for (uint32_t i = 0; i < T; i++) {
        s->tleft[i] = s->o.lock_rounds;
        s->treq[i] = s->tclock[i] + rnd_range(s, hold);
    }
    earl_writer_record rec = { .model = OTF2_PARADIGM_OPENMP, .id = lock };
    for (;;) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < T; i++)
            if (s->tleft[i] && (best == UINT32_MAX || s->treq[i] < s->treq[best]))
                best = i;
        if (best == UINT32_MAX || !OK(s))
            break;
        uint32_t loc = r * T + best;
        uint64_t req = s->treq[best];
        uint64_t acq = (req > *last ? req : *last) + 1;
        uint32_t path = ev_enter(s, loc, req, api ? R_OMP_SET_LOCK : R_OMP_CRITICAL);
        if (*last > req) {
            add(s, SX_LOCK_CONTENTION, path, loc, (int64_t)(*last - req));
            add(s, api ? SX_LOCK_API : SX_LOCK_CRITICAL, path, loc, (int64_t)(*last - req));
        }
        rec.count = (uint32_t)(*order)++;
        ev(s, EARL_THREAD_ACQUIRE_LOCK, loc, acq, &rec);
        uint64_t rel;
        if (api) {
            ev_leave(s, loc, acq + 1, R_OMP_SET_LOCK);
            rel = acq + 1 + hold + 1;
            ev_enter(s, loc, rel - 1, R_OMP_UNSET_LOCK);
            ev(s, EARL_THREAD_RELEASE_LOCK, loc, rel, &rec);
            ev_leave(s, loc, rel + 1, R_OMP_UNSET_LOCK);
        } else {
            rel = acq + hold;
            ev(s, EARL_THREAD_RELEASE_LOCK, loc, rel, &rec);
            ev_leave(s, loc, rel + 1, R_OMP_CRITICAL);
        }
        *last = rel;
        s->tclock[best] = rel + 2;
        s->treq[best] = rel + 2 + rnd_range(s, hold);
        s->tleft[best]--;
    }
}

/* Add to the expected exclusive time of (path, loc) without counting an instance. */
static void mgmt_time(sim *s, uint32_t path, uint32_t loc, int64_t ticks)
{
    if (sx_add(&s->book, SX_TIME, path, loc, ticks) < 0) {
        fail_internal(s, "out of memory");
        return;
    }
    s->book.cells[(size_t)path * SX_PROP_COUNT + SX_TIME][loc].instances--;
}

/* Runs a parallel region forked by rank r's master at time t0; returns the
 * master's time after the join. */
static uint64_t omp_region(sim *s, uint32_t r, uint64_t t0, unsigned constructs)
{
    uint32_t T = s->T;
    uint32_t master = r * T;
    uint32_t base = sx_top(&s->book, master);
    earl_writer_record fork = { .model = OTF2_PARADIGM_OPENMP, .count = T };
    ev(s, EARL_THREAD_FORK, master, t0, &fork);
    earl_writer_record team = { .ref = s->teams[r] };
    for (uint32_t i = 0; i < T; i++) {
        uint32_t loc = master + i;
        if (i)
            s->book.stacks[loc].base = base;
        s->tclock[i] = t0 + 1;
        ev(s, EARL_THREAD_TEAM_BEGIN, loc, t0 + 1, &team);
        ev_enter(s, loc, t0 + 1, R_OMP_PARALLEL);
    }
    if (constructs & OMP_FOR) {
        for (uint32_t i = 0; i < T; i++) {
            uint32_t loc = master + i;
            ev_enter(s, loc, s->tclock[i], R_OMP_FOR);
            s->tclock[i] += work(s, r, i);
            ev_leave(s, loc, s->tclock[i], R_OMP_FOR);
        }
        team_barrier(s, r, R_OMP_IBARRIER, SX_OMP_BARRIER_IMPLICIT);
    }
    if (constructs & OMP_BARRIER) {
        for (uint32_t i = 0; i < T; i++) {
            uint32_t loc = master + i;
            ev_enter(s, loc, s->tclock[i], R_WORK);
            s->tclock[i] += work(s, r, i) / 2;
            ev_leave(s, loc, s->tclock[i], R_WORK);
        }
        team_barrier(s, r, R_OMP_BARRIER, SX_OMP_BARRIER_EXPLICIT);
    }
    if (constructs & OMP_CRITICAL)
        lock_rounds(s, r, 0);
    if (constructs & OMP_LOCK)
        lock_rounds(s, r, 1);
    if (constructs & (OMP_CRITICAL | OMP_LOCK))
        team_barrier(s, r, R_OMP_IBARRIER, SX_OMP_BARRIER_IMPLICIT);
    uint64_t end = 0;
    for (uint32_t i = 0; i < T; i++)
        if (s->tclock[i] > end)
            end = s->tclock[i];
    for (uint32_t i = 0; i < T; i++) {
        uint32_t loc = master + i;
        ev_leave(s, loc, end, R_OMP_PARALLEL);
        ev(s, EARL_THREAD_TEAM_END, loc, end, &team);
    }
    ev(s, EARL_THREAD_JOIN, master, end + 1, &fork);
    /* thread management as the analysis charges it (Scalasca's rule): every thread
     * of the team, fork to its enter (1 tick) and its leave to the join (1 tick), in
     * the parallel region's time; on the master it was the forking path's own time */
    uint32_t par = sx_child(&s->book, base, R_OMP_PARALLEL);
    if (par != UINT32_MAX) {
        for (uint32_t i = 0; i < T; i++)
            mgmt_time(s, par, master + i, 2);
        if (base)
            mgmt_time(s, base, master, -2);
    }
    return end + 1;
}

/* ------------------------------------------------------------------------ */
/* Scripts                                                                    */
/* ------------------------------------------------------------------------ */

static void push_op(sim *s, uint32_t r, op o)
{
    rank_t *rk = &s->ranks[r];
    if (rk->n_ops == rk->cap_ops && EARL_GROW(rk->ops, rk->cap_ops, rk->n_ops + 1) < 0) {
        s->st = earl_fail(s->err, EARL_ERR_NOMEM, "synth: out of memory");
        return;
    }
    o.msg = -1;
    rk->ops[rk->n_ops++] = o;
}

void op_enter(sim *s, uint32_t r, uint32_t region)
{
    push_op(s, r, (op){ .type = OP_ENTER, .region = (uint8_t)region });
}
void op_leave(sim *s, uint32_t r, uint32_t region)
{
    push_op(s, r, (op){ .type = OP_LEAVE, .region = (uint8_t)region });
}
void op_compute(sim *s, uint32_t r, unsigned omp)
{
    if (s->T > 1 || omp) {
        push_op(s, r, (op){ .type = OP_OMP, .dur = omp ? (int64_t)omp : OMP_FOR });
    } else {
        push_op(s, r, (op){ .type = OP_COMPUTE, .region = R_COMPUTE, .dur = (int64_t)work(s, r, 0) });
    }
}
void op_p2p(sim *s, uint32_t r, int type, int32_t peer, uint32_t tag)
{
    uint32_t region = type == OP_SEND ? R_SEND : type == OP_RECV ? R_RECV
                      : type == OP_ISEND ? R_ISEND : R_IRECV;
    push_op(s, r, (op){ .type = (uint8_t)type, .region = (uint8_t)region, .peer = peer, .tag = tag });
}
void op_waitall(sim *s, uint32_t r)
{
    push_op(s, r, (op){ .type = OP_WAITALL, .region = R_WAITALL });
}
void op_coll(sim *s, uint32_t r, uint32_t region, uint32_t comm)
{
    push_op(s, r, (op){ .type = OP_COLL, .region = (uint8_t)region, .comm = (uint16_t)comm });
}

/* ------------------------------------------------------------------------ */
/* The engine                                                                 */
/* ------------------------------------------------------------------------ */

static void wake(sim *s, uint32_t r)
{
    rank_t *rk = &s->ranks[r];
    if (rk->queued || rk->done)
        return;
    rk->queued = 1;
    s->queue[(s->q_head + s->q_len++) % s->R] = r;
}

static int32_t new_msg(sim *s, uint32_t src, uint32_t dst, uint32_t tag, int sync, uint64_t t)
{
    if (s->n_msgs == s->cap_msgs && EARL_GROW(s->msgs, s->cap_msgs, s->n_msgs + 1) < 0) {
        s->st = earl_fail(s->err, EARL_ERR_NOMEM, "synth: out of memory");
        return -1;
    }
    int32_t id = (int32_t)s->n_msgs++;
    msg *m = &s->msgs[id];
    memset(m, 0, sizeof(*m));
    m->src = (int32_t)src;
    m->dst = (int32_t)dst;
    m->tag = tag;
    m->send_enter = t;
    m->send_ev = sync == 2 ? t : t + 1; /* 2: buffered MPI_Send, no time of its own */
    m->sync = sync == 1;
    m->next = -1;
    m->rcall = -1;
    if (s->dst_tail[dst] < 0)
        s->dst_head[dst] = id;
    else
        s->msgs[s->dst_tail[dst]].next = id;
    s->dst_tail[dst] = id;
    return id;
}

static int32_t find_msg(sim *s, uint32_t dst, int32_t src, uint32_t tag)
{
    for (int32_t i = s->dst_head[dst]; i >= 0; i = s->msgs[i].next) {
        const msg *m = &s->msgs[i];
        if (!m->matched && m->src == src && m->tag == tag)
            return i;
    }
    return -1;
}

static int32_t new_rcall(sim *s, uint32_t loc, uint32_t path, uint64_t enter, uint64_t leave)
{
    if (s->n_rcalls == s->cap_rcalls && EARL_GROW(s->rcalls, s->cap_rcalls, s->n_rcalls + 1) < 0) {
        s->st = earl_fail(s->err, EARL_ERR_NOMEM, "synth: out of memory");
        return -1;
    }
    rcall *c = &s->rcalls[s->n_rcalls];
    c->loc = loc;
    c->path = path;
    c->enter = enter;
    c->leave = leave;
    c->first_msg = (int32_t)s->n_call_msgs;
    c->n = 0;
    c->late = 0;
    c->late_msg = -1;
    return (int32_t)s->n_rcalls++;
}

static void rcall_add(sim *s, int32_t call, int32_t m)
{
    if (s->n_call_msgs == s->cap_call_msgs &&
        EARL_GROW(s->call_msgs, s->cap_call_msgs, s->n_call_msgs + 1) < 0) {
        s->st = earl_fail(s->err, EARL_ERR_NOMEM, "synth: out of memory");
        return;
    }
    s->call_msgs[s->n_call_msgs++] = m;
    rcall *c = &s->rcalls[call];
    c->n++;
    s->msgs[m].rcall = call;
    int64_t late = (int64_t)s->msgs[m].send_enter - (int64_t)c->enter;
    if (late > c->late) {
        c->late = late;
        c->late_msg = m;
    }
}

static const uint8_t coll_family[R_COUNT] = {
    [R_BARRIER] = CF_BARRIER, [R_ALLREDUCE] = CF_NXN, [R_ALLTOALL] = CF_NXN,
    [R_BCAST] = CF_ONE2ALL, [R_SCATTER] = CF_ONE2ALL, [R_REDUCE] = CF_ALL2ONE,
    [R_GATHER] = CF_ALL2ONE, [R_SCAN] = CF_SCAN,
};
static const uint8_t coll_op[R_COUNT] = {
    [R_BARRIER] = OTF2_COLLECTIVE_OP_BARRIER, [R_ALLREDUCE] = OTF2_COLLECTIVE_OP_ALLREDUCE,
    [R_ALLTOALL] = OTF2_COLLECTIVE_OP_ALLTOALL, [R_BCAST] = OTF2_COLLECTIVE_OP_BCAST,
    [R_SCATTER] = OTF2_COLLECTIVE_OP_SCATTER, [R_REDUCE] = OTF2_COLLECTIVE_OP_REDUCE,
    [R_GATHER] = OTF2_COLLECTIVE_OP_GATHER, [R_SCAN] = OTF2_COLLECTIVE_OP_SCAN,
};

/* Every member of comm c has entered its collective (op_enter times). */
static void resolve_coll(sim *s, uint32_t c, uint32_t region)
{
    comm *cm = &s->comms[c];
    uint32_t n = cm->size;
    int fam = coll_family[region];
    uint32_t root = fam == CF_ONE2ALL || fam == CF_ALL2ONE
                        ? (uint32_t)(c ? s->o.sub_root : s->o.root) : EARL_UNDEFINED_REF;
    uint64_t max_enter = 0, cost = 2 + (uint64_t)s->o.latency;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t e = s->ranks[cm->members[i]].op_enter;
        if (e > max_enter)
            max_enter = e;
    }
    uint64_t *leave = s->tenter; /* scratch of size >= ranks */
    uint64_t prefix = 0, min_leave = UINT64_MAX;
    uint64_t root_enter = root != EARL_UNDEFINED_REF ? s->ranks[cm->members[root]].op_enter : 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t e = s->ranks[cm->members[i]].op_enter;
        uint64_t skew = rnd_range(s, 2);
        switch (fam) {
        case CF_BARRIER:
        case CF_NXN:
            leave[i] = max_enter + cost + skew;
            break;
        case CF_ONE2ALL:
            leave[i] = i == root ? e + cost : (e > root_enter ? e : root_enter) + cost + skew;
            break;
        case CF_ALL2ONE:
            leave[i] = i == root ? max_enter + cost : e + cost;
            break;
        default:
            prefix = e > prefix ? e : prefix;
            leave[i] = prefix + cost + skew;
            break;
        }
        if (leave[i] < min_leave)
            min_leave = leave[i];
    }
    uint64_t others_max = 0;
    if (fam == CF_ALL2ONE)
        for (uint32_t i = 0; i < n; i++)
            if (i != root && s->ranks[cm->members[i]].op_enter > others_max)
                others_max = s->ranks[cm->members[i]].op_enter;
    prefix = 0;
    earl_writer_record end = { .op = coll_op[region], .ref = cm->ref, .peer = root,
                               .bytes = s->o.bytes, .bytes2 = s->o.bytes };
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = cm->members[i];
        rank_t *rk = &s->ranks[r];
        uint32_t loc = r * s->T;
        uint64_t e = rk->op_enter;
        uint32_t path = ev_enter(s, loc, e, region);
        ev(s, EARL_MPI_COLLECTIVE_BEGIN, loc, e, NULL);
        ev(s, EARL_MPI_COLLECTIVE_END, loc, leave[i], &end);
        ev_leave(s, loc, leave[i], region);
        switch (fam) {
        case CF_BARRIER:
            add(s, SX_WAIT_BARRIER, path, loc, (int64_t)(max_enter - e));
            add(s, SX_BARRIER_COMPLETION, path, loc, (int64_t)(leave[i] - min_leave));
            break;
        case CF_NXN:
            add(s, SX_WAIT_NXN, path, loc, (int64_t)(max_enter - e));
            add(s, SX_NXN_COMPLETION, path, loc, (int64_t)(leave[i] - min_leave));
            break;
        case CF_ONE2ALL:
            if (i != root && root_enter > e)
                add(s, SX_LATE_BROADCAST, path, loc, (int64_t)(root_enter - e));
            break;
        case CF_ALL2ONE:
            if (i == root && n > 1 && others_max > e)
                add(s, SX_EARLY_REDUCE, path, loc, (int64_t)(others_max - e));
            break;
        default:
            if (i > 0 && prefix > e)
                add(s, SX_EARLY_SCAN, path, loc, (int64_t)(prefix - e));
            prefix = e > prefix ? e : prefix;
            break;
        }
        rk->clock = leave[i];
        rk->pc++;
        rk->entered = 0;
        wake(s, r);
    }
    cm->arrived = 0;
}

/* Try to complete rank r's current (entered) operation: 1 done, 0 blocked,
 * 2 completed by someone else (collective). */
static int try_complete(sim *s, uint32_t r)
{
    rank_t *rk = &s->ranks[r];
    op *o = &rk->ops[rk->pc];
    uint32_t loc = r * s->T;
    uint64_t t = rk->op_enter;
    switch (o->type) {
    case OP_ENTER:
        ev_enter(s, loc, t, o->region);
        return 1;
    case OP_LEAVE:
        ev_leave(s, loc, t, o->region);
        return 1;
    case OP_COMPUTE:
        ev_enter(s, loc, t, o->region);
        rk->clock = t + (uint64_t)o->dur;
        ev_leave(s, loc, rk->clock, o->region);
        return 1;
    case OP_OMP:
        rk->clock = omp_region(s, r, t, (unsigned)o->dur);
        return 1;
    case OP_SEND: {
        msg *m = &s->msgs[o->msg];
        if (m->sync && !m->matched)
            return 0;
        /* buffered: ENTER, MPI_SEND and LEAVE at t (the send never covers a later
         * receive, so no analysis can take it for a late receiver); synchronous:
         * MPI_SEND at t+1, LEAVE when the receive has the data */
        uint64_t leave = m->sync ? t + 2 : t;
        if (m->sync && m->recv_ev > leave)
            leave = m->recv_ev;
        uint32_t path = ev_enter(s, loc, t, R_SEND);
        if (OK(s))
            s->st = earl_writer_mpi_send(s->w, s->locs[loc], m->send_ev, (uint32_t)m->dst,
                                         s->comms[0].ref, m->tag, s->o.bytes, s->err);
        count(s, EARL_MPI_SEND);
        ev_leave(s, loc, leave, R_SEND);
        if (m->sync && m->recv_enter > t && leave >= m->recv_enter)
            add(s, SX_LATE_RECEIVER, path, loc, (int64_t)(m->recv_enter - t));
        rk->clock = leave;
        return 1;
    }
    case OP_RECV: {
        int32_t id = o->peer == ANY_SOURCE ? rk->any_msg : find_msg(s, r, o->peer, o->tag);
        if (id < 0)
            return 0;
        rk->any_msg = -1;
        msg *m = &s->msgs[id];
        m->matched = 1;
        m->recv_enter = t;
        m->recv_ev = t + 1 > m->send_ev + (uint64_t)s->o.latency ? t + 1
                                                                  : m->send_ev + (uint64_t)s->o.latency;
        uint32_t path = ev_enter(s, loc, t, R_RECV);
        if (OK(s))
            s->st = earl_writer_mpi_recv(s->w, s->locs[loc], m->recv_ev, (uint32_t)m->src,
                                         s->comms[0].ref, m->tag, s->o.bytes, s->err);
        count(s, EARL_MPI_RECV);
        ev_leave(s, loc, m->recv_ev + 1, R_RECV);
        int32_t call = new_rcall(s, loc, path, t, m->recv_ev + 1);
        if (call >= 0)
            rcall_add(s, call, id);
        rk->clock = m->recv_ev + 1;
        if (m->sync)
            wake(s, (uint32_t)m->src);
        return 1;
    }
    case OP_ISEND:
    case OP_IRECV: {
        if (rk->n_reqs == rk->cap_reqs && EARL_GROW(rk->reqs, rk->cap_reqs, rk->n_reqs + 1) < 0) {
            s->st = earl_fail(s->err, EARL_ERR_NOMEM, "synth: out of memory");
            return 1;
        }
        req *q = &rk->reqs[rk->n_reqs++];
        q->id = rk->next_req_id++;
        q->recv = o->type == OP_IRECV;
        q->msg = o->type == OP_ISEND ? o->msg : -1;
        q->src = o->peer;
        q->tag = o->tag;
        ev_enter(s, loc, t, o->region);
        if (OK(s)) {
            if (q->recv)
                s->st = earl_writer_mpi_irecv_request(s->w, s->locs[loc], t + 1, q->id, s->err);
            else
                s->st = earl_writer_mpi_isend(s->w, s->locs[loc], t + 1, (uint32_t)o->peer,
                                              s->comms[0].ref, o->tag, s->o.bytes, q->id, s->err);
        }
        count(s, q->recv ? EARL_MPI_IRECV_REQUEST : EARL_MPI_ISEND);
        ev_leave(s, loc, t + 2, o->region);
        rk->clock = t + 2;
        return 1;
    }
    case OP_WAITALL: {
        for (size_t i = 0; i < rk->n_reqs; i++)
            if (rk->reqs[i].recv && find_msg(s, r, rk->reqs[i].src, rk->reqs[i].tag) < 0 &&
                rk->reqs[i].msg < 0)
                return 0;
        uint32_t path = ev_enter(s, loc, t, R_WAITALL);
        uint64_t c = t + 1;
        for (size_t i = 0; i < rk->n_reqs; i++)
            if (!rk->reqs[i].recv) {
                if (OK(s))
                    s->st = earl_writer_mpi_isend_complete(s->w, s->locs[loc], c, rk->reqs[i].id,
                                                           s->err);
                count(s, EARL_MPI_ISEND_COMPLETE);
            }
        int32_t call = new_rcall(s, loc, path, t, 0);
        for (size_t i = 0; i < rk->n_reqs; i++) {
            req *q = &rk->reqs[i];
            if (!q->recv)
                continue;
            int32_t id = find_msg(s, r, q->src, q->tag);
            msg *m = &s->msgs[id];
            m->matched = 1;
            m->recv_enter = t;
            if (m->send_ev + (uint64_t)s->o.latency > c)
                c = m->send_ev + (uint64_t)s->o.latency;
            m->recv_ev = c;
            if (OK(s))
                s->st = earl_writer_mpi_irecv(s->w, s->locs[loc], c, (uint32_t)m->src,
                                              s->comms[0].ref, m->tag, s->o.bytes, q->id, s->err);
            count(s, EARL_MPI_IRECV);
            if (call >= 0)
                rcall_add(s, call, id);
        }
        ev_leave(s, loc, c + 1, R_WAITALL);
        if (call >= 0)
            s->rcalls[call].leave = c + 1;
        rk->clock = c + 1;
        rk->n_reqs = 0;
        return 1;
    }
    case OP_COLL: {
        comm *cm = &s->comms[o->comm];
        if (++cm->arrived == cm->size) {
            resolve_coll(s, o->comm, o->region);
            return 2;
        }
        return 0;
    }
    }
    return 1;
}

static void step(sim *s, uint32_t r)
{
    rank_t *rk = &s->ranks[r];
    while (OK(s)) {
        if (rk->pc >= rk->n_ops) {
            rk->done = 1;
            return;
        }
        op *o = &rk->ops[rk->pc];
        if (!rk->entered) {
            rk->entered = 1;
            rk->op_enter = rk->clock;
            if (o->type == OP_SEND || o->type == OP_ISEND) {
                int sync = o->type != OP_SEND ? 0 : s->o.bytes > s->o.eager_limit ? 1 : 2;
                o->msg = new_msg(s, r, (uint32_t)o->peer, o->tag, sync, rk->clock);
                wake(s, (uint32_t)o->peer);
            }
        } else if (o->type == OP_COLL) {
            return; /* still waiting for the others */
        }
        int done = try_complete(s, r);
        if (done == 0)
            return;
        if (done == 2)
            continue; /* resolve_coll advanced this rank too */
        rk->pc++;
        rk->entered = 0;
    }
}

/* Decide one MPI_ANY_SOURCE receive when nothing else can move. */
static int resolve_any(sim *s)
{
    for (uint32_t r = 0; r < s->R; r++) {
        rank_t *rk = &s->ranks[r];
        if (rk->done || !rk->entered || rk->ops[rk->pc].type != OP_RECV ||
            rk->ops[rk->pc].peer != ANY_SOURCE)
            continue;
        int32_t best = -1;
        for (int32_t i = s->dst_head[r]; i >= 0; i = s->msgs[i].next) {
            const msg *m = &s->msgs[i];
            if (m->matched || m->tag != rk->ops[rk->pc].tag)
                continue;
            if (best < 0 || m->send_ev < s->msgs[best].send_ev ||
                (m->send_ev == s->msgs[best].send_ev && m->src < s->msgs[best].src))
                best = i;
        }
        if (best >= 0) {
            rk->any_msg = best;
            wake(s, r);
            return 1;
        }
    }
    return 0;
}

/* Classify late senders (wrong order) and messages in wrong order. */
static void finish_messages(sim *s)
{
    for (size_t c = 0; c < s->n_rcalls && OK(s); c++) {
        const rcall *rc = &s->rcalls[c];
        const msg *first = &s->msgs[s->call_msgs[rc->first_msg]];
        uint32_t dst = (uint32_t)first->dst;
        if (rc->late > 0) {
            /* wrong order (Scalasca): a later call on this location receives a message
             * sent before the late one; the first such receive tells the source */
            const msg *m = &s->msgs[rc->late_msg];
            const msg *first_wo = NULL;
            for (int32_t i = s->dst_head[dst]; i >= 0; i = s->msgs[i].next) {
                const msg *p = &s->msgs[i];
                if (!p->matched || p->recv_enter <= rc->enter || p->send_ev >= m->send_ev)
                    continue;
                if (!first_wo || p->recv_ev < first_wo->recv_ev ||
                    (p->recv_ev == first_wo->recv_ev && p->recv_enter < first_wo->recv_enter))
                    first_wo = p;
            }
            add(s, SX_LATE_SENDER, rc->path, rc->loc, rc->late);
            if (first_wo && first_wo->src == m->src)
                add(s, SX_LS_WO_SAME, rc->path, rc->loc, rc->late);
            else if (first_wo)
                add(s, SX_LS_WO_DIFF, rc->path, rc->loc, rc->late);
        }
        int wrong = 0;
        for (uint32_t k = 0; k < rc->n && !wrong; k++) {
            const msg *m = &s->msgs[s->call_msgs[rc->first_msg + (int32_t)k]];
            for (int32_t i = s->dst_head[dst]; i >= 0; i = s->msgs[i].next) {
                const msg *p = &s->msgs[i];
                if (p->src == m->src && p->comm == m->comm && p->send_enter < m->send_enter &&
                    p->recv_enter > rc->enter) {
                    wrong = 1;
                    break;
                }
            }
        }
        if (wrong)
            add(s, SX_MSG_WRONG_ORDER, rc->path, rc->loc, (int64_t)(rc->leave - rc->enter));
    }
}

void run_iteration(sim *s)
{
    s->q_head = s->q_len = 0;
    for (uint32_t r = 0; r < s->R; r++) {
        rank_t *rk = &s->ranks[r];
        rk->pc = 0;
        rk->entered = 0;
        rk->done = 0;
        rk->queued = 0;
        rk->any_msg = -1;
        wake(s, r);
    }
    for (;;) {
        while (s->q_len && OK(s)) {
            uint32_t r = s->queue[s->q_head];
            s->q_head = (s->q_head + 1) % s->R;
            s->q_len--;
            s->ranks[r].queued = 0;
            step(s, r);
        }
        if (!OK(s))
            return;
        int all = 1;
        for (uint32_t r = 0; r < s->R; r++)
            all &= s->ranks[r].done;
        if (all)
            break;
        if (!resolve_any(s)) {
            fail_internal(s, "the simulated program deadlocks with these parameters");
            return;
        }
    }
    finish_messages(s);
    for (uint32_t r = 0; r < s->R; r++)
        s->ranks[r].n_ops = 0;
    for (uint32_t r = 0; r < s->R; r++)
        s->dst_head[r] = s->dst_tail[r] = -1;
    s->n_msgs = s->n_rcalls = s->n_call_msgs = 0;
}

