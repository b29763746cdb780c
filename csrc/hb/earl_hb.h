/*
 * earl_hb.h - public API of the happened-before subsystem (hb_*): vector
 * timestamps (Fidge/Mattern) over the events of an earl_trace, so that
 * "a happened before b" is answered in constant time.
 *
 * The order is the transitive closure of (docs/patterns.md states the rules
 * exactly; they are the contract):
 *   - program order on each location;
 *   - a send (MPI_SEND, MPI_ISEND) before the receive the EARL layer matches
 *     to it (MPI_RECV, or the MPI_IRECV completion of a request);
 *   - per MPI collective instance, between MPI_COLLECTIVE_BEGIN and
 *     MPI_COLLECTIVE_END records, by the operation's shape (all-to-all,
 *     one-to-all, all-to-one, scan, exscan);
 *   - a fork before every event of the team it opens, every event of the team
 *     before its join, an OpenMP team barrier like an MPI barrier (ENTER of
 *     the barrier region as its begin, LEAVE as its end), and a lock's
 *     release before the next acquire of that lock.
 *
 * Memory is events x locations for the events that are stamped, so callers
 * stamp only what their queries need (the events of a pattern's classes).
 * A stamp V of event e holds, per location l, how many events of l happened
 * before e or are e; hence a --> b  <=>  a != b and V_b[loc(a)] > pos(a),
 * which needs the stamp of b and the position of a only.
 *
 * The stamps are computed in one replay of the trace in dependency order
 * (a receive whose timestamp is earlier than its send's still comes after
 * it).  A trace whose dependencies form a cycle (an inconsistent trace) has
 * the cycle broken at the earliest blocked event, with a counted warning.
 */
#ifndef EARL_HB_H
#define EARL_HB_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"
#include "earl_states.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earl_hb earl_hb;

typedef struct earl_hb_options {
    int threads;               /* 0: one per core, 1: the caller only */
    earl_progress_fn progress; /* phase "clocks" */
    void *progress_data;
} earl_hb_options;

/* Warnings of the replay. */
typedef enum earl_hb_warning_code {
    EARL_HBW_CYCLE_BROKEN = 0, /* a dependency that could not be honoured (a cycle) */
    EARL_HB_WARNING_CODE_COUNT
} earl_hb_warning_code;

/* Stamp the n events stamped[0..n) (event ids, sorted ascending, no
 * duplicates) of trace; states are the trace's EARL layer (matched
 * messages, collective instances, forks, locks).  On success *out owns the
 * stamps; on failure *out is NULL and err says why (EARL_ERR_INVALID for
 * unsorted or out-of-range ids, EARL_ERR_NOMEM when the stamps would not
 * fit). */
earl_status earl_hb_build(const earl_trace *trace, earl_states *states, const earl_eid *stamped,
                          size_t n, const earl_hb_options *options, earl_hb **out,
                          earl_error *err);
void earl_hb_free(earl_hb *hb);

size_t earl_hb_count(const earl_hb *hb);      /* stamped events */
uint32_t earl_hb_width(const earl_hb *hb);    /* entries per stamp = locations */
size_t earl_hb_bytes(const earl_hb *hb);      /* heap bytes held */
uint64_t earl_hb_warning_count(const earl_hb *hb, earl_hb_warning_code code);

/* Index of event e among the stamped events, -1 when e is not stamped
 * (O(log n)). */
int64_t earl_hb_index(const earl_hb *hb, earl_eid e);
/* The stamped event at index k, its location and its position there. */
earl_eid earl_hb_event(const earl_hb *hb, size_t k);
earl_loc earl_hb_location(const earl_hb *hb, size_t k);
uint32_t earl_hb_position(const earl_hb *hb, size_t k);
/* The stamp of index k: earl_hb_width(hb) entries. */
const uint32_t *earl_hb_stamp(const earl_hb *hb, size_t k);

/* a --> b for stamped indices ia, ib: constant time, no checks. */
int earl_hb_before(const earl_hb *hb, size_t ia, size_t ib);
/* a || b: neither a --> b nor b --> a, and a != b. */
int earl_hb_concurrent(const earl_hb *hb, size_t ia, size_t ib);

/* ---- logical time (hb_logical.c) ----------------------------------------------
 *
 * Logical steps in the manner of Ravel (Isaacs et al., "Combing the
 * communication hairball", 2014): the communication and synchronisation
 * events get integer steps that respect the happened-before order above, so
 * that a timeline drawn by step shows the structure of the program without
 * the noise of wall-clock time.  The stepped events are sends (MPI_SEND,
 * MPI_ISEND), receives (MPI_RECV, MPI_IRECV), the members of collective
 * instances (MPI_COLLECTIVE_END, the LEAVE of an OpenMP team barrier), forks,
 * joins and lock acquisitions.  A Lamport clock in which only stepped events
 * tick gives their steps:
 *
 *   C(e) = max(C(previous event of e's location), C(d) for every d e depends
 *          on) + (1 if e is stepped, else 0),        C(nothing) = 0,
 *   step(e) = C(e) - 1 for a stepped event,
 *
 * with the dependencies of the happened-before rules, except that every
 * member of a collective instance depends on every member's begin: a receive
 * is one step after its send at least, the members of a collective share one
 * step, and each location's steps increase along it.  The lateness of a
 * stepped event is its timestamp minus the earliest timestamp among the
 * stepped events of its step (all locations): how much later than the first
 * one it got there.
 *
 * The steps come from one walk of the trace in dependency order (the one the
 * vector timestamps use, one thread, 4 bytes an event while it runs); a
 * cycle in the dependencies (an inconsistent trace) is broken as there and
 * counted.  The result does not depend on options->threads.
 */
typedef struct earl_logical earl_logical;

earl_status earl_logical_build(const earl_trace *trace, earl_states *states,
                               const earl_hb_options *options, earl_logical **out,
                               earl_error *err);
void earl_logical_free(earl_logical *lt);

size_t earl_logical_count(const earl_logical *lt);            /* stepped events */
const earl_eid *earl_logical_events(const earl_logical *lt);  /* their ids, ascending */
const uint32_t *earl_logical_steps(const earl_logical *lt);   /* step of each */
const int64_t *earl_logical_lateness(const earl_logical *lt); /* ticks, >= 0 */
uint32_t earl_logical_n_steps(const earl_logical *lt);        /* largest step + 1 */
uint64_t earl_logical_cycles_broken(const earl_logical *lt);
size_t earl_logical_bytes(const earl_logical *lt);

#ifdef __cplusplus
}
#endif
#endif /* EARL_HB_H */
