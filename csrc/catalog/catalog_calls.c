/*
 * catalog_calls.c - what happens inside calls, for many calls at once
 * (earl_catalog.h): their LEAVEs (earl_leaves), and the
 * MPI_COLLECTIVE_BEGIN inside collective calls (earl_collective_begins).
 * Both walk the events front to back once instead of searching each call's
 * events on its location.
 *
 * The ENTERs asked about are marked in a bitmap of the events; a pass over
 * the events from the first of them on answers an asked ENTER at each LEAVE
 * of its location whose enterptr is that ENTER (the first one: a damaged
 * trace may have more).  The pass is cut into parts on threads, and runs in
 * waves of growing length that stop once every asked ENTER is answered (a
 * LEAVE further on cannot answer one earlier): calls asked about near the
 * start cost a pass over their own stretch only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>

#include "earl_catalog.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/parts.h"

/* Queries by event id, then by position (a stable order). */
static int by_id(const void *a, const void *b, void *ids)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    earl_eid x = ((const earl_eid *)ids)[i], y = ((const earl_eid *)ids)[j];
    if (x != y)
        return (x > y) - (x < y);
    return (i > j) - (i < j);
}

/* The search of earl_leaves: the asked ENTERs (one bit per event), the
 * queries in id order, and the events scanned in the current wave, cut into
 * parts.  A part answers a query with the first LEAVE of its own range;
 * answers of several parts keep the earliest (an atomic minimum), which a
 * well-formed trace never needs: each ENTER has one LEAVE. */
typedef struct leaves_search {
    const earl_events *ev;
    const earl_eid32 *enterptr;
    const earl_eid *ids;
    const size_t *order;  /* queries by id; the asked ones from first on */
    size_t first, n;
    const uint64_t *asked;
    earl_eid *leave;      /* the answers, at the first query of each id */
    size_t lo, hi;        /* the wave: events [lo, hi) */
    int parts;
    size_t answered;      /* ids answered (atomic) */
} leaves_search;

