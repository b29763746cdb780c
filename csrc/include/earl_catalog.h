/*
 * earl_catalog.h - kernels of the analysis catalog: what the built-in
 * properties need that numpy does slowly or only with several full-size
 * temporaries: the received messages with their calls (shared by Late
 * Sender, Late Receiver and the wrong-order properties), sums per call path
 * and location, the LEAVEs of many calls, searches, running maxima and
 * membership of ids in a set.  The
 * properties stay declared in Python (properties/); they call these through
 * earlc._core.
 *
 * Inputs are plain arrays of event ids into an earl_events (its columns are
 * read, never written); ids out of range are an EARL_ERR_INVALID error.
 * Kernels with a `threads` argument cut their work into parts on that many
 * threads (0: one per core; base/parts.h's earl_parallel), give the same
 * result for any number, and return when all parts are done.
 * Passes over the events go in the total order, which reads the columns
 * front to back.  Nothing here allocates more than a few arrays the size of
 * the input.
 */
#ifndef EARL_CATALOG_H
#define EARL_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"
#include "earl_states.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The received point-to-point messages with the calls around them, the
 * rows of the p2p_messages compound event: one per MPI_RECV or MPI_IRECV
 * record (in the order of the message table) whose send is known and whose
 * receive and send are inside calls. */
typedef struct earl_p2p_messages {
    size_t n;                  /* rows filled */
    earl_eid *recv;            /* the receive record (MPI_RECV, or the MPI_IRECV
                                  in the call completing the request) */
    earl_eid *send;            /* its send (MPI_SEND, MPI_ISEND): sendptr */
    earl_eid *recv_call;       /* the ENTER of the call around recv */
    earl_eid *send_call;       /* the ENTER of the call around send */
    int64_t *recv_call_time;   /* their enter times */
    int64_t *send_call_time;
    earl_eid *completion_call; /* the call completing the send: the send call, or
                                  for an MPI_Isend the call of its
                                  MPI_ISEND_COMPLETE (-1 outside every call) */
    earl_eid *request_call;    /* the call posting the receive: the receive call,
                                  or for an MPI_Irecv the call of its
                                  MPI_IRECV_REQUEST (-1 outside every call) */
} earl_p2p_messages;

/**
 * The most rows earl_p2p_find can fill: the trace's MPI_RECV and MPI_IRECV
 * records.
 *
 * @param trace  an open trace
 * @return the capacity each column of earl_p2p_messages needs
 * @since 0.1.0
 */
EARL_API size_t earl_p2p_capacity(const earl_trace *trace);

/**
 * Find the received point-to-point messages with the calls around them,
 * column by column.
 *
 * @param trace   an open trace
 * @param states  its EARL layer (the pointers)
 * @param out     columns of earl_p2p_capacity entries each, allocated by the
 *                caller; receives the rows and out->n
 * @param threads threads for the search, 0 for one per core; the rows do not
 *                depend on it
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (more receives than counted: states of
 *         another trace), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_p2p_find(const earl_trace *trace, earl_states *states,
                                   earl_p2p_messages *out, int threads, earl_error *err);

/* Per (call path, location) of the send records (MPI_SEND, MPI_ISEND), and
 * of the receive records (MPI_RECV, MPI_IRECV): how many, how many with a
 * payload, and their bytes.  Rows ascend by (cnode, location); records
 * outside every call path (event_cnode -1) are left out. */
typedef struct earl_message_sums {
    size_t n;
    int64_t *cnode, *location, *records, *payload, *bytes;
} earl_message_sums;

/**
 * Sum the sends and the receives per (call path, location), in one pass
 * over the events.
 *
 * @param ev           the events of a trace
 * @param event_cnode  the call path of every event (earl_calltree_view)
 * @param n_locations  the trace's locations
 * @param sends        receives the sums of the sends; its columns are
 *                     allocated here: free them with earl_message_sums_free
 * @param recvs        the same for the receives
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM (then both are empty)
 * @since 0.1.0
 */
EARL_API earl_status earl_message_sums_build(const earl_events *ev, const int32_t *event_cnode,
                                             size_t n_locations, earl_message_sums *sends,
                                             earl_message_sums *recvs, earl_error *err);
