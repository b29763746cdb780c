/*
 * states_internal.h - the layout behind the opaque earl_states and the
 * interfaces between the files of the states pass:
 *
 *   states.c              the handle, the one forward pass (it dispatches each
 *                         event to the concepts below), warnings, memory
 *   states_regions.c      region stacks, enterptr/leaveptr, stack queries
 *   states_threads.c      forks, teams, inherited stacks, forkptr, locks
 *   states_messages.c     message queues, sendptr/recvptr, queue queries
 *   states_collectives.c  MPI collective and OpenMP barrier instances
 *   states_views.c        the dense per-event arrays, built on request
 *
 * The concepts key their few states (channels, collective groups, locks,
 * queue pairs) by the core's hash map (base/hashmap.h), never by event, so
 * its size follows the number of channels, groups and locks, not the trace
 * length.
 *
 * Not part of the public API.
 */
#ifndef EARL_STATES_INTERNAL_H
#define EARL_STATES_INTERNAL_H

#include <pthread.h>

#include "earl_states.h"
#include "earl_calltree.h"
#include "base/compiler.h"
#include "base/details.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/mem.h"
#include "base/parts.h"
#include "base/sorted.h"

/* ---- warnings --------------------------------------------------------------- */

typedef struct states_warning_list {
    uint64_t counts[EARL_STATES_WARNING_CODE_COUNT];
    earl_states_warning *items;
    size_t n, cap;
} states_warning_list;

void states_warn(states_warning_list *w, earl_states_warning_code code, earl_loc loc,
                 earl_eid event, const char *fmt, ...) EARL_PRINTF(5, 6);

/* ---- the handle --------------------------------------------------------------- */

struct earl_states {
    const earl_trace *trace;
    earl_states_view view;
    earl_states_warnings warnings_view;
    states_warning_list warnings;

    /* computed by the pass for every event, EARL_EID32_NONE for none (4
     * bytes an event: the one per-event array the pass writes); read with
     * states_enterptr, written through states_eid32 */
    earl_eid32 *enterptr;
    /* the call tree walked beside the region stacks (options.calltree), until
     * taken; NULL */
    earl_calltree *calltree;
    /* per msg row: the row of the matched receive or send, -1 (a row, not
     * an event id: half the bytes; earl_events.ref is int32 as well) */
    int32_t *msg_match;
    earl_eid *lock_prev;        /* per sync row: lockptr of a lock event */
    earl_eid *sync_fork;        /* per sync row: the fork a TEAM_BEGIN joins */

    /* dense arrays built on request (states_views.c), under lazy_lock */
    pthread_mutex_t lazy_lock;
    earl_eid *dense[EARL_POINTER_COUNT];
    int32_t *coll_instance;

    /* collective members in the total order, with their instance */
    earl_eid *member_event;
    int32_t *member_inst;
    size_t n_members, cap_members;

    /* collective instances (states_collectives.c) */
    size_t n_colls, cap_colls;
    uint8_t *coll_type;
    uint32_t *coll_comm;
    earl_eid *coll_fork;
    uint8_t *coll_op;
    earl_loc *coll_root;
    uint32_t *coll_expected;
    uint32_t *coll_count;       /* members so far */
    earl_eid *coll_complete;
    size_t *coll_member_start;
    earl_eid *coll_members;

    /* teams without team records (OMP_FORK/OMP_JOIN traces): the events
     * [first, end) of location loc belong to the team of fork */
    struct states_team_span {
        earl_loc loc;
        earl_eid first, end, fork;
    } *spans;
    size_t n_spans, cap_spans;

    /* region stack after the threading events, by sync row (states_threads.c):
     * a team begin/end changes a worker's stack without an ENTER/LEAVE */
    earl_eid *sync_top;

    /* locks (states_threads.c): one row per lock, its events in CSR */
    size_t n_locks;
    uint32_t *lock_process;
    uint8_t *lock_model;
    uint64_t *lock_id;
    size_t *lock_start;         /* n_locks + 1 */
    earl_eid *lock_events;

    /* message queue index (states_messages.c), built on the first query
     * under lazy_lock */
    int queue_built;
    earl_map queue_pairs;     /* (src, dst) -> pair index */
    size_t *queue_start;        /* pairs + 1: sends of a pair in queue_sends */
    earl_eid *queue_sends;      /* per pair, in send order */
    size_t *tree_start;         /* pairs + 1: segment trees in queue_tree */
    earl_eid *queue_tree;       /* max receive id (INT64_MAX: missing) per node */
};

/* enterptr of event i, -1 for none. */
static inline earl_eid states_enterptr(const earl_states *s, earl_eid i)
{
    return earl_eid_from32(s->enterptr[i]);
}

/* An event id or -1 as an earl_eid32, to store in enterptr: the conversion
 * to unsigned takes -1 to EARL_EID32_NONE, and every id fits
 * (EARL_MAX_EVENTS). */
