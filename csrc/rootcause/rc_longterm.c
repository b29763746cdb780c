/*
 * rc_longterm.c - long-term delay costs: Scalasca's backward replay of the
 * costs that wait states propagate (earl_rc_replay, see earl_rootcause.h).
 * The wait states are taken in the order of rc_order.c (each at its late
 * side's point, once the cost at its waiting point is complete); each passes
 * the cost that arrived at it to the delays that caused it (the long-term
 * severity) and to the waiting points of its late side in between (their
 * costs), per source (rc_pass_on, through a sink: the replay in parts,
 * rc_parts.c, passes on the same way and keeps the results for later).
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

/* ---- severities: (source, location, cnode) -> value, in first-touch order --- */

/* severity[source][(location, cnode)] += value */
static int severity_add(rc_severity_table *t, size_t source, int64_t location, int64_t cnode,
                        double value)
{
    uint64_t k1 = ((uint64_t)source << 40) | (uint64_t)(location + 1), k2 = (uint64_t)(cnode + 1);
    earl_rc_severity *s = &t->per_source[source];
    int added;
    int64_t *entry = earl_map_slot(&t->index, k1, k2, (int64_t)s->count, &added);
    if (!entry)
        return -1;
    if (!added) {
        s->value[*entry] += value;
        return 0;
    }
    size_t n = s->count, cap = t->entry_cap[source];
    if (n == cap) {
        cap = cap ? 2 * cap : 256;
        int64_t *a;
        double *v;
        if (!(a = realloc(s->location, cap * sizeof *a)))
            return -1;
        s->location = a;
        if (!(a = realloc(s->cnode, cap * sizeof *a)))
            return -1;
        s->cnode = a;
        if (!(v = realloc(s->value, cap * sizeof *v)))
            return -1;
        s->value = v;
        t->entry_cap[source] = cap;
    }
    s->location[n] = location;
    s->cnode[n] = cnode;
    s->value[n] = 0.0 + value;
    s->count = n + 1;
    return 0;
}

int rc_severity_add_delays(rc_severity_table *t, size_t source, int64_t location,
                           const earl_rc_map *map, int64_t q, double factor)
{
    for (int64_t i = map->offset[q]; i < map->offset[q + 1]; i++)
        if (severity_add(t, source, location, map->cnode[i], factor * map->value[i]) < 0)
            return -1;
    return 0;
}

void rc_severity_table_free(rc_severity_table *t)
{
    earl_map_free(&t->index);
    free(t->entry_cap);
    memset(t, 0, sizeof *t);
}

void earl_rc_severity_free(earl_rc_severity *s)
{
    if (!s)
        return;
    free(s->location);
    free(s->cnode);
    free(s->value);
    memset(s, 0, sizeof *s);
}

/* ---- the handle -------------------------------------------------------------- */

earl_status earl_rc_replay_new(size_t n_sources, const earl_rc_replay_points *points,
                               earl_rc_replay **out, earl_error *err)
{
    *out = NULL;
    if (n_sources == 0 || n_sources > 255)
        return earl_fail(err, EARL_ERR_INVALID, "long-term replay: %zu sources (1..255)",
                         n_sources);
    size_t n_locations = 0;
    for (size_t i = 0; i < points->count; i++) {
        if (points->location[i] < 0)
            return earl_fail(err, EARL_ERR_INVALID,
                             "long-term replay: point row %zu has location %lld", i,
                             (long long)points->location[i]);
        if ((size_t)points->location[i] >= n_locations)
            n_locations = (size_t)points->location[i] + 1;
    }
    earl_rc_replay *r = calloc(1, sizeof *r);
    if (r) {
        r->n_sources = n_sources;
        r->n_points = points->count;
        r->point_event = points->event;
        r->point_location = points->location;
        r->point_wait = points->wait;
        r->n_locations = n_locations;
        r->inputs = calloc(n_sources * n_sources, 1);
        r->costs = calloc(n_sources, sizeof *r->costs);
    }
    if (!r || !r->inputs || !r->costs) {
        earl_rc_replay_free(r);
        return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
    }
    for (size_t k = 0; k < n_sources; k++)
        for (size_t s = 0; s < n_sources; s++)
            r->inputs[k * n_sources + s] =
                EARL_RC_INPUT_COST | (k == s ? EARL_RC_INPUT_WAIT : 0);
    *out = r;
    return EARL_OK;
}