/**
 * Free the columns of message sums and empty them.
 *
 * @param sums  sums of earl_message_sums_build, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_message_sums_free(earl_message_sums *sums);

/**
 * Late Sender, wrong order, as Scalasca defines it: for each Late Sender, the
 * location of the sender of the first message received later on the same
 * location, by a later call, and sent before the late message was (smaller
 * timestamp).  "Later" is the order of the receive events on their location;
 * the calls of one location must follow each other (the receives of one call
 * are adjacent in that order), as MPI calls do.  O(n log n) for n messages
 * and Late Senders, whatever the order of the sends.
 *
 * @param ev            the events of a trace
 * @param n_locations   its locations
 * @param n_msgs        the received point-to-point messages
 * @param recv          per message: its receive event
 * @param recv_call     per message: the ENTER of the call around the receive
 * @param send          per message: its send event
 * @param n_late        the Late Senders
 * @param late_call     per Late Sender: the receive call that waits
 * @param late_send     per Late Sender: the send of the message it waits for
 * @param later_source  receives, per Late Sender, that location or -1
 * @param err           receives the status and a message on failure (may be
 *                      NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an event id out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_wrong_order(const earl_events *ev, size_t n_locations, size_t n_msgs,
                                      const earl_eid *recv, const earl_eid *recv_call,
                                      const earl_eid *send, size_t n_late,
                                      const earl_eid *late_call, const earl_eid *late_send,
                                      int64_t *later_source, earl_error *err);

/**
 * Messages in Wrong Order's test: for each received message, whether a
 * message of the same sender and receiver location that was sent earlier is
 * received by a later call (the latest receive call of the pair's
 * earlier-sent messages comes after its own).  Rows grouped by receiving
 * location (as p2p rows are) are taken as they come; others are grouped
 * first.  The receiving locations are cut into parts on threads.
 *
 * @param ev           the events of a trace
 * @param n_locations  its locations
 * @param n            the received messages
 * @param recv         per message: its receive event
 * @param recv_call    per message: the ENTER of the call around the receive
 * @param send         per message: its send event
 * @param threads      threads, 0 for one per core; the answer does not depend
 *                     on it
 * @param wrong        receives, per message, 1 when it is received out of
 *                     order, else 0
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an event id out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_messages_out_of_order(const earl_events *ev, size_t n_locations,
                                                size_t n, const earl_eid *recv,
                                                const earl_eid *recv_call, const earl_eid *send,
                                                int threads, uint8_t *wrong, earl_error *err);

/**
 * The LEAVE of each of many ENTERs (the first later event of its location
 * that is a LEAVE whose enterptr is the ENTER), in one pass over the events
 * from the first id on, which reads the columns front to back instead of
 * walking each call alone: for the calls of many receives or collectives, a
 * fraction of the cost.
 *
 * @param ev        the events of a trace
 * @param enterptr  the EARL layer's, one per event (earl_states_view.enterptr)
 * @param ids       n ENTER events, in any order, repeats allowed (-1 gives -1)
 * @param n         how many
 * @param leave     receives the LEAVEs; -1 when an ENTER is never left or an
 *                  id is no ENTER
 * @param threads   threads for the pass (it ends where every call is left),
 *                  0 for one per core; the result does not depend on it
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an id out of range), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_leaves(const earl_events *ev, const earl_eid32 *enterptr,
                                 const earl_eid *ids, size_t n, earl_eid *leave, int threads,
                                 earl_error *err);

/**
 * earl_leaves, knowing an event of each call before its LEAVE: the LEAVE is
 * looked for in the events right after it first, where short calls end, and
 * earl_leaves finds the rest; when most of the first calls end further away,
 * earl_leaves finds all the others.
 *
 * @param ev        the events of a trace
 * @param enterptr  the EARL layer's, one per event
 * @param ids       n ENTER events (-1 gives -1)
 * @param after     per ENTER, an event of its call, ids[k] <= after[k]: the
 *                  ENTER itself, the MPI_COLLECTIVE_END of a collective call,
 *                  the last receive of a receive call
 * @param n         how many
 * @param leave     receives the LEAVEs, -1 as earl_leaves gives it
 * @param threads   as for earl_leaves
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an id out of range, an after before its
 *         ENTER), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_leaves_after(const earl_events *ev, const earl_eid32 *enterptr,
                                       const earl_eid *ids, const earl_eid *after, size_t n,
                                       earl_eid *leave, int threads, earl_error *err);

/**
 * The MPI_COLLECTIVE_BEGIN of each of many MPI_COLLECTIVE_ENDs: the last
 * BEGIN of its location before it and after the ENTER of its call, in one
 * pass over the events up to the last END (the kinds column, and the
 * locations of the collective records).
 *
 * @param ev           the events of a trace
 * @param n_locations  its locations
 * @param ends         n MPI_COLLECTIVE_END events, ascending
 * @param calls        per END, the ENTER of the call around it
 * @param n            how many
 * @param begin        receives the BEGINs; -1 when there is none or an end is
 *                     no MPI_COLLECTIVE_END
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (ends not ascending, an id out of range),
 *         or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_collective_begins(const earl_events *ev, size_t n_locations,
                                            const earl_eid *ends, const earl_eid *calls, size_t n,
                                            earl_eid *begin, earl_error *err);

/* ---- selections, counted then written in parts ------------------------------ */

