/*
 * hb_rules.c - the rules of the happened-before order (docs/patterns.md,
 * "The happened-before order"): for an event, the events on other locations
 * it directly depends on.  Program order is the replay's own business
 * (hb_replay.c); everything that crosses locations is here:
 *
 *   receive        <- its send (the EARL layer's sendptr)
 *   collective end <- members' begins, by the operation's shape
 *   team event     <- the fork, at the start of each run of a thread's events
 *                     in the team
 *   join           <- the last event of every other thread's run in the team
 *   lock acquire   <- the release before it on the same lock (lockptr)
 *
 * The rules also say which events' clocks must be saved for those later
 * events (hb_rules_saves), so the replay keeps no clock it will not use.
 *
 * In a part of a trace (csrc/part/earl_part.h) the rules are those of the
 * whole trace: every dependency of an own event is an own event or a ghost
 * (the send of a message, the begins of a collective's members), whose
 * clock its owner sends (hb_part.c).
 */
#include <stdlib.h>
#include <string.h>

#include "hb_internal.h"


static int is_fork(uint8_t k) { return k == EARL_OMP_FORK || k == EARL_THREAD_FORK; }
static int is_join(uint8_t k) { return k == EARL_OMP_JOIN || k == EARL_THREAD_JOIN; }
static int is_release(uint8_t k)
{
    return k == EARL_OMP_RELEASE_LOCK || k == EARL_THREAD_RELEASE_LOCK;
}
static int is_acquire(uint8_t k)
{
    return k == EARL_OMP_ACQUIRE_LOCK || k == EARL_THREAD_ACQUIRE_LOCK;
}

/* Position of event e on its location (binary search of its event list). */
static size_t position_of(const earl_events *ev, earl_eid e)
{
    earl_loc l = ev->location[e];
    return earl_eid32_lower_bound(ev->loc_events, ev->loc_start[l], ev->loc_start[l + 1], e) -
           ev->loc_start[l];
}

/* The begin of collective member m: for MPI the MPI_COLLECTIVE_BEGIN before
 * its MPI_COLLECTIVE_END on the same location (none when another END comes
 * first), for an OpenMP barrier the ENTER of the barrier region. */
static earl_eid member_begin(const hb_rules *r, earl_eid m, uint8_t type)
{
    if (type != EARL_COLL_MPI)
        return earl_states_ptr(r->states, EARL_PTR_ENTER, m);
    const earl_events *ev = r->ev;
    earl_loc l = ev->location[m];
    size_t first = ev->loc_start[l];
    for (size_t p = first + position_of(ev, m); p-- > first;) {
        earl_eid x = ev->loc_events[p];
        if (ev->kind[x] == EARL_MPI_COLLECTIVE_BEGIN)
            return x;
        if (ev->kind[x] == EARL_MPI_COLLECTIVE_END)
            break;
    }
    return EARL_NONE;
}

/* Sort (key, value) pairs by key: the arrays are short relative to the
 * trace (joins, team runs), so an index sort through qsort is plenty. */
typedef struct { earl_eid key, value; } pair;
static int pair_cmp(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->value > y->value) - (x->value < y->value);
}

static earl_status split_pairs(pair *pairs, size_t n, earl_eid **keys, earl_eid **values,
                               earl_error *err)
{
    qsort(pairs, n, sizeof *pairs, pair_cmp);
    *keys = malloc((n ? n : 1) * sizeof **keys);
    *values = malloc((n ? n : 1) * sizeof **values);
    if (!*keys || !*values)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the thread teams' order");
    for (size_t k = 0; k < n; k++) {
        (*keys)[k] = pairs[k].key;
        (*values)[k] = pairs[k].value;
    }
    return EARL_OK;
}

/* Joins with their forks (a stack of open forks per location), and the runs
 * of team events on threads other than the fork's. */