void earl_rc_replay_free(earl_rc_replay *r)
{
    if (!r)
        return;
    rc_parts_free(r->parts);
    free(r->waits);
    free(r->collectives);
    for (size_t s = 0; r->costs && s < r->n_sources; s++)
        free(r->costs[s]);
    free(r->inputs);
    free(r->costs);
    free(r);
}

earl_status earl_rc_replay_set_input(earl_rc_replay *r, size_t kind, size_t source,
                                     unsigned inputs, earl_error *err)
{
    if (kind >= r->n_sources || source >= r->n_sources ||
        (inputs & ~(unsigned)(EARL_RC_INPUT_COST | EARL_RC_INPUT_WAIT)))
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay: input %u of kind %zu for source %zu is invalid", inputs,
                         kind, source);
    r->inputs[kind * r->n_sources + source] = (uint8_t)inputs;
    return EARL_OK;
}

static int row_ok(const earl_rc_replay *r, int64_t row, int allow_none)
{
    return (allow_none && row == -1) || (row >= 0 && (size_t)row < r->n_points);
}

/* Every point row of a CSR list in range, offsets ascending. */
static int rows_ok(const earl_rc_replay *r, size_t n, const int64_t *offset, const int64_t *row)
{
    if (offset[0] != 0)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (offset[k + 1] < offset[k])
            return 0;
    for (int64_t i = 0; i < offset[n]; i++)
        if (!row_ok(r, row[i], 0))
            return 0;
    return 1;
}

earl_status earl_rc_replay_add_waits(earl_rc_replay *r, const earl_rc_waits *w, earl_error *err)
{
    if (r->parts)
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay: wait states added after the replay in parts began");
    size_t n = w->count;
    if (w->source >= r->n_sources || w->delays->queries != n ||
        !rows_ok(r, n, w->between_offset, w->between_row))
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay: wait states of source %zu do not fit (%zu states, "
                         "%zu delay queries)", w->source, n, w->delays->queries);
    for (size_t i = 0; i < n; i++) {
        if (!row_ok(r, w->row[i], 1))
            return earl_fail(err, EARL_ERR_INVALID,
                             "long-term replay: wait state %zu has point row %lld", i,
                             (long long)w->row[i]);
        if (w->delayer_location[i] < 0)
            return earl_fail(err, EARL_ERR_INVALID,
                             "long-term replay: wait state %zu has delaying location %lld", i,
                             (long long)w->delayer_location[i]);
    }
    rc_wait_batch *more = realloc(r->waits, (r->n_wait_batches + 1) * sizeof *more);
    if (!more)
        return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
    r->waits = more;
    rc_wait_batch *b = &r->waits[r->n_wait_batches++];
    b->w = *w;
    b->delays = *w->delays;
    b->between_base = r->n_between;
    r->n_between += (size_t)w->between_offset[n];
    /* w.delays points into its own batch: the realloc may have moved them all */
    for (size_t k = 0; k < r->n_wait_batches; k++)
        r->waits[k].w.delays = &r->waits[k].delays;
    return EARL_OK;
}

earl_status earl_rc_replay_add_collectives(earl_rc_replay *r, const earl_rc_collectives *c,
                                           earl_error *err)
{
    if (r->parts)
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay: collectives added after the replay in parts began");
    size_t n = c->count, nm = c->n_members;
    int ok = c->member_offset[0] == 0 && (size_t)c->member_offset[n] == nm &&
             rows_ok(r, n, c->between_offset, c->between_row);
    for (size_t k = 0; ok && k < n; k++)
        ok = c->kind[k] >= 0 && (size_t)c->kind[k] < r->n_sources &&
             c->member_offset[k + 1] > c->member_offset[k] && c->delayer_location[k] >= 0;
    for (size_t m = 0; ok && m < nm; m++)
        ok = row_ok(r, c->member_row[m], 1) && c->member_delay_query[m] >= 0 &&
             (size_t)c->member_delay_query[m] < c->delays->queries;
    if (!ok)
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay: collective instances do not fit (a kind, member list, "
                         "point row, delay query or location out of range, or an instance "
                         "without members)");
    rc_collective_batch *more =
        realloc(r->collectives, (r->n_collective_batches + 1) * sizeof *more);
    if (!more)
        return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
    r->collectives = more;
    rc_collective_batch *b = &r->collectives[r->n_collective_batches++];
    b->c = *c;
    b->delays = *c->delays;
    b->between_base = r->n_between;
    r->n_between += (size_t)c->between_offset[n];
    /* c.delays points into its own batch: the realloc may have moved them all */
    for (size_t k = 0; k < r->n_collective_batches; k++)
        r->collectives[k].c.delays = &r->collectives[k].delays;
    return EARL_OK;
}

