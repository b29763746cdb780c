/*
 * search_classes.c - event classes over the trace model: which events a
 * class literal ["process", "type", "text"] matches, and which pairs of
 * events a partner class A.B matches.
 *
 * Each field is a glob over the whole field ('*' any run of characters),
 * "" matches anything:
 *   process  the location's name, "rank R" (every location of MPI rank R) or
 *            "rank R thread T" (T = earl_location.thread): a location matches
 *            when the glob matches any of these spellings;
 *   type     the event kind as earl_kind_name spells it;
 *   text     the region name: an ENTER's or LEAVE's own region, for other
 *            events the region of the enclosing call (enterptr of the EARL
 *            layer); "" for an event outside every region.
 * Locations, kinds and regions are tested once each; the events are then
 * read location by location, and the locations' ascending runs of ids
 * merged (pairwise, O(n log locations): a sort of all ids cost a tenth of a
 * parallel search's time, on one thread before the search starts).
 *
 * In a part of a trace a class's events are those of the own locations;
 * the second class of a partner class is matched against the ghosts too
 * (the partner of an own event may be another part's), so that each pair is
 * found once, by the part of its first event.
 *
 * Partners are the pairs the model links: a send and its receive (sendptr /
 * recvptr), the two halves of a non-blocking request (msg.partner: an
 * MPI_ISEND and its MPI_ISEND_COMPLETE, an MPI_IRECV_REQUEST and its
 * MPI_IRECV), and a fork and the THREAD_TEAM_BEGIN of every thread of its
 * team (forkptr).  The relation is symmetric: A.B holds (a, b) when a is in
 * A, b is in B and the two are linked either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

/* ids[0 .. n) ascending, given as runs ascending each: run r is
 * [start[r], start[r + 1]).  Runs are merged pairwise through tmp (n items),
 * which ends up holding the result when the passes are odd: returns the
 * array that holds it. */
static earl_eid *merge_runs(earl_eid *ids, earl_eid *tmp, size_t *start, size_t runs)
{
    while (runs > 1) {
        size_t out = 0;
        for (size_t r = 0; r < runs; r += 2) {
            size_t a = start[r], am = start[r + 1];
            size_t b = am, bm = r + 1 < runs ? start[r + 2] : am;
            size_t at = a;
            while (a < am && b < bm)
                tmp[at++] = ids[a] <= ids[b] ? ids[a++] : ids[b++];
            while (a < am)
                tmp[at++] = ids[a++];
            while (b < bm)
                tmp[at++] = ids[b++];
            start[out++] = start[r];
        }
        start[out] = start[runs];
        runs = out;
        earl_eid *t = ids;
        ids = tmp;
        tmp = t;
    }
    return ids;
}

static int location_matches(const char *glob, const earl_trace *trace, const earl_location *l)
{
    if (!glob[0] || search_glob(glob, earl_trace_string(trace, l->name)))
        return 1;
    const earl_defs *defs = earl_trace_defs(trace);
    if (l->group >= defs->n_location_groups || !defs->location_groups[l->group].defined)
        return 0;
    int32_t rank = defs->location_groups[l->group].rank;
    if (rank < 0)
        return 0;
    char spelled[64];
    snprintf(spelled, sizeof spelled, "rank %d", (int)rank);
    if (search_glob(glob, spelled))
        return 1;
    snprintf(spelled, sizeof spelled, "rank %d thread %d", (int)rank, (int)l->thread);
    return search_glob(glob, spelled);
}

earl_status search_class_events(const search_class *cls, const earl_trace *trace,
                                const earl_eid32 *enterptr, int own_only, earl_eid **out,
                                size_t *n, earl_error *err)
{
    *out = NULL;
    *n = 0;
    const earl_defs *defs = earl_trace_defs(trace);
    const earl_events *ev = earl_trace_events(trace);
    uint8_t kind_ok[EARL_KIND_COUNT];
    for (int k = 0; k < EARL_KIND_COUNT; k++)
        kind_ok[k] = !cls->field[1][0] || search_glob(cls->field[1], earl_kind_name((earl_kind)k));
    /* region_ok[r] for defined refs; the last slot stands for "no region" */
    const int any_text = !cls->field[2][0];
    uint8_t *region_ok = NULL;
    if (!any_text) {
        region_ok = calloc((size_t)defs->n_regions + 1, 1);
        if (!region_ok)
            return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory matching a class");
        for (uint32_t r = 0; r < defs->n_regions; r++)
            region_ok[r] = search_glob(cls->field[2], defs->regions[r].defined
                                           ? earl_trace_string(trace, defs->regions[r].name) : "");
        region_ok[defs->n_regions] = search_glob(cls->field[2], "");
    }
    earl_eid *ids = NULL;
    size_t count = 0, cap = 0, runs = 0;
    size_t *start = malloc((defs->n_locations + 1) * sizeof *start); /* runs of ids */
    if (!start) {
        free(region_ok);
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory matching a class");
    }
    for (uint32_t l = 0; l < defs->n_locations; l++) {
        if ((own_only && defs->locations[l].held != EARL_HELD_ALL) ||
            !location_matches(cls->field[0], trace, &defs->locations[l]))
            continue;
        start[runs++] = count;
        for (size_t k = ev->loc_start[l]; k < ev->loc_start[l + 1]; k++) {
            earl_eid e = ev->loc_events[k];
            uint8_t kind = ev->kind[e];
            if (kind >= EARL_KIND_COUNT || !kind_ok[kind])
                continue;
            if (!any_text) {
                uint32_t r = EARL_UNDEFINED_REF;
                if (earl_kind_has_region(kind))
                    r = ev->region[e];
                else if (enterptr && earl_eid_from32(enterptr[e]) >= 0)
                    r = ev->region[enterptr[e]];
                if (!region_ok[r < defs->n_regions ? r : defs->n_regions])
                    continue;
            }
            if (EARL_GROW(ids, cap, count + 1)) {
                free(ids);
                free(region_ok);
                free(start);
                return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory matching a class");
            }
            ids[count++] = e;
        }
    }
    free(region_ok);
    start[runs] = count;
    int ascending = 1; /* a location's events ascend in the total order */
    for (size_t r = 0; r < runs && ascending; r++)
        for (size_t k = start[r] + 1; k < start[r + 1] && ascending; k++)
            ascending = ids[k - 1] < ids[k];
    if (!ascending) {
        qsort(ids, count, sizeof *ids, earl_cmp_i64);
    } else if (runs > 1 && count) {
        earl_eid *tmp = malloc(count * sizeof *tmp);
        if (!tmp) {
            free(ids);
            free(start);
            return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory matching a class");
        }
        earl_eid *merged = merge_runs(ids, tmp, start, runs);
        free(merged == ids ? tmp : ids);
        ids = merged;
    }
    free(start);
    *out = ids;
    *n = count;
    return EARL_OK;
}

