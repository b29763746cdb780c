/*
 * calltree.c - call paths (cnodes) of every event, and exclusive time and
 * visits per (call path, location).  See earl_calltree.h.
 *
 * One forward pass over the total order does both: the cnode of each event
 * follows from the cnode of its enterptr (which points back in time), and
 * the interval between two consecutive events of a location is charged to
 * the call path innermost on that location in between, which the earlier
 * of the two events decides.  A location's events come in its own order
 * within the total order, so each location only needs to remember its last
 * event (time, and the row its interval goes to).  Walking the events in
 * their stored order instead of location by location reads every column
 * once, front to back.  Sums are integer ticks, so the result does not
 * depend on any evaluation order.
 */
#include <stdlib.h>
#include <string.h>

#include "earl_calltree.h"
#include "base/colset.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/mem.h"

/* The metric columns of earl_calltree_view, as a colset. */
typedef struct rows {
    int32_t *cnode;
    earl_loc *location;
    uint64_t *time, *visits, *idle;
    size_t n, cap;
} rows;

static earl_colset rows_columns(rows *r)
{
    return (earl_colset){5, {{(void **)&r->cnode, sizeof *r->cnode},
                             {(void **)&r->location, sizeof *r->location},
                             {(void **)&r->time, sizeof *r->time},
                             {(void **)&r->visits, sizeof *r->visits},
                             {(void **)&r->idle, sizeof *r->idle}}};
}

struct earl_calltree {
    earl_calltree_view view;
    int32_t *parent;
    uint32_t *region;
    size_t n_cnodes, cap_parent, cap_region;
    earl_map cnodes;    /* (parent + 1) << 32 | region -> cnode */
    /* the cnodes entered recently, by a hash of their key: most ENTERs repeat
     * a call path of the last few iterations, found here without the map */
    struct recent_cnode {
        uint64_t key;
        int32_t cnode;
    } recent[256];
    int32_t *event_cnode;
    rows rows;          /* grouped by location, see earl_calltree.h */
};

/* The cnode (parent, region), created on first use; -2 when out of memory. */
static int32_t cnode_of(earl_calltree *t, int32_t parent, uint32_t region)
{
    uint64_t key = ((uint64_t)(uint32_t)(parent + 1) << 32) | region;
    struct recent_cnode *recent = &t->recent[earl_hash_mix(key, 0) >> 56];
    if (recent->key == key)
        return recent->cnode;
    if (EARL_GROW(t->parent, t->cap_parent, t->n_cnodes + 1) != 0 ||
        EARL_GROW(t->region, t->cap_region, t->n_cnodes + 1) != 0)
        return -2;
    int added;
    int64_t *slot = earl_map_slot(&t->cnodes, key, 0, (int64_t)t->n_cnodes, &added);
    if (!slot)
        return -2;
    int32_t c = (int32_t)*slot;
    if (added) {
        t->parent[c] = parent;
        t->region[c] = region;
        t->n_cnodes++;
    }
    *recent = (struct recent_cnode){key, c};
    return c;
}

/* The innermost region instance open on the location just after event i:
 * its own or, on a worker thread, one inherited from the master at the fork
 * (enterptr crosses to the master's location there).  -1 when none. */
static earl_eid open_after(const earl_events *ev, const earl_eid32 *enterptr, earl_eid i)
{
    if (ev->kind[i] == EARL_ENTER)
        return i;
    earl_eid enter = earl_eid_from32(enterptr[i]);
    if (ev->kind[i] == EARL_LEAVE)
        return enter >= 0 ? earl_eid_from32(enterptr[enter]) : EARL_NONE;
    return enter;
}

/* The call path innermost on the location just after event i, counting only
 * region instances the location entered itself: a worker thread between two
 * parallel regions has only its master's inherited frames open and is idle,
 * not running the master's call path. */
static int32_t current_after(const int32_t *cnode, const earl_events *ev,
                             const earl_eid32 *enterptr, earl_eid i)
{
    earl_eid open = open_after(ev, enterptr, i);
    if (open < 0 || ev->location[open] != ev->location[i])
        return -1;
    return cnode[open];
}

int32_t earl_calltree_current(const earl_calltree *tree, const earl_trace *trace,
                              const earl_eid32 *enterptr, earl_eid i)
{
    return current_after(tree->event_cnode, earl_trace_events(trace), enterptr, i);
}

/* What a location does after its latest event so far: the row its time goes
 * to until its next event (-1: none), and whether that time is idle. */
typedef struct loc_state {
    earl_time time;
    int32_t row;
    int32_t idle;
    int32_t cached_cnode, cached_row; /* the row of the location's last other call path */
} loc_state;

/* The row of (location l, cnode c), appended on first use; -1 when out of
 * memory.  Most lookups ask for one of the location's last two call paths
 * (a call and its caller alternate), answered without the map. */
