/*
 * hb.c - the earl_hb handle: which events are stamped, building their
 * vector timestamps (the rules in hb_rules.c, the replay in hb_replay.c) and
 * the constant-time happened-before and concurrency tests over them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hb_internal.h"

/* Refuse stamps that cannot fit in memory before touching any: the size is
 * events x locations, easy to get wrong by stamping a whole large trace. */
static int fits_in_memory(size_t bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages <= 0 || page <= 0 || bytes / (size_t)page < (size_t)pages / 4 * 3;
}

/* A handle for n stamps of width entries, nothing filled in. */
static earl_hb *hb_new_empty(uint32_t width, size_t n, earl_error *err)
{
    size_t stamp_bytes = n * (size_t)width * sizeof(uint32_t);
    size_t clock_bytes = (size_t)width * width * sizeof(uint32_t);
    if ((width && stamp_bytes / width != n * sizeof(uint32_t)) ||
        !fits_in_memory(stamp_bytes + clock_bytes)) {
        earl_fail(err, EARL_ERR_NOMEM, "vector timestamps of %zu events over %u locations "
                  "need %.1f GB: stamp fewer events", n, (unsigned)width,
                  (double)(stamp_bytes + clock_bytes) / 1e9);
        return NULL;
    }
    earl_hb *hb = calloc(1, sizeof *hb);
    if (!hb) {
        earl_fail(err, EARL_ERR_NOMEM, "out of memory for vector timestamps");
        return NULL;
    }
    hb->width = width;
    hb->n = n;
    size_t m = n ? n : 1;
    hb->events = malloc(m * sizeof *hb->events);
    hb->location = malloc(m * sizeof *hb->location);
    hb->position = malloc(m * sizeof *hb->position);
    hb->stamps = earl_mem_alloc(stamp_bytes ? stamp_bytes : 1); /* a large, warm block */
    if (!hb->events || !hb->location || !hb->position || !hb->stamps) {
        earl_hb_free(hb);
        earl_fail(err, EARL_ERR_NOMEM, "out of memory for vector timestamps of %zu events", n);
        return NULL;
    }
    hb->bytes = sizeof *hb + n * (sizeof *hb->events + sizeof *hb->location +
                                  sizeof *hb->position) + stamp_bytes;
    return hb;
}

earl_hb *hb_alloc(const earl_trace *trace, const earl_eid *stamped, size_t n, earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    uint32_t width = earl_trace_defs(trace)->n_locations;
    for (size_t k = 0; k < n; k++) {
        if (stamped[k] < 0 || (size_t)stamped[k] >= ev->count) {
            earl_fail(err, EARL_ERR_INVALID, "event %lld is not an event of %s (it has %zu events)",
                      (long long)stamped[k], earl_trace_path(trace), ev->count);
            return NULL;
        }
        if (k && stamped[k] <= stamped[k - 1]) {
            earl_fail(err, EARL_ERR_INVALID, "the events to stamp must be sorted and distinct "
                      "(event %lld follows %lld)", (long long)stamped[k],
                      (long long)stamped[k - 1]);
            return NULL;
        }
    }
    earl_hb *hb = hb_new_empty(width, n, err);
    if (hb && n)
        memcpy(hb->events, stamped, n * sizeof *stamped);
    return hb;
}

earl_status earl_hb_build(const earl_trace *trace, earl_states *states, const earl_eid *stamped,
                          size_t n, const earl_hb_options *options, earl_hb **out,
                          earl_error *err)
{
    earl_error scratch; /* the rules read back the error they failed with */
    if (!err)
        err = &scratch;
    *out = NULL;
    earl_hb *hb = hb_alloc(trace, stamped, n, err);
    if (!hb)
        return err->code;
    hb_rules rules;
    earl_status rc = hb_rules_init(&rules, trace, states, err);
    if (rc == EARL_OK)
        rc = hb_replay(hb, trace, &rules, options, err);
    hb_rules_free(&rules);
    if (rc != EARL_OK) {
        earl_hb_free(hb);
        return rc;
    }
    *out = hb;
    return EARL_OK;
}

earl_status earl_hb_from_stamps(uint32_t width, size_t n, const earl_eid *events,
                                const earl_loc *location, const uint32_t *position,
                                const uint32_t *stamps, earl_hb **out, earl_error *err)
{
    earl_error scratch; /* the failure's code is read back below */
    if (!err)
        err = &scratch;
    *out = NULL;
    for (size_t k = 1; k < n; k++)
        if (events[k] <= events[k - 1])
            return earl_fail(err, EARL_ERR_INVALID, "the stamped events must be sorted and "
                             "distinct (event %lld follows %lld)", (long long)events[k],
                             (long long)events[k - 1]);
    for (size_t k = 0; k < n; k++)
        if (location[k] < 0 || (uint32_t)location[k] >= width)
            return earl_fail(err, EARL_ERR_INVALID, "stamped event %lld: location %d outside "
                             "the %u of the stamps", (long long)events[k], (int)location[k],
                             (unsigned)width);
    earl_hb *hb = hb_new_empty(width, n, err);
    if (!hb)
        return err->code;
    if (n) {
        memcpy(hb->events, events, n * sizeof *events);
        memcpy(hb->location, location, n * sizeof *location);
        memcpy(hb->position, position, n * sizeof *position);
        memcpy(hb->stamps, stamps, n * (size_t)width * sizeof *stamps);
    }
    *out = hb;
    return EARL_OK;
}

void earl_hb_free(earl_hb *hb)
{
    if (!hb)
        return;
    free(hb->events);
    free(hb->location);
    free(hb->position);
    earl_mem_free(hb->stamps);
    free(hb);
}

size_t earl_hb_count(const earl_hb *hb) { return hb->n; }
uint32_t earl_hb_width(const earl_hb *hb) { return hb->width; }
size_t earl_hb_bytes(const earl_hb *hb) { return hb->bytes; }

uint64_t earl_hb_warning_count(const earl_hb *hb, earl_hb_warning_code code)
{
    return code < EARL_HB_WARNING_CODE_COUNT ? hb->warnings[code] : 0;
}

int64_t earl_hb_index(const earl_hb *hb, earl_eid e)
{
    size_t k = earl_i64_lower_bound(hb->events, 0, hb->n, e);
    return k < hb->n && hb->events[k] == e ? (int64_t)k : -1;
}

earl_eid earl_hb_event(const earl_hb *hb, size_t k) { return hb->events[k]; }
earl_loc earl_hb_location(const earl_hb *hb, size_t k) { return hb->location[k]; }
uint32_t earl_hb_position(const earl_hb *hb, size_t k) { return hb->position[k]; }

const uint32_t *earl_hb_stamp(const earl_hb *hb, size_t k)
{
    return hb->stamps + k * hb->width;
}

int earl_hb_before(const earl_hb *hb, size_t ia, size_t ib)
{
    return ia != ib && hb->stamps[ib * hb->width + (size_t)hb->location[ia]] > hb->position[ia];
}

int earl_hb_concurrent(const earl_hb *hb, size_t ia, size_t ib)
{
    return ia != ib && !earl_hb_before(hb, ia, ib) && !earl_hb_before(hb, ib, ia);
}
