/*
 * states_threads.c - thread teams and locks (paper section 7): forkptr,
 * the region stacks workers inherit at the fork, lockptr and the locks
 * query.
 *
 * A THREAD_FORK / OMP_FORK on a master opens a team; each member's
 * THREAD_TEAM_BEGIN finds that fork (the open fork of the team's thread 0
 * when the team communicator resolves, else the process's last open fork),
 * and from then on until its THREAD_TEAM_END the member's events get
 * forkptr = the fork.  A worker's stack is rebased on the master's top at
 * the fork (the fork's own enterptr), so its outermost region instance in
 * the parallel region has enterptr = the master's innermost open ENTER.
 * TEAM_END restores what TEAM_BEGIN saved (nested teams nest).  Per sync
 * row, sync_top keeps the stack top just after a team begin or end: that
 * is the only change of a stack without ENTER/LEAVE, and stack queries read
 * it there.
 *
 * Locks are keyed by (process, paradigm, lock id); each lock event points
 * to the previous event on the same lock, and the lock's events are kept in
 * CSR so that locks(i) is a binary search per lock.
 */
#include <otf2/otf2.h>
#include <stdlib.h>
#include <string.h>

#include "states_internal.h"

int threads_init(states_pass *p)
{
    size_t nl = p->defs->n_locations ? p->defs->n_locations : 1;
    size_t ng = p->defs->n_location_groups ? p->defs->n_location_groups : 1;
    size_t ns = p->ev->sync.count ? p->ev->sync.count : 1;
    p->cur_fork = malloc(nl * sizeof *p->cur_fork);
    p->team_row = malloc(nl * sizeof *p->team_row);
    p->open_fork = malloc(nl * sizeof *p->open_fork);
    p->barrier_count = calloc(nl, sizeof *p->barrier_count);
    p->process_fork = malloc(ng * sizeof *p->process_fork);
    p->sync_prev = malloc(ns * sizeof *p->sync_prev);
    p->sync_prev_fork = malloc(ns * sizeof *p->sync_prev_fork);
    p->sync_prev_top = malloc(ns * sizeof *p->sync_prev_top);
    p->sync_prev_bar = malloc(ns * sizeof *p->sync_prev_bar);
    p->lock_of_row = malloc(ns * sizeof *p->lock_of_row);
    p->s->sync_top = malloc(ns * sizeof *p->s->sync_top);
    p->impl_fork = malloc(nl * sizeof *p->impl_fork);
    p->impl_top = malloc(nl * sizeof *p->impl_top);
    p->implicit = p->ev->kind_counts[EARL_OMP_FORK] > 0;
    if (!p->cur_fork || !p->team_row || !p->open_fork || !p->barrier_count ||
        !p->process_fork || !p->sync_prev || !p->sync_prev_fork || !p->sync_prev_top ||
        !p->sync_prev_bar || !p->lock_of_row || !p->s->sync_top || !p->impl_fork ||
        !p->impl_top)
        return -1;
    memset(p->impl_fork, 0xff, nl * sizeof *p->impl_fork);
    memset(p->cur_fork, 0xff, nl * sizeof *p->cur_fork);
    memset(p->team_row, 0xff, nl * sizeof *p->team_row);
    memset(p->open_fork, 0xff, nl * sizeof *p->open_fork);
    memset(p->process_fork, 0xff, ng * sizeof *p->process_fork);
    memset(p->lock_of_row, 0xff, ns * sizeof *p->lock_of_row);
    memset(p->s->sync_top, 0xff, ns * sizeof *p->s->sync_top);
    return earl_map_init(&p->locks, 16);
}

void threads_free(states_pass *p)
{
    free(p->cur_fork);
    free(p->team_row);
    free(p->open_fork);
    free(p->barrier_count);
    free(p->process_fork);
    free(p->sync_prev);
    free(p->sync_prev_fork);
    free(p->sync_prev_top);
    free(p->sync_prev_bar);
    free(p->lock_of_row);
    free(p->impl_fork);
    free(p->impl_top);
    free(p->lock_last);
    free(p->lock_holder);
    earl_map_free(&p->locks);
}