static int contains(const earl_eid *a, size_t n, earl_eid x)
{
    size_t k = earl_i64_lower_bound(a, 0, n, x);
    return k < n && a[k] == x;
}

static int cmp_pair(const void *x, const void *y)
{
    const earl_eid *a = x, *b = y;
    if (a[0] != b[0])
        return (a[0] > b[0]) - (a[0] < b[0]);
    return (a[1] > b[1]) - (a[1] < b[1]);
}

typedef struct pair_list {
    earl_eid *ev;
    size_t n, cap; /* pairs */
} pair_list;

static int add_pair(pair_list *p, earl_eid a, earl_eid b)
{
    if (earl_grow((void **)&p->ev, &p->cap, 2 * (p->n + 1), sizeof(earl_eid)))
        return -1;
    p->ev[2 * p->n] = a;
    p->ev[2 * p->n + 1] = b;
    p->n++;
    return 0;
}

static int is_fork(uint8_t k) { return k == EARL_THREAD_FORK || k == EARL_OMP_FORK; }

earl_status search_partner_pairs(const earl_eid *first, size_t n_first, const earl_eid *second,
                                 size_t n_second, const earl_trace *trace, earl_states *states,
                                 earl_eid **out, size_t *n, earl_error *err)
{
    *out = NULL;
    *n = 0;
    const earl_events *ev = earl_trace_events(trace);
    pair_list pl = {0};
    int need_forks = 0;
    for (size_t k = 0; k < n_first; k++) {
        earl_eid a = first[k];
        uint8_t kind = ev->kind[a];
        earl_eid cand[3] = {earl_states_ptr(states, EARL_PTR_RECV, a),
                            earl_states_ptr(states, EARL_PTR_SEND, a), EARL_NONE};
        if (earl_kind_family((earl_kind)kind) == EARL_FAMILY_MSG && ev->ref[a] >= 0)
            cand[2] = earl_msg_partner(&ev->msg, (size_t)ev->ref[a]);
        for (int c = 0; c < 3; c++) {
            int dup = 0;
            for (int d = 0; d < c; d++)
                dup |= cand[d] == cand[c];
            if (cand[c] >= 0 && !dup && contains(second, n_second, cand[c]) &&
                add_pair(&pl, a, cand[c]))
                goto nomem;
        }
        if (is_fork(kind) || kind == EARL_THREAD_TEAM_BEGIN)
            need_forks = 1;
    }
    if (need_forks) {
        const earl_eid *forkptr = earl_states_pointer(states, EARL_PTR_FORK, err);
        if (!forkptr) {
            free(pl.ev);
            return err ? err->code : EARL_ERR_NOMEM;
        }
        /* a fork in first, a team begin of its team in second */
        for (size_t k = 0; k < n_second; k++) {
            earl_eid b = second[k];
            if (ev->kind[b] == EARL_THREAD_TEAM_BEGIN && forkptr[b] >= 0 &&
                contains(first, n_first, forkptr[b]) && add_pair(&pl, forkptr[b], b))
                goto nomem;
        }
        /* a team begin in first, its fork in second */
        for (size_t k = 0; k < n_first; k++) {
            earl_eid a = first[k];
            if (ev->kind[a] == EARL_THREAD_TEAM_BEGIN && forkptr[a] >= 0 &&
                contains(second, n_second, forkptr[a]) && add_pair(&pl, a, forkptr[a]))
                goto nomem;
        }
    }
    if (pl.n)
        qsort(pl.ev, pl.n, 2 * sizeof(earl_eid), cmp_pair);
    size_t kept = 0;
    for (size_t k = 0; k < pl.n; k++) {
        if (kept && pl.ev[2 * (kept - 1)] == pl.ev[2 * k] &&
            pl.ev[2 * (kept - 1) + 1] == pl.ev[2 * k + 1])
            continue;
        pl.ev[2 * kept] = pl.ev[2 * k];
        pl.ev[2 * kept + 1] = pl.ev[2 * k + 1];
        kept++;
    }
    *out = pl.ev;
    *n = kept;
    return EARL_OK;
nomem:
    free(pl.ev);
    return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory pairing partners");
}