double *rc_costs_of(earl_rc_replay *r, size_t source)
{
    if (!r->costs[source])
        r->costs[source] = calloc(r->n_points ? r->n_points : 1, sizeof(double));
    return r->costs[source];
}

/* The cost arrived at point row (-1: none) for source. */
static double cost_at(const earl_rc_replay *r, size_t source, int64_t row)
{
    return row >= 0 && r->costs[source] ? r->costs[source][row] : 0.0;
}

earl_status earl_rc_replay_add_costs(earl_rc_replay *r, const earl_rc_costs *c, earl_error *err)
{
    const size_t source = c->source, n = c->count;
    const int64_t *row = c->row;
    const double *value = c->value;
    if (source >= r->n_sources)
        return earl_fail(err, EARL_ERR_INVALID, "long-term replay: source %zu of %zu", source,
                         r->n_sources);
    if (r->parts)
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay: costs added after the replay in parts began");
    for (size_t i = 0; i < n; i++)
        if (!row_ok(r, row[i], 0))
            return earl_fail(err, EARL_ERR_INVALID, "long-term replay: cost on point row %lld",
                             (long long)row[i]);
    double *costs = n ? rc_costs_of(r, source) : NULL;
    if (n && !costs)
        return earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
    for (size_t i = 0; i < n; i++)
        costs[row[i]] += value[i];
    return EARL_OK;
}

/* ---- what one wait state passes on ------------------------------------------- */

static int pass_on_wait(earl_rc_replay *r, const rc_wait_batch *batch, size_t i,
                        const rc_sink *sink)
{
    const earl_rc_waits *b = &batch->w;
    double den = b->denominator[i];
    if (!(den > 0))
        return 0;
    for (size_t src = 0; src < r->n_sources; src++) {
        double sc = cost_at(r, src, b->row[i]) / den;
        if (sc > 0 && sink->severity &&
            sink->severity(sink->ctx, src, b->delayer_location[i], b->delays, (int64_t)i, sc) < 0)
            return -1;
        double total = sc + (src == b->source ? b->scale[i] : 0.0);
        if (!(total > 0) || !sink->cost)
            continue;
        for (int64_t j = b->between_offset[i]; j < b->between_offset[i + 1]; j++)
            if (sink->cost(sink->ctx, src, batch->between_base + (size_t)j, b->between_row[j], 0,
                           total) < 0)
                return -1;
    }
    return 0;
}

/* A member met alone and its scale, ordered by the event where it was met. */
typedef struct rc_met_scale {
    int64_t event;
    double scale;
    size_t member;
} met_scale;

static int met_order(const void *x, const void *y)
{
    const met_scale *a = x, *b = y;
    if (a->event != b->event)
        return (a->event > b->event) - (a->event < b->event);
    return (a->member > b->member) - (a->member < b->member);
}

static int scratch_reserve(rc_scratch *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    double *a = realloc(s->scales, n * sizeof *a);
    if (!a)
        return -1;
    s->scales = a;
    met_scale *m = realloc(s->met, n * sizeof *m);
    if (!m)
        return -1;
    s->met = m;
    if (!(a = realloc(s->values, n * sizeof *a)))
        return -1;
    s->values = a;
    s->cap = n;
    return 0;
}

void rc_scratch_free(rc_scratch *s)
{
    free(s->scales);
    free(s->met);
    free(s->values);
    memset(s, 0, sizeof *s);
}

/* One input (the arriving costs or the members' waits) of collective k for
 * source src; `m` numbers the input among those the kind takes. */
