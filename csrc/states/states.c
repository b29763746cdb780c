/*
 * states.c - the EARL layer's handle and its one forward pass.
 *
 * earl_states_build allocates enterptr and the compact per-message and
 * per-sync-record arrays, then walks the events of the trace once in the
 * total order.  Every event gets the enterptr of its location's current
 * state; events that change
 * a state are handed to the file owning that concept (states_regions.c,
 * states_messages.c, states_collectives.c, states_threads.c).  After the
 * last event each concept finishes (unmatched messages, incomplete
 * instances, CSR arrays) and the public view is filled.  Nothing is
 * allocated per event: per-location arrays, hash maps keyed by channels,
 * groups and locks, and growable lists of the rare events.
 *
 * Asked for (options.calltree), the call tree is walked on the way
 * (earl_calltree_walk): the pass goes through the events in stretches that
 * fit the cache, and after each stretch the thread that wrote its enterptr
 * walks it for the call tree, reading the columns the stretch just brought
 * into the cache.  A walk of its own afterwards, on several threads, cut the
 * processes into parts that each read every event (twice the processor time
 * of one thread on two); here the walk reads each event once, on the thread
 * of the region stacks, while the other half follows the messages.
 *
 * The history queries live with their concept; this file owns the handle,
 * the warnings and the memory count.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "states_internal.h"

static const char *const warning_names[EARL_STATES_WARNING_CODE_COUNT] = {
    "recv_without_send", "send_not_received", "recv_before_send", "message_unresolved",
    "coll_incomplete", "coll_mismatch", "leave_unmatched", "team_without_fork",
    "team_end_unmatched", "lock_release_unheld",
};

const char *earl_states_warning_code_name(earl_states_warning_code code)
{
    return (unsigned)code < EARL_STATES_WARNING_CODE_COUNT ? warning_names[code] : "unknown";
}

void states_warn(states_warning_list *w, earl_states_warning_code code, earl_loc loc,
                 earl_eid event, const char *fmt, ...)
{
    earl_states_warning *it = earl_detail_slot(w->counts, code, (void **)&w->items, &w->n, &w->cap,
                                               sizeof *w->items);
    if (!it)
        return;
    it->code = code;
    it->location = loc;
    it->event = event;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->detail, sizeof it->detail, fmt, ap);
    va_end(ap);
}

/* An array of n entries of width bytes, all -1 (all bits set). */
static void *alloc_none(size_t n, size_t width)
{
    void *a = earl_mem_alloc((n ? n : 1) * width);
    if (a)
        memset(a, 0xff, (n ? n : 1) * width);
    return a;
}

static void pass_free(states_pass *p)
{
    free(p->top);
    free(p->folded);
    threads_free(p);
    messages_free(p);
    collectives_free(p);
}

static void fill_view(earl_states *s, size_t n)
{
    earl_states_view *v = &s->view;
    v->count = n;
    v->enterptr = s->enterptr;
    v->msg_match = s->msg_match;
    v->n_colls = s->n_colls;
    v->coll_type = s->coll_type;
    v->coll_comm = s->coll_comm;
    v->coll_fork = s->coll_fork;
    v->coll_op = s->coll_op;
    v->coll_root = s->coll_root;
    v->coll_expected = s->coll_expected;
    v->coll_complete = s->coll_complete;
    v->coll_member_start = s->coll_member_start;
    v->coll_members = s->coll_members;
    memcpy(s->warnings_view.counts, s->warnings.counts, sizeof s->warnings.counts);
    s->warnings_view.n_details = s->warnings.n;
    s->warnings_view.details = s->warnings.items;
}

/* The pass; IMPLICIT: the trace has OMP_FORK records, whose teams have no
 * team records (a separate instance so the common case pays nothing).
 * STACKS and COMM select the halves (both for the whole pass): the region
 * stacks (enterptr, top) and the messages and collectives, which share no
 * state when the trace has no threading records. */
