/*
 * races_wildcards.c - the per-row flags of the message table that the race
 * analysis starts from: which receive records asked for any source or any
 * tag (from the requested source and tag the caller passes, since OTF2 does
 * not record them), and which send records belong to synchronous sends.
 *
 * A non-blocking receive has two rows, its MPI_IRECV_REQUEST (where it was
 * posted, where a recorder notes what was asked for) and its MPI_IRECV (the
 * completion, which carries the actual source); the flags go on the
 * MPI_IRECV row, the receive record the analysis reports.
 */
#include "races_internal.h"

/* What the receive asked for: its posting row's value, else its record's. */
static int32_t requested(const int32_t *values, size_t posted_row, size_t row)
{
    if (!values)
        return EARL_RACES_NOT_RECORDED;
    int32_t v = values[posted_row];
    return v == EARL_RACES_NOT_RECORDED ? values[row] : v;
}

earl_status races_mark_rows(const earl_trace *trace, earl_states *states,
                            const earl_races_options *opts, const uint8_t *calls,
                            uint8_t *flags, earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    const earl_defs *defs = earl_trace_defs(trace);
    const earl_msg_table *msg = &ev->msg;
    for (size_t m = 0; m < msg->count; m++) {
        const int32_t *arrays[2] = {opts->requested_source, opts->requested_tag};
        for (int a = 0; a < 2; a++)
            if (arrays[a] && arrays[a][m] < EARL_RACES_NOT_RECORDED)
                return earl_fail(err, EARL_ERR_INVALID,
                                 "requested %s %d of message row %zu (event %lld) is not a "
                                 "rank or tag, -1 (any) or -2 (not recorded)",
                                 a ? "tag" : "source", (int)arrays[a][m], m,
                                 (long long)msg->event[m]);
    }
    for (size_t m = 0; m < msg->count; m++) {
        earl_eid e = msg->event[m];
        uint8_t kind = ev->kind[e];
        uint8_t f = 0;
        if (kind == EARL_MPI_SEND || kind == EARL_MPI_ISEND) {
            earl_eid enter = earl_states_ptr(states, EARL_PTR_ENTER, e);
            uint32_t region = enter >= 0 ? ev->region[enter] : EARL_UNDEFINED_REF;
            if (region < defs->n_regions && calls[region] == RACES_CALL_SSEND)
                f |= RACES_SYNC_SEND;
        } else if (kind == EARL_MPI_RECV || kind == EARL_MPI_IRECV) {
            size_t posted = m;
            earl_eid request = kind == EARL_MPI_IRECV ? earl_msg_partner(msg, m) : EARL_NONE;
            if (request >= 0 && ev->ref[request] >= 0)
                posted = (size_t)ev->ref[request];
            int32_t source = requested(opts->requested_source, posted, m);
            int32_t tag = requested(opts->requested_tag, posted, m);
            if (!opts->requested_source || source == EARL_RACES_WILDCARD)
                f |= RACES_WILD_SOURCE;
            if (tag == EARL_RACES_WILDCARD)
                f |= RACES_ANY_TAG;
        }
        flags[m] = f;
    }
    return EARL_OK;
}
