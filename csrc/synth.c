/*
 * synth.c - the workload generator (earl_synth_*): simulates the programs of
 * docs/generator.md (ping-pong, ring, halo, master-worker, collectives,
 * OpenMP, hybrid) in integer ticks, streams their events to earl_writer and
 * derives expected.json from the simulated schedule itself.
 *
 * MPI kinds run iteration by iteration: every rank gets a short script of
 * operations (compute, send, receive, isend, irecv, waitall, collective,
 * OpenMP parallel region) and a worklist engine advances each rank until it
 * blocks on a peer; a blocked rank is woken by the event that can unblock it
 * (a posted message, a matched synchronous send, the last member entering a
 * collective).  An MPI_ANY_SOURCE receive is decided only when nothing else
 * can move, among the messages then posted, by arrival time.  Each
 * operation's events are written when the operation completes, so every
 * location's timestamps grow.  State is one iteration's scripts and messages.
 */
#include "earl_synth.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <otf2/otf2.h>

#include "earl_writer.h"
#include "synth_expect.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* Names and options                                                          */
/* ------------------------------------------------------------------------ */

static const char *const kind_names[EARL_SYNTH_KIND_COUNT] = {
    "ping-pong", "ring", "halo", "master-worker", "collectives", "omp", "hybrid",
};

const char *earl_synth_kind_name(earl_synth_kind kind)
{
    return (unsigned)kind < EARL_SYNTH_KIND_COUNT ? kind_names[kind] : "unknown";
}

int earl_synth_kind_from_name(const char *name)
{
    for (int k = 0; k < EARL_SYNTH_KIND_COUNT; k++)
        if (name && !strcmp(name, kind_names[k]))
            return k;
    if (name && (!strcmp(name, "pingpong") || !strcmp(name, "ping_pong")))
        return EARL_SYNTH_PINGPONG;
    if (name && !strcmp(name, "master_worker"))
        return EARL_SYNTH_MASTER_WORKER;
    return -1;
}

void earl_synth_defaults(earl_synth_kind kind, earl_synth_options *o)
{
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->ranks = kind == EARL_SYNTH_OMP ? 1 : 4;
    o->threads = (kind == EARL_SYNTH_OMP || kind == EARL_SYNTH_HYBRID) ? 4 : 1;
    o->iterations = 10;
    o->seed = 1;
    o->compute = 1000;
    o->imbalance = 20;
    o->latency = 10;
    o->bytes = 1024;
    o->eager_limit = 65536;
    o->delay = 0;
    o->delay_rank = -1;
    o->delay_thread = 0;
    o->delay_every = 1;
    o->root = 0;
    o->sub_root = 0;
    o->split = kind == EARL_SYNTH_COLLECTIVES ? 2 : 1;
    o->hold = 50;
    o->lock_rounds = 2;
    o->any_source = 1;
    o->resolution = 1000000000;
}

static earl_status bad(earl_error *err, const char *fmt, const char *a, int64_t x, int64_t y)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, a, x, y);
    return earl_fail(err, EARL_ERR_INVALID, "synth: %s", msg);
}

static void grid(const earl_synth_options *o, uint32_t *px, uint32_t *py)
{
    *px = o->px;
    *py = o->py;
    if (!*px && !*py) {
        uint32_t best = 1;
        for (uint32_t d = 1; (uint64_t)d * d <= o->ranks; d++)
            if (o->ranks % d == 0)
                best = d;
        *py = best;
        *px = o->ranks / best;
    } else if (!*px) {
        *px = *py ? o->ranks / *py : 0;
    } else if (!*py) {
        *py = o->ranks / *px;
    }
}