static earl_status teams_init(hb_rules *r, earl_error *err)
{
    const earl_events *ev = r->ev;
    size_t nl = r->defs->n_locations;
    size_t n_forks = ev->kind_counts[EARL_OMP_FORK] + ev->kind_counts[EARL_THREAD_FORK];
    if (!n_forks)
        return EARL_OK;
    r->forkptr = earl_states_pointer(r->states, EARL_PTR_FORK, err);
    if (!r->forkptr)
        return err->code;
    size_t n_joins = ev->kind_counts[EARL_OMP_JOIN] + ev->kind_counts[EARL_THREAD_JOIN];
    pair *joins = malloc((n_joins ? n_joins : 1) * sizeof *joins);
    earl_eid *open = malloc((n_forks + 1) * sizeof *open);
    pair *runs = NULL;
    size_t n_runs = 0, cap_runs = 0, nj = 0;
    earl_status rc = EARL_OK;
    if (!joins || !open) {
        rc = earl_fail(err, EARL_ERR_NOMEM, "out of memory for the thread teams' order");
        goto done;
    }
    for (size_t l = 0; l < nl; l++) {
        size_t depth = 0;
        earl_eid run = EARL_NONE, last = EARL_NONE;
        for (size_t p = ev->loc_start[l]; p <= ev->loc_start[l + 1]; p++) {
            earl_eid e = p < ev->loc_start[l + 1] ? (earl_eid)ev->loc_events[p] : EARL_NONE;
            earl_eid f = e >= 0 ? r->forkptr[e] : EARL_NONE;
            if (run >= 0 && f != run && ev->location[run] != (earl_loc)l) {
                if (EARL_GROW(runs, cap_runs, n_runs + 1) != 0) {
                    rc = earl_fail(err, EARL_ERR_NOMEM, "out of memory for the thread teams' order");
                    goto done;
                }
                runs[n_runs++] = (pair){run, last};
                HB_BIT_SET(r->keep, last);
            }
            if (e < 0)
                break;
            run = f;
            last = e;
            if (is_fork(ev->kind[e]))
                open[depth++] = e;
            else if (is_join(ev->kind[e]) && depth > 0)
                joins[nj++] = (pair){e, open[--depth]};
        }
    }
    r->n_joins = nj;
    r->n_runs = n_runs;
    if ((rc = split_pairs(joins, nj, &r->join_event, &r->join_fork, err)) != EARL_OK)
        goto done;
    rc = split_pairs(runs, n_runs, &r->run_fork, &r->run_last, err);
done:
    free(joins);
    free(open);
    free(runs);
    return rc;
}

earl_status hb_rules_init(hb_rules *r, const earl_trace *trace, earl_states *states,
                          earl_error *err)
{
    memset(r, 0, sizeof *r);
    r->ev = earl_trace_events(trace);
    r->defs = earl_trace_defs(trace);
    r->states = states;
    r->view = earl_states_get_view(states);
    const earl_states_view *v = r->view;
    size_t n_members = v->coll_member_start ? v->coll_member_start[v->n_colls] : 0;
    r->keep = calloc(r->ev->count / 8 + 1, 1);
    r->member = calloc(r->ev->count / 8 + 1, 1);
    r->member_begin = malloc((n_members ? n_members : 1) * sizeof *r->member_begin);
    if (!r->keep || !r->member || !r->member_begin)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the happened-before rules");
    for (size_t k = 0; k < v->n_colls; k++)
        for (size_t j = v->coll_member_start[k]; j < v->coll_member_start[k + 1]; j++) {
            earl_eid b = member_begin(r, v->coll_members[j], v->coll_type[k]);
            r->member_begin[j] = b;
            HB_BIT_SET(r->member, v->coll_members[j]);
            if (b >= 0)
                HB_BIT_SET(r->keep, b);
        }
    return teams_init(r, err);
}

void hb_rules_free(hb_rules *r)
{
    free(r->member_begin);
    free(r->keep);
    free(r->member);
    free(r->join_event);
    free(r->join_fork);
    free(r->run_fork);
    free(r->run_last);
    memset(r, 0, sizeof *r);
}

earl_eid hb_rules_join_fork(const hb_rules *r, earl_eid join)
{
    size_t k = earl_i64_lower_bound(r->join_event, 0, r->n_joins, join);
    return k < r->n_joins && r->join_event[k] == join ? r->join_fork[k] : EARL_NONE;
}

static int push_dep(hb_deps *out, size_t *n, earl_eid d)
{
    if (EARL_GROW(out->ids, out->cap, *n + 1) != 0)
        return -1;
    out->ids[(*n)++] = d;
    return 0;
}

