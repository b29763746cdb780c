/*
 * hb_part.c - the happened-before replay of a part of a trace (earl_hb.h,
 * "the replay of a part"): the steps a driver runs, between which the parts
 * pass each other the clocks of the events that cross them.
 *
 * The replay itself is hb_replay.c's, resumable and restricted to the own
 * locations (hb_scope); this file adds what crosses: the ghost events the
 * own ones wait for (needs, numbered by tickets), the own events other parts
 * wait for (exports), the clocks collected for them and the clocks received.
 * With several threads each hb_columns replays the same schedule over its
 * range of clock entries: a record's clock is put together from the ranges
 * of every column replay, and a received clock is split among them.
 */
#include <stdlib.h>
#include <string.h>

#include "hb_internal.h"
#include "part/part_outbox.h"

struct earl_hb_part {
    const earl_trace *trace;
    hb_rules rules;
    hb_scope scope;
    earl_hb *hb;
    earl_hb_options options;
    uint32_t n_columns;
    hb_columns **columns;   /* column replays; [0] is the leader */
    uint32_t *first;        /* per column replay: its first entry and width */
    uint32_t *width;
    earl_eid *needs;        /* ghost events waited for, ascending: ticket = index */
    size_t n_needs;
    earl_exports exports;   /* own events other parts wait for (keys: event ids) */
};

static int cmp_eid(const void *a, const void *b)
{
    earl_eid x = *(const earl_eid *)a, y = *(const earl_eid *)b;
    return (x > y) - (x < y);
}

/* The ghost events the own events depend on: one pass over the own events
 * with the rules (the same calls the replay makes), sorted and unique. */
static earl_status find_needs(earl_hb_part *p, earl_error *err)
{
    const earl_events *ev = earl_trace_events(p->trace);
    size_t nl = earl_trace_defs(p->trace)->n_locations, cap = 0;
    hb_deps deps = {0};
    earl_status st = EARL_OK;
    if (p->scope.n_rows == nl)
        return EARL_OK; /* every location is own: nothing to wait for */
    for (size_t l = 0; l < nl && st == EARL_OK; l++) {
        if (p->scope.row[l] < 0)
            continue;
        earl_eid prev = EARL_NONE;
        for (size_t k = ev->loc_start[l]; k < ev->loc_start[l + 1]; k++) {
            earl_eid e = ev->loc_events[k];
            hb_merge merge;
            int32_t instance;
            size_t n = hb_rules_deps(&p->rules, e, prev, &deps, &merge, &instance);
            prev = e;
            if (n == SIZE_MAX)
                goto nomem;
            for (size_t j = 0; j < n; j++) {
                if (p->scope.row[ev->location[deps.ids[j]]] >= 0)
                    continue;
                if (EARL_GROW(p->needs, cap, p->n_needs + 1) != 0)
                    goto nomem;
                p->needs[p->n_needs++] = deps.ids[j];
            }
        }
    }
    free(deps.ids);
    if (p->n_needs)
        qsort(p->needs, p->n_needs, sizeof *p->needs, cmp_eid);
    size_t u = 0;
    for (size_t k = 0; k < p->n_needs; k++)
        if (!u || p->needs[u - 1] != p->needs[k])
            p->needs[u++] = p->needs[k];
    p->n_needs = u;
    return st;
nomem:
    free(deps.ids);
    return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the clocks a part waits for");
}

