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
 *
 * On several threads the processes are dealt out to parts (whole processes:
 * a worker thread's enterptr leads to its master), each part walks the
 * events of its own locations with call paths of its own, numbered in its
 * order of first entry, and remembers the ENTER that first entered each.
 * The parts' call paths are then merged in the order of those ENTERs, which
 * numbers them as one walk would (a call path is numbered when the whole
 * trace first enters it), and each part renumbers its events and rows.  A
 * trace whose enterptr crosses processes (it should not) is walked whole.
 *
 * The walk keeps its state between stretches of events (walker), so that
 * earl_calltree_walk can also go on stretch by stretch behind the EARL
 * layer's pass, as one part of every location, on the thread that writes
 * enterptr: each event is then read once in all, where parts on threads
 * read every event once per part.
 *
 * Most of the walk's time was look-ups (the call path and enterptr of an
 * ENTER far back, a hash of the (location, call path) row), not the reading
 * of the events: each location keeps the frames it entered itself (frame,
 * below), so that the events inside the call on top, its LEAVE and the call
 * below it are answered from the stack.  A frame is used only where enterptr
 * names its ENTER, so the stack changes no answer, only which are looked up.
 */
#include <stdlib.h>
#include <string.h>

#include "earl_calltree.h"
#include "base/colset.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/mem.h"
#include "base/parts.h"

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

/* Call paths numbered in order of first entry: parent, region and the ENTER
 * that first entered each, found through a map and a table of recent ones. */
typedef struct paths {
    int32_t *parent;
    uint32_t *region;
    earl_eid *first;
    size_t n, cap_parent, cap_region, cap_first;
    earl_map map;    /* (parent + 1) << 32 | region -> cnode */
    /* the cnodes entered recently, by a hash of their key: most ENTERs repeat
     * a call path of the last few iterations, found here without the map */
    struct recent_cnode {
        uint64_t key;
        int32_t cnode;
    } recent[256];
} paths;

static void paths_init(paths *t)
{
    memset(t, 0, sizeof *t);
    for (size_t k = 0; k < sizeof t->recent / sizeof *t->recent; k++)
        t->recent[k].key = UINT64_MAX; /* no key: parent + 1 stays below 2^32 - 1 */
}

static void paths_free(paths *t)
{
    free(t->parent); free(t->region); free(t->first);
    earl_map_free(&t->map);
}

struct earl_calltree {
    earl_calltree_view view;
    paths paths;
    int32_t *event_cnode;
    rows rows;          /* grouped by location, see earl_calltree.h */
};

/* The cnode (parent, region), created on first use by the ENTER `at`; -2
 * when out of memory. */