earl_status earl_synth_check(const earl_synth_options *o, earl_error *err)
{
    const char *kn = earl_synth_kind_name(o->kind);
    if ((unsigned)o->kind >= EARL_SYNTH_KIND_COUNT)
        return bad(err, "unknown kind %s%" PRId64 "%.0" PRId64, "#", (int64_t)o->kind, 0);
    if (o->ranks == 0)
        return bad(err, "%s: ranks must be at least 1 (got %" PRId64 ")%.0" PRId64, kn, 0, 0);
    if (o->ranks > (1u << 16))
        return bad(err, "%s: at most %" PRId64 " ranks (got %" PRId64 ")", kn, 1 << 16, o->ranks);
    if (o->threads == 0)
        return bad(err, "%s: threads must be at least 1 (got %" PRId64 ")%.0" PRId64, kn, 0, 0);
    if (o->threads > 4096)
        return bad(err, "%s: at most %" PRId64 " threads per rank (got %" PRId64 ")", kn, 4096,
                   o->threads);
    if ((uint64_t)o->ranks * o->threads > (1u << 16))
        return bad(err, "%s: ranks * threads must be at most %" PRId64 " (got %" PRId64 ")", kn,
                   1 << 16, (int64_t)o->ranks * o->threads);
    int p2p = o->kind == EARL_SYNTH_PINGPONG || o->kind == EARL_SYNTH_RING ||
              o->kind == EARL_SYNTH_MASTER_WORKER || o->kind == EARL_SYNTH_HALO ||
              o->kind == EARL_SYNTH_HYBRID;
    if (p2p && o->ranks < 2)
        return bad(err, "%s needs at least 2 ranks (got %" PRId64 ")%.0" PRId64, kn, o->ranks, 0);
    if (o->compute < 0)
        return bad(err, "%s: compute must be >= 0 ticks (got %" PRId64 ")%.0" PRId64, kn,
                   o->compute, 0);
    if (o->latency < 0)
        return bad(err, "%s: a negative latency (%" PRId64 " ticks) would deliver messages before "
                   "they are sent: it breaks causality%.0" PRId64, kn, o->latency, 0);
    if (o->delay < 0)
        return bad(err, "%s: a negative delay (%" PRId64 " ticks) would move a clock backwards: "
                   "it breaks causality%.0" PRId64, kn, o->delay, 0);
    if (o->hold < 0)
        return bad(err, "%s: hold must be >= 0 ticks (got %" PRId64 ")%.0" PRId64, kn, o->hold, 0);
    if (o->delay_rank < -1 || o->delay_rank >= (int64_t)o->ranks)
        return bad(err, "%s: delay_rank %" PRId64 " is not a rank of %" PRId64 " ranks", kn,
                   o->delay_rank, o->ranks);
    if (o->delay > 0 && o->delay_rank < 0)
        return bad(err, "%s: a delay of %" PRId64 " ticks needs delay_rank (the rank to delay, "
                   "0..%" PRId64 ")", kn, o->delay, (int64_t)o->ranks - 1);
    if (o->delay_thread < 0 || o->delay_thread >= (int64_t)o->threads)
        return bad(err, "%s: delay_thread %" PRId64 " is not a thread of %" PRId64
                   " threads per rank", kn, o->delay_thread, o->threads);
    if (o->root < 0 || o->root >= (int64_t)o->ranks)
        return bad(err, "%s: root %" PRId64 " is outside MPI_COMM_WORLD of %" PRId64 " ranks", kn,
                   o->root, o->ranks);
    if (o->kind == EARL_SYNTH_COLLECTIVES) {
        uint32_t split = o->split ? o->split : 1;
        if (split > o->ranks)
            return bad(err, "%s: split %" PRId64 " is more communicators than ranks (%" PRId64 ")",
                       kn, split, o->ranks);
        uint32_t smallest = o->ranks / split; /* color c has ranks c, c+split, ... */
        if (split > 1 && (o->sub_root < 0 || (uint32_t)o->sub_root >= smallest))
            return bad(err, "%s: sub_root %" PRId64 " is outside the smallest split communicator "
                       "(%" PRId64 " ranks)", kn, o->sub_root, smallest);
    }
    if (o->kind == EARL_SYNTH_HALO || o->kind == EARL_SYNTH_HYBRID) {
        uint32_t px, py;
        grid(o, &px, &py);
        if ((uint64_t)px * py != o->ranks)
            return bad(err, "%s: the process grid px * py = %" PRId64 " does not match %" PRId64
                       " ranks", kn, (int64_t)px * py, o->ranks);
    }
    if (o->kind == EARL_SYNTH_PINGPONG && o->wrong_order && o->bytes > o->eager_limit)
        return bad(err, "%s: wrong_order with synchronous sends (bytes %" PRId64 " > eager_limit %"
                   PRId64 ") deadlocks", kn, (int64_t)o->bytes, (int64_t)o->eager_limit);
    return EARL_OK;
}

/* ------------------------------------------------------------------------ */
/* Regions                                                                    */
/* ------------------------------------------------------------------------ */

enum {
    R_MAIN, R_ITERATION, R_COMPUTE, R_PINGPONG, R_RING, R_HALO, R_MASTER, R_WORKER,
    R_COLL_WORLD, R_COLL_SPLIT, R_WORK,
    R_SEND, R_RECV, R_ISEND, R_IRECV, R_WAITALL,
    R_BARRIER, R_ALLREDUCE, R_ALLTOALL, R_BCAST, R_SCATTER, R_REDUCE, R_GATHER, R_SCAN,
    R_OMP_PARALLEL, R_OMP_FOR, R_OMP_IBARRIER, R_OMP_BARRIER, R_OMP_CRITICAL,
    R_OMP_SET_LOCK, R_OMP_UNSET_LOCK,
    R_COUNT
};