earl_status earl_hb_part_new(const earl_trace *trace, earl_states *states,
                             const earl_eid *stamped, size_t n, const earl_hb_options *options,
                             earl_hb_part **out, earl_error *err)
{
    *out = NULL;
    const earl_events *ev = earl_trace_events(trace);
    const earl_defs *defs = earl_trace_defs(trace);
    for (size_t k = 0; k < n; k++)
        if (stamped[k] >= 0 && (size_t)stamped[k] < ev->count &&
            defs->locations[ev->location[stamped[k]]].held != EARL_HELD_ALL)
            return earl_fail(err, EARL_ERR_INVALID, "event %lld is a ghost of this part: its "
                             "owner stamps it", (long long)stamped[k]);
    earl_hb_part *p = calloc(1, sizeof *p);
    if (!p)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the replay of a part");
    p->trace = trace;
    if (options)
        p->options = *options;
    earl_status st = EARL_OK;
    if (!(p->hb = hb_alloc(trace, stamped, n, err))) {
        free(p);
        return err ? err->code : EARL_ERR_NOMEM;
    }
    if ((st = hb_rules_init(&p->rules, trace, states, err)) != EARL_OK ||
        (st = hb_scope_init(&p->scope, trace, &p->rules, err)) != EARL_OK ||
        (st = find_needs(p, err)) != EARL_OK)
        goto fail;
    p->n_columns = hb_replay_threads(&p->options, p->hb->width);
    p->columns = calloc(p->n_columns, sizeof *p->columns);
    p->first = calloc(p->n_columns, sizeof *p->first);
    p->width = calloc(p->n_columns, sizeof *p->width);
    if (!p->columns || !p->first || !p->width)
        goto nomem;
    uint32_t first = 0;
    for (uint32_t t = 0; t < p->n_columns; t++) {
        uint32_t w = p->hb->width / p->n_columns + (t < p->hb->width % p->n_columns);
        p->first[t] = first;
        p->width[t] = w;
        p->columns[t] = hb_columns_new(p->hb, trace, &p->rules, &p->scope, first, w, t == 0,
                                       &p->options);
        if (!p->columns[t])
            goto nomem;
        first += w;
    }
    *out = p;
    return EARL_OK;
nomem:
    st = earl_fail(err, EARL_ERR_NOMEM, "out of memory for the replay of a part");
fail:
    earl_hb_part_free(p);
    return st;
}

void earl_hb_part_free(earl_hb_part *p)
{
    if (!p)
        return;
    for (uint32_t t = 0; p->columns && t < p->n_columns; t++)
        hb_columns_free(p->columns[t]);
    free(p->columns);
    free(p->first);
    free(p->width);
    free(p->needs);
    earl_exports_free(&p->exports);
    hb_scope_free(&p->scope);
    hb_rules_free(&p->rules);
    earl_hb_free(p->hb);
    free(p);
}

size_t earl_hb_part_needs(const earl_hb_part *p, const earl_eid **ghosts)
{
    *ghosts = p->needs;
    return p->n_needs;
}

earl_status earl_hb_part_export(earl_hb_part *p, int32_t to, const earl_eid *events,
                                const uint64_t *tickets, size_t n, earl_error *err)
{
    const earl_events *ev = earl_trace_events(p->trace);
    if (!p->scope.exported && !(p->scope.exported = calloc(ev->count / 8 + 1, 1)))
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the clocks a part sends");
    for (size_t k = 0; k < n; k++) {
        earl_eid e = events[k];
        if (e < 0 || (size_t)e >= ev->count || p->scope.row[ev->location[e]] < 0)
            return earl_fail(err, EARL_ERR_INVALID, "part %d waits for event %lld, which is "
                             "no own event of this part", (int)to, (long long)e);
        earl_status st = earl_exports_add(&p->exports, e, to, tickets[k], err);
        if (st != EARL_OK)
            return st;
        HB_BIT_SET(p->scope.exported, e);
    }
    return EARL_OK;
}

/* The symbolic pass (earl_hb.h, "in three steps") needs the clocks of
 * every own event another part may wait for before anyone asked: the sends
 * whose receive is on a ghost location, and the begins of own members of
 * collective instances that have members elsewhere.  Whole processes are
 * never split, so forks, joins and locks do not cross parts. */
earl_status earl_hb_part_export_crossing(earl_hb_part *p, size_t *n, earl_error *err)
{
    const earl_events *ev = earl_trace_events(p->trace);
    const earl_states_view *v = p->rules.view;
    const earl_loc *loc = ev->location;
    size_t nl = earl_trace_defs(p->trace)->n_locations, count = 0;
    earl_status st = EARL_OK;
    *n = 0;
    for (size_t l = 0; l < nl && st == EARL_OK; l++) {
        if (p->scope.row[l] < 0)
            continue;
        for (size_t k = ev->loc_start[l]; k < ev->loc_start[l + 1] && st == EARL_OK; k++) {
            earl_eid e = ev->loc_events[k];
            if (ev->kind[e] != EARL_MPI_SEND && ev->kind[e] != EARL_MPI_ISEND)
                continue;
            earl_eid r = earl_states_ptr(p->rules.states, EARL_PTR_RECV, e);
            if (r >= 0 && p->scope.row[loc[r]] < 0) {
                uint64_t ticket = (uint64_t)e;
                st = earl_hb_part_export(p, 0, &e, &ticket, 1, err);
                count++;
            }
        }
    }
    for (size_t k = 0; k < v->n_colls && st == EARL_OK; k++) {
        size_t first = v->coll_member_start[k], last = v->coll_member_start[k + 1];
        if (p->scope.instance_members[k] == last - first)
            continue; /* every member is own */
        for (size_t j = first; j < last && st == EARL_OK; j++) {
            earl_eid b = p->rules.member_begin[j];
            if (b >= 0 && p->scope.row[loc[b]] >= 0) {
                uint64_t ticket = (uint64_t)b;
                st = earl_hb_part_export(p, 0, &b, &ticket, 1, err);
                count++;
            }
        }
    }
    *n = count;
    return st;
}

