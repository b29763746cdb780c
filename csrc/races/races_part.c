/*
 * races_part.c - the race analysis of a part of a trace (earl_races.h, "the
 * race analysis of a part"): the steps a driver runs, between which the
 * parts pass each other the clocks that cross them.
 *
 * The replay is races_replay.c's, resumable and restricted to the own
 * locations.  This file adds what crosses: what the own locations wait for
 * from other parts (needs, numbered by tickets), what other parts wait for
 * from them (exports, earl_outbox_build packs it round by round), and the
 * result, whose race test reads the clocks of every send to an own location
 * (the own sends' from the replay, the others' as they arrived).
 */
#include <stdlib.h>
#include <string.h>

#include "part/part_outbox.h"
#include "races_internal.h"

struct earl_races_part {
    const earl_trace *trace;
    earl_states *states;
    earl_races_options opts;
    uint8_t *calls;
    uint8_t *flags;
    races_clocks clocks;
    races_run *run;
    int64_t *needs;          /* keys waited for, ascending: ticket = index */
    uint8_t *need_kind;      /* their kinds and events, for the caller */
    earl_eid *need_event;
    size_t n_needs, cap_needs;
    earl_exports exports;    /* keys other parts wait for */
};

static int own(const earl_trace *t, earl_loc l)
{
    return l >= 0 && earl_trace_defs(t)->locations[l].held == EARL_HELD_ALL;
}

static int cmp_key(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int need(earl_races_part *p, int kind, earl_eid e)
{
    if (EARL_GROW(p->needs, p->cap_needs, p->n_needs + 1) != 0)
        return -1;
    p->needs[p->n_needs++] = RACES_KEY(kind, e);
    return 0;
}

/* What the own locations wait for: sends to them from elsewhere, the
 * receivers' clocks of own synchronous sends taken elsewhere, the begins of
 * other parts' members of collectives with an own member. */
static earl_status find_needs(earl_races_part *p, earl_error *err)
{
    const earl_trace *t = p->trace;
    const earl_events *ev = earl_trace_events(t);
    const earl_msg_table *msg = &ev->msg;
    for (size_t m = 0; m < msg->count; m++) {
        earl_eid e = msg->event[m];
        if (ev->kind[e] != EARL_MPI_SEND && ev->kind[e] != EARL_MPI_ISEND)
            continue;
        if (!own(t, ev->location[e])) {
            if (own(t, msg->peer[m]) && need(p, RACES_SENT, e) != 0)
                goto nomem;
        } else if (p->flags[m] & RACES_SYNC_SEND) {
            earl_eid r = earl_states_ptr(p->states, EARL_PTR_RECV, e);
            if (r >= 0 && !own(t, ev->location[r]) && need(p, RACES_ACK, e) != 0)
                goto nomem;
        }
    }
    const earl_states_view *v = earl_states_get_view(p->states);
    for (size_t k = 0; k < v->n_colls; k++) {
        if (v->coll_type[k] != EARL_COLL_MPI)
            continue;
        size_t a = v->coll_member_start[k], b = v->coll_member_start[k + 1];
        int any = 0;
        for (size_t j = a; j < b; j++)
            any |= own(t, ev->location[v->coll_members[j]]);
        for (size_t j = a; any && j < b; j++)
            if (!own(t, ev->location[v->coll_members[j]]) &&
                need(p, RACES_BEGIN, v->coll_members[j]) != 0)
                goto nomem;
    }
    if (p->n_needs)
        qsort(p->needs, p->n_needs, sizeof *p->needs, cmp_key);
    size_t u = 0;
    for (size_t k = 0; k < p->n_needs; k++)
        if (!u || p->needs[u - 1] != p->needs[k])
            p->needs[u++] = p->needs[k];
    p->n_needs = u;
    p->need_kind = malloc(u + 1);
    p->need_event = malloc((u + 1) * sizeof *p->need_event);
    if (!p->need_kind || !p->need_event)
        goto nomem;
    for (size_t k = 0; k < u; k++) {
        p->need_kind[k] = (uint8_t)RACES_KEY_KIND(p->needs[k]);
        p->need_event[k] = RACES_KEY_EVENT(p->needs[k]);
    }
    return EARL_OK;
nomem:
    return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for what a part waits for",
                     earl_trace_path(t));
}

