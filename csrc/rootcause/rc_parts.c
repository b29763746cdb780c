/*
 * rc_parts.c - the long-term replay in parts (earl_rc_replay_start ...
 * earl_rc_replay_finish, see earl_rootcause.h): a part of a trace analysed
 * in parts replays the wait states its own locations delayed, reading the
 * costs of other parts' points as they arrive.
 *
 * The replay on one process (rc_longterm.c, rc_order.c) takes a location's
 * wait states in the order of its queue and a wait state once the location it
 * reads from has walked past the point read.  Here a wait state goes as soon
 * as the costs it reads are complete, which is what the data needs: the cost
 * of a point is complete once every wait state that adds to it (those whose
 * late side's interval holds it: its *adders*) has passed its cost on.  The
 * chains of such dependencies are short, so parts that wait for each other
 * need few rounds, where walking queues in step would need one round per
 * crossing of the parts' boundary (about one per iteration of a loop).
 *
 * The results are those of the replay on one process to the bit, because
 * everything that is summed is summed in its order there:
 *   - a point's cost: its adders add to it in the order of their location's
 *     queue.  Each adder keeps what it adds per between entry (`slot`, two
 *     amounts per source: a collective kind may take the arriving costs and
 *     the waits, one after the other), and the point's cost is summed from
 *     them, in queue order, when the last adder is done;
 *   - a severity: only the wait states of its location add to it, in queue
 *     order.  They are added once every wait state is done (finish), queue
 *     by queue.
 * The wait states read the same costs as on one process, complete, provided
 * the replay on one process takes none out of order (earl_rc_replay_run's
 * out_of_order is 0); the caller checks that beforehand (see
 * earl_rootcause.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

struct rc_parts {
    size_t n_items;
    rc_replay_item *items;
    rc_order_item *order;   /* per item: location, event, collective (for the queues) */
    size_t *queue;          /* the items by location, each location's in queue order */
    size_t *read_offset;    /* per item: its reads, rows [read_offset[i], read_offset[i + 1]) */
    int64_t *read_row;
    size_t *unread;         /* per item: its reads not complete yet */
    size_t *reader_offset;  /* per row: the items that read it (an item once per read) */
    size_t *reader_item;
    size_t *adder_offset;   /* per row: the between entries that hold it, in queue order */
    size_t *adder_entry;
    size_t *adders_left;    /* per row: adders not done yet */
    uint8_t *complete;      /* per row */
    uint8_t *held;          /* per location below n_held */
    size_t n_held;
    double *slot;           /* per between entry: [source][2] amounts; 0: none */
    int64_t *watch_of_row;  /* per row: its index in the watch list, or -1 */
    int64_t *completed;     /* watched rows completed since the last earl_rc_replay_completed */
    size_t n_completed, cap_completed;
    size_t *ready;          /* a stack of the items whose reads are complete */
    size_t n_ready;
    size_t remaining;
    rc_scratch scratch;
};

void rc_parts_free(rc_parts *p)
{
    if (!p)
        return;
    free(p->items);
    free(p->order);
    free(p->queue);
    free(p->read_offset);
    free(p->read_row);
    free(p->unread);
    free(p->reader_offset);
    free(p->reader_item);
    free(p->adder_offset);
    free(p->adder_entry);
    free(p->adders_left);
    free(p->complete);
    free(p->held);
    free(p->slot);
    free(p->watch_of_row);
    free(p->completed);
    free(p->ready);
    rc_scratch_free(&p->scratch);
    free(p);
}

/* The between entries of an item: [*first, *first + *n) of the replay's
 * numbering, their rows from *rows. */
static void between_of(const earl_rc_replay *r, const rc_replay_item *it, size_t *first,
                       size_t *n, const int64_t **rows)
{
    const int64_t *offset, *row;
    size_t base;
    if (it->collective) {
        const rc_collective_batch *b = &r->collectives[it->batch];
        offset = b->c.between_offset, row = b->c.between_row, base = b->between_base;
    } else {
        const rc_wait_batch *b = &r->waits[it->batch];
        offset = b->w.between_offset, row = b->w.between_row, base = b->between_base;
    }
    *first = base + (size_t)offset[it->index];
    *n = (size_t)(offset[it->index + 1] - offset[it->index]);
    *rows = row + offset[it->index];
}

/* The point rows an item reads (its waiting point; its members' points). */
static size_t reads_of(const earl_rc_replay *r, const rc_replay_item *it, int64_t *out)
{
    size_t n = 0;
    if (it->collective) {
        const earl_rc_collectives *c = &r->collectives[it->batch].c;
        for (int64_t m = c->member_offset[it->index]; m < c->member_offset[it->index + 1]; m++)
            if (c->member_row[m] >= 0) {
                if (out)
                    out[n] = c->member_row[m];
                n++;
            }
    } else {
        int64_t row = r->waits[it->batch].w.row[it->index];
        if (row >= 0) {
            if (out)
                out[n] = row;
            n++;
        }
    }
    return n;
}

