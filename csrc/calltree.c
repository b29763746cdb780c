/*
 * calltree.c - call paths (cnodes) of every event, and exclusive time and
 * visits per (call path, location).  See earl_calltree.h.
 *
 * Two passes, both linear: the cnode of each event follows from the cnode of
 * its enterptr (which points back in time, so one forward pass over the total
 * order suffices); the metrics walk each location's own sequence and charge
 * the interval between two consecutive events to the call path that is
 * innermost in between.  Sums are integer ticks, so the result does not
 * depend on any evaluation order.
 */
#include <stdlib.h>
#include <string.h>

#include "earl_calltree.h"
#include "util.h"

struct earl_calltree {
    earl_calltree_view view;
    int32_t *parent;
    uint32_t *region;
    size_t n_cnodes, cap_parent, cap_region;
    /* open addressing: key (parent + 1) << 32 | region, slot = cnode + 1 */
    uint64_t *keys;
    int32_t *slots;
    size_t n_slots;
    int32_t *event_cnode;
    int32_t *row_cnode;
    earl_loc *row_location;
    uint64_t *row_time, *row_visits, *row_idle;
    size_t n_rows, cap_rows;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31; x *= 0x9e3779b97f4a7c15ULL; x ^= x >> 29;
    return x;
}

static int grow_slots(earl_calltree *t)
{
    size_t n = t->n_slots ? 2 * t->n_slots : 1024;
    uint64_t *keys = calloc(n, sizeof *keys);
    int32_t *slots = calloc(n, sizeof *slots);
    if (!keys || !slots) {
        free(keys); free(slots);
        return -1;
    }
    for (size_t i = 0; i < t->n_slots; i++) {
        if (!t->slots[i])
            continue;
        size_t j = mix(t->keys[i]) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        keys[j] = t->keys[i];
        slots[j] = t->slots[i];
    }
    free(t->keys); free(t->slots);
    t->keys = keys; t->slots = slots; t->n_slots = n;
    return 0;
}

/* The cnode (parent, region), created on first use; -2 when out of memory. */
static int32_t cnode_of(earl_calltree *t, int32_t parent, uint32_t region)
{
    if ((t->n_cnodes + 1) * 2 > t->n_slots && grow_slots(t) != 0)
        return -2;
    uint64_t key = ((uint64_t)(uint32_t)(parent + 1) << 32) | region;
    size_t j = mix(key) & (t->n_slots - 1);
    while (t->slots[j]) {
        if (t->keys[j] == key)
            return t->slots[j] - 1;
        j = (j + 1) & (t->n_slots - 1);
    }
    if (EARL_GROW(t->parent, t->cap_parent, t->n_cnodes + 1) != 0 ||
        EARL_GROW(t->region, t->cap_region, t->n_cnodes + 1) != 0)
        return -2;
    int32_t c = (int32_t)t->n_cnodes++;
    t->parent[c] = parent;
    t->region[c] = region;
    t->keys[j] = key;
    t->slots[j] = c + 1;
    return c;
}

/* The innermost region instance open on the location just after event i:
 * its own or, on a worker thread, one inherited from the master at the fork
 * (enterptr crosses to the master's location there).  -1 when none. */
static earl_eid open_after(const earl_events *ev, const earl_eid *enterptr, earl_eid i)
{
    if (ev->kind[i] == EARL_ENTER)
        return i;
    if (ev->kind[i] == EARL_LEAVE)
        return enterptr[i] >= 0 ? enterptr[enterptr[i]] : EARL_NONE;
    return enterptr[i];
}

/* The call path innermost on the location just after event i, counting only
 * region instances the location entered itself: a worker thread between two
 * parallel regions has only its master's inherited frames open and is idle,
 * not running the master's call path. */
static int32_t current_after(const int32_t *cnode, const earl_events *ev, const earl_eid *enterptr,
                             earl_eid i)
{
    earl_eid open = open_after(ev, enterptr, i);
    if (open < 0 || ev->location[open] != ev->location[i])
        return -1;
    return cnode[open];
}

int32_t earl_calltree_current(const earl_calltree *tree, const earl_trace *trace,
                              const earl_eid *enterptr, earl_eid i)
{
    return current_after(tree->event_cnode, earl_trace_events(trace), enterptr, i);
}

static int add_row(earl_calltree *t, int32_t c, earl_loc l, uint64_t time, uint64_t visits,
                   uint64_t idle)
{
    if (t->n_rows == t->cap_rows) {
        earl_colset s = {5, {{(void **)&t->row_cnode, sizeof *t->row_cnode},
                             {(void **)&t->row_location, sizeof *t->row_location},
                             {(void **)&t->row_time, sizeof *t->row_time},
                             {(void **)&t->row_visits, sizeof *t->row_visits},
                             {(void **)&t->row_idle, sizeof *t->row_idle}}};
        if (earl_colset_reserve(&s, &t->cap_rows, t->n_rows + 1) != 0)
            return -1;
    }
    t->row_cnode[t->n_rows] = c;
    t->row_location[t->n_rows] = l;
    t->row_time[t->n_rows] = time;
    t->row_visits[t->n_rows] = visits;
    t->row_idle[t->n_rows] = idle;
    t->n_rows++;
    return 0;
}