typedef struct run_job {
    hb_columns *c;
    int failed;
} run_job;

static void *run_columns(void *arg)
{
    run_job *job = arg;
    job->failed = hb_columns_run(job->c) != 0;
    return NULL;
}

earl_status earl_hb_part_run(earl_hb_part *p, earl_error *err)
{
    run_job jobs[p->n_columns];
    for (uint32_t t = 0; t < p->n_columns; t++)
        jobs[t] = (run_job){p->columns[t], 0};
    earl_parts_run(run_columns, jobs, sizeof *jobs, p->n_columns);
    for (uint32_t t = 0; t < p->n_columns; t++)
        if (jobs[t].failed)
            return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the vector clocks of %u "
                             "locations", (unsigned)p->hb->width);
    return EARL_OK;
}

/* Record k's clock: the entries of every column replay put together. */
static void fill_clock(void *ctx, size_t k, uint8_t *dst)
{
    earl_hb_part *p = ctx;
    for (uint32_t t = 0; t < p->n_columns; t++) {
        const uint32_t *cols;
        hb_columns_sent(p->columns[t], &cols, NULL);
        memcpy(dst + (size_t)p->first[t] * sizeof(uint32_t), cols + k * p->width[t],
               (size_t)p->width[t] * sizeof(uint32_t));
    }
}

earl_status earl_hb_part_take(earl_hb_part *p, size_t n_parts, earl_outbox *out,
                              earl_error *err)
{
    const earl_eid *events;
    const uint32_t *entries;
    size_t n_sent = hb_columns_sent(p->columns[0], &entries, &events);
    earl_status st = earl_outbox_build(&p->exports, n_parts, n_sent, events,
                                       (size_t)p->hb->width * sizeof(uint32_t), fill_clock, p,
                                       out, err);
    if (st == EARL_OK)
        for (uint32_t t = 0; t < p->n_columns; t++)
            hb_columns_clear_sent(p->columns[t]);
    return st;
}

static int take_clock(void *ctx, uint64_t ticket, const uint32_t *clock)
{
    earl_hb_part *p = ctx;
    int failed = 0;
    for (uint32_t t = 0; t < p->n_columns; t++)
        failed |= hb_columns_receive(p->columns[t], p->needs[ticket], clock + p->first[t]) != 0;
    return failed;
}

earl_status earl_hb_part_receive(earl_hb_part *p, const void *records, size_t bytes,
                                 earl_error *err)
{
    return earl_outbox_receive(records, bytes, p->hb->width, p->n_needs, take_clock, p, err);
}

size_t earl_hb_part_unfinished(const earl_hb_part *p)
{
    return hb_columns_unfinished(p->columns[0]);
}

earl_eid earl_hb_part_waiting(earl_hb_part *p)
{
    earl_eid next;
    return hb_columns_earliest(p->columns[0], &next) >= 0 ? next : EARL_NONE;
}

earl_status earl_hb_part_force(earl_hb_part *p, earl_eid e, earl_error *err)
{
    const earl_events *ev = earl_trace_events(p->trace);
    earl_eid next = EARL_NONE;
    earl_loc l = e >= 0 && (size_t)e < ev->count ? ev->location[e] : EARL_NONE;
    /* any waiting location may be forced: the driver picks the one that
     * comes first in the whole trace */
    if (l >= 0 && p->scope.row[l] >= 0)
        next = hb_columns_waiting_next(p->columns[0], l);
    if (next < 0 || next != e)
        return earl_fail(err, EARL_ERR_INVALID, "event %lld is not the next event of a waiting "
                         "own location", (long long)e);
    for (uint32_t t = 0; t < p->n_columns; t++)
        hb_columns_force(p->columns[t], l);
    return EARL_OK;
}

earl_status earl_hb_part_finish(earl_hb_part *p, earl_hb **out, earl_error *err)
{
    *out = NULL;
    if (earl_hb_part_unfinished(p))
        return earl_fail(err, EARL_ERR_INVALID, "the replay of this part is not done: %zu own "
                         "locations wait", earl_hb_part_unfinished(p));
    *out = p->hb;
    p->hb = NULL;
    return EARL_OK;
}