earl_status earl_races_part_new(const earl_trace *trace, earl_states *states,
                                const earl_races_options *options, earl_races_part **out,
                                earl_error *err)
{
    *out = NULL;
    earl_races_part *p = calloc(1, sizeof *p);
    if (!p)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the race analysis of a part");
    earl_status st = races_check(trace, states, options, &p->opts, err);
    if (st != EARL_OK) {
        free(p);
        return st;
    }
    p->trace = trace;
    p->states = states;
    const earl_events *ev = earl_trace_events(trace);
    p->calls = races_classify_regions(trace);
    p->flags = earl_mem_alloc(ev->msg.count ? ev->msg.count : 1);
    if (!p->calls || !p->flags)
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the race analysis",
                       earl_trace_path(trace));
    if (st == EARL_OK)
        st = races_mark_rows(trace, states, &p->opts, p->calls, p->flags, err);
    if (st == EARL_OK)
        st = races_run_new(trace, states, &p->opts, p->flags, &p->clocks, &p->run, err);
    if (st == EARL_OK)
        st = find_needs(p, err);
    /* read while starting only: the caller may free them */
    p->opts.requested_source = p->opts.requested_tag = NULL;
    p->opts.clocked = NULL;
    if (st != EARL_OK) {
        earl_races_part_free(p);
        return st;
    }
    *out = p;
    return EARL_OK;
}

void earl_races_part_free(earl_races_part *p)
{
    if (!p)
        return;
    races_run_free(p->run);
    races_clocks_free(&p->clocks);
    free(p->calls);
    earl_mem_free(p->flags);
    free(p->needs);
    free(p->need_kind);
    free(p->need_event);
    earl_exports_free(&p->exports);
    free(p);
}

size_t earl_races_part_needs(const earl_races_part *p, const uint8_t **kinds,
                             const earl_eid **events)
{
    *kinds = p->need_kind;
    *events = p->need_event;
    return p->n_needs;
}

/* Does this part produce (kind, e)? */
static int produces(const earl_races_part *p, int kind, earl_eid e)
{
    const earl_trace *t = p->trace;
    const earl_events *ev = earl_trace_events(t);
    if (e < 0 || (size_t)e >= ev->count)
        return 0;
    uint8_t k = ev->kind[e];
    int send = k == EARL_MPI_SEND || k == EARL_MPI_ISEND;
    switch (kind) {
    case RACES_SENT:
        return send && own(t, ev->location[e]);
    case RACES_ACK: {
        earl_eid r = send ? earl_states_ptr(p->states, EARL_PTR_RECV, e) : EARL_NONE;
        return r >= 0 && own(t, ev->location[r]);
    }
    case RACES_BEGIN:
        return k == EARL_MPI_COLLECTIVE_END && own(t, ev->location[e]);
    default:
        return 0;
    }
}

earl_status earl_races_part_export(earl_races_part *p, int32_t to, const uint8_t *kinds,
                                   const earl_eid *events, const uint64_t *tickets, size_t n,
                                   earl_error *err)
{
    for (size_t k = 0; k < n; k++) {
        if (!produces(p, kinds[k], events[k]))
            return earl_fail(err, EARL_ERR_INVALID, "part %d waits for the clock of kind %u "
                             "of event %lld, which this part does not produce", (int)to,
                             (unsigned)kinds[k], (long long)events[k]);
        int64_t key = RACES_KEY(kinds[k], events[k]);
        earl_status st = earl_exports_add(&p->exports, key, to, tickets[k], err);
        if (st != EARL_OK)
            return st;
        if (races_run_export(p->run, key) != 0)
            return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the clocks a part sends");
    }
    return EARL_OK;
}

/* One crossing key to part 0, its ticket the key itself. */
static earl_status export_key(earl_races_part *p, int kind, earl_eid e, size_t *count,
                              earl_error *err)
{
    uint8_t k = (uint8_t)kind;
    uint64_t ticket = (uint64_t)RACES_KEY(kind, e);
    (*count)++;
    return earl_races_part_export(p, 0, &k, &e, &ticket, 1, err);
}

/* The symbolic pass of a driver in turn (earlc.parts.races_inturn) needs the
 * clocks of every key another part may wait for before anyone asked: the
 * producer's side of find_needs.  An ACK is exported for every send of
 * another part that an own receive took; only synchronous ones are produced,
 * the others never show up in a take. */