static const struct {
    const char *name;
    uint8_t role, paradigm;
} region_defs[R_COUNT] = {
    [R_MAIN] = { "main", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_ITERATION] = { "iteration", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_COMPUTE] = { "compute", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_PINGPONG] = { "pingpong", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_RING] = { "ring_exchange", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_HALO] = { "halo_exchange", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_MASTER] = { "master", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_WORKER] = { "worker", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_COLL_WORLD] = { "collectives_world", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_COLL_SPLIT] = { "collectives_split", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_WORK] = { "imbalanced_work", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER },
    [R_SEND] = { "MPI_Send", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
    [R_RECV] = { "MPI_Recv", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
    [R_ISEND] = { "MPI_Isend", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
    [R_IRECV] = { "MPI_Irecv", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
    [R_WAITALL] = { "MPI_Waitall", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
    [R_BARRIER] = { "MPI_Barrier", OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_MPI },
    [R_ALLREDUCE] = { "MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI },
    [R_ALLTOALL] = { "MPI_Alltoall", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI },
    [R_BCAST] = { "MPI_Bcast", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_PARADIGM_MPI },
    [R_SCATTER] = { "MPI_Scatter", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_PARADIGM_MPI },
    [R_REDUCE] = { "MPI_Reduce", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_PARADIGM_MPI },
    [R_GATHER] = { "MPI_Gather", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_PARADIGM_MPI },
    [R_SCAN] = { "MPI_Scan", OTF2_REGION_ROLE_COLL_OTHER, OTF2_PARADIGM_MPI },
    [R_OMP_PARALLEL] = { "!$omp parallel", OTF2_REGION_ROLE_PARALLEL, OTF2_PARADIGM_OPENMP },
    [R_OMP_FOR] = { "!$omp for", OTF2_REGION_ROLE_LOOP, OTF2_PARADIGM_OPENMP },
    [R_OMP_IBARRIER] = { "!$omp implicit barrier", OTF2_REGION_ROLE_IMPLICIT_BARRIER,
                         OTF2_PARADIGM_OPENMP },
    [R_OMP_BARRIER] = { "!$omp barrier", OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_OPENMP },
    [R_OMP_CRITICAL] = { "!$omp critical", OTF2_REGION_ROLE_CRITICAL, OTF2_PARADIGM_OPENMP },
    [R_OMP_SET_LOCK] = { "omp_set_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_OPENMP },
    [R_OMP_UNSET_LOCK] = { "omp_unset_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_OPENMP },
};

/* Collective operations: region, OTF2 op, family. */
enum { CF_BARRIER, CF_NXN, CF_ONE2ALL, CF_ALL2ONE, CF_SCAN };

/* ------------------------------------------------------------------------ */
/* Simulator state                                                            */
/* ------------------------------------------------------------------------ */

enum { OP_COMPUTE, OP_ENTER, OP_LEAVE, OP_SEND, OP_RECV, OP_ISEND, OP_IRECV, OP_WAITALL,
       OP_COLL, OP_OMP };

#define ANY_SOURCE (-1)

typedef struct op {
    uint8_t type;
    uint8_t region;
    uint16_t comm;    /* communicator index (p2p: 0 = world) */
    int32_t peer;     /* world rank; ANY_SOURCE */
    uint32_t tag;
    int64_t dur;      /* compute ticks; OMP: construct mask */
    int32_t msg;      /* matched / posted message */
} op;

typedef struct msg {
    int32_t src, dst;
    uint32_t tag;
    uint16_t comm;
    uint8_t sync;
    uint8_t matched;
    uint64_t send_enter, send_ev;
    uint64_t recv_enter, recv_ev;
    int32_t next;     /* next message to the same destination (post order) */
    int32_t rcall;    /* receive call that completed it */
} msg;

typedef struct rcall {
    uint32_t loc, path;
    uint64_t enter, leave;
    int32_t first_msg; /* messages: msgs listed in call_msgs[first .. first + n) */
    uint32_t n;
    int64_t late;      /* max(enter(send) - enter(call)) over its messages */
    int32_t late_msg;
} rcall;

typedef struct comm {
    uint32_t ref;
    uint32_t size;
    uint32_t *members;   /* world ranks */
    uint32_t arrived;
} comm;

typedef struct req {
    int32_t msg;       /* isend: posted message; irecv: -1 until matched */
    uint8_t recv;
    int32_t src;
    uint32_t tag;
    uint16_t comm;
    uint64_t id;
} req;

typedef struct rank {
    op *ops;
    size_t n_ops, cap_ops;
    size_t pc;
    uint64_t clock;
    int entered;
    uint64_t op_enter;
    int queued;
    int done;
    req *reqs;
    size_t n_reqs, cap_reqs;
    uint64_t next_req_id;
    int32_t any_msg;   /* ANY_SOURCE receive decided: message */
} rank_t;

typedef struct sim {
    earl_synth_options o;
    earl_writer *w;
    earl_error *err;
    earl_status st;
    sx_book book;
    uint32_t R, T, n_locs;
    uint32_t regions[R_COUNT];
    earl_loc *locs;       /* [rank * T + thread] -> writer loc */
    uint32_t *teams;      /* per rank: thread team ref */
    comm *comms;
    uint32_t n_comms;
    rank_t *ranks;
    uint32_t *queue;
    size_t q_head, q_len;
    msg *msgs;
    size_t n_msgs, cap_msgs;
    int32_t *dst_head, *dst_tail;
    rcall *rcalls;
    size_t n_rcalls, cap_rcalls;
    int32_t *call_msgs;
    size_t n_call_msgs, cap_call_msgs;
    uint64_t rng;
    uint64_t iter;
    uint64_t events;
    uint64_t kind_counts[EARL_KIND_COUNT];
    uint64_t *lock_release;   /* per rank * 2 locks: last release time */
    uint64_t *lock_order;     /* per rank * 2 locks: acquisitions */
    uint32_t px, py;
    uint64_t next_progress;
    /* OpenMP scratch */
    uint64_t *tclock, *tenter, *treq;
    uint32_t *tleft;
} sim;

static uint64_t rnd(sim *s)
{
    uint64_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return s->rng = x;
}

static uint64_t rnd_range(sim *s, uint64_t n) /* 0 .. n */
{
    return n ? rnd(s) % (n + 1) : 0;
}

/* ------------------------------------------------------------------------ */
/* Emitting events (written and accounted)                                    */
/* ------------------------------------------------------------------------ */

#define OK(s) ((s)->st == EARL_OK)

static void fail_internal(sim *s, const char *what)
{
    if (OK(s))
        s->st = earl_fail(s->err, EARL_ERR_INVALID, "synth: %s", what);
}

static inline void count(sim *s, earl_kind k)
{
    s->kind_counts[k]++;
    s->events++;
}

static uint32_t ev_enter(sim *s, uint32_t loc, uint64_t t, uint32_t region)
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

static void ev_leave(sim *s, uint32_t loc, uint64_t t, uint32_t region)
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

enum { OMP_FOR = 1, OMP_BARRIER = 2, OMP_CRITICAL = 4, OMP_LOCK = 8 };

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

static void op_enter(sim *s, uint32_t r, uint32_t region)
{
    push_op(s, r, (op){ .type = OP_ENTER, .region = (uint8_t)region });
}
static void op_leave(sim *s, uint32_t r, uint32_t region)
{
    push_op(s, r, (op){ .type = OP_LEAVE, .region = (uint8_t)region });
}
static void op_compute(sim *s, uint32_t r, unsigned omp)
{
    if (s->T > 1 || omp) {
        push_op(s, r, (op){ .type = OP_OMP, .dur = omp ? (int64_t)omp : OMP_FOR });
    } else {
        push_op(s, r, (op){ .type = OP_COMPUTE, .region = R_COMPUTE, .dur = (int64_t)work(s, r, 0) });
    }
}
static void op_p2p(sim *s, uint32_t r, int type, int32_t peer, uint32_t tag)
{
    uint32_t region = type == OP_SEND ? R_SEND : type == OP_RECV ? R_RECV
                      : type == OP_ISEND ? R_ISEND : R_IRECV;
    push_op(s, r, (op){ .type = (uint8_t)type, .region = (uint8_t)region, .peer = peer, .tag = tag });
}
static void op_waitall(sim *s, uint32_t r)
{
    push_op(s, r, (op){ .type = OP_WAITALL, .region = R_WAITALL });
}
static void op_coll(sim *s, uint32_t r, uint32_t region, uint32_t comm)
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
            const msg *m = &s->msgs[rc->late_msg];
            int same = 0, diff = 0;
            for (int32_t i = s->dst_head[dst]; i >= 0; i = s->msgs[i].next) {
                const msg *p = &s->msgs[i];
                /* in the queue at the receive call's ENTER: its send event comes first in
                 * the total order (time, then location) and a later call receives it */
                int sent = p->send_ev < rc->enter || (p->send_ev == rc->enter && p->src < m->dst);
                if (i == rc->late_msg || !sent || p->recv_enter <= rc->enter)
                    continue;
                if (p->src == m->src)
                    same = 1;
                else
                    diff = 1;
            }
            add(s, SX_LATE_SENDER, rc->path, rc->loc, rc->late);
            if (same)
                add(s, SX_LS_WO_SAME, rc->path, rc->loc, rc->late);
            else if (diff)
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

static void run_iteration(sim *s)
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

/* ------------------------------------------------------------------------ */
/* The kinds: one iteration's scripts                                         */
/* ------------------------------------------------------------------------ */

static void script_pingpong(sim *s)
{
    for (uint32_t r = 0; r < s->R; r++) {
        op_enter(s, r, R_ITERATION);
        op_compute(s, r, 0);
        if (r + 1 == s->R && s->R % 2) {
            op_leave(s, r, R_ITERATION);
            continue;
        }
        int32_t peer = (int32_t)(r ^ 1u);
        op_enter(s, r, R_PINGPONG);
        if (r % 2 == 0) {
            op_p2p(s, r, OP_SEND, peer, 1);
            if (s->o.wrong_order) {
                op_compute(s, r, 0);
                op_p2p(s, r, OP_SEND, peer, 2);
            }
            op_p2p(s, r, OP_RECV, peer, 3);
        } else {
            if (s->o.wrong_order) {
                op_p2p(s, r, OP_RECV, peer, 2);
                op_p2p(s, r, OP_RECV, peer, 1);
            } else {
                op_p2p(s, r, OP_RECV, peer, 1);
            }
            op_p2p(s, r, OP_SEND, peer, 3);
        }
        op_leave(s, r, R_PINGPONG);
        op_leave(s, r, R_ITERATION);
    }
}

static void script_ring(sim *s)
{
    int sync = s->o.bytes > s->o.eager_limit;
    for (uint32_t r = 0; r < s->R; r++) {
        int32_t right = (int32_t)((r + 1) % s->R), left = (int32_t)((r + s->R - 1) % s->R);
        op_enter(s, r, R_ITERATION);
        op_compute(s, r, 0);
        op_enter(s, r, R_RING);
        if (!sync || r % 2 == 0) {
            op_p2p(s, r, OP_SEND, right, 0);
            op_p2p(s, r, OP_RECV, left, 0);
        } else {
            op_p2p(s, r, OP_RECV, left, 0);
            op_p2p(s, r, OP_SEND, right, 0);
        }
        op_leave(s, r, R_RING);
        op_leave(s, r, R_ITERATION);
    }
}

static void script_halo(sim *s, unsigned omp)
{
    uint32_t px = s->px, py = s->py;
    for (uint32_t r = 0; r < s->R; r++) {
        uint32_t x = r % px, y = r / px;
        /* neighbours: east, west, north, south (periodic), tag = direction of travel */
        int32_t nb[4] = {
            (int32_t)(y * px + (x + 1) % px), (int32_t)(y * px + (x + px - 1) % px),
            (int32_t)(((y + 1) % py) * px + x), (int32_t)(((y + py - 1) % py) * px + x),
        };
        op_enter(s, r, R_ITERATION);
        op_compute(s, r, omp);
        op_enter(s, r, R_HALO);
        for (uint32_t d = 0; d < 4; d++)  /* receive what the neighbour sends towards us */
            if (nb[d] != (int32_t)r)
                op_p2p(s, r, OP_IRECV, nb[d], d ^ 1u);
        for (uint32_t d = 0; d < 4; d++)
            if (nb[d] != (int32_t)r)
                op_p2p(s, r, OP_ISEND, nb[d], d);
        op_waitall(s, r);
        op_leave(s, r, R_HALO);
        op_coll(s, r, R_ALLREDUCE, 0);
        op_leave(s, r, R_ITERATION);
    }
}

static void script_master_worker(sim *s)
{
    op_enter(s, 0, R_MASTER);
    for (uint32_t w = 1; w < s->R; w++)
        op_p2p(s, 0, OP_SEND, (int32_t)w, 1);
    op_compute(s, 0, 0); /* the master's own share */
    for (uint32_t w = 1; w < s->R; w++)
        op_p2p(s, 0, OP_RECV, s->o.any_source ? ANY_SOURCE : (int32_t)w, 2);
    op_leave(s, 0, R_MASTER);
    for (uint32_t w = 1; w < s->R; w++) {
        op_enter(s, w, R_WORKER);
        op_p2p(s, w, OP_RECV, 0, 1);
        op_compute(s, w, 0);
        op_p2p(s, w, OP_SEND, 0, 2);
        op_leave(s, w, R_WORKER);
    }
}

static void script_collectives(sim *s)
{
    static const uint32_t world_ops[] = { R_BARRIER, R_ALLREDUCE, R_ALLTOALL, R_BCAST,
                                          R_SCATTER, R_REDUCE, R_GATHER, R_SCAN };
    static const uint32_t split_ops[] = { R_BARRIER, R_ALLREDUCE, R_BCAST, R_REDUCE, R_SCAN };
    for (uint32_t r = 0; r < s->R; r++) {
        op_enter(s, r, R_ITERATION);
        op_enter(s, r, R_COLL_WORLD);
        for (size_t k = 0; k < sizeof(world_ops) / sizeof(*world_ops); k++) {
            op_compute(s, r, 0);
            op_coll(s, r, world_ops[k], 0);
        }
        op_leave(s, r, R_COLL_WORLD);
        if (s->n_comms > 1) {
            op_enter(s, r, R_COLL_SPLIT);
            for (size_t k = 0; k < sizeof(split_ops) / sizeof(*split_ops); k++) {
                op_compute(s, r, 0);
                op_coll(s, r, split_ops[k], 1 + r % (s->n_comms - 1));
            }
            op_leave(s, r, R_COLL_SPLIT);
        }
        op_leave(s, r, R_ITERATION);
    }
}

static void script_omp(sim *s)
{
    for (uint32_t r = 0; r < s->R; r++) {
        op_enter(s, r, R_ITERATION);
        op_compute(s, r, OMP_FOR | OMP_BARRIER | OMP_CRITICAL | OMP_LOCK);
        op_leave(s, r, R_ITERATION);
    }
}

/* ------------------------------------------------------------------------ */
/* Set-up, run, expected.json                                                 */
/* ------------------------------------------------------------------------ */

static earl_status setup(sim *s)
{
    earl_error *err = s->err;
    uint32_t R = s->R, T = s->T;
    uint32_t machine, node;
    earl_status st;
    if ((st = earl_writer_set_creator(s->w, "earlc synth", err)) != EARL_OK)
        return st;
    char desc[256];
    snprintf(desc, sizeof(desc), "earlc synth %s", earl_synth_kind_name(s->o.kind));
    if ((st = earl_writer_set_description(s->w, desc, err)) != EARL_OK)
        return st;
    if ((st = earl_writer_system_node(s->w, "Linux", "machine", EARL_UNDEFINED_REF, &machine,
                                      err)) != EARL_OK ||
        (st = earl_writer_system_node(s->w, "node0", "node", machine, &node, err)) != EARL_OK)
        return st;
    for (uint32_t r = 0; r < R; r++) {
        char name[64];
        uint32_t proc;
        snprintf(name, sizeof(name), "MPI Rank %u", r);
        if ((st = earl_writer_process(s->w, name, node, (int32_t)r, &proc, err)) != EARL_OK)
            return st;
        for (uint32_t t = 0; t < T; t++) {
            if (t)
                snprintf(name, sizeof(name), "OMP thread %u", t);
            else
                snprintf(name, sizeof(name), "Master thread");
            if ((st = earl_writer_location(s->w, proc, name, OTF2_LOCATION_TYPE_CPU_THREAD,
                                           EARL_WRITER_AUTO_ID, &s->locs[r * T + t], err)) != EARL_OK)
                return st;
        }
    }
    if ((st = earl_writer_comm_world(s->w, NULL, &s->comms[0].ref, err)) != EARL_OK)
        return st;
    for (uint32_t c = 1; c < s->n_comms; c++) {
        comm *cm = &s->comms[c];
        char name[64];
        snprintf(name, sizeof(name), "split_%u", c - 1);
        if ((st = earl_writer_comm(s->w, name, s->comms[0].ref, cm->size, cm->members, &cm->ref,
                                   err)) != EARL_OK)
            return st;
    }
    if (T > 1 || s->o.kind == EARL_SYNTH_OMP || s->o.kind == EARL_SYNTH_HYBRID)
        for (uint32_t r = 0; r < R; r++) {
            char name[64];
            snprintf(name, sizeof(name), "OpenMP team of rank %u", r);
            if ((st = earl_writer_thread_team(s->w, name, OTF2_PARADIGM_OPENMP, EARL_UNDEFINED_REF,
                                              T, &s->locs[r * T], &s->teams[r], err)) != EARL_OK)
                return st;
        }
    for (int i = 0; i < R_COUNT; i++) {
        earl_writer_region_def d = { .name = region_defs[i].name, .role = region_defs[i].role,
                                     .paradigm = region_defs[i].paradigm,
                                     .source_file = "synth.c" };
        if ((st = earl_writer_region(s->w, &d, &s->regions[i], err)) != EARL_OK)
            return st;
        s->book.region_names[i] = region_defs[i].name;
    }
    s->book.n_regions = R_COUNT;
    return EARL_OK;
}

static void free_sim(sim *s)
{
    if (s->ranks)
        for (uint32_t r = 0; r < s->R; r++) {
            free(s->ranks[r].ops);
            free(s->ranks[r].reqs);
        }
    if (s->comms)
        for (uint32_t c = 0; c < s->n_comms; c++)
            free(s->comms[c].members);
    free(s->ranks);
    free(s->comms);
    free(s->locs);
    free(s->teams);
    free(s->queue);
    free(s->msgs);
    free(s->dst_head);
    free(s->dst_tail);
    free(s->rcalls);
    free(s->call_msgs);
    free(s->lock_release);
    free(s->lock_order);
    free(s->tclock);
    free(s->tenter);
    free(s->treq);
    free(s->tleft);
    sx_free(&s->book);
}

static int write_expected(sim *s, const char *path, const earl_synth_result *res)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const earl_synth_options *o = &s->o;
    fprintf(f, "{\n  \"schema\": \"earlc-expected/1\",\n  \"generator\": {\n");
    fprintf(f, "    \"kind\": \"%s\",\n    \"options\": {", earl_synth_kind_name(o->kind));
    fprintf(f, "\"ranks\": %u, \"threads\": %u, \"iterations\": %" PRIu64 ", \"events\": %" PRIu64
               ", \"seed\": %" PRIu64 ", \"compute\": %" PRId64 ", \"imbalance\": %u, \"latency\": %"
               PRId64 ", \"bytes\": %" PRIu64 ", \"eager_limit\": %" PRIu64 ", \"delay\": %" PRId64
               ", \"delay_rank\": %d, \"delay_thread\": %d, \"delay_every\": %u, \"root\": %d"
               ", \"sub_root\": %d, \"split\": %u, \"px\": %u, \"py\": %u, \"hold\": %" PRId64
               ", \"lock_rounds\": %u, \"wrong_order\": %s, \"any_source\": %s, \"resolution\": %"
               PRIu64 "}\n  },\n",
            o->ranks, o->threads, o->iterations, o->events, o->seed, o->compute, o->imbalance,
            o->latency, o->bytes, o->eager_limit, o->delay, o->delay_rank, o->delay_thread,
            o->delay_every, o->root, o->sub_root, o->split, s->px, s->py, o->hold, o->lock_rounds,
            o->wrong_order ? "true" : "false", o->any_source ? "true" : "false", o->resolution);
    fprintf(f, "  \"timer_resolution\": %" PRIu64 ",\n  \"ranks\": %u,\n  \"threads_per_rank\": %u,\n"
               "  \"iterations\": %" PRIu64 ",\n  \"duration\": %" PRIu64 ",\n",
            o->resolution, s->R, s->T, res->iterations, res->duration);
    fprintf(f, "  \"locations\": [");
    for (uint32_t l = 0; l < s->n_locs; l++)
        fprintf(f, "%s\n    {\"location\": %u, \"rank\": %u, \"thread\": %u, \"events\": %" PRIu64 "}",
                l ? "," : "", l, l / s->T, l % s->T, earl_writer_event_count(s->w, s->locs[l]));
    fprintf(f, "\n  ],\n  \"events\": {\n    \"total\": %" PRIu64 ",\n    \"by_kind\": {", res->events);
    int first = 1;
    for (int k = 0; k < EARL_KIND_COUNT; k++) {
        if (!res->kind_counts[k])
            continue;
        fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", earl_kind_name((earl_kind)k),
                res->kind_counts[k]);
        first = 0;
    }
    fprintf(f, "}\n  },\n  \"properties\": ");
    sx_write_properties(&s->book, f, s->T);
    fprintf(f, "\n}\n");
    int bad = ferror(f);
    return (fclose(f) != 0 || bad) ? -1 : 0;
}

_Static_assert(EARL_SYNTH_PROPERTY_COUNT == SX_PROP_COUNT, "property lists differ");

const char *earl_synth_property_name(int property)
{
    return property >= 0 && property < SX_PROP_COUNT ? sx_prop_names[property] : NULL;
}

int earl_synth_property_from_name(const char *name)
{
    for (int p = 0; name && p < SX_PROP_COUNT; p++)
        if (!strcmp(name, sx_prop_names[p]))
            return p;
    return -1;
}

static void totals(const sx_book *b, earl_synth_result *res)
{
    for (uint32_t c = 1; c < b->n_paths; c++) {
        for (int p = 0; p < SX_PROP_COUNT; p++) {
            const sx_cell *cells = sx_cells(b, c, p);
            for (uint32_t l = 0; cells && l < b->n_locs; l++) {
                res->property_total[p] += cells[l].severity;
                res->property_instances[p] += cells[l].instances;
            }
        }
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

earl_status earl_synth_run(const earl_synth_options *opt, const char *dir,
                           earl_synth_result *result, earl_error *err)
{
    earl_status st = earl_synth_check(opt, err);
    if (st != EARL_OK)
        return st;
    if (!dir || !*dir)
        return earl_fail(err, EARL_ERR_INVALID, "synth: no output folder given");
    double t_start = now();
    sim s;
    memset(&s, 0, sizeof(s));
    s.o = *opt;
    if (!s.o.resolution)
        s.o.resolution = 1000000000;
    s.err = err;
    s.R = opt->ranks;
    s.T = opt->threads;
    s.n_locs = s.R * s.T;
    s.rng = opt->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!s.rng)
        s.rng = 1;
    grid(opt, &s.px, &s.py);
    if (opt->kind != EARL_SYNTH_HALO && opt->kind != EARL_SYNTH_HYBRID)
        s.px = s.py = 0;
    uint32_t split = opt->kind == EARL_SYNTH_COLLECTIVES && opt->split > 1 ? opt->split : 0;
    s.n_comms = 1 + split;
    s.comms = calloc(s.n_comms, sizeof(comm));
    s.ranks = calloc(s.R, sizeof(rank_t));
    s.locs = calloc(s.n_locs, sizeof(earl_loc));
    s.teams = calloc(s.R, sizeof(uint32_t));
    s.queue = calloc(s.R, sizeof(uint32_t));
    s.dst_head = malloc(s.R * sizeof(int32_t));
    s.dst_tail = malloc(s.R * sizeof(int32_t));
    s.lock_release = calloc((size_t)s.R * 2, sizeof(uint64_t));
    s.lock_order = calloc((size_t)s.R * 2, sizeof(uint64_t));
    size_t scratch = s.R > s.T ? s.R : s.T;
    s.tclock = calloc(scratch, sizeof(uint64_t));
    s.tenter = calloc(scratch, sizeof(uint64_t));
    s.treq = calloc(scratch, sizeof(uint64_t));
    s.tleft = calloc(scratch, sizeof(uint32_t));
    if (!s.comms || !s.ranks || !s.locs || !s.teams || !s.queue || !s.dst_head || !s.dst_tail ||
        !s.lock_release || !s.lock_order || !s.tclock || !s.tenter || !s.treq || !s.tleft ||
        sx_init(&s.book, s.n_locs) < 0) {
        free_sim(&s);
        return earl_fail(err, EARL_ERR_NOMEM, "synth: out of memory");
    }
    for (uint32_t r = 0; r < s.R; r++)
        s.dst_head[r] = s.dst_tail[r] = -1;
    s.comms[0].size = s.R;
    s.comms[0].members = malloc(s.R * sizeof(uint32_t));
    for (uint32_t r = 0; s.comms[0].members && r < s.R; r++)
        s.comms[0].members[r] = r;
    for (uint32_t c = 1; c < s.n_comms; c++) {
        comm *cm = &s.comms[c];
        cm->members = malloc(s.R * sizeof(uint32_t));
        for (uint32_t r = c - 1; cm->members && r < s.R; r += split)
            cm->members[cm->size++] = r;
    }
    for (uint32_t c = 0; c < s.n_comms; c++)
        if (!s.comms[c].members) {
            free_sim(&s);
            return earl_fail(err, EARL_ERR_NOMEM, "synth: out of memory");
        }

    st = earl_writer_open(dir, NULL, s.o.resolution, opt->overwrite ? EARL_WRITER_OVERWRITE : 0,
                          &s.w, err);
    if (st != EARL_OK) {
        free_sim(&s);
        return st;
    }
    if (opt->memory_limit)
        earl_writer_set_memory_limit(s.w, opt->memory_limit);
    s.st = setup(&s);

    for (uint32_t r = 0; r < s.R && OK(&s); r++)
        ev_enter(&s, r * s.T, 0, R_MAIN);
    uint64_t iters = opt->iterations, target = opt->events;
    if (!iters && !target)
        iters = 10;
    s.next_progress = 1u << 18;
    while (OK(&s)) {
        if (target ? s.events >= target : s.iter >= iters)
            break;
        switch (opt->kind) {
        case EARL_SYNTH_PINGPONG: script_pingpong(&s); break;
        case EARL_SYNTH_RING: script_ring(&s); break;
        case EARL_SYNTH_HALO: script_halo(&s, 0); break;
        case EARL_SYNTH_MASTER_WORKER: script_master_worker(&s); break;
        case EARL_SYNTH_COLLECTIVES: script_collectives(&s); break;
        case EARL_SYNTH_OMP: script_omp(&s); break;
        case EARL_SYNTH_HYBRID:
            script_halo(&s, OMP_FOR | OMP_BARRIER | OMP_CRITICAL | OMP_LOCK);
            break;
        default: break;
        }
        if (!OK(&s))
            break;
        run_iteration(&s);
        s.iter++;
        if (opt->progress && s.events >= s.next_progress) {
            s.next_progress = s.events + (1u << 18);
            if (opt->progress(opt->progress_data, target ? s.events : s.iter,
                              target ? target : iters))
                s.st = earl_fail(err, EARL_ERR_INVALID, "synth: interrupted");
        }
    }
    uint64_t end = 0;
    for (uint32_t r = 0; r < s.R; r++)
        if (s.ranks[r].clock > end)
            end = s.ranks[r].clock;
    for (uint32_t r = 0; r < s.R && OK(&s); r++)
        ev_leave(&s, r * s.T, s.ranks[r].clock, R_MAIN);

    earl_synth_result res;
    memset(&res, 0, sizeof(res));
    res.events = s.events;
    res.iterations = s.iter;
    res.duration = end;
    memcpy(res.kind_counts, s.kind_counts, sizeof(res.kind_counts));
    totals(&s.book, &res);
    if (OK(&s)) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/expected.json", earl_writer_tmp_dir(s.w));
        if (write_expected(&s, path, &res) < 0)
            s.st = earl_fail(err, EARL_ERR_IO, "synth: cannot write %s: %s", path, strerror(errno));
    }
    if (OK(&s)) {
        st = earl_writer_close(s.w, err);
    } else {
        earl_writer_abort(s.w);
        st = s.st;
    }
    free_sim(&s);
    res.seconds = now() - t_start;
    if (st == EARL_OK && result)
        *result = res;
    return st;
}