/* A selection counted in parts on threads: each part's count, which gives
 * every part its place in the output, and the total the caller allocates
 * for before the parts write. */
#define EARL_SELECTION_PARTS 64
typedef struct earl_selection {
    int parts;
    size_t counts[EARL_SELECTION_PARTS];
    size_t total;
} earl_selection;

/**
 * Count the events whose kind is wanted and, with regions, that are ENTERs
 * of a wanted region, in parts on threads.
 *
 * @param ev         the events of a trace
 * @param kinds      256 entries, one per kind value: nonzero for a wanted kind
 * @param regions    NULL for any region, else n_regions + 1 entries, one per
 *                   region ref and the last for refs beyond: nonzero for a
 *                   wanted region
 * @param n_regions  the region refs regions covers
 * @param threads    threads, 0 for one per core
 * @param sel        receives the parts' counts and the total
 * @since 0.1.0
 */
EARL_API void earl_select_count(const earl_events *ev, const uint8_t *kinds,
                                const uint8_t *regions, size_t n_regions, int threads,
                                earl_selection *sel);
/**
 * Write the ids counted by earl_select_count, ascending, each part at its
 * place.
 *
 * @param ev         the events given to earl_select_count
 * @param kinds      as given to earl_select_count
 * @param regions    as given to earl_select_count
 * @param n_regions  as given to earl_select_count
 * @param sel        its result
 * @param out        receives sel->total ids
 * @since 0.1.0
 */
EARL_API void earl_select_fill(const earl_events *ev, const uint8_t *kinds,
                               const uint8_t *regions, size_t n_regions, earl_selection *sel,
                               earl_eid *out);

/* ---- groups of rows ------------------------------------------------------- */

/* Rows come in groups: runs of equal keys[k]. */

/**
 * The row with the largest value in each run of equal keys (the first of
 * equal values), in run order.
 *
 * @param n       rows
 * @param keys    per row, its key: runs of equal keys are groups
 * @param values  per row, its value
 * @param rows    receives one row per run (room for n)
 * @return the number of runs
 * @since 0.1.0
 */
EARL_API size_t earl_first_of_runs(size_t n, const int64_t *keys, const int64_t *values,
                                   int64_t *rows);

/**
 * Per row, the largest value among the earlier rows of its run of equal
 * keys.
 *
 * @param n       rows
 * @param keys    per row, its key: runs of equal keys are groups
 * @param values  per row, its value
 * @param floor   the answer for the first row of a run
 * @param out     receives one value per row
 * @since 0.1.0
 */
EARL_API void earl_exclusive_running_max(size_t n, const int64_t *keys, const int64_t *values,
                                         int64_t floor, int64_t *out);

/* ---- sets of ids ---------------------------------------------------------- */

/**
 * Whether each value is one of the ids of a set: a bitmap over the set's
 * range when it takes at most 64 bits per value and id (as event ids of one
 * trace do), else a binary search per value.  Deterministic, one thread,
 * no failure (a bitmap that cannot be had is replaced by the search).
 *
 * @param n       values
 * @param values  the values asked about (any int64)
 * @param m       ids in the set
 * @param set     the set's ids, ascending (repeats allowed)
 * @param out     receives per value 1 when it is in the set, else 0
 * @since 0.1.0
 */
EARL_API void earl_ids_in_set(size_t n, const int64_t *values, size_t m, const int64_t *set,
                              uint8_t *out);

#ifdef __cplusplus
}
#endif
#endif /* EARL_CATALOG_H */
