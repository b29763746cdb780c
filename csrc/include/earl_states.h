/*
 * earl_states.h - public API of the EARL layer: system states and pointer
 * attributes (sections 3, 4 and 7 of the EARL/EXPERT paper) for every event
 * of an earl_trace.
 *
 * earl_states_build walks the ordered events once and computes, per event,
 * the pointer attributes compound events navigate by:
 *
 *   enterptr   the ENTER of the innermost region instance enclosing the event
 *              (for a LEAVE its own ENTER; for an ENTER the enclosing ENTER).
 *              A worker thread inherits its master's region stack at the fork:
 *              its outermost region instance inside a parallel region points
 *              to the master's innermost open ENTER at the fork.
 *   leaveptr   the forward twin: an ENTER's LEAVE.
 *   sendptr    a receive (MPI_RECV, MPI_IRECV) -> its send (MPI_SEND,
 *              MPI_ISEND), matched per (source, destination, communicator,
 *              tag) in FIFO order (MPI's non-overtaking rule).
 *   recvptr    the other way: a send -> its receive.
 *   lockptr    a lock event -> the previous event that changed the same lock
 *              (key: process, paradigm, lock id).
 *   forkptr    an event of a thread in a team -> the THREAD_FORK / OMP_FORK
 *              that opened the team.
 *   coll_instance  every MPI_COLLECTIVE_END, and every LEAVE of an OpenMP
 *              barrier region (role BARRIER or IMPLICIT_BARRIER) inside a team,
 *              -> its collective instance; the instances, with their member
 *              events, are the coll(e) of section 4.3.
 *
 * Pointers are event ids (earl_eid), EARL_NONE (-1) when there is none.
 * The pass keeps enterptr for every event, in 32 bits (earl_eid32,
 * EARL_EID32_NONE for none: the view's enterptr), and compact records for
 * the rest; the per-event int64 arrays, enterptr's included, are built from
 * those on first request (earl_states_pointer), so that the pass touches
 * little memory.  Arrays are read through const pointers, as earl_events is.  Inconsistent
 * traces (a receive without its send, a collective with a missing member, ...)
 * give counted warnings with the event concerned; the pointers involved are
 * -1 and everything else is still computed.
 *
 * History queries (stack, queue, coll, locks) answer "what was the state just
 * after event i" without replaying the trace; docs/states.md gives the cost
 * of each.  The handle does not own the trace: close the trace after freeing
 * the states.
 */
#ifndef EARL_STATES_H
#define EARL_STATES_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earl_states earl_states;

typedef struct earl_states_options {
    /* Skip the OpenMP barrier instances (a little faster on hybrid traces). */
    int no_omp_barriers;
    /* Threads for the pass: 0 one per core, 1 none besides the caller.  A
     * trace without threading records is walked by two threads at once, one
     * following the region stacks, one the messages and collectives; the
     * result does not depend on it. */
    int threads;
    /* Build the call tree (earl_calltree.h) on the way: the thread that
     * follows the region stacks walks each stretch of events for the call
     * tree as soon as their enterptr is known, while they are in the cache,
     * instead of a walk of its own afterwards.  Taken with
     * earl_states_take_calltree; the same tree as earl_calltree_build. */
    int calltree;
} earl_states_options;

/* Kinds of collective instances. */
typedef enum earl_coll_type {
    EARL_COLL_MPI = 0,        /* MPI_COLLECTIVE_END events of one communicator */
    EARL_COLL_OMP_BARRIER = 1 /* LEAVEs of a barrier region by the threads of one team */
} earl_coll_type;