/* qsort has no context: the items' queue keys beside their indices. */
typedef struct queued {
    rc_order_item key;
    size_t index;
} queued;

static int by_queue(const void *x, const void *y)
{
    const queued *a = x, *b = y;
    if (a->key.location != b->key.location)
        return a->key.location < b->key.location ? -1 : 1;
    int c = rc_later_first(&a->key, &b->key);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* A row's position among its adders: the queue rank of each entry's item. */
typedef struct ranked_entry {
    size_t row, rank, entry;
} ranked_entry;

static int by_row_then_rank(const void *x, const void *y)
{
    const ranked_entry *a = x, *b = y;
    if (a->row != b->row)
        return a->row < b->row ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Every item is pushed once (when its last read completes): the stack holds
 * them all. */
static void push_ready(rc_parts *p, size_t item)
{
    p->ready[p->n_ready++] = item;
}

/* Row `row` is complete: its cost summed from its adders (held rows), its
 * readers told, its watchers told.  -1 when out of memory. */
static int complete_row(earl_rc_replay *r, rc_parts *p, size_t row)
{
    if (p->complete[row])
        return 0;
    p->complete[row] = 1;
    size_t a0 = p->adder_offset[row], a1 = p->adder_offset[row + 1];
    for (size_t src = 0; a0 < a1 && src < r->n_sources; src++) {
        double c = r->costs[src] ? r->costs[src][row] : 0.0;
        int added = 0;
        for (size_t a = a0; a < a1; a++) {
            const double *amount = &p->slot[(p->adder_entry[a] * r->n_sources + src) * 2];
            for (int m = 0; m < 2; m++)
                if (amount[m] > 0) {
                    c = c + amount[m] * r->point_wait[row];
                    added = 1;
                }
        }
        if (added) {
            double *costs = rc_costs_of(r, src);
            if (!costs)
                return -1;
            costs[row] = c;
        }
    }
    if (p->watch_of_row[row] >= 0) {
        if (EARL_GROW(p->completed, p->cap_completed, p->n_completed + 1) != 0)
            return -1;
        p->completed[p->n_completed++] = (int64_t)row;
    }
    for (size_t k = p->reader_offset[row]; k < p->reader_offset[row + 1]; k++) {
        size_t item = p->reader_item[k];
        if (--p->unread[item] == 0)
            push_ready(p, item);
    }
    return 0;
}

/* The sink of an item's passing on while the replay runs: the costs per
 * between entry, the severities later (finish). */
static int keep_cost(void *ctx, size_t source, size_t entry, int64_t row, int m, double factor)
{
    (void)row;
    earl_rc_replay *r = ctx;
    r->parts->slot[(entry * r->n_sources + source) * 2 + (size_t)m] = factor;
    return 0;
}

static int held_location(const rc_parts *p, int64_t location)
{
    return location >= 0 && (size_t)location < p->n_held && p->held[location];
}

earl_status earl_rc_replay_start(earl_rc_replay *r, const uint8_t *held, size_t n_held,
                                 const int64_t *watch, size_t n_watch, earl_error *err)
{
    if (r->parts)
        return earl_fail(err, EARL_ERR_INVALID, "long-term replay: started twice");
    for (size_t w = 0; w < n_watch; w++)
        if (watch[w] < 0 || (size_t)watch[w] >= r->n_points)
            return earl_fail(err, EARL_ERR_INVALID,
                             "long-term replay: watched point row %lld out of range",
                             (long long)watch[w]);
    rc_parts *p = calloc(1, sizeof *p);
    if (!p)
        goto nomem;
    r->parts = p;
    size_t n = 0, np_ = r->n_points, nl = n_held;
    if (rc_list_items(r, &n, &p->items, &p->order, NULL) < 0)
        goto nomem;
    p->n_items = p->remaining = n;
    size_t n1 = n ? n : 1, rows1 = np_ + 1;
    queued *q = malloc(n1 * sizeof *q);
    p->queue = malloc(n1 * sizeof *p->queue);
    p->read_offset = calloc(n + 1, sizeof *p->read_offset);
    p->unread = calloc(n1, sizeof *p->unread);
    p->reader_offset = calloc(rows1 + 1, sizeof *p->reader_offset);
    p->adder_offset = calloc(rows1 + 1, sizeof *p->adder_offset);
    p->adders_left = calloc(rows1, sizeof *p->adders_left);
    p->complete = calloc(rows1, 1);
    p->held = calloc(nl ? nl : 1, 1);
    p->slot = calloc((r->n_between ? r->n_between : 1) * r->n_sources * 2, sizeof *p->slot);
    p->watch_of_row = malloc(rows1 * sizeof *p->watch_of_row);
    p->ready = malloc(n1 * sizeof *p->ready);
    if (!q || !p->queue || !p->read_offset || !p->unread || !p->reader_offset ||
        !p->adder_offset || !p->adders_left || !p->complete || !p->held || !p->slot ||
        !p->watch_of_row || !p->ready) {
        free(q);
        goto nomem;
    }
    memcpy(p->held, held, nl);
    p->n_held = nl;
    for (size_t i = 0; i < np_; i++)
        p->watch_of_row[i] = -1;
    for (size_t w = 0; w < n_watch; w++)
        p->watch_of_row[watch[w]] = (int64_t)w;
    /* the queues, and each item's rank in them */
    for (size_t i = 0; i < n; i++)
        q[i] = (queued){p->order[i], i};
    qsort(q, n, sizeof *q, by_queue);
    size_t *rank = malloc(n1 * sizeof *rank);
    if (!rank) {
        free(q);
        goto nomem;
    }
    for (size_t k = 0; k < n; k++) {
        p->queue[k] = q[k].index;
        rank[q[k].index] = k;
    }
    free(q);
    /* reads, and the readers of each row */
    for (size_t i = 0; i < n; i++)
        p->read_offset[i + 1] = p->read_offset[i] + reads_of(r, &p->items[i], NULL);
    size_t n_reads = p->read_offset[n];
    p->read_row = malloc((n_reads ? n_reads : 1) * sizeof *p->read_row);
    p->reader_item = malloc((n_reads ? n_reads : 1) * sizeof *p->reader_item);
    /* adders: the between entries of every item, by row then queue rank */
    ranked_entry *adders = malloc((r->n_between ? r->n_between : 1) * sizeof *adders);
    p->adder_entry = malloc((r->n_between ? r->n_between : 1) * sizeof *p->adder_entry);
    if (!p->read_row || !p->reader_item || !adders || !p->adder_entry) {
        free(rank);
        free(adders);
        goto nomem;
    }
    size_t n_adders = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t *reads = p->read_row + p->read_offset[i];
        size_t nr = reads_of(r, &p->items[i], reads);
        p->unread[i] = nr;
        for (size_t k = 0; k < nr; k++)
            p->reader_offset[reads[k] + 1]++;
        size_t first, nb;
        const int64_t *rows;
        between_of(r, &p->items[i], &first, &nb, &rows);
        for (size_t k = 0; k < nb; k++) {
            adders[n_adders++] = (ranked_entry){(size_t)rows[k], rank[i], first + k};
            p->adders_left[rows[k]]++;
        }
    }
    free(rank);
    qsort(adders, n_adders, sizeof *adders, by_row_then_rank);
    for (size_t k = 0; k < n_adders; k++) {
        p->adder_entry[k] = adders[k].entry;
        p->adder_offset[adders[k].row + 1]++;
    }
    free(adders);
    for (size_t row = 0; row < np_; row++) {
        p->adder_offset[row + 1] += p->adder_offset[row];
        p->reader_offset[row + 1] += p->reader_offset[row];
    }
    {
        size_t *fill = malloc(rows1 * sizeof *fill);
        if (!fill)
            goto nomem;
        memcpy(fill, p->reader_offset, rows1 * sizeof *fill);
        for (size_t i = 0; i < n; i++)
            for (size_t k = p->read_offset[i]; k < p->read_offset[i + 1]; k++)
                p->reader_item[fill[p->read_row[k]]++] = i;
        free(fill);
    }
    /* a wait state of a location not held here, or adding to a point of one,
     * belongs to another part */
    for (size_t i = 0; i < n; i++)
        if (!held_location(p, p->order[i].location)) {
            int64_t location = p->order[i].location;
            rc_parts_free(r->parts);
            r->parts = NULL;
            return earl_fail(err, EARL_ERR_INVALID,
                             "long-term replay in parts: a wait state delayed by location %lld, "
                             "which this part does not hold", (long long)location);
        }
    /* what is complete from the start: items that read nothing, the held
     * points nobody adds to */
    for (size_t i = 0; i < n; i++)
        if (!p->unread[i])
            push_ready(p, i);
    for (size_t row = 0; row < np_; row++)
        if (held_location(p, r->point_location[row]) && !p->adders_left[row] &&
            complete_row(r, p, row) < 0)
            goto nomem;
    return EARL_OK;
nomem:
    rc_parts_free(r->parts);
    r->parts = NULL;
    return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
}

static earl_status not_started(earl_error *err)
{
    return earl_fail(err, EARL_ERR_INVALID, "long-term replay: not started in parts "
                                            "(earl_rc_replay_start)");
}

earl_status earl_rc_replay_advance(earl_rc_replay *r, size_t *taken, earl_error *err)
{
    *taken = 0;
    rc_parts *p = r->parts;
    if (!p)
        return not_started(err);
    const rc_sink sink = {NULL, keep_cost, r};
    while (p->n_ready) {
        size_t i = p->ready[--p->n_ready];
        const rc_replay_item *it = &p->items[i];
        if (rc_pass_on(r, it, &sink, &p->scratch) < 0)
            goto nomem;
        size_t first, nb;
        const int64_t *rows;
        between_of(r, it, &first, &nb, &rows);
        for (size_t k = 0; k < nb; k++)
            if (--p->adders_left[rows[k]] == 0 && complete_row(r, p, (size_t)rows[k]) < 0)
                goto nomem;
        p->remaining--;
        ++*taken;
    }
    return EARL_OK;
nomem:
    return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
}

earl_status earl_rc_replay_completed(earl_rc_replay *r, earl_rc_completed *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    rc_parts *p = r->parts;
    if (!p)
        return not_started(err);
    size_t n = p->n_completed, ns = r->n_sources;
    out->watch = malloc((n ? n : 1) * sizeof *out->watch);
    out->cost = malloc((n ? n : 1) * ns * sizeof *out->cost);
    if (!out->watch || !out->cost) {
        earl_rc_completed_free(out);
        return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
    }
    for (size_t k = 0; k < n; k++) {
        int64_t row = p->completed[k];
        out->watch[k] = p->watch_of_row[row];
        for (size_t s = 0; s < ns; s++)
            out->cost[k * ns + s] = r->costs[s] ? r->costs[s][row] : 0.0;
    }
    out->count = n;
    p->n_completed = 0;
    return EARL_OK;
}

void earl_rc_completed_free(earl_rc_completed *c)
{
    if (!c)
        return;
    free(c->watch);
    free(c->cost);
    memset(c, 0, sizeof *c);
}

earl_status earl_rc_replay_receive(earl_rc_replay *r, size_t n, const int64_t *row,
                                   const double *cost, earl_error *err)
{
    rc_parts *p = r->parts;
    if (!p)
        return not_started(err);
    size_t ns = r->n_sources;
    for (size_t k = 0; k < n; k++)
        if (row[k] < 0 || (size_t)row[k] >= r->n_points ||
            held_location(p, r->point_location[row[k]]))
            return earl_fail(err, EARL_ERR_INVALID,
                             "long-term replay in parts: a cost received for point row %lld, "
                             "which is out of range or this part's own", (long long)row[k]);
    for (size_t k = 0; k < n; k++) {
        size_t at = (size_t)row[k];
        if (p->complete[at])
            return earl_fail(err, EARL_ERR_INVALID,
                             "long-term replay in parts: the cost of point row %zu received twice",
                             at);
        for (size_t s = 0; s < ns; s++) {
            double v = cost[k * ns + s];
            if (v == 0.0 && !r->costs[s])
                continue;
            double *costs = rc_costs_of(r, s);
            if (!costs)
                return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
            costs[at] = v;
        }
        if (complete_row(r, p, at) < 0)
            return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
    }
    return EARL_OK;
}

size_t earl_rc_replay_remaining(const earl_rc_replay *r)
{
    return r->parts ? r->parts->remaining : 0;
}

/* The sink of finish: the severities only. */
static int add_severity(void *ctx, size_t source, int64_t location, const earl_rc_map *map,
                        int64_t q, double factor)
{
    return rc_severity_add_delays(ctx, source, location, map, q, factor);
}

earl_status earl_rc_replay_finish(earl_rc_replay *r, earl_rc_severity *out, earl_error *err)
{
    memset(out, 0, r->n_sources * sizeof *out);
    rc_parts *p = r->parts;
    if (!p)
        return not_started(err);
    if (p->remaining)
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay in parts: %zu wait states still wait for costs "
                         "(another part never sent them)", p->remaining);
    rc_severity_table sev = {0};
    sev.per_source = out;
    sev.entry_cap = calloc(r->n_sources, sizeof *sev.entry_cap);
    const rc_sink sink = {add_severity, NULL, &sev};
    int failed = !sev.entry_cap;
    /* queue by queue, as the replay on one process adds them */
    for (size_t k = 0; !failed && k < p->n_items; k++)
        failed = rc_pass_on(r, &p->items[p->queue[k]], &sink, &p->scratch) < 0;
    sev.per_source = NULL;
    rc_severity_table_free(&sev);
    if (failed) {
        for (size_t s = 0; s < r->n_sources; s++)
            earl_rc_severity_free(&out[s]);
        return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
    }
    r->out_of_order = 0;
    return EARL_OK;
}
