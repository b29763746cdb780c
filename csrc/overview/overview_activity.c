/*
 * overview_activity.c - the dominant activity of each (row, bin) of a
 * timeline picture, at several levels of detail at once
 * (earl_overview_activity, see earl_overview.h).
 *
 * The window's events are walked once in the total order, which reads the
 * event columns front to back (a walk per location would jump through them).
 * Each drawn location remembers its previous event's time and what it had
 * innermost open after it (a class, or idleness); its next event closes that
 * stretch, which every level then adds to its bins.  A location's stretches
 * arrive in time order, so the bins they touch only grow: per (row, level)
 * one bin is open at a time, holding per-class sums.  A stretch inside the
 * open bin adds its length there; one reaching past it closes the bin (its
 * winner is written) and paints the bins it covers whole with its own class
 * directly.  So the pass costs O(events of the window + bins of all levels)
 * and keeps n_classes + 1 sums per (row, level), however many bins a level
 * has (the finest levels of the HTML page have millions).
 *
 * A class that wins no bin anywhere in a level would vanish from it although
 * the window holds it (MPI_Init's few microseconds in a trace of seconds):
 * while closing bins, each class's largest share in a bin it did not win is
 * remembered (on equal shares, the first bin in row-major order), and after
 * the pass such a class takes that bin.  A picture whose rows are painted in
 * parts (earl_overview_activity_part) decides that over all its rows: each
 * part hands its tallies to the caller instead.
 *
 * Rows are independent: with several threads, each paints a block of rows
 * (walking all of the window's events, skipping the other rows' ones) and
 * keeps its own tallies per class, merged at the end; the picture is the
 * same for any number of threads.
 */
#include <stdlib.h>
#include <string.h>

#include "earl_overview.h"
#include "earl_states.h"
#include "overview_internal.h"
#include "base/parts.h"

#define NO_BIN UINT32_MAX
#define NO_CLASS UINT32_MAX /* a location whose record has not begun */

/* One level: its bins and its output. */
typedef struct level {
    overview_bins bins;
    uint8_t *out;                                /* n_rows * bins.n */
} level;

/* What one thread has seen of every class at one level (earl_overview.h). */
typedef earl_overview_tally tally;

/* The open bin of one row at one level. */
typedef struct cell {
    uint32_t bin;      /* NO_BIN: none */
    int64_t lo, hi;    /* its edges: stretches inside them need no division */
    int64_t *sum;      /* n_classes + 1 sums, idleness last */
} cell;

/* One thread's work: the rows [row_lo, row_hi) (a block: the cells and
 * per-row state of different threads do not share cache lines but at its
 * edges). */
typedef struct painter {
    uint32_t n_classes; /* idleness is class n_classes */
    uint32_t n_levels;
    const level *levels;
    tally *tallies;     /* one per level, this thread's own */
    cell *cells;        /* row * n_levels + level (shared: each row has one thread) */
    uint32_t row_lo, row_hi;
    /* each level's bins are whole multiples of the previous level's (levels
     * of detail, coarse to fine): its bins nest in theirs */
    int nested;
    /* the inputs */
    const earl_events *ev;
    const earl_eid32 *enterptr;
    const uint8_t *class_of_region;
    uint32_t n_regions;
    const earl_loc *rows;
    uint32_t n_rows;
    const int32_t *row_of;
    const earl_overview_window *window;
    int64_t *prev_time;  /* per row */
    uint32_t *prev_class;
} painter;

