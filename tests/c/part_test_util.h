/*
 * part_test_util.h - helpers of the C tests of a trace in parts
 * (csrc/part/earl_part.h): generated traces, a partition by process, the
 * parts of a trace opened in one process (each reads its own locations,
 * exports the ghosts the others need, adds those it receives), and the whole
 * trace's event behind a part's event.  Header-only (static functions), so
 * that each test program is one file; the test defines `ok`, which fails
 * with the message of `err`.
 */
#ifndef PART_TEST_UTIL_H
#define PART_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "earl.h"
#include "earl_part.h"
#include "earl_synth.h"
#include "writer_test_util.h"

#define PTU_MAX_PARTS 4
#define PTU_MAX_LOCATIONS 64

/* The test's: the last error, and a check that fails the test with its message. */
static earl_error err;
static void ok(earl_status st);

/* A generated trace of `kind` with `ranks` processes of `threads` threads in
 * a fresh scratch folder (returned: the caller removes and frees it). */
static char *ptu_generate(earl_synth_kind kind, uint32_t ranks, uint32_t threads, char *path,
                          size_t size)
{
    char *dir = wtu_scratch();
    snprintf(path, size, "%s/t", dir);
    earl_synth_options o;
    earl_synth_defaults(kind, &o);
    o.ranks = ranks;
    o.threads = threads;
    o.iterations = 6;
    o.delay = 300;
    o.delay_rank = 1;
    earl_synth_result r;
    ok(earl_synth_run(&o, path, &r, &err));
    return dir;
}

/* Part p of n: location l is in part group(l) * n / groups (whole processes
 * of one location each in these traces, or the threads of a process
 * together: by process). */
static void ptu_partition(const earl_defs *d, int n, int32_t *part_of)
{
    uint32_t groups = 0;
    for (uint32_t l = 0; l < d->n_locations; l++)
        if (d->locations[l].group + 1 > groups)
            groups = d->locations[l].group + 1;
    for (uint32_t l = 0; l < d->n_locations; l++)
        part_of[l] = (int32_t)((uint64_t)d->locations[l].group * (uint64_t)n / groups);
}

typedef struct ptu_parts {
    int n;
    earl_trace *trace[PTU_MAX_PARTS];
    earl_ghosts exported[PTU_MAX_PARTS];
} ptu_parts;

/* The n parts of the trace at path, partitioned by ptu_partition (part_of
 * gets the partition). */
static void ptu_open_parts(const char *path, int n, int32_t *part_of, ptu_parts *out)
{
    earl_reading *r[PTU_MAX_PARTS];
    memset(out, 0, sizeof *out);
    out->n = n;
    for (int p = 0; p < n; p++) {
        ok(earl_reading_open(path, NULL, &r[p], &err));
        const earl_defs *d = earl_reading_defs(r[p]);
        if (p == 0)
            ptu_partition(d, n, part_of);
        uint8_t mask[PTU_MAX_LOCATIONS] = {0};
        assert_true(d->n_locations <= PTU_MAX_LOCATIONS);
        for (uint32_t l = 0; l < d->n_locations; l++)
            mask[l] = part_of[l] == p;
        ok(earl_reading_read(r[p], mask, &err));
        ok(earl_part_export(r[p], part_of, (size_t)n, p, &out->exported[p], &err));
        assert_int_equal(out->exported[p].offset[p], out->exported[p].offset[p + 1]);
    }
    for (int p = 0; p < n; p++) {
        for (int q = 0; q < n; q++) {
            const earl_ghosts *g = &out->exported[q];
            ok(earl_part_add_ghosts(r[p], g->records + g->offset[p],
                                    g->offset[p + 1] - g->offset[p], &err));
        }
        ok(earl_reading_finish(r[p], &out->trace[p], &err));
    }
}

static void ptu_close_parts(ptu_parts *ps)
{
    for (int p = 0; p < ps->n; p++) {
        earl_trace_close(ps->trace[p]);
        earl_ghosts_free(&ps->exported[p]);
    }
}

/* The position in the whole trace of part `self`'s event e on its location:
 * its index there for an own location, for a ghost the position its record
 * carried. */
static size_t ptu_position(const ptu_parts *ps, int self, earl_eid e)
{
    const earl_trace *part = ps->trace[self];
    const earl_events *pe = earl_trace_events(part);
    earl_loc l = pe->location[e];
    size_t k = 0;
    while (pe->loc_events[pe->loc_start[l] + k] != (earl_eid32)e)
        k++;
    if (earl_trace_defs(part)->locations[l].held != EARL_HELD_GHOSTS)
        return k;
    size_t seen = 0; /* the k-th ghost of l: find its record */
    for (int q = 0; q < ps->n; q++) {
        const earl_ghosts *g = &ps->exported[q];
        for (size_t i = g->offset[self]; i < g->offset[self + 1]; i++)
            if (g->records[i].location == l && seen++ == k)
                return g->records[i].position;
    }
    fail_msg("event %lld of part %d: no ghost record", (long long)e, self);
    return SIZE_MAX;
}

/* The whole trace's id of part `self`'s event e. */
static earl_eid ptu_whole_event(const earl_trace *whole, const ptu_parts *ps, int self, earl_eid e)
{
    const earl_events *we = earl_trace_events(whole);
    earl_loc l = earl_trace_events(ps->trace[self])->location[e];
    return we->loc_events[we->loc_start[l] + ptu_position(ps, self, e)];
}

#endif