/* Warnings of the states pass. */
typedef enum earl_states_warning_code {
    EARL_SW_RECV_WITHOUT_SEND = 0, /* a receive that no send matches */
    EARL_SW_SEND_NOT_RECEIVED,     /* a send that no receive matches */
    EARL_SW_RECV_BEFORE_SEND,      /* a receive ordered before its send (clock skew):
                                      matched anyway, sendptr points forward */
    EARL_SW_MESSAGE_UNRESOLVED,    /* a send/receive whose peer is unknown: not matched */
    EARL_SW_COLL_INCOMPLETE,       /* a collective instance with a missing member */
    EARL_SW_COLL_MISMATCH,         /* members of one instance disagree on op or root */
    EARL_SW_LEAVE_UNMATCHED,       /* a LEAVE with no open ENTER of its location */
    EARL_SW_TEAM_WITHOUT_FORK,     /* a THREAD_TEAM_BEGIN with no open fork */
    EARL_SW_TEAM_END_UNMATCHED,    /* a THREAD_TEAM_END with no open team */
    EARL_SW_LOCK_RELEASE_UNHELD,   /* a release of a lock that is not held */
    EARL_STATES_WARNING_CODE_COUNT
} earl_states_warning_code;

typedef struct earl_states_warning {
    earl_states_warning_code code;
    earl_loc location;
    earl_eid event;
    char detail[96];
} earl_states_warning;

/* At most EARL_WARNING_DETAIL_MAX warnings are kept in detail per code; all
 * are counted. */
typedef struct earl_states_warnings {
    uint64_t counts[EARL_STATES_WARNING_CODE_COUNT];
    size_t n_details;
    const earl_states_warning *details;
} earl_states_warnings;

/**
 * The name of a warning code of the states pass, as the reports show it.
 *
 * @param code  any value (one outside earl_states_warning_code reads
 *              "unknown")
 * @return "recv_without_send", ...; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_states_warning_code_name(earl_states_warning_code code);

/* The pointers.  enterptr is computed by the pass for every event (the
 * view's 32-bit enterptr); the dense int64 arrays (count entries, one per
 * event) are built on first request by earl_states_pointer: enterptr's from
 * the 32-bit one, the others from the pass's compact per-message, per-lock
 * and per-team records, so that the pass itself touches little memory
 * beyond enterptr. */
typedef enum earl_pointer {
    EARL_PTR_ENTER = 0,
    EARL_PTR_LEAVE,
    EARL_PTR_SEND,
    EARL_PTR_RECV,
    EARL_PTR_LOCK,
    EARL_PTR_FORK,
    EARL_POINTER_COUNT
} earl_pointer;

/**
 * The name of a pointer attribute.
 *
 * @param p  any value (one outside earl_pointer reads "unknown")
 * @return "enterptr", "leaveptr", "sendptr", ...; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_pointer_name(earl_pointer p);

/* The collective instances in CSR form: the member events of instance k are
 * coll_members[coll_member_start[k] .. coll_member_start[k + 1]), in the
 * total order.  Instances are numbered in the order of their first member. */
typedef struct earl_states_view {
    size_t count;                    /* events */
    /* always there, 4 bytes an event: EARL_EID32_NONE for none; read an
     * entry with earl_eid_from32 */
    const earl_eid32 *enterptr;
    /* per row of the message table (earl_events.msg): the row of the matched
     * receive (for a send) or send (for a receive), -1 unmatched; sendptr and
     * recvptr of earl_states_ptr read it, a kernel going through the table's
     * rows reads it in their order */
    const int32_t *msg_match;

    size_t n_colls;
    const uint8_t *coll_type;        /* earl_coll_type */
    const uint32_t *coll_comm;       /* MPI: communicator ref; OpenMP: team ref */
    const earl_eid *coll_fork;       /* OpenMP: the fork of the team; MPI: -1 */
    const uint8_t *coll_op;          /* MPI: OTF2_CollectiveOp of the first member */
    const earl_loc *coll_root;       /* MPI: location of the root, -1 */
    const uint32_t *coll_expected;   /* members the instance should have */
    const earl_eid *coll_complete;   /* the member completing it, -1 if incomplete */
    const size_t *coll_member_start; /* n_colls + 1 entries */
    const earl_eid *coll_members;
} earl_states_view;