earl_status earl_races_part_export_crossing(earl_races_part *p, size_t *n, earl_error *err)
{
    const earl_trace *t = p->trace;
    const earl_events *ev = earl_trace_events(t);
    const earl_msg_table *msg = &ev->msg;
    earl_status st = EARL_OK;
    size_t count = 0;
    for (size_t m = 0; m < msg->count && st == EARL_OK; m++) {
        earl_eid e = msg->event[m];
        if (ev->kind[e] != EARL_MPI_SEND && ev->kind[e] != EARL_MPI_ISEND)
            continue;
        if (own(t, ev->location[e])) {
            if (msg->peer[m] >= 0 && !own(t, msg->peer[m]))
                st = export_key(p, RACES_SENT, e, &count, err);
        } else {
            earl_eid r = earl_states_ptr(p->states, EARL_PTR_RECV, e);
            if (r >= 0 && own(t, ev->location[r]))
                st = export_key(p, RACES_ACK, e, &count, err);
        }
    }
    const earl_states_view *v = earl_states_get_view(p->states);
    for (size_t k = 0; k < v->n_colls && st == EARL_OK; k++) {
        if (v->coll_type[k] != EARL_COLL_MPI)
            continue;
        size_t a = v->coll_member_start[k], b = v->coll_member_start[k + 1];
        int foreign = 0;
        for (size_t j = a; j < b; j++)
            foreign |= !own(t, ev->location[v->coll_members[j]]);
        for (size_t j = a; foreign && j < b && st == EARL_OK; j++)
            if (own(t, ev->location[v->coll_members[j]]))
                st = export_key(p, RACES_BEGIN, v->coll_members[j], &count, err);
    }
    *n = count;
    return st;
}

earl_status earl_races_part_run(earl_races_part *p, earl_error *err)
{
    if (races_run_go(p->run) != 0)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory in the race replay",
                         earl_trace_path(p->trace));
    return EARL_OK;
}

static void fill_clock(void *ctx, size_t k, uint8_t *dst)
{
    earl_races_part *p = ctx;
    const int64_t *keys;
    const uint32_t *clocks;
    races_run_produced(p->run, &keys, &clocks);
    uint32_t w = races_run_clock_entries(p->run);
    memcpy(dst, clocks + k * w, (size_t)w * sizeof(uint32_t));
}

earl_status earl_races_part_take(earl_races_part *p, size_t n_parts, earl_outbox *out,
                                 earl_error *err)
{
    const int64_t *keys;
    const uint32_t *clocks;
    size_t n = races_run_produced(p->run, &keys, &clocks);
    earl_status st = earl_outbox_build(&p->exports, n_parts, n, keys,
                                       (size_t)races_run_clock_entries(p->run) * sizeof(uint32_t),
                                       fill_clock, p, out, err);
    if (st == EARL_OK)
        races_run_clear_produced(p->run);
    return st;
}

static int take_clock(void *ctx, uint64_t ticket, const uint32_t *clock)
{
    earl_races_part *p = ctx;
    return races_run_receive(p->run, p->needs[ticket], clock);
}

earl_status earl_races_part_receive(earl_races_part *p, const void *records, size_t bytes,
                                    earl_error *err)
{
    return earl_outbox_receive(records, bytes, races_run_clock_entries(p->run), p->n_needs,
                               take_clock, p, err);
}

size_t earl_races_part_unfinished(const earl_races_part *p)
{
    return races_run_unfinished(p->run);
}

earl_eid earl_races_part_waiting(earl_races_part *p)
{
    int32_t l;
    return races_run_waiting(p->run, &l);
}

earl_status earl_races_part_force(earl_races_part *p, earl_eid e, earl_error *err)
{
    const earl_events *ev = earl_trace_events(p->trace);
    earl_loc l = e >= 0 && (size_t)e < ev->count ? ev->location[e] : EARL_NONE;
    if (l < 0 || !own(p->trace, l) || races_run_waiting_at(p->run, l) != e)
        return earl_fail(err, EARL_ERR_INVALID, "event %lld is not the next event of a waiting "
                         "own location", (long long)e);
    races_run_force(p->run, l);
    return EARL_OK;
}

earl_status earl_races_part_finish(earl_races_part *p, earl_races **out, earl_error *err)
{
    *out = NULL;
    if (races_run_unfinished(p->run))
        return earl_fail(err, EARL_ERR_INVALID, "the race replay of this part is not done: %zu "
                         "own locations wait", races_run_unfinished(p->run));
    p->clocks.peak_bytes = races_run_peak_bytes(p->run);
    return races_result(p->trace, p->states, &p->opts, p->flags, p->calls, &p->clocks, out, err);
}
