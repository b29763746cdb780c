/*
 * earl_races.h - public API of the message-race analysis (races_*): for
 * every wildcard receive of a trace, the sends that could have matched it
 * on another run of the program.
 *
 * The order is Vo's matches-before (dissertation, chapter 3), not the
 * happened-before of earl_hb.h: a send orders nothing that follows it on
 * its process (unless it is synchronous), a receive orders what follows it
 * only from the moment it is matched, and a non-blocking receive is matched
 * at its completion or earlier, when a later receive that it must precede
 * by MPI's non-overtaking rule completes (the CompleteNow set of rule R4).
 * Collectives order by their shape (all-to-all, one-to-all, all-to-one,
 * scan), as the happened-before rules do.
 *
 * One replay of the trace in dependency order computes lazy vector clocks
 * (LVCP) and lazy Lamport clocks (LLCP) together; per message it keeps only
 * the sender's knowledge of the receiver's clock entry and the Lamport
 * value, per wildcard receive its own entry at its match.  A send s to the
 * process of a wildcard receive r is an alternative of r (Theorem 5.5) when
 *   - communicator and tag fit r (any tag when r asked for any tag),
 *   - s was taken by a receive posted after r, or by none,
 *   - s is late for r: s's knowledge of r's entry <= r's entry, i.e. r did
 *     not match before s was sent,
 *   - and s is the first such send of its sender (MPI's non-overtaking rule
 *     lets r take no later one).
 * The LLCP test (Theorem 5.3) is the same with Lamport values; it finds a
 * subset, and the result says which alternatives LLCP alone would miss.
 *
 * The trace does not say which receives asked for MPI_ANY_SOURCE: the caller
 * passes the requested source (and tag) per row of the message table, or
 * NULL to treat every receive as a wildcard (docs/races.md).
 */
#ifndef EARL_RACES_H
#define EARL_RACES_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"
#include "earl_part.h"
#include "earl_states.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earl_races earl_races;

/* Values of the requested source and tag arrays besides ranks and tags. */
#define EARL_RACES_WILDCARD (-1)     /* MPI_ANY_SOURCE / MPI_ANY_TAG */
#define EARL_RACES_NOT_RECORDED (-2) /* the trace does not say: taken as recorded */

typedef enum earl_races_clocks {
    EARL_RACES_VECTOR = 0,  /* LVCP, every alternative; LLCP computed alongside */
    EARL_RACES_LAMPORT = 1  /* LLCP only: one counter per process, may miss some */
} earl_races_clocks;

typedef struct earl_races_options {
    /* Per row of the trace's message table (earl_events.msg), the source a
     * receive asked for: EARL_RACES_WILDCARD, EARL_RACES_NOT_RECORDED or a
     * rank.  Read at MPI_RECV rows and at the MPI_IRECV_REQUEST row of a
     * non-blocking receive (its MPI_IRECV row when the request row says
     * NOT_RECORDED).  NULL: every receive asked for any source. */
    const int32_t *requested_source;
    /* The same for tags (EARL_RACES_WILDCARD: MPI_ANY_TAG); NULL: as recorded. */
    const int32_t *requested_tag;
    earl_races_clocks clocks;
    earl_progress_fn progress; /* phases "races" (the replay), "matches" */
    void *progress_data;
    /* Per location: it has MPI records (a vector entry of its own).  NULL:
     * those of the trace; a part of a trace needs the whole trace's. */
    const uint8_t *clocked;
} earl_races_options;

/* Warnings of the analysis. */
typedef enum earl_races_warning_code {
    EARL_RACES_W_CYCLE_BROKEN = 0,    /* a dependency of the replay that could not be
                                         honoured (an inconsistent trace) */
    EARL_RACES_W_RECV_WITHOUT_SEND,   /* a wildcard receive with no matched send */
    EARL_RACES_WARNING_CODE_COUNT
} earl_races_warning_code;

/**
 * The name of a warning code of the race analysis, as the reports show it.
 *
 * @param code  any value (one outside earl_races_warning_code reads "unknown")
 * @return "cycle_broken", "recv_without_send"; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_races_warning_code_name(earl_races_warning_code code);

/* Other sources of nondeterminism and the resource errors of Vo's section
 * 2.3.6 that a trace shows, one finding per (kind, location). */
typedef enum earl_races_finding_kind {
    EARL_RACES_WAITANY = 0,        /* MPI_Waitany calls */
    EARL_RACES_WAITSOME,           /* MPI_Waitsome */
    EARL_RACES_TESTANY,            /* MPI_Testany */
    EARL_RACES_TESTSOME,           /* MPI_Testsome */
    EARL_RACES_PROBE,              /* MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe: their
                                      source is not recorded; each may be a wildcard */
    EARL_RACES_REQUEST_NOT_COMPLETED, /* non-blocking send or receive started, never
                                         completed nor cancelled */
    EARL_RACES_COMM_NOT_FREED,     /* more communicator-creating calls than MPI_Comm_free */
    EARL_RACES_FINDING_KIND_COUNT
} earl_races_finding_kind;