static size_t collective_deps(const hb_rules *r, hb_deps *out, earl_eid e, int32_t k,
                              hb_merge *merge)
{
    const earl_states_view *v = r->view;
    earl_loc self = r->ev->location[e];
    size_t n = 0;
    /* a team barrier is an all-to-all; Scan and Exscan differ only in the
     * member's own begin, which precedes its end on its location anyway */
    hb_shape s = v->coll_type[k] == EARL_COLL_MPI && !r->align_collectives
                     ? hb_collective_shape(v->coll_op[k]) : HB_SHAPE_ALL;
    int prefix = s == HB_SHAPE_SCAN || s == HB_SHAPE_EXSCAN;
    earl_loc root = v->coll_root[k];
    int64_t my_rank = prefix ? hb_comm_rank(r->defs, v->coll_comm[k], self) : -1;
    if ((s == HB_SHAPE_FROM_ROOT && (root < 0 || root == self)) ||
        (s == HB_SHAPE_TO_ROOT && root != self) || (prefix && my_rank < 0))
        return 0;
    if (s == HB_SHAPE_ALL)
        *merge = HB_MERGE_INSTANCE;
    for (size_t j = v->coll_member_start[k]; j < v->coll_member_start[k + 1]; j++) {
        earl_eid b = r->member_begin[j];
        if (b < 0)
            continue;
        earl_loc l = r->ev->location[b];
        if (s != HB_SHAPE_ALL && l == self)
            continue;
        if (s == HB_SHAPE_FROM_ROOT && l != root)
            continue;
        if (prefix) {
            int64_t rank = hb_comm_rank(r->defs, v->coll_comm[k], l);
            if (rank < 0 || rank >= my_rank)
                continue;
        }
        if (push_dep(out, &n, b) != 0)
            return SIZE_MAX;
    }
    return n;
}

size_t hb_rules_deps(const hb_rules *r, earl_eid e, earl_eid prev, hb_deps *out,
                     hb_merge *merge, int32_t *instance)
{
    const earl_events *ev = r->ev;
    uint8_t kind = ev->kind[e];
    size_t n = 0;
    *merge = HB_MERGE_EACH;
    *instance = -1;
    if (kind == EARL_MPI_RECV || kind == EARL_MPI_IRECV) {
        earl_eid s = earl_states_ptr(r->states, EARL_PTR_SEND, e);
        if (s >= 0 && push_dep(out, &n, s) != 0)
            return SIZE_MAX;
    } else if (HB_BIT_GET(r->member, e)) { /* an MPI_COLLECTIVE_END, a team barrier's LEAVE */
        int32_t k = earl_states_instance_of(r->states, e);
        if (k >= 0) {
            *instance = k;
            n = collective_deps(r, out, e, k, merge);
        }
    } else if (is_acquire(kind)) {
        earl_eid p = earl_states_ptr(r->states, EARL_PTR_LOCK, e);
        /* also on the same location: taking the saved clock frees it */
        if (p >= 0 && is_release(ev->kind[p]) && push_dep(out, &n, p) != 0)
            return SIZE_MAX;
    } else if (is_join(kind) && r->forkptr) {
        earl_eid f = hb_rules_join_fork(r, e);
        size_t k = f >= 0 ? earl_i64_lower_bound(r->run_fork, 0, r->n_runs, f) : r->n_runs;
        for (; k < r->n_runs && r->run_fork[k] == f; k++)
            if (ev->location[r->run_last[k]] != ev->location[e] &&
                push_dep(out, &n, r->run_last[k]) != 0)
                return SIZE_MAX;
    }
    /* the first event of a run in a team opened by a fork elsewhere */
    if (r->forkptr) {
        earl_eid f = r->forkptr[e];
        if (f >= 0 && ev->location[f] != ev->location[e] && (prev < 0 || r->forkptr[prev] != f) &&
            push_dep(out, &n, f) != 0)
            return SIZE_MAX;
    }
    return n;
}

uint32_t hb_rules_saves(const hb_rules *r, earl_eid e)
{
    uint8_t kind = r->ev->kind[e];
    if (kind == EARL_MPI_SEND || kind == EARL_MPI_ISEND) {
        earl_eid recv = earl_states_ptr(r->states, EARL_PTR_RECV, e);
        return recv >= 0 && hb_rules_own(r, r->ev->location[recv]) ? 1 : 0;
    }
    if (is_release(kind))
        return 1;
    if (is_fork(kind))
        return HB_REFS_HELD;
    if (HB_BIT_GET(r->keep, e)) /* a collective begin, or the last event of a team run */
        return kind == EARL_MPI_COLLECTIVE_BEGIN || kind == EARL_ENTER ? HB_REFS_HELD : 1;
    return 0;
}