static inline __attribute__((always_inline)) void pass_loop(states_pass *p, int implicit,
                                                            int stacks, int comm, size_t from,
                                                            size_t to)
{
    const earl_events *ev = p->ev;
    earl_states *s = p->s;
    const uint8_t *kind = ev->kind;
    const earl_loc *loc = ev->location;
    earl_eid32 *enterptr = s->enterptr;
    earl_eid *top = p->top;

    for (size_t u = from; u < to; u++) {
        const earl_eid i = (earl_eid)u;
        const earl_loc l = loc[u];
        const uint8_t k = kind[u];
        if (implicit)
            threads_implicit(p, i, l);
        switch (k) {
        case EARL_ENTER:
            if (stacks) {
                if (EARL_UNLIKELY(p->folded != NULL) && p->folded[l])
                    regions_close_folded(p, l);
                enterptr[u] = states_eid32(top[l]);
                top[l] = i;
            }
            break;
        case EARL_LEAVE:
            if (stacks)
                regions_leave(p, i, l);
            break;
        case EARL_MPI_SEND:
        case EARL_MPI_ISEND:
            if (stacks)
                enterptr[u] = states_eid32(top[l]);
            if (comm)
                messages_send(p, i, l);
            break;
        case EARL_MPI_RECV:
        case EARL_MPI_IRECV:
            if (stacks)
                enterptr[u] = states_eid32(top[l]);
            if (comm)
                messages_recv(p, i, l);
            break;
        case EARL_MPI_COLLECTIVE_END:
            if (stacks)
                enterptr[u] = states_eid32(top[l]);
            if (comm)
                collectives_mpi(p, i, l);
            break;
        case EARL_OMP_FORK:
        case EARL_OMP_JOIN:
        case EARL_OMP_ACQUIRE_LOCK:
        case EARL_OMP_RELEASE_LOCK:
        case EARL_THREAD_FORK:
        case EARL_THREAD_JOIN:
        case EARL_THREAD_TEAM_BEGIN:
        case EARL_THREAD_TEAM_END:
        case EARL_THREAD_ACQUIRE_LOCK:
        case EARL_THREAD_RELEASE_LOCK:
            threads_event(p, i, l, (earl_kind)k); /* sets enterptr itself */
            break;
        default:
            if (stacks)
                enterptr[u] = states_eid32(top[l]);
            break;
        }
    }
}

/* Events per stretch of a pass that walks the call tree on the way: the
 * columns both read (kind, location, enterptr, region, time: 21 bytes an
 * event) stay in a core's cache from the pass to the walk. */
#define STRETCH ((size_t)1 << 13)

/* The pass over every event (with the region stacks), the call tree walked
 * stretch by stretch behind it when asked for. */
static inline __attribute__((always_inline)) void pass_all(states_pass *p, int implicit,
                                                           int comm)
{
    size_t n = p->ev->count;
    if (!p->walk) {
        pass_loop(p, implicit, 1, comm, 0, n);
        return;
    }
    for (size_t from = 0; from < n; from += STRETCH) {
        size_t to = n - from > STRETCH ? from + STRETCH : n;
        pass_loop(p, implicit, 1, comm, from, to);
        earl_calltree_walk_events(p->walk, from, to);
    }
}

/* One half of a pass run as two: the region stacks, or the messages and
 * collectives. */
typedef struct pass_half {
    states_pass *pass;
    int stacks;
} pass_half;

static void *run_half(void *arg)
{
    pass_half *h = arg;
    if (h->stacks) /* constant flags: each half gets its own inlined loop */
        pass_all(h->pass, 0, 0);
    else
        pass_loop(h->pass, 0, 0, 1, 0, h->pass->ev->count);
    return NULL;
}

/* Can the pass run as two halves?  Only threading records tie the region
 * stacks to the rest (a team inherits its master's stack). */