/* Exclusive time and visits, location by location, through a scratch array
 * over the cnodes and the list of cnodes it touched. */
static earl_status measure(earl_calltree *t, const earl_trace *trace, const earl_eid *enterptr,
                           earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    size_t n_locs = earl_trace_defs(trace)->n_locations;
    uint64_t *time = calloc(t->n_cnodes + 1, sizeof *time);
    uint64_t *visits = calloc(t->n_cnodes + 1, sizeof *visits);
    uint64_t *idle = calloc(t->n_cnodes + 1, sizeof *idle);
    int32_t *touched = malloc((t->n_cnodes + 1) * sizeof *touched);
    uint8_t *seen = calloc(t->n_cnodes + 1, 1);
    earl_status st = EARL_OK;
    if (!time || !visits || !idle || !touched || !seen) {
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory building the call tree",
                       earl_trace_path(trace));
        goto done;
    }
    for (size_t l = 0; l < n_locs && st == EARL_OK; l++) {
        size_t n_touched = 0;
        const earl_eid *seq = ev->loc_events + ev->loc_start[l];
        size_t n = ev->loc_start[l + 1] - ev->loc_start[l];
        for (size_t j = 0; j < n; j++) {
            earl_eid e = seq[j];
            int32_t c = current_after(t->event_cnode, ev, enterptr, e);
            uint64_t dt = j + 1 < n ? ev->time[seq[j + 1]] - ev->time[e] : 0;
            if (c < 0) {
                /* idle under an inherited frame: charged to the master's call path */
                earl_eid open = open_after(ev, enterptr, e);
                c = open >= 0 ? t->event_cnode[open] : -1;
                if (c >= 0)
                    idle[c] += dt;
            } else {
                if (ev->kind[e] == EARL_ENTER)
                    visits[c]++;
                time[c] += dt;
            }
            if (c >= 0 && !seen[c]) {
                seen[c] = 1;
                touched[n_touched++] = c;
            }
        }
        for (size_t k = 0; k < n_touched; k++) {
            int32_t c = touched[k];
            if (add_row(t, c, (earl_loc)l, time[c], visits[c], idle[c]) != 0) {
                st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory building the call tree",
                               earl_trace_path(trace));
                break;
            }
            time[c] = visits[c] = idle[c] = 0;
            seen[c] = 0;
        }
    }
done:
    free(time); free(visits); free(idle); free(touched); free(seen);
    return st;
}

earl_status earl_calltree_build(const earl_trace *trace, const earl_eid *enterptr,
                                earl_calltree **out, earl_error *err)
{
    *out = NULL;
    const earl_events *ev = earl_trace_events(trace);
    earl_calltree *t = calloc(1, sizeof *t);
    if (!t || !(t->event_cnode = earl_mem_alloc((ev->count + 1) * sizeof *t->event_cnode))) {
        free(t);
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory building the call tree",
                         earl_trace_path(trace));
    }
    earl_status st = EARL_OK;
    for (size_t i = 0; i < ev->count; i++) {
        earl_eid enter = enterptr[i];
        int32_t c;
        if (ev->kind[i] == EARL_ENTER)
            c = cnode_of(t, enter >= 0 ? t->event_cnode[enter] : -1, ev->region[i]);
        else
            c = enter >= 0 ? t->event_cnode[enter] : -1;
        if (c == -2) {
            st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory building the call tree",
                           earl_trace_path(trace));
            break;
        }
        t->event_cnode[i] = c;
    }
    if (st == EARL_OK)
        st = measure(t, trace, enterptr, err);
    if (st != EARL_OK) {
        earl_calltree_free(t);
        return st;
    }
    t->view = (earl_calltree_view){t->n_cnodes, t->parent, t->region, ev->count, t->event_cnode,
                                   t->n_rows, t->row_cnode, t->row_location, t->row_time,
                                   t->row_visits, t->row_idle};
    *out = t;
    return EARL_OK;
}

void earl_calltree_free(earl_calltree *t)
{
    if (!t)
        return;
    free(t->parent); free(t->region); free(t->keys); free(t->slots); earl_mem_free(t->event_cnode);
    earl_mem_free(t->row_cnode); earl_mem_free(t->row_location); earl_mem_free(t->row_time);
    earl_mem_free(t->row_visits); earl_mem_free(t->row_idle); /* columns of a colset */
    free(t);
}

const earl_calltree_view *earl_calltree_get_view(const earl_calltree *t) { return &t->view; }