static int32_t cnode_of(paths *t, int32_t parent, uint32_t region, earl_eid at)
{
    uint64_t key = ((uint64_t)(uint32_t)(parent + 1) << 32) | region;
    struct recent_cnode *recent = &t->recent[earl_hash_mix(key, 0) >> 56];
    if (recent->key == key)
        return recent->cnode;
    if (EARL_GROW(t->parent, t->cap_parent, t->n + 1) != 0 ||
        EARL_GROW(t->region, t->cap_region, t->n + 1) != 0 ||
        EARL_GROW(t->first, t->cap_first, t->n + 1) != 0)
        return -2;
    int added;
    int64_t *slot = earl_map_slot(&t->map, key, 0, (int64_t)t->n, &added);
    if (!slot)
        return -2;
    int32_t c = (int32_t)*slot;
    if (added) {
        t->parent[c] = parent;
        t->region[c] = region;
        t->first[c] = at;
        t->n++;
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
    int32_t depth;                    /* frames on the location's stack (walker.frames) */
} loc_state;

/* The rows of (location, cnode) pairs looked up recently, by a hash of the
 * pair: a loop's body visits more call paths than the two a location
 * remembers, and comes back to them in the next iteration. */
typedef struct recent_row {
    uint64_t key; /* location << 32 | cnode; UINT64_MAX: none */
    int32_t row;
} recent_row;
#define RECENT_ROWS 1024

/* A region instance a location entered itself, as the walk saw its ENTER:
 * a location's frames form a stack beside the EARL layer's region stacks,
 * innermost on top, so that the events inside a call, its LEAVE and the
 * time after it find their call path and row without reading the ENTERs'
 * columns (enterptr, location, cnode of events far back) or asking the maps:
 * the walk's look-ups were most of its time.  The stack is only a cache of
 * what enterptr says: a frame is used only when its ENTER is the event's
 * enterptr (and a LEAVE's parent only when it is the frame below), so a
 * stack that does not match (a worker thread under its master's inherited
 * frames, a damaged trace, a location deeper than FRAMES, whose outermost
 * frames are dropped) sends the walk the long way, never to another answer. */
typedef struct frame {
    earl_eid enter, parent; /* the ENTER, and its own enterptr */
    int32_t cnode, row;     /* its call path, and the row of (location, call path) */
} frame;
#define FRAMES 16
/* At most this many bytes of frames per part; more locations walk without. */
#define FRAMES_BYTES ((size_t)8 << 20)

/* The row of (location l, cnode c), appended on first use; -1 when out of
 * memory.  Most lookups ask for one of the location's last two call paths
 * (a call and its caller alternate), answered without the map, and most
 * others for a pair of the recent table. */
static int32_t row_of(rows *r, earl_map *index, recent_row *recent, loc_state *s, earl_loc l,
                      int32_t c)
{
    if (s->row >= 0 && r->cnode[s->row] == c)
        return s->row;
    int32_t row = s->cached_row;
    if (s->cached_cnode != c) {
        uint64_t key = ((uint64_t)l << 32) | (uint32_t)c;
        recent_row *hit = &recent[earl_hash_mix(key, 0) >> 54];
        int added = 0;
        if (hit->key == key) {
            row = hit->row;
        } else {
            int64_t *slot = earl_map_slot(index, key, 0, (int64_t)r->n, &added);
            row = slot ? (int32_t)*slot : -1;
            if (row >= 0)
                *hit = (recent_row){key, row};
        }
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

/* One part of the walk: the events of the locations whose part_of entry is
 * its number, its own call paths and its locations' rows. */
typedef struct walk_part {
    paths paths;
    rows rows;
    int32_t *map;  /* its call paths -> the merged ones */
    int crossed;   /* an enterptr led to another part's location: walk whole */
    int nomem;
} walk_part;

typedef struct walk_job {
    const earl_events *ev;
    const earl_eid32 *enterptr;
    size_t n_locs;
    const uint8_t *part_of; /* per location */
    int32_t *cnode;         /* per event: the part's cnode, then the merged one */
    walk_part *parts;
    int n_parts;
} walk_job;

/* One forward walk: a part's state between two stretches of the events,
 * so that the walk can go on in stretches (beside the EARL layer's pass,
 * earl_calltree_walk) as well as in one go. */
typedef struct walker {
    const earl_events *ev;
    const earl_eid32 *enterptr;
    const uint8_t *part_of; /* per location; NULL: every location is the part's */
    int me, n_parts;
    int32_t *cnode;
    walk_part *w;
    earl_map index;         /* location << 32 | cnode -> row */
    loc_state *locs;        /* per location */
    recent_row *recent;     /* RECENT_ROWS */
    frame *frames;          /* FRAMES per location; NULL: too many locations */
} walker;

static int walker_init(walker *k, const earl_events *ev, size_t n_locs, const earl_eid32 *enterptr,
                       const uint8_t *part_of, int me, int n_parts, int32_t *cnode, walk_part *w)
{
    *k = (walker){ev, enterptr, part_of, me, n_parts, cnode, w, {0}, NULL, NULL, NULL};
    k->locs = malloc((n_locs ? n_locs : 1) * sizeof *k->locs);
    k->recent = malloc(RECENT_ROWS * sizeof *k->recent);
    if (!k->locs || !k->recent) {
        free(k->locs);
        free(k->recent);
        return -1;
    }
    /* no frames (too many locations, or no memory for them): the long way */
    if (n_locs && n_locs <= FRAMES_BYTES / (FRAMES * sizeof *k->frames))
        k->frames = malloc(n_locs * FRAMES * sizeof *k->frames);
    for (size_t l = 0; l < n_locs; l++)
        k->locs[l] = (loc_state){0, -1, 0, -1, -1, 0};
    for (size_t r = 0; r < RECENT_ROWS; r++)
        k->recent[r] = (recent_row){UINT64_MAX, -1};
    return 0;
}

static void walker_free(walker *k)
{
    free(k->locs);
    free(k->recent);
    free(k->frames);
    earl_map_free(&k->index);
}

/* Push the frame of ENTER i on its location's stack (s: the location's
 * state, stack: its frames); a full stack drops its outermost frame. */
static inline void push_frame(loc_state *s, frame *stack, earl_eid i, earl_eid parent,
                              int32_t c, int32_t row)
{
    if (s->depth == FRAMES) {
        memmove(stack, stack + 1, (FRAMES - 1) * sizeof *stack);
        s->depth--;
    }
    stack[s->depth++] = (frame){i, parent, c, row};
}

/* The walk over events [from, to) of the total order (those of the part's
 * locations): their cnodes, and the rows of the time up to them.  Sets the
 * part's crossed or nomem and stops at the event concerned.
 *
 * Per event: its call path c (an ENTER's is the child of its enterptr's,
 * any other event's is its enterptr's), the region instance open after it
 * (open_after) and the row of (location, that instance's call path) that the
 * time until the location's next event goes to.  The frames answer the
 * common cases (an event inside the call on top of its location's stack, the
 * LEAVE of that call and the frame below it); the rest is looked up. */
static void walker_range(walker *k, size_t from, size_t to)
{
    const earl_events *ev = k->ev;
    const earl_eid32 *enterptr = k->enterptr;
    const uint8_t *part_of = k->part_of;
    const int me = k->me;
    const int check_parts = part_of && k->n_parts > 1;
    int32_t *cnode = k->cnode;
    walk_part *w = k->w;
    rows *r = &w->rows;
    if (w->crossed || w->nomem)
        return;
    for (size_t i = from; i < to; i++) {
        earl_loc l = ev->location[i];
        if (part_of && part_of[l] != me)
            continue;
        earl_eid enter = earl_eid_from32(enterptr[i]);
        uint8_t kind = ev->kind[i];
        loc_state *s = &k->locs[l];
        frame *stack = k->frames ? k->frames + (size_t)l * FRAMES : NULL;
        frame *top = stack && s->depth ? &stack[s->depth - 1] : NULL;
        int on_top = top && top->enter == enter;
        int32_t c, charged, row = -1;
        int idle = 0;
        earl_eid open;
        if (on_top && kind != EARL_ENTER && kind != EARL_LEAVE) {
            /* inside the call on top: its call path and row */
            c = charged = top->cnode;
            row = top->row;
            open = enter;
        } else if (on_top && kind == EARL_LEAVE) {
            /* the call on top ends; the frame below, if it is the one open now */
            c = top->cnode;
            open = top->parent;
            s->depth--;
            frame *below = s->depth ? &stack[s->depth - 1] : NULL;
            if (below && below->enter == open) {
                charged = below->cnode;
                row = below->row;
            } else if (open < 0) {
                charged = -1;
            } else {
                if (check_parts && part_of[ev->location[open]] != me) {
                    w->crossed = 1;
                    return;
                }
                charged = cnode[open];
                idle = ev->location[open] != l;
                if (charged >= 0 && (row = row_of(r, &k->index, k->recent, s, l, charged)) < 0) {
                    w->nomem = 1;
                    return;
                }
            }
        } else {
            /* an ENTER (its parent from the top frame when that is its
             * enterptr), or an event the frames do not know: looked up */
            open = open_after(ev, enterptr, (earl_eid)i);
            if (check_parts && !on_top &&
                ((enter >= 0 && part_of[ev->location[enter]] != me) ||
                 (open >= 0 && part_of[ev->location[open]] != me))) {
                w->crossed = 1;
                return;
            }
            if (kind == EARL_ENTER)
                c = cnode_of(&w->paths, on_top ? top->cnode : enter >= 0 ? cnode[enter] : -1,
                             ev->region[i], (earl_eid)i);
            else
                c = enter >= 0 ? cnode[enter] : -1;
            if (c == -2) {
                w->nomem = 1;
                return;
            }
            charged = kind == EARL_ENTER ? c : open >= 0 ? cnode[open] : -1;
            idle = open >= 0 && kind != EARL_ENTER && ev->location[open] != l;
            if (charged >= 0 && (row = row_of(r, &k->index, k->recent, s, l, charged)) < 0) {
                w->nomem = 1;
                return;
            }
            if (stack) {
                if (top && !on_top)
                    s->depth = 0; /* the stack no longer matches: start again */
                if (kind == EARL_ENTER)
                    push_frame(s, stack, (earl_eid)i, enter, c, row);
            }
        }
        cnode[i] = c;

        earl_time now = ev->time[i];
        if (s->row >= 0)
            (s->idle ? r->idle : r->time)[s->row] += now - s->time;
        s->time = now;
        s->row = row;
        s->idle = idle;
        if (row >= 0 && !idle && kind == EARL_ENTER)
            r->visits[row]++;
    }
}

/* The forward pass of one part: cnodes of its events, and its rows. */
static void walk_one(void *arg, int me)
{
    walk_job *j = arg;
    walker k;
    if (walker_init(&k, j->ev, j->n_locs, j->enterptr, j->part_of, me, j->n_parts, j->cnode,
                    &j->parts[me]) != 0) {
        j->parts[me].nomem = 1;
        return;
    }
    walker_range(&k, 0, j->ev->count);
    walker_free(&k);
}

/* Renumber the events of one range of the total order with the merged call
 * paths, each through the map of its location's part: the ranges split the
 * work evenly, where parts by location would each read every event. */
static void renumber_range(void *arg, int me)
{
    walk_job *j = arg;
    const earl_events *ev = j->ev;
    size_t to = earl_part_start(ev->count, me + 1, j->n_parts);
    for (size_t i = earl_part_start(ev->count, me, j->n_parts); i < to; i++)
        if (j->cnode[i] >= 0)
            j->cnode[i] = j->parts[j->part_of[ev->location[i]]].map[j->cnode[i]];
}

/* Processes dealt out to n parts in definition order, contiguous blocks of
 * about equal events; returns the parts that got any. */
static int deal_processes(const earl_trace *trace, int n, uint8_t *part_of)
{
    const earl_defs *defs = earl_trace_defs(trace);
    const size_t *start = earl_trace_events(trace)->loc_start;
    size_t n_locs = defs->n_locations, groups = defs->n_location_groups;
    uint64_t *weight = calloc(groups + 1, sizeof *weight);
    if (!weight)
        return 1;
    uint64_t total = 0;
    for (size_t l = 0; l < n_locs; l++) {
        uint32_t g = defs->locations[l].group;
        uint64_t w = start[l + 1] - start[l];
        weight[g < groups ? g : groups] += w;
        total += w;
    }
    /* part of each group: where the middle of its events falls */
    uint8_t *group_part = malloc(groups + 1);
    int used = 0;
    if (group_part) {
        uint64_t before = 0;
        for (size_t g = 0; g <= groups; g++) {
            uint64_t mid = before + weight[g] / 2;
            int p = total ? (int)((unsigned __int128)mid * (unsigned)n / total) : 0;
            group_part[g] = (uint8_t)(p < n ? p : n - 1);
            before += weight[g];
            if (group_part[g] + 1 > used)
                used = group_part[g] + 1;
        }
        for (size_t l = 0; l < n_locs; l++) {
            uint32_t g = defs->locations[l].group;
            part_of[l] = group_part[g < groups ? g : groups];
        }
    } else {
        memset(part_of, 0, n_locs);
        used = 1;
    }
    free(group_part);
    free(weight);
    return used;
}

/* The parts' call paths merged in the order of their first ENTER into t's,
 * each part's map filled. */
static int merge_paths(paths *t, walk_part *parts, int n_parts)
{
    size_t next[EARL_MAX_PARTS] = {0};
    for (int p = 0; p < n_parts; p++)
        if (parts[p].paths.n &&
            !(parts[p].map = malloc(parts[p].paths.n * sizeof *parts[p].map)))
            return -1;
    for (;;) {
        int best = -1;
        for (int p = 0; p < n_parts; p++)
            if (next[p] < parts[p].paths.n &&
                (best < 0 || parts[p].paths.first[next[p]] <
                                 parts[best].paths.first[next[best]]))
                best = p;
        if (best < 0)
            return 0;
        paths *from = &parts[best].paths;
        size_t c = next[best]++;
        int32_t parent = from->parent[c] >= 0 ? parts[best].map[from->parent[c]] : -1;
        int32_t merged = cnode_of(t, parent, from->region[c], from->first[c]);
        if (merged < 0)
            return -1;
        parts[best].map[c] = merged;
    }
}

/* The walk in n parts into t; 0, 1 when an enterptr crossed parts, -1 when
 * out of memory. */
static int walk(earl_calltree *t, const earl_trace *trace, const earl_eid32 *enterptr, int n)
{
    const earl_events *ev = earl_trace_events(trace);
    size_t n_locs = earl_trace_defs(trace)->n_locations;
    uint8_t *part_of = malloc(n_locs ? n_locs : 1);
    walk_part *parts = calloc((size_t)n, sizeof *parts);
    if (!part_of || !parts) {
        free(part_of);
        free(parts);
        return -1;
    }
    n = n > 1 ? deal_processes(trace, n, part_of) : (memset(part_of, 0, n_locs), 1);
    for (int p = 0; p < n; p++)
        paths_init(&parts[p].paths);
    walk_job j = {ev, enterptr, n_locs, part_of, t->event_cnode, parts, n};
    earl_parallel(n, walk_one, &j);
    int status = 0;
    for (int p = 0; p < n; p++) {
        status = parts[p].nomem ? -1 : status;
        status = status == 0 && parts[p].crossed ? 1 : status;
    }
    if (status == 0 && n == 1) { /* the part's call paths are the tree's */
        t->paths = parts[0].paths;
        t->rows = parts[0].rows;
        parts[0].paths = (paths){0};
        parts[0].rows = (rows){0};
    } else if (status == 0) {
        status = merge_paths(&t->paths, parts, n);
        if (status == 0)
            earl_parallel(n, renumber_range, &j);
        size_t total = 0;
        for (int p = 0; p < n; p++)
            total += parts[p].rows.n;
        earl_colset cols = rows_columns(&t->rows);
        if (status == 0 && earl_colset_reserve(&cols, &t->rows.cap, total ? total : 1) != 0)
            status = -1;
        for (int p = 0; status == 0 && p < n; p++) {
            rows *r = &parts[p].rows;
            for (size_t k = 0; k < r->n; k++) {
                size_t to = t->rows.n++;
                t->rows.cnode[to] = parts[p].map[r->cnode[k]];
                t->rows.location[to] = r->location[k];
                t->rows.time[to] = r->time[k];
                t->rows.visits[to] = r->visits[k];
                t->rows.idle[to] = r->idle[k];
            }
        }
    }
    for (int p = 0; p < n; p++) {
        paths_free(&parts[p].paths);
        earl_colset cols = rows_columns(&parts[p].rows);
        earl_colset_free(&cols);
        free(parts[p].map);
    }
    free(parts);
    free(part_of);
    return status;
}

static earl_status nomem(const earl_trace *trace, earl_error *err)
{
    return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory building the call tree",
                     earl_trace_path(trace));
}

/* A tree with its event_cnode allocated and no call paths yet; NULL when out
 * of memory. */
static earl_calltree *tree_new(const earl_events *ev)
{
    earl_calltree *t = calloc(1, sizeof *t);
    if (!t || !(t->event_cnode = earl_mem_alloc((ev->count + 1) * sizeof *t->event_cnode))) {
        free(t);
        return NULL;
    }
    paths_init(&t->paths);
    return t;
}

/* The walked tree's rows grouped by location and its view filled. */
static int tree_finish(earl_calltree *t, const earl_trace *trace)
{
    const earl_events *ev = earl_trace_events(trace);
    if (group_rows_by_location(&t->rows, earl_trace_defs(trace)->n_locations) != 0)
        return -1;
    t->view = (earl_calltree_view){t->paths.n, t->paths.parent, t->paths.region, ev->count,
                                   t->event_cnode, t->rows.n, t->rows.cnode, t->rows.location,
                                   t->rows.time, t->rows.visits, t->rows.idle};
    return 0;
}

earl_status earl_calltree_build(const earl_trace *trace, const earl_eid32 *enterptr,
                                int threads, earl_calltree **out, earl_error *err)
{
    *out = NULL;
    const earl_events *ev = earl_trace_events(trace);
    earl_calltree *t = tree_new(ev);
    if (!t)
        return nomem(trace, err);
    int parts = earl_parallel_parts(threads, ev->count, (size_t)1 << 20);
    if (parts > (int)earl_trace_defs(trace)->n_location_groups)
        parts = (int)earl_trace_defs(trace)->n_location_groups;
    int st = walk(t, trace, enterptr, parts > 1 ? parts : 1);
    if (st == 1) { /* an enterptr crossed processes: walk the trace whole */
        earl_calltree_free(t);
        return earl_calltree_build(trace, enterptr, 1, out, err);
    }
    if (st != 0 || tree_finish(t, trace) != 0) {
        earl_calltree_free(t);
        return nomem(trace, err);
    }
    *out = t;
    return EARL_OK;
}

/* The walk of earl_calltree_walk_begin: one part, every location, its call
 * paths and rows those of the tree. */
struct earl_calltree_walk {
    const earl_trace *trace;
    earl_calltree *tree;
    walk_part part;
    walker walker;
};

earl_status earl_calltree_walk_begin(const earl_trace *trace, const earl_eid32 *enterptr,
                                     earl_calltree_walk **out, earl_error *err)
{
    *out = NULL;
    const earl_events *ev = earl_trace_events(trace);
    earl_calltree_walk *w = calloc(1, sizeof *w);
    if (!w || !(w->tree = tree_new(ev))) {
        free(w);
        return nomem(trace, err);
    }
    w->trace = trace;
    paths_init(&w->part.paths);
    if (walker_init(&w->walker, ev, earl_trace_defs(trace)->n_locations, enterptr, NULL, 0, 1,
                    w->tree->event_cnode, &w->part) != 0) {
        earl_calltree_walk_end(w, NULL, NULL);
        return nomem(trace, err);
    }
    *out = w;
    return EARL_OK;
}

void earl_calltree_walk_events(earl_calltree_walk *w, size_t from, size_t to)
{
    walker_range(&w->walker, from, to);
}

earl_status earl_calltree_walk_end(earl_calltree_walk *w, earl_calltree **out, earl_error *err)
{
    if (out)
        *out = NULL;
    if (!w)
        return EARL_OK;
    const earl_trace *trace = w->trace;
    earl_calltree *t = w->tree;
    int failed = w->part.nomem || w->part.crossed; /* one part: it never crosses */
    walker_free(&w->walker);
    t->paths = w->part.paths; /* the one part's call paths and rows are the tree's */
    t->rows = w->part.rows;
    free(w);
    if (!out) {
        earl_calltree_free(t);
        return EARL_OK;
    }
    if (failed || tree_finish(t, trace) != 0) {
        earl_calltree_free(t);
        return nomem(trace, err);
    }
    *out = t;
    return EARL_OK;
}

void earl_calltree_free(earl_calltree *t)
{
    if (!t)
        return;
    paths_free(&t->paths);
    earl_mem_free(t->event_cnode);
    earl_colset cols = rows_columns(&t->rows);
    earl_colset_free(&cols);
    free(t);
}

const earl_calltree_view *earl_calltree_get_view(const earl_calltree *t) { return &t->view; }
