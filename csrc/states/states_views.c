/*
 * states_views.c - the dense per-event pointer arrays, built on request.
 *
 * The forward pass (states.c) keeps only what it must: enterptr for every
 * event (32 bits), and compact records for the rarer relations (the matched
 * event of every message row, the previous lock event of every lock row, the
 * fork of every team begin, the list of collective members).  Touching fresh
 * memory is the dominant cost of a pass over tens of millions of events, so
 * the pointers become dense arrays (one int64 per event, -1 for none) only
 * when asked for, each in one O(n) sweep, under a mutex, once:
 *
 *   enterptr       the pass's 32-bit array widened (for a caller that wants
 *                  int64; C code reads the 32-bit one)
 *   leaveptr       from enterptr: every matched LEAVE marks its ENTER
 *   sendptr/recvptr from the message rows' matches
 *   lockptr        from the lock rows
 *   forkptr        per location, replaying its team begins and ends
 *   coll_instance  from the members list
 */
#include <stdlib.h>
#include <string.h>

#include "states_internal.h"

static const char *const pointer_names[EARL_POINTER_COUNT] = {
    "enterptr", "leaveptr", "sendptr", "recvptr", "lockptr", "forkptr",
};

const char *earl_pointer_name(earl_pointer p)
{
    return (unsigned)p < EARL_POINTER_COUNT ? pointer_names[p] : "unknown";
}

static int is_recv(uint8_t k)
{
    return k == EARL_MPI_RECV || k == EARL_MPI_IRECV;
}

static int is_send(uint8_t k)
{
    return k == EARL_MPI_SEND || k == EARL_MPI_ISEND;
}

static int is_lock(uint8_t k)
{
    return k == EARL_OMP_ACQUIRE_LOCK || k == EARL_OMP_RELEASE_LOCK ||
           k == EARL_THREAD_ACQUIRE_LOCK || k == EARL_THREAD_RELEASE_LOCK;
}

static int fill_forkptr(const earl_states *s, const earl_events *ev, size_t n_locs, earl_eid *a)
{
    earl_eid *stack = NULL;
    size_t cap = 0;
    for (size_t l = 0; l < n_locs; l++) {
        size_t depth = 0;
        earl_eid cur = EARL_NONE;
        for (size_t k = ev->loc_start[l]; k < ev->loc_start[l + 1]; k++) {
            earl_eid e = ev->loc_events[k];
            uint8_t kind = ev->kind[e];
            if (kind == EARL_THREAD_TEAM_BEGIN && ev->ref[e] >= 0) {
                if (EARL_GROW(stack, cap, depth + 1)) {
                    free(stack);
                    return -1;
                }
                stack[depth++] = cur;
                cur = s->sync_fork[ev->ref[e]];
                a[e] = cur;
            } else if (kind == EARL_THREAD_TEAM_END && ev->ref[e] >= 0) {
                a[e] = cur;
                if (depth) /* else: an unmatched end, warned by the pass */
                    cur = stack[--depth];
            } else {
                a[e] = cur;
            }
        }
    }
    free(stack);
    /* teams without team records */
    for (size_t k = 0; k < s->n_spans; k++) {
        const struct states_team_span *sp = &s->spans[k];
        size_t lo = earl_eid32_lower_bound(ev->loc_events, ev->loc_start[sp->loc],
                                         ev->loc_start[sp->loc + 1], sp->first);
        for (; lo < ev->loc_start[sp->loc + 1] && ev->loc_events[lo] < sp->end; lo++)
            a[ev->loc_events[lo]] = sp->fork;
    }
    return 0;
}

/* Build dense array p (lazy_lock held). */
static earl_eid *build(const earl_states *s, earl_pointer p)
{
    const earl_events *ev = earl_trace_events(s->trace);
    const earl_defs *defs = earl_trace_defs(s->trace);
    size_t n = s->view.count;
    earl_eid *a = earl_mem_alloc((n ? n : 1) * sizeof *a);
    if (!a)
        return NULL;
    if (p != EARL_PTR_ENTER && p != EARL_PTR_FORK) /* those two write every entry */
        memset(a, 0xff, (n ? n : 1) * sizeof *a);
    switch (p) {
    case EARL_PTR_ENTER:
        for (size_t u = 0; u < n; u++)
            a[u] = states_enterptr(s, (earl_eid)u);
        break;
    case EARL_PTR_LEAVE:
        for (size_t u = 0; u < n; u++) {
            earl_eid x = states_enterptr(s, (earl_eid)u);
            if (ev->kind[u] == EARL_LEAVE && x >= 0)
                a[x] = (earl_eid)u;
        }
        break;
    case EARL_PTR_SEND:
    case EARL_PTR_RECV:
        for (size_t r = 0; r < ev->msg.count; r++) {
            earl_eid e = ev->msg.event[r];
            uint8_t k = ev->kind[e];
            if (p == EARL_PTR_SEND ? is_recv(k) : is_send(k))
                a[e] = states_msg_match(s, ev, r);
        }
        break;
    case EARL_PTR_LOCK:
        for (size_t r = 0; r < ev->sync.count; r++) {
            earl_eid e = ev->sync.event[r];
            if (is_lock(ev->kind[e]))
                a[e] = s->lock_prev[r];
        }
        break;
    case EARL_PTR_FORK:
        if (fill_forkptr(s, ev, defs->n_locations, a) != 0) {
            earl_mem_free(a);
            return NULL;
        }
        break;
    default:
        break;
    }
    return a;
}

