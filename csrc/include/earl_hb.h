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
#include "earl_part.h"
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

/**
 * Stamp events with their vector timestamps, in one replay of the trace in
 * dependency order (on options->threads threads, each for its own range of
 * clock entries, or, with too few locations for that, on two threads, one
 * walking the schedule and one computing the clocks; the stamps do not
 * depend on their number).
 *
 * @param trace    an open trace; it must stay open until earl_hb_free
 * @param states   the trace's EARL layer (matched messages, collective
 *                 instances, forks, locks)
 * @param stamped  the n events to stamp: event ids, ascending, no duplicates
 * @param n        how many
 * @param options  NULL: the defaults (those of a zeroed earl_hb_options: one
 *                 thread per core, no progress)
 * @param out      receives the stamps, which the caller frees with
 *                 earl_hb_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (unsorted or out-of-range ids), or
 *         EARL_ERR_NOMEM (the stamps would not fit)
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_build(const earl_trace *trace, earl_states *states,
                                   const earl_eid *stamped, size_t n,
                                   const earl_hb_options *options, earl_hb **out, earl_error *err);

/**
 * Free the stamps.
 *
 * @param hb  stamps of earl_hb_build, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_hb_free(earl_hb *hb);

/**
 * How many events are stamped.
 *
 * @param hb  the stamps
 * @return the n of earl_hb_build
 * @since 0.1.0
 */
EARL_API size_t earl_hb_count(const earl_hb *hb);

/**
 * The entries of a stamp: one per location of the trace.
 *
 * @param hb  the stamps
 * @return the width
 * @since 0.1.0
 */
EARL_API uint32_t earl_hb_width(const earl_hb *hb);

/**
 * Heap bytes the stamps hold.
 *
 * @param hb  the stamps
 * @return the bytes
 * @since 0.1.0
 */
EARL_API size_t earl_hb_bytes(const earl_hb *hb);

/**
 * How many warnings of a code the replay counted.
 *
 * @param hb    the stamps
 * @param code  a warning code
 * @return the count (0 for a code outside earl_hb_warning_code)
 * @since 0.1.0
 */
EARL_API uint64_t earl_hb_warning_count(const earl_hb *hb, earl_hb_warning_code code);

/**
 * The index of an event among the stamped events (O(log n)).
 *
 * @param hb  the stamps
 * @param e   an event id
 * @return its index, or -1 when e is not stamped
 * @since 0.1.0
 */
EARL_API int64_t earl_hb_index(const earl_hb *hb, earl_eid e);

/**
 * The stamped event at an index.
 *
 * @param hb  the stamps
 * @param k   an index below earl_hb_count (not checked)
 * @return its event id
 * @since 0.1.0
 */
EARL_API earl_eid earl_hb_event(const earl_hb *hb, size_t k);

/**
 * The location of the stamped event at an index.
 *
 * @param hb  the stamps
 * @param k   an index below earl_hb_count (not checked)
 * @return its location
 * @since 0.1.0
 */
EARL_API earl_loc earl_hb_location(const earl_hb *hb, size_t k);

/**
 * The position on its location of the stamped event at an index.
 *
 * @param hb  the stamps
 * @param k   an index below earl_hb_count (not checked)
 * @return its position, from 0
 * @since 0.1.0
 */
EARL_API uint32_t earl_hb_position(const earl_hb *hb, size_t k);

/**
 * The vector timestamp of the stamped event at an index: per location l,
 * how many events of l happened before it or are it.
 *
 * @param hb  the stamps
 * @param k   an index below earl_hb_count (not checked)
 * @return earl_hb_width(hb) entries, owned by the stamps
 * @since 0.1.0
 */
EARL_API const uint32_t *earl_hb_stamp(const earl_hb *hb, size_t k);

/**
 * Whether one stamped event happened before another (a --> b), in constant
 * time.
 *
 * @param hb  the stamps
 * @param ia  the index of a (not checked)
 * @param ib  the index of b (not checked)
 * @return 1 when a --> b, else 0
 * @since 0.1.0
 */
EARL_API int earl_hb_before(const earl_hb *hb, size_t ia, size_t ib);

/**
 * Whether two stamped events are concurrent (a || b): neither a --> b nor
 * b --> a, and a != b.
 *
 * @param hb  the stamps
 * @param ia  the index of a (not checked)
 * @param ib  the index of b (not checked)
 * @return 1 when a || b, else 0
 * @since 0.1.0
 */