static inline earl_eid32 states_eid32(earl_eid x)
{
    return (earl_eid32)x;
}

/* The event matched with message row `row` (its send or receive), -1. */
static inline earl_eid states_msg_match(const earl_states *s, const earl_events *ev, size_t row)
{
    int32_t match = s->msg_match[row];
    return match >= 0 ? (earl_eid)ev->msg.event[match] : EARL_NONE;
}

/* ---- state of the forward pass ----------------------------------------------- */

typedef struct states_pass {
    earl_states *s;
    const earl_events *ev;
    const earl_defs *defs;
    const earl_states_options *opt;

    earl_eid *top;              /* per location: innermost open ENTER (maybe inherited) */
    /* per location: 1 when its ghost message calls were folded (an ENTER
     * closes the location's open call: EARL_HELD_GHOSTS_FOLDED); NULL when
     * no location is, which the pass then never reads */
    uint8_t *folded;

    /* threads */
    earl_eid *cur_fork;         /* per location: fork of its current team */
    int64_t *team_row;          /* per location: sync row of its open TEAM_BEGIN, -1 */
    int64_t *sync_prev;         /* per sync row: TEAM_BEGIN: enclosing begin row;
                                   FORK: previous open fork of the process */
    earl_eid *sync_prev_fork;   /* per sync row, TEAM_BEGIN: cur_fork before it */
    earl_eid *sync_prev_top;    /* per sync row, TEAM_BEGIN: own stack before it */
    uint32_t *sync_prev_bar;    /* per sync row, TEAM_BEGIN: barrier count before it */
    earl_eid *open_fork;        /* per location: its last fork not joined */
    earl_eid *process_fork;     /* per location group: last fork not joined */
    earl_calltree_walk *walk;   /* the call tree's walk (options.calltree), NULL */
    int implicit;               /* OMP_FORK traces: teams without team records */
    earl_eid *impl_fork;        /* per location: fork of its implicit team, -1 */
    earl_eid *impl_top;         /* per location: own stack top before it */
    uint32_t *barrier_count;    /* per location: barriers passed in its team */
    earl_map locks;           /* (process, model, id) -> lock index */
    int32_t *lock_of_row;       /* per sync row: lock index, -1 */
    earl_eid *lock_last;        /* per lock: last event */
    earl_loc *lock_holder;
    size_t cap_locks;

    /* messages */
    earl_map channels;        /* (src, dst, comm, tag) -> channel index */
    int64_t *ch_head, *ch_tail; /* per channel: FIFO of pending msg rows */
    uint8_t *ch_recvs;          /* 1: the pending rows are receives */
    size_t n_channels, cap_channels;
    int32_t *msg_next;          /* per msg row: next pending row of its channel */

    /* collectives */
    earl_map coll_counts;     /* (location, group) -> collectives passed */
    earl_map coll_groups;     /* group key -> group index */
    int32_t **group_inst;       /* per group: instance ids by sequence number */
    size_t *group_n, *group_cap;
    size_t n_groups, cap_groups;
    /* where the event steps put their warnings: the handle's list, or a
     * private one while the pass runs as two concurrent halves */
    states_warning_list *warnings;
    int nomem;
} states_pass;

/* Per-concept steps of the pass.  *_init allocate what the concept needs,
 * the event steps return nothing and set pass->nomem on allocation failure,
 * *_finish run after the last event. */
int regions_init(states_pass *p);
void regions_leave(states_pass *p, earl_eid i, earl_loc l);
/* Before an ENTER on a location whose calls were folded: close its open call. */
void regions_close_folded(states_pass *p, earl_loc l);
void regions_finish(states_pass *p);

int threads_init(states_pass *p);
void threads_event(states_pass *p, earl_eid i, earl_loc l, earl_kind k);
/* Before every event of a trace with OMP_FORK: join or leave implicit teams. */
void threads_implicit(states_pass *p, earl_eid i, earl_loc l);
void threads_finish(states_pass *p);
void threads_free(states_pass *p);

int messages_init(states_pass *p);
void messages_send(states_pass *p, earl_eid i, earl_loc l);
void messages_recv(states_pass *p, earl_eid i, earl_loc l);
void messages_finish(states_pass *p);
void messages_free(states_pass *p);
void messages_index_free(earl_states *s);

int collectives_init(states_pass *p);
void collectives_mpi(states_pass *p, earl_eid i, earl_loc l);
void collectives_barrier(states_pass *p, earl_eid i, earl_loc l);
void collectives_finish(states_pass *p);
void collectives_free(states_pass *p);

/* Is region ref an OpenMP barrier (role BARRIER or IMPLICIT_BARRIER)? */
int regions_is_omp_barrier(const earl_defs *defs, uint32_t region);

#endif
