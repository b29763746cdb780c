/*
 * catalog_calls.c - what happens inside calls, for many calls at once
 * (earl_catalog.h): their LEAVEs (earl_leaves), and the
 * MPI_COLLECTIVE_BEGIN inside collective calls (earl_collective_begins).
 * Both walk the events front to back once instead of searching each call's
 * events on its location.
 *
 * The ENTERs asked about are visited in the total order; one pass over the
 * events from the first of them on keeps, per location, the asked ENTERs
 * still open (a stack, linked through the queries), and a LEAVE whose
 * enterptr is on its location's stack answers that ENTER.  Region instances
 * nest, so the answered ENTER is the top of the stack unless the trace has
 * unmatched LEAVEs; the stack is then searched downwards.  The pass stops
 * once no asked ENTER is open and none is ahead.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>

#include "earl_catalog.h"
#include "base/errors.h"
#include "base/mem.h"

/* Queries by event id, then by position (a stable order). */
static int by_id(const void *a, const void *b, void *ids)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    earl_eid x = ((const earl_eid *)ids)[i], y = ((const earl_eid *)ids)[j];
    if (x != y)
        return (x > y) - (x < y);
    return (i > j) - (i < j);
}

earl_status earl_leaves(const earl_events *ev, const earl_eid32 *enterptr, const earl_eid *ids,
                        size_t n, earl_eid *leave, earl_error *err)
{
    size_t count = ev->count, n_locs = 0;
    size_t n_asked = 0; /* ids other than -1 */
    for (size_t k = 0; k < n; k++) {
        if (ids[k] >= 0 && (size_t)ids[k] >= count)
            return earl_fail(err, EARL_ERR_INVALID, "leaves: event id %lld is out of range "
                             "(the trace has %zu events)", (long long)ids[k], count);
        leave[k] = EARL_NONE;
        if (ids[k] >= 0) {
            n_asked++;
            if ((size_t)ev->location[ids[k]] + 1 > n_locs)
                n_locs = (size_t)ev->location[ids[k]] + 1;
        }
    }
    if (!n_asked)
        return EARL_OK;
    /* the queries in id order (stable: repeated ids answer together) */
    size_t *order = earl_mem_alloc_temp(n * sizeof *order);
    size_t *below = earl_mem_alloc_temp(n * sizeof *below); /* next query down the stack */
    size_t *top = earl_mem_alloc_temp(n_locs * sizeof *top);
    if (!order || !below || !top) {
        earl_mem_free(order); earl_mem_free(below); earl_mem_free(top);
        return earl_fail(err, EARL_ERR_NOMEM, "leaves: out of memory for %zu calls", n);
    }
    int sorted = 1;
    for (size_t k = 0; k < n; k++) {
        order[k] = k;
        sorted &= k == 0 || ids[k] >= ids[k - 1];
    }
    if (!sorted)
        qsort_r(order, n, sizeof *order, by_id, (void *)ids);
    size_t next = n - n_asked; /* the -1 ids come first: skip them */
    const size_t none = (size_t)-1;
    for (size_t l = 0; l < n_locs; l++)
        top[l] = none;

    size_t open = 0; /* queries on the stacks; next: the next query ahead */
    for (size_t x = (size_t)ids[order[next]]; x < count && (next < n || open); x++) {
        if (next < n && (size_t)ids[order[next]] == x) {
            earl_loc l = ev->location[x];
            int is_enter = ev->kind[x] == EARL_ENTER;
            for (; next < n && (size_t)ids[order[next]] == x; next++)
                if (is_enter) {
                    below[order[next]] = top[l];
                    top[l] = order[next];
                    open++;
                }
        }
        if (ev->kind[x] != EARL_LEAVE) /* an asked id that is no ENTER may still be one */
            continue;
        earl_loc l = ev->location[x];
        if ((size_t)l >= n_locs || top[l] == none)
            continue;
        earl_eid e = earl_eid_from32(enterptr[x]);
        /* the queries of e: the top ones, or further down when LEAVEs were missing */
        size_t *link = &top[l];
        while (*link != none && ids[*link] != e)
            link = &below[*link];
        while (*link != none && ids[*link] == e) {
            size_t q = *link;
            leave[q] = (earl_eid)x;
            *link = below[q];
            open--;
        }
    }
    earl_mem_free(order); earl_mem_free(below); earl_mem_free(top);
    return EARL_OK;
}

/* How far earl_leaves_after looks from an event inside the call before it
 * leaves the call to the pass of earl_leaves, and after how many calls it
 * judges whether looking pays: when most calls end further away (many
 * locations interleave, or the calls are long), the pass answers the rest. */
#define LEAVES_NEARBY 256
#define LEAVES_TRIAL 256