static uint32_t process_of(const states_pass *p, earl_loc l)
{
    uint32_t g = p->defs->locations[l].group;
    return g < p->defs->n_location_groups ? g : 0;
}

/* ---- teams without team records (OMP_FORK / OMP_JOIN) --------------------------
 *
 * Older OpenMP traces record only OMP_FORK and OMP_JOIN on the master.  There
 * the master is in the team from its fork to its join, and every other CPU
 * thread of the process joins it at its first event while the fork is open
 * and leaves it at its first event after the join.  Such membership is kept
 * as spans of event ids per location, for the forkptr array; one level of
 * parallelism (nested OMP_FORKs without team records are ambiguous). */

static void span_begin(states_pass *p, earl_loc l, earl_eid first, earl_eid f)
{
    earl_states *s = p->s;
    if (EARL_GROW(s->spans, s->cap_spans, s->n_spans + 1)) {
        p->nomem = 1;
        return;
    }
    s->spans[s->n_spans++] = (struct states_team_span){l, first, INT64_MAX, f};
    p->impl_fork[l] = f;
    p->impl_top[l] = p->top[l];
    p->cur_fork[l] = f;
    p->barrier_count[l] = 0;
}

static void span_end(states_pass *p, earl_loc l, earl_eid end)
{
    earl_states *s = p->s;
    for (size_t k = s->n_spans; k-- > 0;) {
        if (s->spans[k].loc == l && s->spans[k].end == INT64_MAX) {
            s->spans[k].end = end;
            break;
        }
    }
    p->top[l] = p->impl_top[l];
    p->impl_fork[l] = EARL_NONE;
    p->cur_fork[l] = EARL_NONE;
    p->barrier_count[l] = 0;
}

void threads_implicit(states_pass *p, earl_eid i, earl_loc l)
{
    if (p->team_row[l] >= 0 || p->ev->kind[i] == EARL_THREAD_TEAM_BEGIN)
        return; /* in (or joining) a team with records */
    earl_eid f = p->process_fork[process_of(p, l)];
    earl_eid mine = p->impl_fork[l];
    if (mine == f)
        return;
    const earl_events *ev = p->ev;
    if (mine >= 0 && ev->location[mine] != l)
        span_end(p, l, i); /* its team was joined */
    if (f >= 0 && ev->kind[f] == EARL_OMP_FORK && ev->location[f] != l &&
        p->defs->locations[l].type == OTF2_LOCATION_TYPE_CPU_THREAD && p->impl_fork[l] < 0) {
        span_begin(p, l, i, f);
        p->top[l] = states_enterptr(p->s, f); /* the master's stack at the fork */
    }
}

static void fork_event(states_pass *p, earl_eid i, earl_loc l, int32_t row)
{
    uint32_t g = process_of(p, l);
    p->sync_prev[row] = p->process_fork[g];
    p->sync_prev_fork[row] = p->open_fork[l];
    p->process_fork[g] = i;
    p->open_fork[l] = i;
    if (p->ev->kind[i] == EARL_OMP_FORK)
        span_begin(p, l, i + 1, i); /* the master, from the event after its fork */
}

static void join_event(states_pass *p, earl_eid i, earl_loc l)
{
    earl_eid f = p->open_fork[l];
    if (f < 0)
        return;
    int32_t frow = p->ev->ref[f];
    uint32_t g = process_of(p, l);
    p->open_fork[l] = p->sync_prev_fork[frow];
    if (p->process_fork[g] == f)
        p->process_fork[g] = p->sync_prev[frow];
    if (p->impl_fork[l] == f)
        span_end(p, l, i);
}