/**
 * The name of a kind of finding, as the reports show it.
 *
 * @param kind  any value (one outside earl_races_finding_kind reads "unknown")
 * @return "waitany", "probe", "request_not_completed", ...; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_races_finding_kind_name(earl_races_finding_kind kind);

/* The result.  Receives are the wildcard receives analysed, most
 * alternatives first (ties by event id); the alternatives of receive k are
 * alt_send[alt_start[k] .. alt_start[k + 1]) in event order. */
typedef struct earl_races_view {
    earl_races_clocks clocks;
    size_t n_receives;
    const earl_eid *recv;        /* the receive record: MPI_RECV, or MPI_IRECV (completion) */
    const earl_eid *recv_posted; /* where it was posted: itself, or its MPI_IRECV_REQUEST */
    const earl_eid *recv_send;   /* the send it took, -1 when unmatched */
    const uint8_t *recv_any_tag; /* it asked for any tag */
    const size_t *alt_start;     /* n_receives + 1 entries */
    size_t n_pairs;
    const earl_eid *alt_send;
    const uint8_t *alt_lamport;  /* LLCP finds this alternative too */
    uint64_t lamport_missed;     /* pairs LLCP alone would not report (vector clocks) */

    size_t n_findings;           /* other nondeterminism and resource errors */
    const uint8_t *finding_kind; /* earl_races_finding_kind */
    const earl_loc *finding_location;
    const earl_eid *finding_event; /* first call or request of its kind there (for
                                      COMM_NOT_FREED: the last creating call) */
    const uint64_t *finding_count;
} earl_races_view;

/**
 * Find the message races of a trace: for every wildcard receive, the sends
 * it could have taken on another run.
 *
 * @param trace    an open trace; it must stay open until earl_races_free
 * @param states   its EARL layer (matched messages, collective instances,
 *                 enterptr)
 * @param options  NULL: the defaults (those of a zeroed earl_races_options:
 *                 every receive asked for any source, tags as recorded, vector
 *                 clocks, no progress)
 * @param out      receives the result, which the caller frees with
 *                 earl_races_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (no trace or states, states of another
 *         trace, unknown clocks, a requested source or tag below -2), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_build(const earl_trace *trace, earl_states *states,
                                      const earl_races_options *options, earl_races **out,
                                      earl_error *err);

/**
 * Free a result of the race analysis.
 *
 * @param races  a result of earl_races_build, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_races_free(earl_races *races);

/**
 * The receives with their alternatives, and the findings.
 *
 * @param races  a result
 * @return a view owned by the result, valid until earl_races_free
 * @since 0.1.0
 */
EARL_API const earl_races_view *earl_races_get_view(const earl_races *races);

/**
 * How many warnings of a code the analysis counted.
 *
 * @param races  a result
 * @param code   a warning code
 * @return the count (0 for a code outside earl_races_warning_code)
 * @since 0.1.0
 */
EARL_API uint64_t earl_races_warning_count(const earl_races *races, earl_races_warning_code code);

/**
 * Heap bytes the analysis held at its peak (clocks, tables).
 *
 * @param races  a result
 * @return the bytes
 * @since 0.1.0
 */
EARL_API size_t earl_races_peak_bytes(const earl_races *races);

/**
 * Heap bytes the result holds.
 *
 * @param races  a result
 * @return the bytes
 * @since 0.1.0
 */
EARL_API size_t earl_races_bytes(const earl_races *races);

/* ---- the race analysis of a part of a trace ----------------------------------------- */

/*
 * A part of a trace (earl_part.h) replays its own locations, and the parts
 * pass each other the clocks of what crosses them, as the happened-before
 * replay of earl_hb.h does (its steps, and a driver's, are the same):
 *   1. earl_races_part_new (options as for earl_races_build, with `clocked`
 *      the whole trace's MPI locations);
 *   2. earl_races_part_needs: what the own locations wait for from other
 *      parts, (kind, ghost event) pairs whose index is their ticket:
 *        EARL_RACES_SENT_CLOCK   a send to an own location: its sender's
 *                                clock when it sent (also for the race test
 *                                of a send no own receive took);
 *        EARL_RACES_ACK_CLOCK    an own synchronous send taken by another
 *                                part: the receiver's clock just after;
 *        EARL_RACES_BEGIN_CLOCK  another part's member of a collective with
 *                                an own member, by its MPI_COLLECTIVE_END:
 *                                its clock at its begin;
 *      the driver tells the part that produces each (the owner of the send,
 *      of the receive, of the member), which earl_races_part_export's them;
 *   3. rounds of earl_races_part_run, _take (earl_outbox, a record a ticket
 *      and a clock of the vector entries and the Lamport value), _receive;
 *   4. cycles broken at the waiting event that comes first in the whole
 *      trace (earl_races_part_waiting, _force);
 *   5. earl_races_part_finish: the races of the own wildcard receives and the
 *      findings of the own locations, in this part's event ids; their union
 *      over the parts is the whole trace's analysis.
 * A part handle is used by one thread at a time.
 */
