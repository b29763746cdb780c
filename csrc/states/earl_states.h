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

const char *earl_states_warning_code_name(earl_states_warning_code code);

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

const char *earl_pointer_name(earl_pointer p); /* "enterptr", ... */

/* The collective instances in CSR form: the member events of instance k are
 * coll_members[coll_member_start[k] .. coll_member_start[k + 1]), in the
 * total order.  Instances are numbered in the order of their first member. */
typedef struct earl_states_view {
    size_t count;                    /* events */
    /* always there, 4 bytes an event: EARL_EID32_NONE for none; read an
     * entry with earl_eid_from32 */
    const earl_eid32 *enterptr;

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

/* Compute the states of trace (options may be NULL).  On success *out owns
 * them; on failure *out is NULL and err says why. */
earl_status earl_states_build(const earl_trace *trace, const earl_states_options *options,
                              earl_states **out, earl_error *err);
void earl_states_free(earl_states *states);

const earl_states_view *earl_states_get_view(const earl_states *states);
const earl_states_warnings *earl_states_get_warnings(const earl_states *states);
/* Heap bytes held by the states (arrays, instances, indexes built so far). */
size_t earl_states_bytes(const earl_states *states);

/* The dense int64 array of pointer p, one entry per event, built on the
 * first request (O(n), thread-safe) and kept until earl_states_free; NULL
 * with err filled when out of memory.  For enterptr it is a copy of the
 * view's 32-bit array (8 bytes an event more): code in C reads that one. */
const earl_eid *earl_states_pointer(earl_states *states, earl_pointer p, earl_error *err);
/* The dense collective instance of every event (-1: none), likewise. */
const int32_t *earl_states_coll_instances(earl_states *states, earl_error *err);
/* Pointer p of event i (-1 when out of range or out of memory): O(1) from
 * the compact records for enterptr, sendptr, recvptr and lockptr; leaveptr
 * and forkptr read their dense arrays (built on first use). */
earl_eid earl_states_ptr(earl_states *states, earl_pointer p, earl_eid i);

/* Pointer p of the n events ids[k] into out[k], without building p's dense
 * array when it is not built yet: the pass's arrays answer enterptr,
 * sendptr, recvptr and lockptr, and an ENTER's leaveptr is found by walking its
 * location forward to the LEAVE whose enterptr it is (the length of the
 * region instance, short for the calls an analysis asks about).  forkptr
 * uses the dense array.  Ids out of range give -1. */
earl_status earl_states_gather(earl_states *states, earl_pointer p, const earl_eid *ids,
                               size_t n, earl_eid *out, earl_error *err);
/* The collective instance of event i, -1 (O(log members)). */
int32_t earl_states_instance_of(const earl_states *states, earl_eid i);

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

/* The region stack of location loc just after event i (i = -1: before the
 * first event): the ENTER events of the open region instances, outermost
 * first, inherited frames of the master included.  Returns the depth; out
 * is filled when cap >= depth.  O(log n + depth). */
size_t earl_states_stack(const earl_states *states, earl_eid i, earl_loc loc, earl_eid *out,
                         size_t cap);

/* The messages in transfer from src to dst just after event i: the sends
 * of src to dst with id <= i whose receive is > i or missing, in send
 * order.  *n receives their number; out is filled up to cap.  The first call
 * builds an index of the sends per (src, dst) (O(messages), thread-safe).
 * O(log m + k log m) for k messages in transfer. */
earl_status earl_states_queue(earl_states *states, earl_eid i, earl_loc src, earl_loc dst,
                              earl_eid *out, size_t cap, size_t *n, earl_error *err);

/* coll(e_i) of section 4.3: when i completes a collective instance, its member
 * events (*members, *n) and the instance id; otherwise -1 and *n = 0.
 * O(log m) for m collective members in the trace. */
int32_t earl_states_coll(const earl_states *states, earl_eid i, const earl_eid **members,
                         size_t *n);

/* One lock's state. */
typedef struct earl_lock_state {
    uint32_t process;   /* location group ref */
    uint8_t model;      /* OTF2_Paradigm */
    uint64_t id;        /* lock id */
    earl_eid last;      /* last event <= i that changed it */
    earl_loc holder;    /* location holding it after i, -1 when free */
} earl_lock_state;

/* The locks that some event <= i changed, with their state just after i.
 * Returns their number; out is filled up to cap.  O(L log m) for L locks. */
size_t earl_states_locks(const earl_states *states, earl_eid i, earl_lock_state *out,
                         size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* EARL_STATES_H */