/* The fork that opened the team a TEAM_BEGIN on l joins. */
static earl_eid find_fork(const states_pass *p, earl_loc l, uint32_t team)
{
    const earl_defs *d = p->defs;
    if (team < d->n_comms && d->comms[team].defined && d->comms[team].size > 0 &&
        d->comms[team].member_locations) {
        earl_loc m = d->comms[team].member_locations[0];
        if (m >= 0 && p->open_fork[m] >= 0)
            return p->open_fork[m];
    }
    return p->process_fork[process_of(p, l)];
}

static void team_begin(states_pass *p, earl_eid i, earl_loc l, int32_t row)
{
    earl_states *s = p->s;
    earl_eid f = find_fork(p, l, p->ev->sync.comm[row]);
    if (f < 0)
        states_warn(p->warnings, EARL_SW_TEAM_WITHOUT_FORK, l, i,
                    "THREAD_TEAM_BEGIN of team %u with no open fork in its process",
                    (unsigned)p->ev->sync.comm[row]);
    p->sync_prev[row] = p->team_row[l];
    p->sync_prev_fork[row] = p->cur_fork[l];
    p->sync_prev_top[row] = p->top[l];
    p->sync_prev_bar[row] = p->barrier_count[l];
    p->team_row[l] = row;
    if (f >= 0 && p->ev->location[f] != l)
        p->top[l] = states_enterptr(s, f); /* the master's stack at the fork */
    p->cur_fork[l] = f;
    p->barrier_count[l] = 0;
    s->enterptr[i] = states_eid32(p->top[l]);
    s->sync_fork[row] = f;
    s->sync_top[row] = p->top[l];
}

static void team_end(states_pass *p, earl_eid i, earl_loc l, int32_t row)
{
    earl_states *s = p->s;
    int64_t r = p->team_row[l];
    s->enterptr[i] = states_eid32(p->top[l]);
    if (r < 0) {
        states_warn(p->warnings, EARL_SW_TEAM_END_UNMATCHED, l, i,
                    "THREAD_TEAM_END of team %u on a location in no team",
                    (unsigned)p->ev->sync.comm[row]);
    } else {
        p->top[l] = p->sync_prev_top[r];
        p->cur_fork[l] = p->sync_prev_fork[r];
        p->barrier_count[l] = p->sync_prev_bar[r];
        p->team_row[l] = p->sync_prev[r];
    }
    s->sync_top[row] = p->top[l];
}

static void lock_event(states_pass *p, earl_eid i, earl_loc l, int32_t row, int acquire)
{
    earl_states *s = p->s;
    const earl_sync_table *t = &p->ev->sync;
    uint32_t g = process_of(p, l);
    uint64_t k1 = (uint64_t)g << 8 | t->model[row];
    int64_t *slot = earl_map_slot(&p->locks, k1, t->id[row], EARL_NONE, NULL);
    if (!slot) {
        p->nomem = 1;
        return;
    }
    if (*slot < 0) {
        size_t n = s->n_locks, c1 = p->cap_locks, c2 = p->cap_locks, c3 = p->cap_locks,
               c4 = p->cap_locks;
        if (EARL_GROW(p->lock_last, c1, n + 1) || EARL_GROW(p->lock_holder, c2, n + 1) ||
            EARL_GROW(s->lock_process, c3, n + 1) || EARL_GROW(s->lock_id, c4, n + 1) ||
            EARL_GROW(s->lock_model, p->cap_locks, n + 1)) {
            p->nomem = 1;
            return;
        }
        p->lock_last[n] = EARL_NONE;
        p->lock_holder[n] = EARL_NONE;
        s->lock_process[n] = g;
        s->lock_id[n] = t->id[row];
        s->lock_model[n] = t->model[row];
        s->n_locks++;
        *earl_map_find(&p->locks, k1, t->id[row]) = (int64_t)n;
        slot = earl_map_find(&p->locks, k1, t->id[row]);
    }
    int64_t k = *slot;
    p->lock_of_row[row] = (int32_t)k;
    s->lock_prev[row] = p->lock_last[k];
    p->lock_last[k] = i;
    if (acquire) {
        p->lock_holder[k] = l;
    } else {
        if (p->lock_holder[k] != l)
            states_warn(p->warnings, EARL_SW_LOCK_RELEASE_UNHELD, l, i,
                        "release of lock %llu that location %d does not hold",
                        (unsigned long long)t->id[row], (int)l);
        p->lock_holder[k] = EARL_NONE;
    }
}