typedef enum earl_races_crossing {
    EARL_RACES_SENT_CLOCK = 0,
    EARL_RACES_ACK_CLOCK = 1,
    EARL_RACES_BEGIN_CLOCK = 2
} earl_races_crossing;

typedef struct earl_races_part earl_races_part;

/**
 * Start the race analysis of a part (step 1).
 *
 * @param trace    a part of a trace (earl_part.h); it must stay open until
 *                 earl_races_part_free
 * @param states   the part's EARL layer
 * @param options  as for earl_races_build, with `clocked` set to the whole
 *                 trace's MPI locations; requested_source, requested_tag and
 *                 clocked are read here only, the progress callback is kept
 * @param out      receives the part's analysis, freed with
 *                 earl_races_part_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_new(const earl_trace *trace, earl_states *states,
                                         const earl_races_options *options,
                                         earl_races_part **out, earl_error *err);

/**
 * Free a part's race analysis.
 *
 * @param part  an analysis of earl_races_part_new, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_races_part_free(earl_races_part *part);

/**
 * What the own locations wait for from other parts (step 2): (kind, event)
 * pairs, the index of a pair being its ticket.
 *
 * @param part    the part's analysis
 * @param kinds   receives the kinds (earl_races_crossing), owned by the part
 * @param events  receives the events the clocks are keyed by (a ghost send,
 *                an own synchronous send, a ghost collective end), owned by
 *                the part
 * @return how many
 * @since 0.1.0
 */
EARL_API size_t earl_races_part_needs(const earl_races_part *part, const uint8_t **kinds,
                                      const earl_eid **events);

/**
 * Say that part `to` waits for clocks this part produces (step 2, at the
 * producer).
 *
 * @param part     the part's analysis
 * @param to       the part that waits (0 or more)
 * @param kinds    n kinds (earl_races_crossing)
 * @param events   n events of this part, as the waiting part named them
 * @param tickets  per pair, the ticket part `to` gave it
 * @param n        how many
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a clock this part does not produce),
 *         or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_export(earl_races_part *part, int32_t to,
                                            const uint8_t *kinds, const earl_eid *events,
                                            const uint64_t *tickets, size_t n, earl_error *err);

/**
 * Export to part 0 every clock another part may wait for, before any part
 * asked (step 2 of a driver that runs the parts one after another,
 * earlc.parts.races_inturn): the sends to other parts' locations, the
 * receives of other parts' sends (only synchronous ones produce a clock),
 * the own members of collectives with members elsewhere.  Each record's
 * ticket is its key: event id x 4 + kind (earl_races_crossing).
 *
 * @param part  the part's analysis
 * @param n     receives how many were exported
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_export_crossing(earl_races_part *part, size_t *n,
                                                     earl_error *err);

/**
 * Replay until every own location is done or waits for a clock not received
 * (step 3).
 *
 * @param part  the part's analysis
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_run(earl_races_part *part, earl_error *err);

/**
 * The clocks produced since the last take, for each part (step 3).
 *
 * @param part     the part's analysis
 * @param n_parts  the parts (every part of earl_races_part_export is below)
 * @param out      receives the records per part; free with earl_outbox_free
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an export to a part >= n_parts), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_take(earl_races_part *part, size_t n_parts,
                                          earl_outbox *out, earl_error *err);

/**
 * Take in records other parts sent here (step 3).
 *
 * @param part     the part's analysis
 * @param records  records as earl_races_part_take makes them, tickets of
 *                 this part's earl_races_part_needs
 * @param bytes    their size: a multiple of the record size
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a size that is no multiple of a
 *         record, a ticket this part did not give out), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_receive(earl_races_part *part, const void *records,
                                             size_t bytes, earl_error *err);

/**
 * Own locations not done.
 *
 * @param part  the part's analysis
 * @return how many
 * @since 0.1.0
 */
EARL_API size_t earl_races_part_unfinished(const earl_races_part *part);

/**
 * The waiting own event that comes first in the total order (step 4).
 *
 * @param part  the part's analysis
 * @return its id in the part, or -1 when no own location waits
 * @since 0.1.0
 */
EARL_API earl_eid earl_races_part_waiting(earl_races_part *part);

/**
 * Replay e, the next event of a waiting own location, without the clocks it
 * lacks: a cycle broken, counted as the warning cycle_broken (step 4).
 *
 * @param part  the part's analysis
 * @param e     the event (earl_races_part_waiting of the part whose event
 *              comes first among all parts)
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (e is not the next event of a waiting
 *         own location), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_force(earl_races_part *part, earl_eid e, earl_error *err);

/**
 * The races of the own wildcard receives and the findings of the own
 * locations, in this part's event ids (step 5); the part's analysis is then
 * done with (free it with earl_races_part_free).
 *
 * @param part  the part's analysis, whose own locations are all done
 * @param out   receives the result, freed with earl_races_free; NULL on
 *              failure
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an own location still waits), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_races_part_finish(earl_races_part *part, earl_races **out,
                                            earl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EARL_RACES_H */