/* Write a cell's open bin and start afresh. */
static void close_bin(painter *p, const level *lv, tally *ty, cell *c, uint32_t row)
{
    if (c->bin == NO_BIN)
        return;
    const uint32_t idle = p->n_classes;
    uint32_t best = idle;
    int64_t top = 0;
    for (uint32_t k = 0; k <= idle; k++) {
        if (c->sum[k] > top) { /* strict: ties stay with the lower class */
            top = c->sum[k];
            best = k;
        }
    }
    size_t at = (size_t)row * lv->bins.n + c->bin;
    lv->out[at] = best != idle ? (uint8_t)best : top > 0 ? EARL_OVERVIEW_IDLE : EARL_OVERVIEW_EMPTY;
    if (best != idle)
        ty->won[best]++;
    int64_t width = c->hi - c->lo;
    for (uint32_t k = 0; k < idle; k++) {
        if (k != best && c->sum[k] > 0) {
            double share = (double)c->sum[k] / (double)(width > 0 ? width : 1);
            if (share > ty->best_share[k] || (share == ty->best_share[k] && at < ty->best_at[k])) {
                ty->best_share[k] = share;
                ty->best_at[k] = at;
            }
        }
    }
    memset(c->sum, 0, (idle + 1) * sizeof *c->sum);
    c->bin = NO_BIN;
}

/* Make bin b the cell's open bin. */
static void open_bin(const level *lv, cell *c, uint32_t b)
{
    c->bin = b;
    c->lo = overview_edge(&lv->bins, b);
    c->hi = overview_edge(&lv->bins, (uint64_t)b + 1);
}

/* The stretch [s, e) (ticks from the window's start) of class cls on one row
 * of one level. */
static void add_stretch(painter *p, const level *lv, tally *ty, cell *c, uint32_t row,
                        int64_t s, int64_t e, uint32_t cls)
{
    if (c->bin != NO_BIN && s >= c->lo && e <= c->hi) { /* most stretches */
        c->sum[cls] += e - s;
        return;
    }
    const overview_bins *w = &lv->bins;
    if (s < 0)
        s = 0;
    if (e > w->span)
        e = w->span;
    if (e <= s)
        return;
    uint32_t b0 = c->bin != NO_BIN && s >= c->lo && s < c->hi ? c->bin : overview_bin_of(w, s);
    if (b0 != c->bin) {
        close_bin(p, lv, ty, c, row);
        open_bin(lv, c, b0);
    }
    if (e <= c->hi) {
        c->sum[cls] += e - s;
        return;
    }
    c->sum[cls] += c->hi - s;
    close_bin(p, lv, ty, c, row);
    uint32_t b1 = overview_bin_of(w, e - 1);
    if (b1 > b0 + 1) {
        int idle = cls == p->n_classes;
        memset(lv->out + (size_t)row * w->n + b0 + 1, idle ? EARL_OVERVIEW_IDLE : (int)cls,
               b1 - b0 - 1);
        if (!idle)
            ty->won[cls] += b1 - b0 - 1;
    }
    open_bin(lv, c, b1);
    c->sum[cls] += e - c->lo;
}

static void add_to_levels(painter *p, uint32_t row, int64_t s, int64_t e, uint32_t cls)
{
    cell *cells = &p->cells[(size_t)row * p->n_levels];
    if (p->nested) {
        /* every level's open bin holds the finest level's: a stretch inside
         * that one is inside all of them (most stretches, at most levels) */
        const cell *fine = &cells[p->n_levels - 1];
        if (fine->bin != NO_BIN && s >= fine->lo && e <= fine->hi) {
            for (uint32_t k = 0; k < p->n_levels; k++)
                cells[k].sum[cls] += e - s;
            return;
        }
    }
    for (uint32_t k = 0; k < p->n_levels; k++)
        add_stretch(p, &p->levels[k], &p->tallies[k], &cells[k], row, s, e, cls);
}

/* What location ev->location[i] does after event i: the class of the region
 * it has innermost open itself, or idleness. */
static uint32_t class_after(const earl_events *ev, const earl_eid32 *enterptr,
                            const uint8_t *class_of_region, uint32_t n_regions,
                            uint32_t n_classes, earl_eid i)
{
    earl_eid own = earl_states_own_innermost(ev, enterptr, i);
    if (own < 0)
        return n_classes;
    uint32_t ref = ev->region[own];
    return class_of_region[ref < n_regions ? ref : n_regions];
}