static int halves_apply(const states_pass *p, int threads)
{
    static const earl_kind threading[] = {
        EARL_OMP_FORK, EARL_OMP_JOIN, EARL_OMP_ACQUIRE_LOCK, EARL_OMP_RELEASE_LOCK,
        EARL_THREAD_FORK, EARL_THREAD_JOIN, EARL_THREAD_TEAM_BEGIN, EARL_THREAD_TEAM_END,
        EARL_THREAD_ACQUIRE_LOCK, EARL_THREAD_RELEASE_LOCK};
    if (threads == 1 || p->implicit || p->ev->count < ((size_t)1 << 16))
        return 0;
    if (threads < 1 && earl_online_cores() < 2)
        return 0;
    for (size_t k = 0; k < sizeof threading / sizeof *threading; k++)
        if (p->ev->kind_counts[threading[k]])
            return 0;
    return 1;
}

/* Append the items of src (in event order) to those of dst (in event
 * order), keeping event order; the halves report disjoint codes, so each
 * code's detail limit holds as in one pass. */
static int merge_warnings(states_warning_list *dst, const states_warning_list *src)
{
    for (int c = 0; c < EARL_STATES_WARNING_CODE_COUNT; c++)
        dst->counts[c] += src->counts[c];
    if (!src->n)
        return 0;
    earl_states_warning *all = malloc((dst->n + src->n) * sizeof *all);
    if (!all)
        return -1;
    size_t a = 0, b = 0, k = 0;
    while (a < dst->n || b < src->n)
        all[k++] = b == src->n || (a < dst->n && dst->items[a].event <= src->items[b].event)
                       ? dst->items[a++] : src->items[b++];
    free(dst->items);
    dst->items = all;
    dst->n = dst->cap = k;
    return 0;
}

static void run_pass(states_pass *p, int threads)
{
    if (p->implicit) {
        pass_all(p, 1, 1);
        return;
    }
    if (!halves_apply(p, threads)) {
        pass_all(p, 0, 1);
        return;
    }
    states_warning_list comm_warnings = {0};
    states_pass stacks = *p; /* reads the shared arrays, writes enterptr and top */
    p->walk = NULL;          /* the call tree follows the stacks */
    p->warnings = &comm_warnings;
    pass_half halves[2] = {{p, 0}, {&stacks, 1}};
    earl_parts_run(run_half, halves, sizeof *halves, 2);
    p->nomem |= stacks.nomem;
    p->warnings = &p->s->warnings;
    if (merge_warnings(p->warnings, &comm_warnings) != 0)
        p->nomem = 1;
    free(comm_warnings.items);
}

earl_status earl_states_build(const earl_trace *trace, const earl_states_options *options,
                              earl_states **out, earl_error *err)
{
    static const earl_states_options defaults;
    if (out)
        *out = NULL;
    if (!trace || !out)
        return earl_fail(err, EARL_ERR_INVALID, "earl_states_build: no trace or no result pointer");
    const earl_events *ev = earl_trace_events(trace);
    const earl_defs *defs = earl_trace_defs(trace);
    const size_t n = ev->count;

    earl_states *s = calloc(1, sizeof *s);
    if (!s)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the states",
                         earl_trace_path(trace));
    s->trace = trace;
    pthread_mutex_init(&s->lazy_lock, NULL);

    states_pass p;
    memset(&p, 0, sizeof p);
    p.warnings = &s->warnings;
    p.s = s;
    p.ev = ev;
    p.defs = defs;
    p.opt = options ? options : &defaults;

    /* every entry of enterptr is written by the pass: no fill */
    s->enterptr = earl_mem_alloc((n ? n : 1) * sizeof *s->enterptr);
    s->msg_match = alloc_none(ev->msg.count, sizeof *s->msg_match);
    s->lock_prev = alloc_none(ev->sync.count, sizeof *s->lock_prev);
    s->sync_fork = alloc_none(ev->sync.count, sizeof *s->sync_fork);
    int failed = !s->enterptr || !s->msg_match || !s->lock_prev || !s->sync_fork;
    if (!failed)
        failed = regions_init(&p) || threads_init(&p) || messages_init(&p) ||
                 collectives_init(&p);
    earl_calltree_walk *walk = NULL;
    if (!failed && p.opt->calltree &&
        earl_calltree_walk_begin(trace, s->enterptr, &walk, NULL) != EARL_OK)
        walk = NULL; /* no tree on the way: earl_calltree_build builds it later */
    p.walk = walk;
    if (!failed) {
        run_pass(&p, p.opt->threads);
        regions_finish(&p);
        messages_finish(&p);
        collectives_finish(&p);
        threads_finish(&p);
        failed = p.nomem;
    }
    /* a walk out of memory leaves no tree: earl_calltree_build reports it */
    earl_calltree_walk_end(walk, failed ? NULL : &s->calltree, NULL);
    pass_free(&p);
    if (failed) {
        earl_states_free(s);
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory computing the states",
                         earl_trace_path(trace));
    }
    fill_view(s, n);
    *out = s;
    return EARL_OK;
}

