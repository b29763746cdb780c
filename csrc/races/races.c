/*
 * races.c - earl_races_build and the accessors of its result: the message-
 * race analysis put together from its parts (races_internal.h lists them):
 * the call classes of the regions, the wildcard flags of the receives, the
 * matches-before replay, the potential-match test, the other findings.
 */
#include <stdlib.h>
#include <string.h>

#include "races_internal.h"

struct earl_races {
    earl_races_view view;
    races_table table;
    races_findings findings;
    uint64_t warnings[EARL_RACES_WARNING_CODE_COUNT];
    size_t peak_bytes;
};

static const char *const WARNING_NAMES[EARL_RACES_WARNING_CODE_COUNT] = {
    "cycle_broken",
    "recv_without_send",
};

static const char *const FINDING_NAMES[EARL_RACES_FINDING_KIND_COUNT] = {
    "waitany", "waitsome", "testany", "testsome", "probe", "request_not_completed",
    "comm_not_freed",
};

const char *earl_races_warning_code_name(earl_races_warning_code code)
{
    return (unsigned)code < EARL_RACES_WARNING_CODE_COUNT ? WARNING_NAMES[code] : "unknown";
}

const char *earl_races_finding_kind_name(earl_races_finding_kind kind)
{
    return (unsigned)kind < EARL_RACES_FINDING_KIND_COUNT ? FINDING_NAMES[kind] : "unknown";
}

earl_status races_result(const earl_trace *trace, earl_states *states,
                         const earl_races_options *opts, const uint8_t *flags,
                         const uint8_t *calls, const races_clocks *clocks, earl_races **out,
                         earl_error *err)
{
    *out = NULL;
    const earl_events *ev = earl_trace_events(trace);
    earl_races *r = calloc(1, sizeof *r);
    if (!r)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the race analysis",
                         earl_trace_path(trace));
    earl_status st = races_find_matches(trace, states, opts, flags, clocks, &r->table, err);
    if (st == EARL_OK)
        st = races_find_other(trace, calls, &r->findings, err);
    if (st != EARL_OK) {
        earl_races_free(r);
        return st;
    }
    r->warnings[EARL_RACES_W_CYCLE_BROKEN] = clocks->cycles_broken;
    r->warnings[EARL_RACES_W_RECV_WITHOUT_SEND] = r->table.recv_without_send;
    size_t rows = ev->msg.count;
    size_t clock_bytes = rows * (sizeof(uint32_t) * (opts->clocks == EARL_RACES_VECTOR ? 2 : 1) + 1);
    r->peak_bytes = clocks->peak_bytes + clock_bytes + r->table.bytes;
    earl_races_view *v = &r->view;
    const races_table *t = &r->table;
    v->clocks = opts->clocks;
    v->n_receives = t->n_receives;
    v->recv = t->recv;
    v->recv_posted = t->recv_posted;
    v->recv_send = t->recv_send;
    v->recv_any_tag = t->recv_any_tag;
    v->alt_start = t->alt_start;
    v->n_pairs = t->n_pairs;
    v->alt_send = t->alt_send;
    v->alt_lamport = t->alt_lamport;
    v->lamport_missed = t->lamport_missed;
    v->n_findings = r->findings.n;
    v->finding_kind = r->findings.kind;
    v->finding_location = r->findings.location;
    v->finding_event = r->findings.event;
    v->finding_count = r->findings.count;
    *out = r;
    return EARL_OK;
}

earl_status races_check(const earl_trace *trace, earl_states *states,
                        const earl_races_options *options, earl_races_options *opts,
                        earl_error *err)
{
    memset(opts, 0, sizeof *opts);
    if (!trace || !states)
        return earl_fail(err, EARL_ERR_INVALID, "earl_races_build: no trace or no states");
    if (options)
        *opts = *options;
    if (opts->clocks != EARL_RACES_VECTOR && opts->clocks != EARL_RACES_LAMPORT)
        return earl_fail(err, EARL_ERR_INVALID, "earl_races_build: unknown clocks %d",
                         (int)opts->clocks);
    if (earl_states_get_view(states)->count != earl_trace_events(trace)->count)
        return earl_fail(err, EARL_ERR_INVALID,
                         "earl_races_build: the states were built for another trace");
    return EARL_OK;
}

earl_status earl_races_build(const earl_trace *trace, earl_states *states,
                             const earl_races_options *options, earl_races **out,
                             earl_error *err)
{
    *out = NULL;
    earl_races_options opts;
    earl_status st = races_check(trace, states, options, &opts, err);
    if (st != EARL_OK)
        return st;
    const earl_events *ev = earl_trace_events(trace);
    uint8_t *calls = races_classify_regions(trace);
    uint8_t *flags = earl_mem_alloc(ev->msg.count ? ev->msg.count : 1);
    races_clocks clocks = {0};
    if (!calls || !flags) {
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory for the race analysis",
                       earl_trace_path(trace));
        goto done;
    }
    st = races_mark_rows(trace, states, &opts, calls, flags, err);
    if (st == EARL_OK)
        st = races_replay(trace, states, &opts, flags, &clocks, err);
    if (st == EARL_OK)
        st = races_result(trace, states, &opts, flags, calls, &clocks, out, err);
done:
    races_clocks_free(&clocks);
    free(calls);
    earl_mem_free(flags);
    return st;
}

void earl_races_free(earl_races *r)
{
    if (!r)
        return;
    races_table_free(&r->table);
    races_findings_free(&r->findings);
    free(r);
}

const earl_races_view *earl_races_get_view(const earl_races *r)
{
    return &r->view;
}

uint64_t earl_races_warning_count(const earl_races *r, earl_races_warning_code code)
{
    return (unsigned)code < EARL_RACES_WARNING_CODE_COUNT ? r->warnings[code] : 0;
}

size_t earl_races_peak_bytes(const earl_races *r)
{
    return r->peak_bytes;
}

size_t earl_races_bytes(const earl_races *r)
{
    const races_table *t = &r->table;
    return sizeof *r + t->cap_receives * (4 * sizeof(earl_eid) + 1) +
           t->cap_pairs * (sizeof(earl_eid) + 1) +
           r->findings.cap * (1 + sizeof(earl_loc) + sizeof(earl_eid) + sizeof(uint64_t));
}