const earl_eid *earl_states_pointer(earl_states *s, earl_pointer p, earl_error *err)
{
    if ((unsigned)p >= EARL_POINTER_COUNT) {
        earl_fail(err, EARL_ERR_INVALID, "earl_states_pointer: no pointer %d", (int)p);
        return NULL;
    }
    pthread_mutex_lock(&s->lazy_lock);
    if (!s->dense[p])
        s->dense[p] = build(s, p);
    earl_eid *a = s->dense[p];
    pthread_mutex_unlock(&s->lazy_lock);
    if (!a)
        earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the %s array",
                  earl_trace_path(s->trace), earl_pointer_name(p));
    return a;
}

const int32_t *earl_states_coll_instances(earl_states *s, earl_error *err)
{
    pthread_mutex_lock(&s->lazy_lock);
    if (!s->coll_instance) {
        size_t n = s->view.count ? s->view.count : 1;
        int32_t *a = earl_mem_alloc(n * sizeof *a);
        if (a) {
            memset(a, 0xff, n * sizeof *a);
            for (size_t m = 0; m < s->n_members; m++)
                a[s->member_event[m]] = s->member_inst[m];
        }
        s->coll_instance = a;
    }
    int32_t *a = s->coll_instance;
    pthread_mutex_unlock(&s->lazy_lock);
    if (!a)
        earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the collective instances",
                  earl_trace_path(s->trace));
    return a;
}

earl_eid earl_states_ptr(earl_states *s, earl_pointer p, earl_eid i)
{
    const earl_events *ev = earl_trace_events(s->trace);
    if (i < 0 || (size_t)i >= s->view.count)
        return EARL_NONE;
    uint8_t k = ev->kind[i];
    int32_t row = earl_event_row(ev, (size_t)i);
    switch (p) {
    case EARL_PTR_ENTER:
        return states_enterptr(s, i);
    case EARL_PTR_SEND:
        return is_recv(k) && row >= 0 ? states_msg_match(s, ev, (size_t)row) : EARL_NONE;
    case EARL_PTR_RECV:
        return is_send(k) && row >= 0 ? states_msg_match(s, ev, (size_t)row) : EARL_NONE;
    case EARL_PTR_LOCK:
        return is_lock(k) && row >= 0 ? s->lock_prev[row] : EARL_NONE;
    case EARL_PTR_LEAVE:
    case EARL_PTR_FORK: {
        const earl_eid *a = earl_states_pointer(s, p, NULL);
        return a ? a[i] : EARL_NONE;
    }
    default:
        return EARL_NONE;
    }
}

/* How far leave_by_walk looks in the total order before it turns to the
 * location's own sequence. */
#define LEAVE_NEARBY 64

/* The LEAVE of ENTER e: the first later event of its location whose
 * enterptr is e.  Most region instances (MPI calls above all) end a few
 * events later, so the events right after e in the total order are tried
 * first; they are e's location's events in their own order, interleaved
 * with other locations'. */
static earl_eid leave_by_walk(const earl_states *s, const earl_events *ev, earl_eid e)
{
    earl_loc l = ev->location[e];
    size_t nearby_end = (size_t)e + 1 + LEAVE_NEARBY < ev->count ? (size_t)e + 1 + LEAVE_NEARBY
                                                                 : ev->count;
    for (size_t x = (size_t)e + 1; x < nearby_end; x++)
        if (ev->location[x] == l && ev->kind[x] == EARL_LEAVE &&
            states_enterptr(s, (earl_eid)x) == e)
            return (earl_eid)x;
    size_t end = ev->loc_start[l + 1];
    /* position of e in its location's sequence */
    size_t lo = earl_eid32_lower_bound(ev->loc_events, ev->loc_start[l], end, e);
    for (size_t k = lo + 1; k < end; k++) {
        earl_eid x = ev->loc_events[k];
        if (ev->kind[x] == EARL_LEAVE && states_enterptr(s, x) == e)
            return x;
    }
    return EARL_NONE;
}

earl_status earl_states_gather(earl_states *s, earl_pointer p, const earl_eid *ids, size_t n,
                               earl_eid *out, earl_error *err)
{
    if ((unsigned)p >= EARL_POINTER_COUNT)
        return earl_fail(err, EARL_ERR_INVALID, "earl_states_gather: no pointer %d", (int)p);
    const earl_events *ev = earl_trace_events(s->trace);
    size_t count = s->view.count;
    pthread_mutex_lock(&s->lazy_lock);
    const earl_eid *dense = s->dense[p];
    pthread_mutex_unlock(&s->lazy_lock);
    if (!dense && p == EARL_PTR_FORK) {
        dense = earl_states_pointer(s, p, err);
        if (!dense)
            return err ? err->code : EARL_ERR_NOMEM;
    }
    for (size_t k = 0; k < n; k++) {
        earl_eid i = ids[k];
        if (i < 0 || (size_t)i >= count)
            out[k] = EARL_NONE;
        else if (dense)
            out[k] = dense[i];
        else if (p == EARL_PTR_LEAVE)
            out[k] = ev->kind[i] == EARL_ENTER ? leave_by_walk(s, ev, i) : EARL_NONE;
        else
            out[k] = earl_states_ptr(s, p, i);
    }
    return EARL_OK;
}