EARL_API int earl_hb_concurrent(const earl_hb *hb, size_t ia, size_t ib);

/* ---- stamps computed elsewhere ---------------------------------------------------- */

/**
 * A handle over stamps that the parts of a trace computed and gathered;
 * earl_hb_before and the rest work on it as on stamps of earl_hb_build.
 *
 * @param width     entries per stamp (the locations of the whole trace)
 * @param n         how many events
 * @param events    the n events, ascending, distinct, in any numbering the
 *                  caller keeps (such as the whole trace's ids)
 * @param location  per event, its location (below width)
 * @param position  per event, its position on its location
 * @param stamps    n x width entries, row by row; copied
 * @param out       receives the handle, freed with earl_hb_free; NULL on
 *                  failure
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (unsorted events, a location >= width),
 *         or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_from_stamps(uint32_t width, size_t n, const earl_eid *events,
                                         const earl_loc *location, const uint32_t *position,
                                         const uint32_t *stamps, earl_hb **out,
                                         earl_error *err);

/* ---- the replay of a part of a trace ----------------------------------------------- */

/*
 * A part of a trace (earl_part.h) replays its own locations, and the parts
 * pass each other the clocks of the events that cross: the send of a message
 * whose receive is another part's, the begins of a collective's members.
 * The stamps are those of the whole trace's replay (earl_hb_build) of the
 * same events, for any partition.  The replay is a sequence of steps that
 * any driver can run (MPI processes, or one process analysing the parts one
 * after another); nothing here talks to other parts:
 *
 *   1. earl_hb_part_new: the events to stamp (own events).
 *   2. earl_hb_part_needs: the ghost events whose clocks the own events wait
 *      for; a ghost's index in that list is its *ticket*.  The driver tells
 *      each ghost's owner: (location, position on it, ticket).
 *   3. earl_hb_part_export, at the owner: the own events whose clocks part q
 *      waits for, with q's tickets.
 *   4. Rounds: earl_hb_part_run replays until every own location is done or
 *      waits for a ghost clock not received; earl_hb_part_take gives the
 *      clocks replayed since for each part (records of a ticket and the
 *      clock); the driver delivers them, and each part takes its records in
 *      with earl_hb_part_receive.  The driver repeats while any part sent
 *      something.
 *   5. When no part sent anything and some own locations still wait, the
 *      trace has a cycle (an inconsistent trace).  The whole trace's replay
 *      breaks it at the waiting event that comes first in the total order:
 *      each part names its earliest (earl_hb_part_waiting), the driver picks
 *      the first of them in the whole trace's order (timestamp, location,
 *      position) and its part replays it without the clocks it lacks
 *      (earl_hb_part_force); then rounds go on (4).
 *   6. When no own location of any part waits: earl_hb_part_finish.
 *
 * Every event that the rules allow is replayed before a cycle is broken, in
 * the whole trace's replay and in the parts alike, so the broken cycles and
 * the stamps are the same.  Memory per part: its stamps, a running clock per
 * own location, the clocks in flight, and the ghost clocks it received and
 * not yet used (the width of each clock is the whole trace's locations).
 * Rounds: the longest chain of dependencies that crosses parts (one per
 * iteration of a program that exchanges messages across the part's border).
 *
 * Threads (options->threads) replay column ranges as earl_hb_build does.
 * A part handle is used by one thread at a time.
 *
 * In three steps instead of rounds (docs/parallel.md, "The timestamps:
 * three steps"): a first replay of each part with
 * earl_hb_part_export_crossing and, received before it runs, a symbolic
 * clock for each need (zero but for its location's entry: its rank among
 * that location's needs, from 1) gives each crossing event's symbolic clock;
 * earl_hb_frontier_solve over every part's crossing events, or rounds of
 * earl_hb_frontier_fold on each part's own, their true clocks; a second replay of each part that receives the true clocks of all
 * its needs before it runs never waits.  A cycle shows as a first replay
 * that does not finish or crossing events left unsolved: then the rounds.
 */
typedef struct earl_hb_part earl_hb_part;