/**
 * Compute the states of a trace: one forward pass over its events (on two
 * threads when options->threads allows and the trace has no threading
 * records; the result does not depend on it).
 *
 * @param trace    an open trace; it must stay open until earl_states_free
 * @param options  NULL: the defaults (those of a zeroed earl_states_options:
 *                 OpenMP barrier instances included, one thread per core)
 * @param out      receives the states, which the caller frees with
 *                 earl_states_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (no trace or no out), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_states_build(const earl_trace *trace, const earl_states_options *options,
                                       earl_states **out, earl_error *err);

/**
 * The call tree built by the pass (earl_states_options.calltree), handed
 * over once: the caller frees it with earl_calltree_free.
 *
 * @param states  states built with the calltree option
 * @return the call tree, or NULL: not asked for, already taken, or the walk
 *         ran out of memory (build it with earl_calltree_build then)
 * @since 0.1.0
 */
EARL_API struct earl_calltree *earl_states_take_calltree(earl_states *states);

/**
 * Free the states, the dense arrays and indexes built on request included.
 *
 * @param states  states of earl_states_build, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_states_free(earl_states *states);

/**
 * The enterptr of every event and the collective instances.
 *
 * @param states  the states of a trace
 * @return a view owned by the states, valid until earl_states_free
 * @since 0.1.0
 */
EARL_API const earl_states_view *earl_states_get_view(const earl_states *states);

/**
 * The warnings of the states pass: counts per code, the first details of
 * each.
 *
 * @param states  the states of a trace
 * @return a view owned by the states, valid until earl_states_free
 * @since 0.1.0
 */
EARL_API const earl_states_warnings *earl_states_get_warnings(const earl_states *states);

/**
 * Heap bytes the states hold: the pass's arrays, the instances, and the
 * dense arrays and indexes built so far.
 *
 * @param states  the states of a trace
 * @return the bytes
 * @since 0.1.0
 */
EARL_API size_t earl_states_bytes(const earl_states *states);

/**
 * The dense int64 array of a pointer, one entry per event, built on the
 * first request (O(n), thread-safe) and kept until earl_states_free.  For
 * enterptr it is a copy of the view's 32-bit array (8 bytes an event more):
 * code in C reads that one.
 *
 * @param states  the states of a trace
 * @param p       the pointer
 * @param err     receives the status and a message on failure (may be NULL)
 * @return the array, owned by the states; NULL when out of memory
 *         (EARL_ERR_NOMEM) or for a p outside earl_pointer (EARL_ERR_INVALID)
 * @since 0.1.0
 */
EARL_API const earl_eid *earl_states_pointer(earl_states *states, earl_pointer p, earl_error *err);

/**
 * The collective instance of every event, as a dense array built on the
 * first request like earl_states_pointer's.
 *
 * @param states  the states of a trace
 * @param err     receives the status and a message on failure (may be NULL)
 * @return one entry per event (-1: none), owned by the states; NULL when out
 *         of memory
 * @since 0.1.0
 */
EARL_API const int32_t *earl_states_coll_instances(earl_states *states, earl_error *err);

/**
 * One pointer of one event: O(1) from the pass's compact records for
 * enterptr, sendptr, recvptr and lockptr; leaveptr and forkptr read their
 * dense arrays (built on first use).
 *
 * @param states  the states of a trace
 * @param p       the pointer
 * @param i       an event id
 * @return the event it points to; -1 for none, for i or p out of range, and
 *         when a dense array cannot be built (out of memory)
 * @since 0.1.0
 */
EARL_API earl_eid earl_states_ptr(earl_states *states, earl_pointer p, earl_eid i);

/**
 * One pointer of many events, without building the pointer's dense array
 * when it is not built yet: the pass's arrays answer enterptr, sendptr,
 * recvptr and lockptr, and an ENTER's leaveptr is found by walking its
 * location forward to the LEAVE whose enterptr it is (the length of the
 * region instance, short for the calls an analysis asks about); forkptr uses
 * the dense array.
 *
 * @param states  the states of a trace
 * @param p       the pointer
 * @param ids     n event ids (an id out of range gives -1)
 * @param n       how many
 * @param out     receives the n pointers
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (p outside earl_pointer), or
 *         EARL_ERR_NOMEM (forkptr's dense array)
 * @since 0.1.0
 */
EARL_API earl_status earl_states_gather(earl_states *states, earl_pointer p, const earl_eid *ids,
                                        size_t n, earl_eid *out, earl_error *err);