void earl_states_free(earl_states *s)
{
    if (!s)
        return;
    earl_mem_free(s->enterptr);
    for (int k = 0; k < EARL_POINTER_COUNT; k++)
        earl_mem_free(s->dense[k]);
    earl_mem_free(s->msg_match);
    earl_mem_free(s->lock_prev);
    earl_mem_free(s->sync_fork);
    earl_mem_free(s->coll_instance);
    free(s->member_event);
    free(s->member_inst);
    free(s->coll_type);
    free(s->coll_comm);
    free(s->coll_fork);
    free(s->coll_op);
    free(s->coll_root);
    free(s->coll_expected);
    free(s->coll_count);
    free(s->coll_complete);
    free(s->coll_member_start);
    free(s->coll_members);
    free(s->sync_top);
    free(s->spans);
    free(s->lock_process);
    free(s->lock_model);
    free(s->lock_id);
    free(s->lock_start);
    free(s->lock_events);
    messages_index_free(s);
    earl_calltree_free(s->calltree);
    free(s->warnings.items);
    pthread_mutex_destroy(&s->lazy_lock);
    free(s);
}

earl_calltree *earl_states_take_calltree(earl_states *s)
{
    earl_calltree *t = s->calltree;
    s->calltree = NULL;
    return t;
}

const earl_states_view *earl_states_get_view(const earl_states *s)
{
    return &s->view;
}

const earl_states_warnings *earl_states_get_warnings(const earl_states *s)
{
    return &s->warnings_view;
}

size_t earl_states_bytes(const earl_states *s)
{
    const earl_events *ev = earl_trace_events(s->trace);
    size_t n = s->view.count ? s->view.count : 1;
    size_t bytes = n * sizeof *s->enterptr;
    for (int k = 0; k < EARL_POINTER_COUNT; k++)
        bytes += s->dense[k] ? n * sizeof(earl_eid) : 0;
    bytes += s->coll_instance ? n * sizeof(int32_t) : 0;
    bytes += ev->msg.count * sizeof *s->msg_match + 3 * ev->sync.count * sizeof(earl_eid);
    bytes += s->cap_members * (sizeof(earl_eid) + sizeof(int32_t));
    size_t c = s->n_colls;
    bytes += c * (sizeof(uint8_t) * 2 + sizeof(uint32_t) * 3 + sizeof(earl_eid) * 2 +
                  sizeof(earl_loc) + sizeof(size_t));
    bytes += (s->n_colls ? s->coll_member_start[s->n_colls] : 0) * sizeof(earl_eid);
    bytes += s->n_locks * (sizeof(uint32_t) + 1 + sizeof(uint64_t) + sizeof(size_t));
    bytes += (s->n_locks ? s->lock_start[s->n_locks] : 0) * sizeof(earl_eid);
    if (s->queue_built) {
        bytes += earl_map_bytes(&s->queue_pairs);
        size_t pairs = s->queue_pairs.n;
        bytes += 2 * (pairs + 1) * sizeof(size_t);
        bytes += s->queue_start[pairs] * sizeof(earl_eid) + s->tree_start[pairs] * sizeof(earl_eid);
    }
    bytes += s->warnings.cap * sizeof(earl_states_warning);
    return bytes;
}