static int pass_on_collective_input(earl_rc_replay *r, const rc_collective_batch *batch,
                                    size_t k, size_t src, int input, int m_input,
                                    const rc_sink *sink, rc_scratch *s)
{
    const earl_rc_collectives *c = &batch->c;
    int64_t m0 = c->member_offset[k], m1 = c->member_offset[k + 1];
    size_t nm = (size_t)(m1 - m0);
    int any = 0;
    for (int64_t m = m0; m < m1; m++) {
        double x;
        if (input == EARL_RC_INPUT_COST)
            x = cost_at(r, src, c->member_row[m]);
        else
            x = c->member_wait[m];
        any |= x != 0;
        double den = c->member_delay_sum[m] + c->member_prop[m];
        s->scales[m - m0] = den > 0 ? x / den : 0.0;
    }
    if (!any) /* most instances carry no cost of most sources: nothing to pass on */
        return 0;
    if (input == EARL_RC_INPUT_COST && sink->severity)
        for (int64_t m = m0; m < m1; m++)
            if (s->scales[m - m0] > 0 &&
                sink->severity(sink->ctx, src, c->delayer_location[k], c->delays,
                               c->member_delay_query[m], s->scales[m - m0]) < 0)
                return -1;
    if (!sink->cost)
        return 0;
    /* the scales along the delayer's interval: members met one by one join at
     * the point where they were met */
    double base = 0.0;
    for (size_t i = 0; i < nm; i++)
        base += s->scales[i];
    size_t n_met = 0;
    for (int64_t m = m0; m < m1; m++)
        if (c->member_met[m] >= 0) {
            base -= s->scales[m - m0];
            s->met[n_met++] = (met_scale){c->member_met[m], s->scales[m - m0], (size_t)(m - m0)};
        }
    qsort(s->met, n_met, sizeof *s->met, met_order);
    /* merge the scales met at one event, in member order */
    size_t marks = 0;
    for (size_t i = 0; i < n_met; i++) {
        if (marks && s->met[marks - 1].event == s->met[i].event) {
            s->met[marks - 1].scale = s->met[marks - 1].scale + s->met[i].scale;
        } else {
            s->met[marks] = s->met[i];
            s->met[marks].scale = 0.0 + s->met[i].scale;
            marks++;
        }
    }
    double run = base;
    for (size_t i = 0; i < marks; i++) {
        s->values[i] = run;
        run += s->met[i].scale;
    }
    double current = base;
    size_t j = 0;
    for (int64_t b = c->between_offset[k]; b < c->between_offset[k + 1]; b++) {
        int64_t row = c->between_row[b];
        int64_t event = r->point_event[row];
        while (j < marks && s->met[j].event <= event)
            current = s->values[j++];
        if (!(current > 0 && r->point_wait[row] > 0))
            continue;
        if (sink->cost(sink->ctx, src, batch->between_base + (size_t)b, row, m_input, current) <
            0)
            return -1;
    }
    return 0;
}

static int pass_on_collective(earl_rc_replay *r, const rc_collective_batch *batch, size_t k,
                              const rc_sink *sink, rc_scratch *s)
{
    const earl_rc_collectives *c = &batch->c;
    if (scratch_reserve(s, (size_t)(c->member_offset[k + 1] - c->member_offset[k])) < 0)
        return -1;
    for (size_t src = 0; src < r->n_sources; src++) {
        unsigned inputs = r->inputs[(size_t)c->kind[k] * r->n_sources + src];
        int m = 0;
        if ((inputs & EARL_RC_INPUT_COST) &&
            pass_on_collective_input(r, batch, k, src, EARL_RC_INPUT_COST, m++, sink, s) < 0)
            return -1;
        if ((inputs & EARL_RC_INPUT_WAIT) &&
            pass_on_collective_input(r, batch, k, src, EARL_RC_INPUT_WAIT, m, sink, s) < 0)
            return -1;
    }
    return 0;
}

int rc_pass_on(earl_rc_replay *r, const rc_replay_item *it, const rc_sink *sink,
               rc_scratch *scratch)
{
    return it->collective ? pass_on_collective(r, &r->collectives[it->batch], it->index, sink,
                                               scratch)
                          : pass_on_wait(r, &r->waits[it->batch], it->index, sink);
}

/* ---- the replay on one process ---------------------------------------------- */

/* The location of a delayer, growing the replay's count of locations. */
static int64_t note_location(earl_rc_replay *r, int64_t location)
{
    if ((size_t)location >= r->n_locations)
        r->n_locations = (size_t)location + 1;
    return location;
}

