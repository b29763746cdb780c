/*
 * races_findings.c - what else makes a run nondeterministic or leaks MPI
 * resources, as far as a trace shows it (Vo's dissertation, sections 2.3.4
 * and 2.3.6), one finding per (kind, location) with its first event and a
 * count:
 *   - calls that pick one of several completed requests or any waiting
 *     message: MPI_Waitany, MPI_Waitsome, MPI_Testany, MPI_Testsome, and the
 *     probes (OTF2 records no source for a probe, so each may be a wildcard);
 *   - non-blocking sends and receives started and never completed nor
 *     cancelled (the trace model pairs requests by id; a start without its
 *     completion has no partner);
 *   - communicators never freed: OTF2 traces do not say which communicator a
 *     MPI_Comm_free released, so a location that called more communicator-
 *     creating functions than MPI_Comm_free is reported with the difference.
 */
#include <stdlib.h>
#include <string.h>

#include "races_internal.h"

typedef struct tally {
    earl_eid first;
    uint64_t count;
} tally;

static int add(races_findings *f, earl_races_finding_kind kind, earl_loc loc, earl_eid e,
               uint64_t count)
{
    if (f->n == f->cap) {
        size_t c1 = f->cap, c2 = f->cap, c3 = f->cap, c4 = f->cap;
        if (EARL_GROW(f->kind, c1, f->n + 1) || EARL_GROW(f->location, c2, f->n + 1) ||
            EARL_GROW(f->event, c3, f->n + 1) || EARL_GROW(f->count, c4, f->n + 1))
            return -1;
        f->cap = c1;
    }
    f->kind[f->n] = (uint8_t)kind;
    f->location[f->n] = loc;
    f->event[f->n] = e;
    f->count[f->n++] = count;
    return 0;
}

static earl_races_finding_kind finding_of_call(uint8_t call)
{
    switch (call) {
    case RACES_CALL_WAITANY: return EARL_RACES_WAITANY;
    case RACES_CALL_WAITSOME: return EARL_RACES_WAITSOME;
    case RACES_CALL_TESTANY: return EARL_RACES_TESTANY;
    case RACES_CALL_TESTSOME: return EARL_RACES_TESTSOME;
    case RACES_CALL_PROBE: return EARL_RACES_PROBE;
    default: return EARL_RACES_FINDING_KIND_COUNT;
    }
}

earl_status races_find_other(const earl_trace *trace, const uint8_t *calls,
                             races_findings *out, earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    const earl_defs *defs = earl_trace_defs(trace);
    memset(out, 0, sizeof *out);
    /* per location: tallies of the call kinds, of requests, creations and frees */
    enum { N_CALL_KINDS = EARL_RACES_PROBE + 1 };
    tally calls_at[N_CALL_KINDS], requests;
    earl_eid last_create = -1;
    uint64_t created = 0, freed = 0;
    const earl_msg_table *msg = &ev->msg;
    uint8_t *cancelled = calloc(msg->count ? msg->count : 1, 1);
    if (!cancelled)
        goto nomem;
    for (size_t m = 0; m < msg->count; m++) {
        earl_eid p = earl_msg_partner(msg, m);
        if (ev->kind[msg->event[m]] == EARL_MPI_REQUEST_CANCELLED && p >= 0 && ev->ref[p] >= 0)
            cancelled[ev->ref[p]] = 1;
    }
    for (uint32_t l = 0; l < defs->n_locations; l++) {
        if (defs->locations[l].held != EARL_HELD_ALL)
            continue; /* a part's ghosts are their owner's to count */
        for (int k = 0; k < N_CALL_KINDS; k++)
            calls_at[k] = (tally){-1, 0};
        requests = (tally){-1, 0};
        last_create = -1;
        created = freed = 0;
        for (size_t p = ev->loc_start[l]; p < ev->loc_start[l + 1]; p++) {
            earl_eid e = ev->loc_events[p];
            uint8_t kind = ev->kind[e];
            if (kind == EARL_ENTER) {
                uint32_t region = ev->region[e];
                uint8_t call = region < defs->n_regions ? calls[region] : RACES_CALL_OTHER;
                earl_races_finding_kind f = finding_of_call(call);
                if (f != EARL_RACES_FINDING_KIND_COUNT) {
                    if (!calls_at[f].count++)
                        calls_at[f].first = e;
                } else if (call == RACES_CALL_COMM_CREATE) {
                    created++;
                    last_create = e;
                } else if (call == RACES_CALL_COMM_FREE) {
                    freed++;
                }
            } else if ((kind == EARL_MPI_ISEND || kind == EARL_MPI_IRECV_REQUEST) &&
                       ev->ref[e] >= 0 && earl_msg_partner(msg, (size_t)ev->ref[e]) < 0 &&
                       !cancelled[ev->ref[e]]) {
                if (!requests.count++)
                    requests.first = e;
            }
        }
        for (int k = 0; k < N_CALL_KINDS; k++)
            if (calls_at[k].count &&
                add(out, (earl_races_finding_kind)k, (earl_loc)l, calls_at[k].first,
                    calls_at[k].count) != 0)
                goto nomem;
        if (requests.count && add(out, EARL_RACES_REQUEST_NOT_COMPLETED, (earl_loc)l,
                                  requests.first, requests.count) != 0)
            goto nomem;
        if (created > freed &&
            add(out, EARL_RACES_COMM_NOT_FREED, (earl_loc)l, last_create, created - freed) != 0)
            goto nomem;
    }
    free(cancelled);
    return EARL_OK;
nomem:
    free(cancelled);
    races_findings_free(out);
    return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory listing the findings",
                     earl_trace_path(trace));
}

void races_findings_free(races_findings *f)
{
    free(f->kind);
    free(f->location);
    free(f->event);
    free(f->count);
    memset(f, 0, sizeof *f);
}
