/*
 * synth_internal.h - the simulator state shared by the generator's files:
 * synth.c (options, the kinds' scripts, set-up, run, expected.json) and
 * synth_engine.c (the engine that advances the ranks' scripts and emits their
 * events).  Not part of the public API (earl_synth.h).
 */
#ifndef EARL_SYNTH_INTERNAL_H
#define EARL_SYNTH_INTERNAL_H

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
#include "base/clock.h"
#include "base/errors.h"
#include "base/grow.h"

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

static inline uint64_t rnd(sim *s)
{
    uint64_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return s->rng = x;
}

static inline uint64_t rnd_range(sim *s, uint64_t n) /* 0 .. n */
{
    return n ? rnd(s) % (n + 1) : 0;
}

#define OK(s) ((s)->st == EARL_OK)

/* OpenMP constructs of a parallel region (a mask in op.dur for OP_OMP). */
enum { OMP_FOR = 1, OMP_BARRIER = 2, OMP_CRITICAL = 4, OMP_LOCK = 8 };

/* ---- synth_engine.c --------------------------------------------------------- */

/* Script building: one operation appended to rank r's script. */
void op_enter(sim *s, uint32_t r, uint32_t region);
void op_leave(sim *s, uint32_t r, uint32_t region);
void op_compute(sim *s, uint32_t r, unsigned omp);
void op_p2p(sim *s, uint32_t r, int type, int32_t peer, uint32_t tag);
void op_waitall(sim *s, uint32_t r);
void op_coll(sim *s, uint32_t r, uint32_t region, uint32_t comm);
/* Run one iteration's scripts to completion, writing their events. */
void run_iteration(sim *s);
/* Write ENTER / LEAVE of a region on a location (and account it). */
uint32_t ev_enter(sim *s, uint32_t loc, uint64_t t, uint32_t region);
void ev_leave(sim *s, uint32_t loc, uint64_t t, uint32_t region);
/* Mark the simulation failed with an internal error. */
void fail_internal(sim *s, const char *what);

#endif
