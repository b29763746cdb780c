/*
 * races_internal.h - what the files of the race analysis share (not public):
 *
 *   races_calls.c       which regions are which MPI calls (synchronous sends,
 *                       Waitany & co., probes, communicator creation and release)
 *   races_wildcards.c   which receives asked for any source or any tag, which
 *                       sends are synchronous: per-row flags of the message table
 *   races_replay.c      the matches-before replay: lazy vector and Lamport clocks,
 *                       resumable for a part of a trace
 *   races_part.c        the steps of the race analysis of a part of a trace
 *   races_matches.c     the potential-match test over those clocks: the result
 *   races_findings.c    other nondeterminism and resource errors
 *   races.c             earl_races_build and the accessors
 */
#ifndef EARL_RACES_INTERNAL_H
#define EARL_RACES_INTERNAL_H

#include "earl_races.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/mem.h"
#include "base/sorted.h"

/* ---- races_calls.c ---------------------------------------------------------- */

typedef enum races_call {
    RACES_CALL_OTHER = 0,
    RACES_CALL_SSEND,      /* MPI_Ssend, MPI_Issend: complete only once received */
    RACES_CALL_WAITANY,
    RACES_CALL_WAITSOME,
    RACES_CALL_TESTANY,
    RACES_CALL_TESTSOME,
    RACES_CALL_PROBE,
    RACES_CALL_COMM_CREATE, /* MPI_Comm_dup, _split, _create, ... */
    RACES_CALL_COMM_FREE    /* MPI_Comm_free, MPI_Comm_disconnect */
} races_call;

/* The call class of every region ref (n_regions entries, malloc'ed), NULL
 * when out of memory. */
uint8_t *races_classify_regions(const earl_trace *trace);

/* ---- races_wildcards.c ------------------------------------------------------ */

/* Flags per row of the message table. */
enum {
    RACES_WILD_SOURCE = 1 << 0, /* receive record: asked for any source */
    RACES_ANY_TAG = 1 << 1,     /* receive record: asked for any tag */
    RACES_SYNC_SEND = 1 << 2,   /* send record: a synchronous send */
    RACES_REPLAYED = 1 << 3,    /* send record: the replay passed it (its clock is saved) */
    RACES_CLOCKED = 1 << 4,     /* wildcard receive record: its clocks were assigned */
    RACES_MATCHED = 1 << 5      /* receive record: the replay matched it */
};

/* flags[row] for every row of the message table: wildcard flags on the
 * receive records (MPI_RECV, MPI_IRECV) from the requested source and tag,
 * RACES_SYNC_SEND on sends made inside a synchronous send call.
 * EARL_ERR_INVALID for requested values below -2. */
earl_status races_mark_rows(const earl_trace *trace, earl_states *states,
                            const earl_races_options *opts, const uint8_t *calls,
                            uint8_t *flags, earl_error *err);

/* ---- races_replay.c ---------------------------------------------------------- */

/* The clocks the race test reads, per row of the message table:
 *   send records:             own[row] = the sender's knowledge of the
 *                             destination's vector entry when sending,
 *                             lamport[row] = its Lamport clock (LLCP's m.LC);
 *   wildcard receive records: own[row] = the receiver's own entry at the
 *                             match, lamport[row] = its Lamport value.
 * own is NULL for EARL_RACES_LAMPORT. */
typedef struct races_clocks {
    uint32_t *own;
    uint32_t *lamport;
    uint64_t cycles_broken;
    size_t peak_bytes; /* the replay's working memory at its largest */
} races_clocks;

/* The replay of a whole trace, cycles broken where they block. */
earl_status races_replay(const earl_trace *trace, earl_states *states,
                         const earl_races_options *opts, uint8_t *flags, races_clocks *out,
                         earl_error *err);
void races_clocks_free(races_clocks *c);

/* The same replay, resumable (races_part.c drives it for a part of a trace):
 * the locations the trace holds whole are replayed; what other parts send
 * and what they wait for are named by keys, a kind and an event: */
