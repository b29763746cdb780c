/*
 * catalog_events.c - selections, as ascending lists (earl_catalog.h): the
 * events of chosen kinds or the ENTERs of chosen regions (the enumerations
 * the analysis context offers properties: events_of_kind, enters_of), and
 * the rows of pairs of calls where the second is entered after the first, a
 * call of chosen regions (Late Sender's and Late Receiver's candidates).
 * One pass each, where numpy needs a full-length temporary per condition.
 *
 * The items are cut into parts on threads: each part counts what it
 * selects, the counts give every part its place in the output, and each part
 * writes there, so the list is in ascending order whatever the parts.
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

/* ---- calls entered after others ------------------------------------------------- */

typedef struct after_job {
    const earl_events *ev;
    size_t n;
    const earl_eid *first, *second;
    const uint8_t *regions;
    size_t n_regions;
    earl_selection *sel;
    int64_t *rows, *t_first, *t_second;
    size_t bad; /* a row with an id out of range, + 1 (0: none) */
} after_job;

/* Whether row k is selected; -1 for an id out of range. */
static int after_wanted(const after_job *j, size_t k)
{
    earl_eid a = j->first[k], b = j->second[k];
    if (a < 0 || b < 0)
        return 0;
    if ((size_t)a >= j->ev->count || (size_t)b >= j->ev->count)
        return -1;
    if (j->ev->time[b] <= j->ev->time[a])
        return 0;
    uint32_t r = j->ev->region[a];
    return j->regions[r < j->n_regions ? r : j->n_regions];
}

static void after_note_bad(after_job *j, size_t k)
{
    size_t was = __atomic_load_n(&j->bad, __ATOMIC_RELAXED);
    while ((!was || k + 1 < was) &&
           !__atomic_compare_exchange_n(&j->bad, &was, k + 1, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
}

static void after_count(void *arg, int part)
{
    after_job *j = arg;
    size_t found = 0, to = earl_part_start(j->n, part + 1, j->sel->parts);
    for (size_t k = earl_part_start(j->n, part, j->sel->parts); k < to; k++) {
        int w = after_wanted(j, k);
        if (w < 0) {
            after_note_bad(j, k);
            break;
        }
        found += (size_t)w;
    }
    j->sel->counts[part] = found;
}

static void after_fill(void *arg, int part)
{
    after_job *j = arg;
    size_t at = 0, to = earl_part_start(j->n, part + 1, j->sel->parts);
    for (int p = 0; p < part; p++)
        at += j->sel->counts[p];
    for (size_t k = earl_part_start(j->n, part, j->sel->parts); k < to; k++)
        if (after_wanted(j, k) > 0) {
            j->rows[at] = (int64_t)k;
            j->t_first[at] = (int64_t)j->ev->time[j->first[k]];
            j->t_second[at] = (int64_t)j->ev->time[j->second[k]];
            at++;
        }
}

earl_status earl_entered_after_count(const earl_events *ev, size_t n, const earl_eid *first,
                                     const earl_eid *second, const uint8_t *regions,
                                     size_t n_regions, int threads, earl_selection *sel,
                                     earl_error *err)
{
    memset(sel, 0, sizeof *sel);
    sel->parts = earl_parallel_parts(threads, n, (size_t)1 << 16);
    after_job j = {ev, n, first, second, regions, n_regions, sel, NULL, NULL, NULL, 0};
    earl_parallel(sel->parts, after_count, &j);
    if (j.bad)
        return earl_fail(err, EARL_ERR_INVALID, "entered after: row %zu has an event id out "
                         "of range (the trace has %zu events)", j.bad - 1, ev->count);
    for (int p = 0; p < sel->parts; p++)
        sel->total += sel->counts[p];
    return EARL_OK;
}

void earl_entered_after_fill(const earl_events *ev, size_t n, const earl_eid *first,
                             const earl_eid *second, const uint8_t *regions, size_t n_regions,
                             earl_selection *sel, int64_t *rows, int64_t *t_first,
                             int64_t *t_second)
{
    after_job j = {ev, n, first, second, regions, n_regions, sel, rows, t_first, t_second, 0};
    earl_parallel(sel->parts, after_fill, &j);
}
