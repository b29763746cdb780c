/*
 * races_internal.h - what the files of the race analysis share (not public):
 *
 *   races_calls.c       which regions are which MPI calls (synchronous sends,
 *                       Waitany & co., probes, communicator creation and release)
 *   races_wildcards.c   which receives asked for any source or any tag, which
 *                       sends are synchronous: per-row flags of the message table
 *   races_replay.c      the matches-before replay: lazy vector and Lamport clocks
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

earl_status races_replay(const earl_trace *trace, earl_states *states,
                         const earl_races_options *opts, uint8_t *flags, races_clocks *out,
                         earl_error *err);
void races_clocks_free(races_clocks *c);

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