/* The first event id in the total order with time >= t. */
static size_t first_at(const earl_events *ev, int64_t t)
{
    size_t lo = 0, hi = ev->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)ev->time[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The position, among location loc's events (its own order), of its first
 * event with an id >= id. */
static size_t position_of(const earl_events *ev, earl_loc loc, size_t id)
{
    const earl_eid32 *ids = ev->loc_events + ev->loc_start[loc];
    size_t lo = 0, hi = ev->loc_start[loc + 1] - ev->loc_start[loc];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static earl_status check(const earl_trace *trace, const uint8_t *class_of_region,
                         uint32_t n_regions, uint32_t n_classes, const earl_loc *rows,
                         uint32_t n_rows, const earl_overview_window *window,
                         const uint32_t *bins, uint32_t n_levels, int32_t *row_of,
                         earl_error *err)
{
    const char *who = "earl_overview_activity";
    for (uint32_t k = 0; k < n_levels; k++) {
        earl_status st = overview_check_window(window, bins[k], who, err);
        if (st != EARL_OK)
            return st;
    }
    if (n_classes < 1 || n_classes > EARL_OVERVIEW_MAX_CLASSES)
        return earl_fail(err, EARL_ERR_INVALID, "%s: between 1 and %d classes, not %u", who,
                         EARL_OVERVIEW_MAX_CLASSES, n_classes);
    for (uint32_t r = 0; r <= n_regions; r++) {
        if (class_of_region[r] >= n_classes)
            return earl_fail(err, EARL_ERR_INVALID, "%s: region %u has class %u, but there are "
                             "%u classes", who, r, class_of_region[r], n_classes);
    }
    const uint32_t n_loc = earl_trace_defs(trace)->n_locations;
    for (uint32_t r = 0; r < n_rows; r++) {
        if (rows[r] < 0 || (uint32_t)rows[r] >= n_loc)
            return earl_fail(err, EARL_ERR_INVALID, "%s: row %u is location %d; the trace has "
                             "%u locations", who, r, (int)rows[r], n_loc);
        if (row_of[rows[r]] >= 0)
            return earl_fail(err, EARL_ERR_INVALID, "%s: location %d is drawn twice (rows %d "
                             "and %u)", who, (int)rows[r], row_of[rows[r]], r);
        row_of[rows[r]] = (int32_t)r;
    }
    return EARL_OK;
}

/* Walk the window's events and feed this thread's rows' stretches to the
 * levels (see the top of the file). */
static void *paint(void *arg)
{
    painter *p = arg;
    const earl_events *ev = p->ev;
    const earl_overview_window *w = p->window;
    const size_t lo = first_at(ev, w->t0), hi = first_at(ev, w->t0 + w->span);
    for (uint32_t r = p->row_lo; r < p->row_hi; r++) { /* the start */
        size_t pos = position_of(ev, p->rows[r], lo);
        p->prev_class[r] = NO_CLASS;
        if (pos > 0) {
            earl_eid before = ev->loc_events[ev->loc_start[p->rows[r]] + pos - 1];
            p->prev_time[r] = (int64_t)ev->time[before] - w->t0;
            p->prev_class[r] = class_after(ev, p->enterptr, p->class_of_region, p->n_regions,
                                           p->n_classes, before);
        }
    }
    for (size_t i = lo; i < hi; i++) {
        int32_t r = p->row_of[ev->location[i]];
        if (r < (int32_t)p->row_lo || r >= (int32_t)p->row_hi)
            continue;
        int64_t t = (int64_t)ev->time[i] - w->t0;
        if (p->prev_class[r] != NO_CLASS)
            add_to_levels(p, (uint32_t)r, p->prev_time[r], t, p->prev_class[r]);
        p->prev_time[r] = t;
        p->prev_class[r] = class_after(ev, p->enterptr, p->class_of_region, p->n_regions,
                                       p->n_classes, i);
    }
    for (uint32_t r = p->row_lo; r < p->row_hi; r++) { /* crossing the end */
        earl_loc loc = p->rows[r];
        size_t pos = position_of(ev, loc, hi);
        size_t n = ev->loc_start[loc + 1] - ev->loc_start[loc];
        if (p->prev_class[r] != NO_CLASS && pos < n) {
            earl_eid next = ev->loc_events[ev->loc_start[loc] + pos];
            add_to_levels(p, r, p->prev_time[r], (int64_t)ev->time[next] - w->t0,
                          p->prev_class[r]);
        }
        for (uint32_t k = 0; k < p->n_levels; k++)
            close_bin(p, &p->levels[k], &p->tallies[k], &p->cells[(size_t)r * p->n_levels + k],
                      r);
    }
    return NULL;
}

/* One level's tally over all threads: bins won summed, the largest share
 * kept (the first such bin in row-major order on ties). */
static void merge_tallies(tally *into, const tally *tallies, uint32_t n_threads,
                          uint32_t n_levels, uint32_t n_classes)
{
    memset(into, 0, sizeof *into);
    for (uint32_t c = 0; c < n_classes; c++) {
        for (uint32_t t = 0; t < n_threads; t++) {
            const tally *ty = &tallies[(size_t)t * n_levels];
            into->won[c] += ty->won[c];
            if (ty->best_share[c] > into->best_share[c] ||
                (ty->best_share[c] == into->best_share[c] && into->best_share[c] > 0 &&
                 ty->best_at[c] < into->best_at[c])) {
                into->best_share[c] = ty->best_share[c];
                into->best_at[c] = ty->best_at[c];
            }
        }
    }
}

/* A class that won no bin of a level takes the bin where its share was
 * largest. */
static void rescue_classes(const level *lv, const tally *all, uint32_t n_classes)
{
    for (uint32_t c = 0; c < n_classes; c++)
        if (!all->won[c] && all->best_share[c] > 0)
            lv->out[all->best_at[c]] = (uint8_t)c;
}

/* Where a level has more bins than the window has ticks, some bins are empty
 * intervals [edge(b), edge(b)) that no stretch reaches: each shows what the
 * next bin, which starts at the same tick, shows. */
static void fill_tickless_bins(const level *lv, uint32_t n_rows)
{
    const overview_bins *w = &lv->bins;
    if (w->span >= (int64_t)w->n)
        return;
    for (uint32_t b = w->n - 1; b-- > 0;) {
        if (overview_edge(w, b) != overview_edge(w, (uint64_t)b + 1))
            continue;
        for (uint32_t r = 0; r < n_rows; r++)
            lv->out[(size_t)r * w->n + b] = lv->out[(size_t)r * w->n + b + 1];
    }
}

earl_status earl_overview_activity(const earl_trace *trace, const earl_eid32 *enterptr,
                                   const uint8_t *class_of_region, uint32_t n_regions,
                                   uint32_t n_classes, const earl_loc *rows, uint32_t n_rows,
                                   const earl_overview_window *window, const uint32_t *bins,
                                   uint32_t n_levels, uint8_t *const *out, int threads,
                                   earl_error *err)
{
    return earl_overview_activity_part(trace, enterptr, class_of_region, n_regions, n_classes,
                                       rows, n_rows, window, bins, n_levels, out, NULL, threads,
                                       err);
}

earl_status earl_overview_activity_part(const earl_trace *trace, const earl_eid32 *enterptr,
                                        const uint8_t *class_of_region, uint32_t n_regions,
                                        uint32_t n_classes, const earl_loc *rows,
                                        uint32_t n_rows, const earl_overview_window *window,
                                        const uint32_t *bins, uint32_t n_levels,
                                        uint8_t *const *out, earl_overview_tally *tallies_out,
                                        int threads, earl_error *err)
{
    if (!trace || !enterptr || !class_of_region || !window ||
        (n_levels && (!bins || !out)) || (n_rows && !rows))
        return earl_fail(err, EARL_ERR_INVALID,
                         "earl_overview_activity: a required argument is NULL");
    const earl_events *ev = earl_trace_events(trace);
    const uint32_t n_loc = earl_trace_defs(trace)->n_locations;
    uint32_t n_threads = (uint32_t)earl_threads_or_cores(threads);
    if (n_threads > n_rows)
        n_threads = n_rows ? n_rows : 1;
    int32_t *row_of = malloc(((size_t)n_loc + 1) * sizeof *row_of);
    int64_t *prev_time = malloc(((size_t)n_rows + 1) * sizeof *prev_time);
    uint32_t *prev_class = malloc(((size_t)n_rows + 1) * sizeof *prev_class);
    level *levels = calloc((size_t)n_levels + 1, sizeof *levels);
    tally *tallies = calloc((size_t)n_levels * n_threads + 1, sizeof *tallies);
    cell *cells = malloc(((size_t)n_rows * n_levels + 1) * sizeof *cells);
    int64_t *sums = calloc((size_t)n_rows * n_levels * (n_classes + 1) + 1, sizeof *sums);
    painter *painters = calloc(n_threads, sizeof *painters);
    earl_status st = EARL_OK;
    if (!row_of || !prev_time || !prev_class || !levels || !tallies || !cells || !sums ||
        !painters) {
        st = earl_fail(err, EARL_ERR_NOMEM, "earl_overview_activity: out of memory for %u "
                       "rows and %u levels", n_rows, n_levels);
        goto done;
    }
    memset(row_of, 0xff, ((size_t)n_loc + 1) * sizeof *row_of); /* -1: not drawn */
    st = check(trace, class_of_region, n_regions, n_classes, rows, n_rows, window, bins,
               n_levels, row_of, err);
    if (st != EARL_OK)
        goto done;
    for (uint32_t k = 0; k < n_levels; k++) {
        levels[k].bins = overview_bins_of(window->span, bins[k]);
        levels[k].out = out[k];
        memset(out[k], EARL_OVERVIEW_EMPTY, (size_t)n_rows * bins[k]);
    }
    for (size_t c = 0; c < (size_t)n_rows * n_levels; c++)
        cells[c] = (cell){.bin = NO_BIN, .sum = sums + c * (n_classes + 1)};
    int nested = 1;
    for (uint32_t k = 1; k < n_levels; k++)
        nested &= bins[k] >= bins[k - 1] && bins[k] % bins[k - 1] == 0;
    for (uint32_t t = 0; t < n_threads; t++)
        painters[t] = (painter){.n_classes = n_classes, .n_levels = n_levels, .levels = levels,
                                .tallies = tallies + (size_t)t * n_levels, .cells = cells,
                                .row_lo = (uint32_t)((uint64_t)n_rows * t / n_threads),
                                .row_hi = (uint32_t)((uint64_t)n_rows * (t + 1) / n_threads),
                                .nested = nested, .ev = ev,
                                .enterptr = enterptr, .class_of_region = class_of_region,
                                .n_regions = n_regions, .rows = rows, .n_rows = n_rows,
                                .row_of = row_of, .window = window, .prev_time = prev_time,
                                .prev_class = prev_class};
    earl_parts_run(paint, painters, sizeof *painters, n_threads);
    for (uint32_t k = 0; k < n_levels; k++) {
        fill_tickless_bins(&levels[k], n_rows);
        tally all;
        merge_tallies(&all, tallies + k, n_threads, n_levels, n_classes);
        if (tallies_out) /* the caller rescues over all the picture's rows */
            tallies_out[k] = all;
        else
            rescue_classes(&levels[k], &all, n_classes);
    }
done:
    free(row_of);
    free(prev_time);
    free(prev_class);
    free(levels);
    free(tallies);
    free(cells);
    free(sums);
    free(painters);
    return st;
}