/**
 * Start the replay of a part (step 1).
 *
 * @param trace    a part of a trace (earl_reading_finish after ghosts were
 *                 added); it must stay open until earl_hb_part_free
 * @param states   the part's EARL layer
 * @param stamped  the n own events to stamp: ascending, distinct, of
 *                 locations the part holds whole
 * @param n        how many
 * @param options  as for earl_hb_build (NULL: the defaults)
 * @param out      receives the part's replay, freed with earl_hb_part_free
 *                 (also after earl_hb_part_finish); NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (unsorted events, an event of a ghost
 *         location), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_new(const earl_trace *trace, earl_states *states,
                                      const earl_eid *stamped, size_t n,
                                      const earl_hb_options *options, earl_hb_part **out,
                                      earl_error *err);

/**
 * Free a part's replay.
 *
 * @param part  a replay of earl_hb_part_new, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_hb_part_free(earl_hb_part *part);

/**
 * The ghost events whose clocks the own events wait for (step 2); the index
 * of a ghost in the list is its ticket.
 *
 * @param part    the part's replay
 * @param ghosts  receives the list, ascending (owned by the part)
 * @return how many
 * @since 0.1.0
 */
EARL_API size_t earl_hb_part_needs(const earl_hb_part *part, const earl_eid **ghosts);

/**
 * Say that part `to` waits for the clocks of own events (step 3).
 *
 * @param part     the part's replay
 * @param to       the part that waits (0 or more)
 * @param events   n own events
 * @param tickets  per event, the ticket part `to` gave it
 * @param n        how many
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an event that is not own, a negative
 *         part), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_export(earl_hb_part *part, int32_t to, const earl_eid *events,
                                         const uint64_t *tickets, size_t n, earl_error *err);

/**
 * Say that part 0 waits for the clock of every own event another part may
 * wait for, each with its event id as its ticket: the sends whose receive is
 * on another part, the begins of own members of collectives with members on
 * other parts.  The symbolic pass of a replay in three steps (below)
 * takes the clocks of these events before any part asked for them.
 *
 * @param part  the part's replay (of a trace whose processes are whole)
 * @param n     receives how many events were exported
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_export_crossing(earl_hb_part *part, size_t *n,
                                                  earl_error *err);

/**
 * Solve the system over the crossing events of a replay in parts in three
 * exchanges: clocks[x] (width entries per event) becomes the maximum of its
 * base and the solved clocks of the events with an edge into x, in one sweep
 * in topological order.  Events on a cycle (an inconsistent trace) are left
 * unsolved; *solved < n says so, and the replay in rounds must stamp.
 *
 * @param clocks   n x width entries: each crossing event's base, in place
 * @param n        the crossing events
 * @param width    entries per clock
 * @param src      per edge, the event whose clock flows into ...
 * @param dst      ... this event
 * @param n_edges  how many edges
 * @param solved   receives how many events were solved (n without a cycle)
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an edge naming no event), EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_frontier_solve(uint32_t *clocks, size_t n, uint32_t width,
                                            const int64_t *src, const int64_t *dst,
                                            size_t n_edges, size_t *solved, earl_error *err);

/**
 * One step of the solve of the same system by the parts together, each on
 * its own crossing events (docs/parallel.md, "The timestamps: three
 * exchanges"): for each own crossing event x that sees a crossing event y of
 * one location (rows[row_of[x]], y's clock as its owner knows it), next[x]
 * becomes the element-wise maximum of next[x] and that clock.  A clock that
 * x sees and that has seen x or a later event of x's location (its entry
 * there above x's position) means a cycle across parts.
 *
 * @param next     n x width entries: the crossing events' clocks, in place
 * @param n        the own crossing events
 * @param width    entries per clock
 * @param rows     n_rows x width entries: the clocks seen
 * @param n_rows   how many
 * @param row_of   per crossing event, its row, or -1 (it sees none of them)
 * @param location per crossing event, its location (an entry of a clock)
 * @param position per crossing event, its position on its location
 * @param cycle    receives 1 when a cycle showed, else 0
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK or EARL_ERR_INVALID (a row or location out of range)
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_frontier_fold(uint32_t *next, size_t n, uint32_t width,
                                           const uint32_t *rows, size_t n_rows,
                                           const int64_t *row_of, const int32_t *location,
                                           const int64_t *position, int *cycle,
                                           earl_error *err);

/**
 * Replay until every own location is done or waits for a ghost clock not
 * received (step 4).
 *
 * @param part  the part's replay
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_run(earl_hb_part *part, earl_error *err);

/**
 * The clocks replayed since the last take, for each part (step 4): records
 * of a uint64 ticket then width uint32 entries.
 *
 * @param part     the part's replay
 * @param n_parts  the parts (every part of earl_hb_part_export is below it)
 * @param out      receives the records per part; free with earl_outbox_free
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an export to a part >= n_parts), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_take(earl_hb_part *part, size_t n_parts, earl_outbox *out,
                                       earl_error *err);

/**
 * Take in records other parts sent here (step 4).
 *
 * @param part     the part's replay
 * @param records  records as earl_hb_part_take makes them, tickets of this
 *                 part's earl_hb_part_needs
 * @param bytes    their size: a multiple of the record size
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a size that is no multiple of a
 *         record, a ticket this part did not give out), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_receive(earl_hb_part *part, const void *records, size_t bytes,
                                          earl_error *err);

/**
 * Own locations not done.
 *
 * @param part  the part's replay
 * @return how many
 * @since 0.1.0
 */
