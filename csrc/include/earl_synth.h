/*
 * earl_synth.h - the workload generator: simulate an MPI / OpenMP program in
 * integer ticks, write its OTF2 trace with earl_writer and, next to it,
 * expected.json with the exact severity of every catalog property.
 *
 * The simulation is physically consistent (a receive never ends before its
 * send began, a collective never releases a member before the operation
 * allows it, per-location time never goes back) and streams: events go to the
 * writer as soon as they are known, and the simulator keeps only one
 * iteration's state plus small accumulators per (property, call path,
 * location).  The rules are documented in docs/generator.md.
 */
#ifndef EARL_SYNTH_H
#define EARL_SYNTH_H

#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum earl_synth_kind {
    EARL_SYNTH_PINGPONG = 0,
    EARL_SYNTH_RING,
    EARL_SYNTH_HALO,
    EARL_SYNTH_MASTER_WORKER,
    EARL_SYNTH_COLLECTIVES,
    EARL_SYNTH_OMP,
    EARL_SYNTH_HYBRID,
    EARL_SYNTH_KIND_COUNT
} earl_synth_kind;

/**
 * The name of a workload kind.
 *
 * @param kind  any value (one outside earl_synth_kind reads "unknown")
 * @return "ping-pong", "ring", "halo", "master-worker", "collectives", "omp"
 *         or "hybrid"; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_synth_kind_name(earl_synth_kind kind);

/**
 * The workload kind of a name.
 *
 * @param name  a name as earl_synth_kind_name gives it (NULL: none)
 * @return the kind, or -1 when no kind has that name
 * @since 0.1.0
 */
EARL_API int earl_synth_kind_from_name(const char *name);

/* Progress: called every few hundred thousand events with the work done and
 * the total (events when a target is set, else iterations).  A non-zero
 * return stops the run (EARL_ERR_INVALID "interrupted"; nothing is left). */
typedef int (*earl_synth_progress_fn)(void *user_data, uint64_t done, uint64_t total);

typedef struct earl_synth_options {
    earl_synth_kind kind;
    uint32_t ranks;          /* MPI processes (>= 1; >= 2 for message kinds) */
    uint32_t threads;        /* threads per process (>= 1) */
    uint64_t iterations;     /* iterations of the kind's main loop (0: see events) */
    uint64_t events;         /* if non-zero: iterate until at least this many events */
    uint64_t seed;           /* random seed (imbalance, skews) */
    int64_t compute;         /* base ticks of a compute phase (>= 0) */
    uint32_t imbalance;      /* percent: compute phases last compute * (1 + U[0, imbalance%]) */
    int64_t latency;         /* ticks a message needs from send to receive (>= 0) */
    uint64_t bytes;          /* message size */
    uint64_t eager_limit;    /* MPI_Send with bytes <= eager_limit is buffered */
    int64_t delay;           /* injected delay (ticks, >= 0) added to the compute phase of */
    int32_t delay_rank;      /*   this rank (-1: none) */
    int32_t delay_thread;    /*   on this thread (OpenMP loops; 0 = master) */
    uint32_t delay_every;    /*   every delay_every-th iteration (0 or 1: every one) */
    int32_t root;            /* root of rooted collectives on MPI_COMM_WORLD */
    int32_t sub_root;        /* root (local rank) on the split communicators */
    uint32_t split;          /* collectives: also run on split communicators, color = rank % split */
    uint32_t px, py;         /* halo: process grid (0: chosen, px * py = ranks) */
    int64_t hold;            /* OpenMP: ticks a lock / critical section is held */
    uint32_t lock_rounds;    /* OpenMP: critical sections and lock acquisitions per thread */
    int32_t wrong_order;     /* ping-pong: receive the two pings in reverse order */
    int32_t any_source;      /* master-worker: MPI_ANY_SOURCE (1, default) or fixed order (0) */
    uint64_t resolution;     /* timer ticks per second (0: 1e9) */
    uint64_t memory_limit;   /* writer chunk memory (0: writer default) */
    int32_t overwrite;       /* replace an existing archive at DIR */
    earl_synth_progress_fn progress;
    void *progress_data;
} earl_synth_options;

/**
 * The default options of a kind (docs/generator.md): every field set, with
 * the kind's own choices.  The options say what to generate, so unlike the
 * options of the other subsystems they cannot be NULL: start from these.
 *
 * @param kind  the workload kind
 * @param o     receives the options
 * @since 0.1.0
 */
EARL_API void earl_synth_defaults(earl_synth_kind kind, earl_synth_options *o);

/**
 * Check options without writing anything.
 *
 * @param o    the options
 * @param err  receives the status and a message naming the parameter on
 *             failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_INVALID (NULL options, an impossible value)
 * @since 0.1.0
 */
EARL_API earl_status earl_synth_check(const earl_synth_options *o, earl_error *err);

/* The properties of expected.json, in its order: time, visits, late_sender,
 * late_sender_wrong_order_same_source, late_sender_wrong_order_different_source,
 * late_receiver, messages_in_wrong_order, wait_at_barrier, barrier_completion,
 * wait_at_nxn, nxn_completion, late_broadcast, early_reduce, early_scan,
 * omp_barrier_wait_explicit, omp_barrier_wait_implicit, lock_contention,
 * lock_contention_critical, lock_contention_api. */
#define EARL_SYNTH_PROPERTY_COUNT 19
/**
 * The name of a property of expected.json.
 *
 * @param property  an index in the order above
 * @return "time", "late_sender", ...; a static string, NULL outside
 *         0..EARL_SYNTH_PROPERTY_COUNT-1
 * @since 0.1.0
 */
EARL_API const char *earl_synth_property_name(int property);

/**
 * The index of a property of expected.json.
 *
 * @param name  a name as earl_synth_property_name gives it
 * @return the index, or -1 when no property has that name
 * @since 0.1.0
 */
EARL_API int earl_synth_property_from_name(const char *name);

typedef struct earl_synth_result {
    uint64_t events;          /* events written */
    uint64_t iterations;      /* iterations simulated */
    uint64_t duration;        /* last timestamp */
    uint64_t kind_counts[EARL_KIND_COUNT];
    double seconds;           /* wall time, close included */
    /* expected.json's totals (all call paths and locations) and instances */
    int64_t property_total[EARL_SYNTH_PROPERTY_COUNT];
    uint64_t property_instances[EARL_SYNTH_PROPERTY_COUNT];
} earl_synth_result;

/**
 * Simulate a workload and write its trace DIR/traces.otf2 (with traces.def
 * and traces/) and DIR/expected.json.  The archive is built in
 * DIR.tmp-XXXXXX and appears at DIR only when complete.
 *
 * @param o       the options (earl_synth_defaults, then changed); required
 * @param dir     the archive folder to create (replaced only with
 *                o->overwrite)
 * @param result  receives what was written: events, iterations, duration,
 *                counts per kind, the totals of expected.json (may be NULL)
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_INVALID (options that earl_synth_check refuses, no
 *         dir, an existing archive without o->overwrite, an interrupt by
 *         o->progress), EARL_ERR_IO, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_synth_run(const earl_synth_options *o, const char *dir,
                                    earl_synth_result *result, earl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EARL_SYNTH_H */