enum { RACES_SENT = EARL_RACES_SENT_CLOCK, RACES_ACK = EARL_RACES_ACK_CLOCK,
       RACES_BEGIN = EARL_RACES_BEGIN_CLOCK };
#define RACES_KEY(kind, e) ((int64_t)(e) * 4 + (kind))
#define RACES_KEY_KIND(key) ((int)((key) & 3))
#define RACES_KEY_EVENT(key) ((earl_eid)((key) >> 2))
/*   RACES_SENT  a send: its sender's clock when it sent (for the receiver)
 *   RACES_ACK   a synchronous send: the receiver's clock just after it took it
 *               (for the sender)
 *   RACES_BEGIN a collective member, by its MPI_COLLECTIVE_END: its clock at
 *               its begin (for the other members) */
typedef struct races_run races_run;
earl_status races_run_new(const earl_trace *trace, earl_states *states,
                          const earl_races_options *opts, uint8_t *flags, races_clocks *out,
                          races_run **run, earl_error *err);
void races_run_free(races_run *run);
/* Run every location that can go on until all wait or are done; -1 out of memory. */
int races_run_go(races_run *run);
/* The waiting location whose next event comes first (*location, that event),
 * -1 when none waits; the next event of waiting location l, -1. */
earl_eid races_run_waiting(races_run *run, int32_t *location);
earl_eid races_run_waiting_at(races_run *run, int32_t l);
/* Break a cycle: run waiting location l, letting its first wait go. */
void races_run_force(races_run *run, int32_t l);
size_t races_run_unfinished(const races_run *run);
/* Entries of a clock that crosses parts: the vector entries and the Lamport value. */
uint32_t races_run_clock_entries(const races_run *run);
/* Another part waits for key: its clock is produced when it is replayed. */
int races_run_export(races_run *run, int64_t key);
size_t races_run_produced(const races_run *run, const int64_t **keys, const uint32_t **clocks);
void races_run_clear_produced(races_run *run);
/* Another part's clock for key (races_run_clock_entries entries); -1 out of memory. */
int races_run_receive(races_run *run, int64_t key, const uint32_t *clock);
size_t races_run_peak_bytes(const races_run *run);

/* ---- races.c ------------------------------------------------------------------------ */

/* The options with their defaults, checked (as earl_races_build checks them). */
earl_status races_check(const earl_trace *trace, earl_states *states,
                        const earl_races_options *options, earl_races_options *opts,
                        earl_error *err);

/* The result of a replay: the potential matches of the wildcard receives it
 * clocked, the other findings (of the locations the trace holds whole), the
 * warnings (cycles_broken: the replay's). */
earl_status races_result(const earl_trace *trace, earl_states *states,
                         const earl_races_options *opts, const uint8_t *flags,
                         const uint8_t *calls, const races_clocks *clocks, earl_races **out,
                         earl_error *err);

/* ---- races_matches.c ----------------------------------------------------------- */

typedef struct races_table {
    size_t n_receives, cap_receives;
    earl_eid *recv, *recv_posted, *recv_send;
    uint8_t *recv_any_tag;
    size_t *alt_start;
    size_t n_pairs, cap_pairs;
    earl_eid *alt_send;
    uint8_t *alt_lamport;
    uint64_t lamport_missed;
    uint64_t recv_without_send;
    size_t bytes;
} races_table;

earl_status races_find_matches(const earl_trace *trace, earl_states *states,
                               const earl_races_options *opts, const uint8_t *flags,
                               const races_clocks *clocks, races_table *out, earl_error *err);
void races_table_free(races_table *t);

/* ---- races_findings.c ---------------------------------------------------------- */

typedef struct races_findings {
    size_t n, cap;
    uint8_t *kind;
    earl_loc *location;
    earl_eid *event;
    uint64_t *count;
} races_findings;

earl_status races_find_other(const earl_trace *trace, const uint8_t *calls,
                             races_findings *out, earl_error *err);
void races_findings_free(races_findings *f);

#endif