static int32_t row_of(rows *r, earl_map *index, loc_state *s, earl_loc l, int32_t c)
{
    if (s->row >= 0 && r->cnode[s->row] == c)
        return s->row;
    int32_t row = s->cached_row;
    if (s->cached_cnode != c) {
        int added;
        int64_t *slot = earl_map_slot(index, ((uint64_t)l << 32) | (uint32_t)c, 0, (int64_t)r->n,
                                      &added);
        row = slot ? (int32_t)*slot : -1;
        if (row >= 0 && added) {
            earl_colset cols = rows_columns(r);
            if (earl_colset_reserve(&cols, &r->cap, r->n + 1) != 0)
                return -1;
            r->cnode[row] = c;
            r->location[row] = l;
            r->time[row] = r->visits[row] = r->idle[row] = 0;
            r->n++;
        }
    }
    if (s->row >= 0) {
        s->cached_cnode = r->cnode[s->row];
        s->cached_row = s->row;
    }
    return row;
}

/* The rows in order of first use, stably regrouped by location. */
static int group_rows_by_location(rows *r, size_t n_locs)
{
    rows out = {0};
    earl_colset cols = rows_columns(&out);
    size_t *start = calloc(n_locs + 1, sizeof *start);
    if (!start || earl_colset_reserve(&cols, &out.cap, r->n ? r->n : 1) != 0) {
        free(start);
        earl_colset_free(&cols);
        return -1;
    }
    for (size_t k = 0; k < r->n; k++)
        start[r->location[k] + 1]++;
    for (size_t l = 0; l < n_locs; l++)
        start[l + 1] += start[l];
    for (size_t k = 0; k < r->n; k++) {
        size_t to = start[r->location[k]]++;
        out.cnode[to] = r->cnode[k];
        out.location[to] = r->location[k];
        out.time[to] = r->time[k];
        out.visits[to] = r->visits[k];
        out.idle[to] = r->idle[k];
    }
    out.n = r->n;
    free(start);
    earl_colset old = rows_columns(r);
    earl_colset_free(&old);
    *r = out;
    return 0;
}

/* The forward pass: cnodes of every event, and the metric rows. */
static earl_status walk(earl_calltree *t, const earl_trace *trace, const earl_eid32 *enterptr,
                        earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    size_t n_locs = earl_trace_defs(trace)->n_locations;
    loc_state *locs = malloc((n_locs ? n_locs : 1) * sizeof *locs);
    earl_map index = {0};
    if (!locs)
        goto nomem;
    for (size_t l = 0; l < n_locs; l++)
        locs[l] = (loc_state){0, -1, 0, -1, -1};
    int32_t *cnode = t->event_cnode;
    rows *r = &t->rows;
    for (size_t i = 0; i < ev->count; i++) {
        earl_eid enter = earl_eid_from32(enterptr[i]);
        uint8_t kind = ev->kind[i];
        int32_t c;
        if (kind == EARL_ENTER)
            c = cnode_of(t, enter >= 0 ? cnode[enter] : -1, ev->region[i]);
        else
            c = enter >= 0 ? cnode[enter] : -1;
        if (c == -2)
            goto nomem;
        cnode[i] = c;

        earl_loc l = ev->location[i];
        loc_state *s = &locs[l];
        earl_time now = ev->time[i];
        if (s->row >= 0)
            (s->idle ? r->idle : r->time)[s->row] += now - s->time;
        s->time = now;
        /* after i: the location's own innermost call path, or, idle under a
         * frame inherited from its master, the master's call path */
        earl_eid open = open_after(ev, enterptr, (earl_eid)i);
        int32_t charged = open >= 0 ? cnode[open] : -1;
        int32_t row = -1;
        if (charged >= 0 && (row = row_of(r, &index, s, l, charged)) < 0)
            goto nomem;
        s->row = row;
        s->idle = open >= 0 && ev->location[open] != l;
        if (row >= 0 && !s->idle && kind == EARL_ENTER)
            r->visits[row]++;
    }
    free(locs);
    earl_map_free(&index);
    if (group_rows_by_location(r, n_locs) != 0)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory building the call tree",
                         earl_trace_path(trace));
    return EARL_OK;
nomem:
    free(locs);
    earl_map_free(&index);
    return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory building the call tree",
                     earl_trace_path(trace));
}

earl_status earl_calltree_build(const earl_trace *trace, const earl_eid32 *enterptr,
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
    for (size_t k = 0; k < sizeof t->recent / sizeof *t->recent; k++)
        t->recent[k].key = UINT64_MAX; /* no key: parent + 1 stays below 2^32 - 1 */
    earl_status st = walk(t, trace, enterptr, err);
    if (st != EARL_OK) {
        earl_calltree_free(t);
        return st;
    }
    t->view = (earl_calltree_view){t->n_cnodes, t->parent, t->region, ev->count, t->event_cnode,
                                   t->rows.n, t->rows.cnode, t->rows.location, t->rows.time,
                                   t->rows.visits, t->rows.idle};
    *out = t;
    return EARL_OK;
}

void earl_calltree_free(earl_calltree *t)
{
    if (!t)
        return;
    free(t->parent); free(t->region); earl_map_free(&t->cnodes);
    earl_mem_free(t->event_cnode);
    earl_colset cols = rows_columns(&t->rows);
    earl_colset_free(&cols);
    free(t);
}

const earl_calltree_view *earl_calltree_get_view(const earl_calltree *t) { return &t->view; }