earl_status earl_leaves_after(const earl_events *ev, const earl_eid32 *enterptr,
                              const earl_eid *ids, const earl_eid *after, size_t n,
                              earl_eid *leave, earl_error *err)
{
    size_t count = ev->count, n_far = 0, tried = 0;
    for (size_t k = 0; k < n; k++) {
        leave[k] = EARL_NONE;
        if (ids[k] < 0)
            continue;
        if ((size_t)ids[k] >= count || after[k] < ids[k] || (size_t)after[k] >= count)
            return earl_fail(err, EARL_ERR_INVALID, "leaves: event ids %lld (call) and %lld "
                             "(inside it) are out of range or out of order (the trace has %zu "
                             "events)", (long long)ids[k], (long long)after[k], count);
        if (tried >= LEAVES_TRIAL && 2 * n_far > tried) { /* looking does not pay */
            n_far++;
            continue;
        }
        tried++;
        earl_loc l = ev->location[ids[k]];
        size_t end = count - (size_t)after[k] > LEAVES_NEARBY ? (size_t)after[k] + LEAVES_NEARBY
                                                              : count;
        for (size_t x = (size_t)after[k] + 1; x < end; x++)
            if (ev->kind[x] == EARL_LEAVE && ev->location[x] == l &&
                earl_eid_from32(enterptr[x]) == ids[k]) {
                leave[k] = (earl_eid)x;
                break;
            }
        n_far += leave[k] < 0;
    }
    if (!n_far)
        return EARL_OK;
    /* the calls that last longer: one pass over the events for all of them */
    earl_eid *far_ids = earl_mem_alloc_temp(n_far * sizeof *far_ids);
    earl_eid *far_leave = earl_mem_alloc_temp(n_far * sizeof *far_leave);
    earl_status st = EARL_OK;
    if (!far_ids || !far_leave) {
        st = earl_fail(err, EARL_ERR_NOMEM, "leaves: out of memory for %zu calls", n_far);
    } else {
        size_t j = 0;
        for (size_t k = 0; k < n; k++)
            if (ids[k] >= 0 && leave[k] < 0)
                far_ids[j++] = ids[k];
        st = earl_leaves(ev, enterptr, far_ids, n_far, far_leave, err);
        j = 0;
        for (size_t k = 0; st == EARL_OK && k < n; k++)
            if (ids[k] >= 0 && leave[k] < 0)
                leave[k] = far_leave[j++];
    }
    earl_mem_free(far_ids);
    earl_mem_free(far_leave);
    return st;
}

/* Whether one of the 8 bytes of w is b (the zero-byte test on w ^ b...b). */
static int has_byte(uint64_t w, uint8_t b)
{
    uint64_t x = w ^ (0x0101010101010101ULL * b);
    return ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL) != 0;
}

/* Whether one of the 8 kinds from k on is an MPI_COLLECTIVE_BEGIN or _END. */
static int has_collective_kind(const uint8_t *k)
{
    uint64_t w;
    memcpy(&w, k, sizeof w);
    return has_byte(w, EARL_MPI_COLLECTIVE_BEGIN) || has_byte(w, EARL_MPI_COLLECTIVE_END);
}

earl_status earl_collective_begins(const earl_events *ev, size_t n_locations,
                                   const earl_eid *ends, const earl_eid *calls, size_t n,
                                   earl_eid *begin, earl_error *err)
{
    size_t count = ev->count;
    for (size_t k = 0; k < n; k++)
        if (ends[k] < 0 || (size_t)ends[k] >= count || (k && ends[k] < ends[k - 1]))
            return earl_fail(err, EARL_ERR_INVALID, "collective begins: the END ids must "
                             "ascend within the %zu events of the trace", count);
    if (!n)
        return EARL_OK;
    earl_eid *last = earl_mem_alloc_temp((n_locations ? n_locations : 1) * sizeof *last);
    if (!last)
        return earl_fail(err, EARL_ERR_NOMEM, "collective begins: out of memory");
    for (size_t l = 0; l < n_locations; l++)
        last[l] = EARL_NONE;
    /* the events up to the last END asked about; per location its last BEGIN */
    size_t next = 0;
    for (size_t x = 0; next < n; x++) {
        /* collective records are a few percent of the events: skip eight
         * kinds at a time while none of them is one (never past the next
         * END asked about) */
        while (x + 8 <= (size_t)ends[next] && !has_collective_kind(ev->kind + x))
            x += 8;
        uint8_t kind = ev->kind[x];
        if (kind == EARL_MPI_COLLECTIVE_BEGIN)
            last[ev->location[x]] = (earl_eid)x;
        for (; next < n && (size_t)ends[next] == x; next++) {
            earl_eid b = kind == EARL_MPI_COLLECTIVE_END ? last[ev->location[x]] : EARL_NONE;
            begin[next] = b > calls[next] ? b : EARL_NONE;
        }
    }
    earl_mem_free(last);
    return EARL_OK;
}
