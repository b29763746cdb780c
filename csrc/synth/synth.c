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
 *
 * This file: names and options, the kinds' scripts, set-up, run and
 * expected.json; the engine that executes the scripts is synth_engine.c.
 */
#include "synth_internal.h"

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
    if (!o)
        return earl_fail(err, EARL_ERR_INVALID,
                         "synth: no options given (start from earl_synth_defaults)");
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

earl_status earl_synth_run(const earl_synth_options *opt, const char *dir,
                           earl_synth_result *result, earl_error *err)
{
    earl_status st = earl_synth_check(opt, err);
    if (st != EARL_OK)
        return st;
    if (!dir || !*dir)
        return earl_fail(err, EARL_ERR_INVALID, "synth: no output folder given");
    double t_start = earl_now_seconds();
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
    res.seconds = earl_now_seconds() - t_start;
    if (st == EARL_OK && result)
        *result = res;
    return st;
}