void threads_event(states_pass *p, earl_eid i, earl_loc l, earl_kind k)
{
    int32_t row = p->ev->ref[i];
    p->s->enterptr[i] = states_eid32(p->top[l]); /* team begins and ends set it again */
    if (row < 0)
        return;
    switch (k) {
    case EARL_OMP_FORK:
    case EARL_THREAD_FORK:
        fork_event(p, i, l, row);
        break;
    case EARL_OMP_JOIN:
    case EARL_THREAD_JOIN:
        join_event(p, i, l);
        break;
    case EARL_THREAD_TEAM_BEGIN:
        team_begin(p, i, l, row);
        break;
    case EARL_THREAD_TEAM_END:
        team_end(p, i, l, row);
        break;
    case EARL_OMP_ACQUIRE_LOCK:
    case EARL_THREAD_ACQUIRE_LOCK:
        lock_event(p, i, l, row, 1);
        break;
    case EARL_OMP_RELEASE_LOCK:
    case EARL_THREAD_RELEASE_LOCK:
        lock_event(p, i, l, row, 0);
        break;
    default:
        break;
    }
}

void threads_finish(states_pass *p)
{
    earl_states *s = p->s;
    const earl_sync_table *t = &p->ev->sync;
    size_t nl = s->n_locks;
    s->lock_start = calloc(nl + 1, sizeof *s->lock_start);
    if (!s->lock_start) {
        p->nomem = 1;
        return;
    }
    for (size_t r = 0; r < t->count; r++)
        if (p->lock_of_row[r] >= 0)
            s->lock_start[p->lock_of_row[r] + 1]++;
    for (size_t k = 0; k < nl; k++)
        s->lock_start[k + 1] += s->lock_start[k];
    s->lock_events = malloc((s->lock_start[nl] + 1) * sizeof *s->lock_events);
    size_t *fill = malloc((nl + 1) * sizeof *fill);
    if (!s->lock_events || !fill) {
        free(fill);
        p->nomem = 1;
        return;
    }
    memcpy(fill, s->lock_start, (nl + 1) * sizeof *fill);
    for (size_t r = 0; r < t->count; r++)
        if (p->lock_of_row[r] >= 0)
            s->lock_events[fill[p->lock_of_row[r]]++] = t->event[r];
    free(fill);
    /* sync rows are grouped by location: put each lock's events in the total order */
    for (size_t k = 0; k < nl; k++)
        qsort(s->lock_events + s->lock_start[k], s->lock_start[k + 1] - s->lock_start[k],
              sizeof *s->lock_events, earl_cmp_i64);
}

size_t earl_states_locks(const earl_states *s, earl_eid i, earl_lock_state *out, size_t cap)
{
    const earl_events *ev = earl_trace_events(s->trace);
    size_t n = 0;
    for (size_t k = 0; k < s->n_locks; k++) {
        size_t lo = earl_i64_lower_bound(s->lock_events, s->lock_start[k], s->lock_start[k + 1],
                                         i + 1);
        if (lo == s->lock_start[k])
            continue;
        earl_eid last = s->lock_events[lo - 1];
        uint8_t kind = ev->kind[last];
        if (out && n < cap) {
            out[n].process = s->lock_process[k];
            out[n].model = s->lock_model[k];
            out[n].id = s->lock_id[k];
            out[n].last = last;
            out[n].holder = (kind == EARL_THREAD_ACQUIRE_LOCK || kind == EARL_OMP_ACQUIRE_LOCK)
                                ? ev->location[last]
                                : EARL_NONE;
        }
        n++;
    }
    return n;
}