/**
 * The collective instance an event is a member of (O(log members)).
 *
 * @param states  the states of a trace
 * @param i       an event id
 * @return the instance, or -1 when i is a member of none
 * @since 0.1.0
 */
EARL_API int32_t earl_states_instance_of(const earl_states *states, earl_eid i);

/* The region instance location ev->location[i] itself has innermost open
 * just after event i, from the view's enterptr: its ENTER, or -1 when it has
 * none of its own (a worker thread's outermost frames are its master's,
 * inherited at the fork: not the thread's own activity).  Walks over a
 * location's events read what it does between two events through this. */
static inline earl_eid earl_states_own_innermost(const earl_events *ev,
                                                 const earl_eid32 *enterptr, earl_eid i)
{
    earl_eid e;
    if (ev->kind[i] == EARL_ENTER) {
        e = i;
    } else if (ev->kind[i] == EARL_LEAVE) {
        earl_eid own = earl_eid_from32(enterptr[i]); /* the instance this LEAVE closes */
        e = own >= 0 ? earl_eid_from32(enterptr[own]) : EARL_NONE;
    } else {
        e = earl_eid_from32(enterptr[i]);
    }
    if (e >= 0 && ev->location[e] != ev->location[i])
        return EARL_NONE;
    return e;
}

/* ---- history queries -------------------------------------------------------- */

/**
 * The region stack of a location just after an event: the ENTER events of
 * the open region instances, outermost first, the frames inherited from the
 * master included (O(log n + depth)).
 *
 * @param states  the states of a trace
 * @param i       an event id (-1: before the first event, when every stack is
 *                empty)
 * @param loc     a location
 * @param out     receives the stack when cap >= its depth (may be NULL when
 *                cap is 0)
 * @param cap     room in out
 * @return the depth of the stack (0 for a location out of range)
 * @since 0.1.0
 */
EARL_API size_t earl_states_stack(const earl_states *states, earl_eid i, earl_loc loc,
                                  earl_eid *out, size_t cap);

/**
 * The messages in transfer from one location to another just after an
 * event: the sends of src to dst with id <= i whose receive is > i or
 * missing, in send order.  The first call builds an index of the sends per
 * (src, dst) (O(messages), thread-safe); then O(log m + k log m) for k
 * messages in transfer.
 *
 * @param states  the states of a trace
 * @param i       an event id
 * @param src     the sending location
 * @param dst     the receiving location
 * @param out     receives up to cap sends
 * @param cap     room in out
 * @param n       receives how many messages are in transfer (may exceed cap)
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM (the index)
 * @since 0.1.0
 */
EARL_API earl_status earl_states_queue(earl_states *states, earl_eid i, earl_loc src, earl_loc dst,
                                       earl_eid *out, size_t cap, size_t *n, earl_error *err);

/**
 * coll(e_i) of section 4.3 of the EARL paper: the collective instance an
 * event completes, with its members (O(log m) for m collective members in
 * the trace).
 *
 * @param states   the states of a trace
 * @param i        an event id
 * @param members  receives the instance's member events, owned by the states
 *                 (NULL when i completes none); may be NULL
 * @param n        receives how many (0 when i completes none)
 * @return the instance, or -1 when i completes none
 * @since 0.1.0
 */
EARL_API int32_t earl_states_coll(const earl_states *states, earl_eid i, const earl_eid **members,
                                  size_t *n);

/* One lock's state. */
typedef struct earl_lock_state {
    uint32_t process;   /* location group ref */
    uint8_t model;      /* OTF2_Paradigm */
    uint64_t id;        /* lock id */
    earl_eid last;      /* last event <= i that changed it */
    earl_loc holder;    /* location holding it after i, -1 when free */
} earl_lock_state;

/**
 * The locks that some event <= i changed, with their state just after i
 * (O(L log m) for L locks).
 *
 * @param states  the states of a trace
 * @param i       an event id
 * @param out     receives up to cap locks
 * @param cap     room in out
 * @return how many locks there are (may exceed cap)
 * @since 0.1.0
 */
EARL_API size_t earl_states_locks(const earl_states *states, earl_eid i, earl_lock_state *out,
                                  size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* EARL_STATES_H */
