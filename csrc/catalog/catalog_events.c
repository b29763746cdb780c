/*
 * catalog_events.c - the events of chosen kinds, or the ENTERs of chosen
 * regions, as a sorted list of ids (earl_catalog.h): the enumerations the
 * analysis context offers properties (events_of_kind, enters_of), one pass
 * over the kind and payload columns instead of a full-length boolean
 * temporary per kind in numpy.
 *
 * The events are cut into parts on threads: each part counts its events,
 * the counts give every part its place in the output, and each part writes
 * its ids there, so the list is in ascending order whatever the parts.
 */
#include <string.h>

#include "earl_catalog.h"
#include "base/errors.h"
#include "base/parts.h"

_Static_assert(EARL_SELECTION_PARTS == EARL_MAX_PARTS, "one part count");

typedef struct select_job {
    const earl_events *ev;
    const uint8_t *kinds;   /* per kind value (256): wanted */
    const uint8_t *regions; /* per region ref, n_regions + 1 entries; NULL: any event */
    size_t n_regions;
    earl_selection *sel;
    earl_eid *out;
} select_job;

static int wanted(const select_job *j, size_t i)
{
    uint8_t kind = j->ev->kind[i];
    if (!j->kinds[kind])
        return 0;
    if (!j->regions)
        return 1;
    if (kind != EARL_ENTER)
        return 0;
    uint32_t r = j->ev->region[i];
    return j->regions[r < j->n_regions ? r : j->n_regions];
}

static void select_count(void *arg, int part)
{
    select_job *j = arg;
    size_t n = j->ev->count, found = 0, to = earl_part_start(n, part + 1, j->sel->parts);
    for (size_t i = earl_part_start(n, part, j->sel->parts); i < to; i++)
        found += (size_t)wanted(j, i);
    j->sel->counts[part] = found;
}

static void select_fill(void *arg, int part)
{
    select_job *j = arg;
    size_t n = j->ev->count, at = 0, to = earl_part_start(n, part + 1, j->sel->parts);
    for (int p = 0; p < part; p++)
        at += j->sel->counts[p];
    for (size_t i = earl_part_start(n, part, j->sel->parts); i < to; i++)
        if (wanted(j, i))
            j->out[at++] = (earl_eid)i;
}

void earl_select_count(const earl_events *ev, const uint8_t *kinds, const uint8_t *regions,
                       size_t n_regions, int threads, earl_selection *sel)
{
    memset(sel, 0, sizeof *sel);
    sel->parts = earl_parallel_parts(threads, ev->count, (size_t)1 << 20);
    select_job j = {ev, kinds, regions, n_regions, sel, NULL};
    earl_parallel(sel->parts, select_count, &j);
    for (int p = 0; p < sel->parts; p++)
        sel->total += sel->counts[p];
}

void earl_select_fill(const earl_events *ev, const uint8_t *kinds, const uint8_t *regions,
                      size_t n_regions, earl_selection *sel, earl_eid *out)
{
    select_job j = {ev, kinds, regions, n_regions, sel, out};
    earl_parallel(sel->parts, select_fill, &j);
}