/* The first query (position in order) of id e, which is asked. */
static size_t first_query(const leaves_search *s, earl_eid e)
{
    size_t lo = s->first, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ids[s->order[mid]] < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void leaves_part(void *arg, int part)
{
    leaves_search *s = arg;
    const earl_events *ev = s->ev;
    size_t span = s->hi - s->lo;
    size_t from = s->lo + earl_part_start(span, part, s->parts);
    size_t to = s->lo + earl_part_start(span, part + 1, s->parts);
    size_t answered = 0;
    for (size_t x = from; x < to; x++) {
        if (ev->kind[x] != EARL_LEAVE)
            continue;
        earl_eid e = earl_eid_from32(s->enterptr[x]);
        if (e < 0 || (size_t)e >= x || !(s->asked[(size_t)e >> 6] >> ((size_t)e & 63) & 1) ||
            ev->location[e] != ev->location[x])
            continue;
        earl_eid *slot = &s->leave[s->order[first_query(s, e)]];
        earl_eid was = __atomic_load_n(slot, __ATOMIC_RELAXED);
        while ((was < 0 || (earl_eid)x < was) &&
               !__atomic_compare_exchange_n(slot, &was, (earl_eid)x, 1, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
            ;
        answered += was < 0;
    }
    __atomic_add_fetch(&s->answered, answered, __ATOMIC_RELAXED);
}

/* Events of the first wave: later waves double it, until every call is left. */
#define LEAVES_FIRST_WAVE ((size_t)1 << 20)

earl_status earl_leaves(const earl_events *ev, const earl_eid32 *enterptr, const earl_eid *ids,
                        size_t n, earl_eid *leave, int threads, earl_error *err)
{
    size_t count = ev->count;
    size_t n_asked = 0; /* ids other than -1 */
    for (size_t k = 0; k < n; k++) {
        if (ids[k] >= 0 && (size_t)ids[k] >= count)
            return earl_fail(err, EARL_ERR_INVALID, "leaves: event id %lld is out of range "
                             "(the trace has %zu events)", (long long)ids[k], count);
        leave[k] = EARL_NONE;
        n_asked += ids[k] >= 0;
    }
    if (!n_asked)
        return EARL_OK;
    /* the queries in id order (stable: repeated ids answer together) */
    size_t *order = earl_mem_alloc_temp(n * sizeof *order);
    uint64_t *asked = earl_mem_calloc_temp(count / 64 + 1, sizeof *asked);
    if (!order || !asked) {
        earl_mem_free(order); earl_mem_free(asked);
        return earl_fail(err, EARL_ERR_NOMEM, "leaves: out of memory for %zu calls", n);
    }
    int sorted = 1;
    for (size_t k = 0; k < n; k++) {
        order[k] = k;
        sorted &= k == 0 || ids[k] >= ids[k - 1];
    }
    if (!sorted)
        qsort_r(order, n, sizeof *order, by_id, (void *)ids);
    size_t distinct = 0;
    for (size_t q = n - n_asked; q < n; q++) {
        earl_eid e = ids[order[q]];
        if (ev->kind[e] == EARL_ENTER && !(asked[(size_t)e >> 6] >> ((size_t)e & 63) & 1)) {
            asked[(size_t)e >> 6] |= (uint64_t)1 << ((size_t)e & 63);
            distinct++;
        }
    }
    leaves_search s = {ev, enterptr, ids, order, n - n_asked, n, asked, leave, 0, 0, 1, 0};
    /* waves over the events from the first asked ENTER on, until every asked
     * ENTER is answered (a later LEAVE cannot answer one earlier) */
    size_t wave = LEAVES_FIRST_WAVE;
    for (size_t lo = (size_t)ids[order[n - n_asked]]; lo < count && s.answered < distinct;
         lo = s.hi, wave *= 2) {
        s.lo = lo;
        s.hi = count - lo > wave ? lo + wave : count;
        s.parts = earl_parallel_parts(threads, s.hi - s.lo, (size_t)1 << 18);
        earl_parallel(s.parts, leaves_part, &s);
    }
    /* repeated ids: the answer of their first query */
    for (size_t q = n - n_asked + 1; q < n; q++)
        if (ids[order[q]] == ids[order[q - 1]])
            leave[order[q]] = leave[order[q - 1]];
    earl_mem_free(order); earl_mem_free(asked);
    return EARL_OK;
}

/* How far earl_leaves_after looks from an event inside the call before it
 * leaves the call to the pass of earl_leaves, and after how many calls it
 * judges whether looking pays: when most calls end further away (many
 * locations interleave, or the calls are long), the pass answers the rest. */
#define LEAVES_NEARBY 256
#define LEAVES_TRIAL 256

/* The LEAVE of call ids[k] among the LEAVES_NEARBY events after after[k]
 * (-1: not there). */
static earl_eid leave_nearby(const earl_events *ev, const earl_eid32 *enterptr, earl_eid id,
                             earl_eid after)
{
    size_t count = ev->count;
    earl_loc l = ev->location[id];
    size_t end = count - (size_t)after > LEAVES_NEARBY ? (size_t)after + LEAVES_NEARBY : count;
    for (size_t x = (size_t)after + 1; x < end; x++)
        if (ev->kind[x] == EARL_LEAVE && ev->location[x] == l &&
            earl_eid_from32(enterptr[x]) == id)
            return (earl_eid)x;
    return EARL_NONE;
}

typedef struct nearby_job {
    const earl_events *ev;
    const earl_eid32 *enterptr;
    const earl_eid *ids, *after;
    earl_eid *leave;
    size_t from, n;
    int parts;
} nearby_job;

static void nearby_part(void *arg, int part)
{
    nearby_job *j = arg;
    size_t span = j->n - j->from;
    size_t to = j->from + earl_part_start(span, part + 1, j->parts);
    for (size_t k = j->from + earl_part_start(span, part, j->parts); k < to; k++)
        if (j->ids[k] >= 0)
            j->leave[k] = leave_nearby(j->ev, j->enterptr, j->ids[k], j->after[k]);
}

earl_status earl_leaves_after(const earl_events *ev, const earl_eid32 *enterptr,
                              const earl_eid *ids, const earl_eid *after, size_t n,
                              earl_eid *leave, int threads, earl_error *err)
{
    size_t count = ev->count, n_far = 0, tried = 0, k = 0;
    for (size_t q = 0; q < n; q++) {
        leave[q] = EARL_NONE;
        if (ids[q] >= 0 && ((size_t)ids[q] >= count || after[q] < ids[q] ||
                            (size_t)after[q] >= count))
            return earl_fail(err, EARL_ERR_INVALID, "leaves: event ids %lld (call) and %lld "
                             "(inside it) are out of range or out of order (the trace has %zu "
                             "events)", (long long)ids[q], (long long)after[q], count);
    }
    /* a trial on the first calls: does looking nearby pay? */
    for (; k < n && tried < LEAVES_TRIAL; k++)
        if (ids[k] >= 0) {
            tried++;
            leave[k] = leave_nearby(ev, enterptr, ids[k], after[k]);
            n_far += leave[k] < 0;
        }
    if (!(tried >= LEAVES_TRIAL && 2 * n_far > tried)) { /* it does: the others too */
        nearby_job j = {ev, enterptr, ids, after, leave, k, n, 1};
        j.parts = earl_parallel_parts(threads, n - k, 4096);
        earl_parallel(j.parts, nearby_part, &j);
        k = n;
    }
    n_far = 0;
    for (size_t q = 0; q < n; q++)
        n_far += ids[q] >= 0 && leave[q] < 0;
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
        for (size_t q = 0; q < n; q++)
            if (ids[q] >= 0 && leave[q] < 0)
                far_ids[j++] = ids[q];
        st = earl_leaves(ev, enterptr, far_ids, n_far, far_leave, threads, err);
        j = 0;
        for (size_t q = 0; st == EARL_OK && q < n; q++)
            if (ids[q] >= 0 && leave[q] < 0)
                leave[q] = far_leave[j++];
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