int rc_list_items(earl_rc_replay *r, size_t *n_out, rc_replay_item **items_out,
                  rc_order_item **order_out, rc_order_read **reads_out)
{
    size_t n_items = 0;
    for (size_t b = 0; b < r->n_wait_batches; b++)
        n_items += r->waits[b].w.count;
    for (size_t b = 0; b < r->n_collective_batches; b++)
        n_items += r->collectives[b].c.count;
    size_t cap_items = n_items ? n_items : 1;
    rc_replay_item *items = malloc(cap_items * sizeof *items);
    rc_order_item *order_items = order_out ? malloc(cap_items * sizeof *order_items) : NULL;
    rc_order_read *reads = NULL;
    size_t n = 0, n_reads = 0, cap = 0;
    *n_out = n_items;
    *items_out = items;
    if (order_out)
        *order_out = order_items;
    if (reads_out)
        *reads_out = NULL;
    if (!items || (order_out && !order_items))
        return -1;
    for (size_t b = 0; b < r->n_wait_batches; b++) {
        const earl_rc_waits *w = &r->waits[b].w;
        for (size_t i = 0; i < w->count; i++, n++) {
            items[n] = (rc_replay_item){0, (uint32_t)b, i};
            int64_t loc = note_location(r, w->delayer_location[i]);
            if (!order_out)
                continue;
            order_items[n] = (rc_order_item){loc, w->delayer_event[i], 0, n_reads, 0};
            if (w->row[i] < 0 || !reads_out)
                continue;
            if (EARL_GROW(reads, cap, n_reads + 1) != 0)
                goto nomem;
            reads[n_reads++] = (rc_order_read){r->point_location[w->row[i]],
                                               r->point_event[w->row[i]]};
            order_items[n].n_reads = 1;
        }
    }
    for (size_t b = 0; b < r->n_collective_batches; b++) {
        const earl_rc_collectives *c = &r->collectives[b].c;
        for (size_t k = 0; k < c->count; k++, n++) {
            items[n] = (rc_replay_item){1, (uint32_t)b, k};
            int64_t loc = note_location(r, c->delayer_location[k]);
            if (!order_out)
                continue;
            order_items[n] = (rc_order_item){loc, c->delayer_event[k], 1, n_reads, 0};
            if (!reads_out)
                continue;
            for (int64_t m = c->member_offset[k]; m < c->member_offset[k + 1]; m++) {
                int64_t row = c->member_row[m];
                if (row < 0)
                    continue;
                if (EARL_GROW(reads, cap, n_reads + 1) != 0)
                    goto nomem;
                reads[n_reads++] = (rc_order_read){r->point_location[row], r->point_event[row]};
                order_items[n].n_reads++;
            }
        }
    }
    if (reads_out)
        *reads_out = reads;
    return 0;
nomem:
    free(reads);
    return -1;
}

/* The sink of the replay on one process: both results at once, the
 * severities into the table, the costs into the replay's. */
typedef struct direct {
    earl_rc_replay *r;
    rc_severity_table *sev;
} direct;

static int add_severity(void *ctx, size_t source, int64_t location, const earl_rc_map *map,
                        int64_t q, double factor)
{
    return rc_severity_add_delays(((direct *)ctx)->sev, source, location, map, q, factor);
}

static int add_cost(void *ctx, size_t source, size_t entry, int64_t row, int m, double factor)
{
    (void)entry;
    (void)m;
    earl_rc_replay *r = ((direct *)ctx)->r;
    double *costs = rc_costs_of(r, source);
    if (!costs)
        return -1;
    costs[row] = costs[row] + factor * r->point_wait[row];
    return 0;
}

earl_status earl_rc_replay_run(earl_rc_replay *r, earl_rc_severity *out, earl_error *err)
{
    memset(out, 0, r->n_sources * sizeof *out);
    if (r->parts)
        return earl_fail(err, EARL_ERR_INVALID,
                         "long-term replay: a replay in parts finishes with "
                         "earl_rc_replay_finish");
    earl_status st;
    size_t n_items = 0;
    rc_replay_item *items = NULL;
    rc_order_item *order_items = NULL;
    rc_order_read *reads = NULL;
    size_t *order = NULL;
    rc_severity_table sev = {0};
    sev.per_source = out;
    sev.entry_cap = calloc(r->n_sources, sizeof *sev.entry_cap);
    rc_scratch s = {0};
    if (!sev.entry_cap || rc_list_items(r, &n_items, &items, &order_items, &reads) < 0 ||
        !(order = malloc((n_items ? n_items : 1) * sizeof *order)) ||
        rc_replay_order(n_items, order_items, reads, r->n_locations, order, &r->out_of_order) < 0)
        goto nomem;
    direct d = {r, &sev};
    const rc_sink sink = {add_severity, add_cost, &d};
    for (size_t i = 0; i < n_items; i++)
        if (rc_pass_on(r, &items[order[i]], &sink, &s) < 0)
            goto nomem;
    st = EARL_OK;
    goto done;
nomem:
    for (size_t i = 0; i < r->n_sources; i++)
        earl_rc_severity_free(&out[i]);
    st = earl_fail(err, EARL_ERR_NOMEM, "long-term replay: out of memory");
done:
    free(items);
    free(order_items);
    free(order);
    free(reads);
    sev.per_source = NULL;
    rc_severity_table_free(&sev);
    rc_scratch_free(&s);
    return st;
}

size_t earl_rc_replay_out_of_order(const earl_rc_replay *r)
{
    return r->out_of_order;
}