EARL_API size_t earl_hb_part_unfinished(const earl_hb_part *part);

/**
 * The waiting own event that comes first in the total order (step 5).
 *
 * @param part  the part's replay
 * @return its id in the part, or -1 when no own location waits
 * @since 0.1.0
 */
EARL_API earl_eid earl_hb_part_waiting(earl_hb_part *part);

/**
 * Replay e, the next event of a waiting own location, without the clocks it
 * lacks: a cycle broken, counted as EARL_HBW_CYCLE_BROKEN (step 5).
 *
 * @param part  the part's replay
 * @param e     the event (earl_hb_part_waiting of the part whose event comes
 *              first among all parts)
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (e is not the next event of a waiting
 *         own location), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_force(earl_hb_part *part, earl_eid e, earl_error *err);

/**
 * The stamps of the stamped events (step 6); the part's replay is then done
 * with (free it with earl_hb_part_free).
 *
 * @param part  the part's replay, whose own locations are all done
 * @param out   receives the stamps, freed with earl_hb_free; NULL on failure
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an own location still waits), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_hb_part_finish(earl_hb_part *part, earl_hb **out, earl_error *err);

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

/**
 * Give the communication and synchronisation events their logical steps, in
 * one walk of the trace in dependency order.
 *
 * @param trace    an open trace; it must stay open until earl_logical_free
 * @param states   its EARL layer
 * @param options  progress (its threads are not used: one walk); NULL: the
 *                 defaults (those of a zeroed earl_hb_options)
 * @param out      receives the steps, which the caller frees with
 *                 earl_logical_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_logical_build(const earl_trace *trace, earl_states *states,
                                        const earl_hb_options *options, earl_logical **out,
                                        earl_error *err);

/**
 * Free logical steps.
 *
 * @param lt  steps of earl_logical_build, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_logical_free(earl_logical *lt);

/**
 * How many events are stepped.
 *
 * @param lt  the steps
 * @return the count
 * @since 0.1.0
 */
EARL_API size_t earl_logical_count(const earl_logical *lt);

/**
 * The stepped events.
 *
 * @param lt  the steps
 * @return earl_logical_count event ids, ascending, owned by the steps
 * @since 0.1.0
 */
EARL_API const earl_eid *earl_logical_events(const earl_logical *lt);

/**
 * The step of each stepped event.
 *
 * @param lt  the steps
 * @return earl_logical_count steps, owned by the steps
 * @since 0.1.0
 */
EARL_API const uint32_t *earl_logical_steps(const earl_logical *lt);

/**
 * The lateness of each stepped event: its timestamp minus the earliest one
 * of its step.
 *
 * @param lt  the steps
 * @return earl_logical_count ticks (>= 0), owned by the steps
 * @since 0.1.0
 */
EARL_API const int64_t *earl_logical_lateness(const earl_logical *lt);

/**
 * How many steps there are.
 *
 * @param lt  the steps
 * @return the largest step + 1 (0 without stepped events)
 * @since 0.1.0
 */
EARL_API uint32_t earl_logical_n_steps(const earl_logical *lt);

/**
 * How many cycles of dependencies the walk broke (an inconsistent trace).
 *
 * @param lt  the steps
 * @return the count
 * @since 0.1.0
 */
EARL_API uint64_t earl_logical_cycles_broken(const earl_logical *lt);

/**
 * Heap bytes the steps hold.
 *
 * @param lt  the steps
 * @return the bytes
 * @since 0.1.0
 */
EARL_API size_t earl_logical_bytes(const earl_logical *lt);

#ifdef __cplusplus
}
#endif
#endif /* EARL_HB_H */
