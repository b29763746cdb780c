/*
 * catalog_order.c - the messages received while an older message of the same
 * sender and receiver was still in transfer (earl_catalog.h,
 * earl_messages_out_of_order): the test of Messages in Wrong Order, per
 * (sender, receiver) pair in sending order.
 *
 * A message is out of order when an earlier-sent message of its pair is
 * received by a later call: in each pair, in sending order, the latest receive
 * call of the messages before it comes after its own.  The rows (received
 * messages) come grouped by receiving location, as the message table keeps
 * them (else they are grouped first, a stable counting sort).  Within a
 * receiver, a counting sort by sender gives each pair its rows in receive
 * order, which is sending order unless messages overtook each other (then
 * the pair is sorted by send).  Receivers are independent: they are dealt out
 * to parts on threads, each part with its own counting table, and every row's
 * answer is written at its own place.
 */
#include <stdlib.h>
#include <string.h>

#include "earl_catalog.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/parts.h"

typedef struct order_job {
    const earl_events *ev;
    size_t n_locations, n;
    const earl_eid *recv, *recv_call, *send;
    uint32_t *src, *dst;       /* per row: the sender's and the receiver's location */
    size_t bad;                /* a row with an id out of range, + 1 (0: none) */
    const uint32_t *rows;      /* the rows grouped by receiver */
    const size_t *group;       /* group g is rows[group[g] .. group[g + 1]) */
    size_t n_groups;
    int parts;
    const size_t *part_group;  /* part p has groups [part_group[p], part_group[p + 1]) */
    uint8_t *wrong;
    int nomem;
} order_job;

static int by_send(const void *a, const void *b, void *send)
{
    earl_eid x = ((const earl_eid *)send)[*(const uint32_t *)a];
    earl_eid y = ((const earl_eid *)send)[*(const uint32_t *)b];
    return (x > y) - (x < y);
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* One receiver's rows: by sender, each pair swept in sending order. */
static void sweep_group(const order_job *j, const uint32_t *rows, size_t n, uint32_t *count,
                        uint32_t *senders, uint32_t *sorted)
{
    const earl_events *ev = j->ev;
    size_t n_senders = 0;
    (void)ev;
    for (size_t k = 0; k < n; k++) {
        uint32_t s = j->src[rows[k]];
        if (!count[s]++)
            senders[n_senders++] = s;
    }
    qsort(senders, n_senders, sizeof *senders, by_value);
    uint32_t at = 0; /* count[s] becomes where sender s's rows start */
    for (size_t k = 0; k < n_senders; k++) {
        uint32_t c = count[senders[k]];
        count[senders[k]] = at;
        at += c;
    }
    for (size_t k = 0; k < n; k++)
        sorted[count[j->src[rows[k]]]++] = rows[k];
    size_t start = 0;
    for (size_t k = 0; k < n_senders; k++) {
        size_t end = count[senders[k]];
        count[senders[k]] = 0; /* the table is clean for the next receiver */
        uint32_t *pair = sorted + start;
        size_t m = end - start;
        for (size_t i = 1; i < m; i++)
            if (j->send[pair[i]] < j->send[pair[i - 1]]) {
                qsort_r(pair, m, sizeof *pair, by_send, (void *)j->send);
                break;
            }
        earl_eid latest = EARL_NONE;
        for (size_t i = 0; i < m; i++) {
            earl_eid call = j->recv_call[pair[i]];
            j->wrong[pair[i]] = latest > call;
            if (call > latest)
                latest = call;
        }
        start = end;
    }
}

/* The rows' locations, each id checked, in parts of the rows. */
static void locate_part(void *arg, int part)
{
    order_job *j = arg;
    const earl_events *ev = j->ev;
    size_t to = earl_part_start(j->n, part + 1, j->parts);
    for (size_t k = earl_part_start(j->n, part, j->parts); k < to; k++) {
        earl_eid r = j->recv[k], s = j->send[k];
        if (r < 0 || (size_t)r >= ev->count || s < 0 || (size_t)s >= ev->count ||
            j->recv_call[k] < -1 || (size_t)ev->location[r] >= j->n_locations ||
            (size_t)ev->location[s] >= j->n_locations) {
            /* the first bad row of all parts, whatever the parts */
            size_t was = __atomic_load_n(&j->bad, __ATOMIC_RELAXED);
            while ((!was || k + 1 < was) &&
                   !__atomic_compare_exchange_n(&j->bad, &was, k + 1, 1, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED))
                ;
            return;
        }
        j->dst[k] = (uint32_t)ev->location[r];
        j->src[k] = (uint32_t)ev->location[s];
    }
}

static void order_part(void *arg, int part)
{
    order_job *j = arg;
    size_t g0 = j->part_group[part], g1 = j->part_group[part + 1], most = 0;
    for (size_t g = g0; g < g1; g++)
        if (j->group[g + 1] - j->group[g] > most)
            most = j->group[g + 1] - j->group[g];
    uint32_t *count = calloc(j->n_locations ? j->n_locations : 1, sizeof *count);
    uint32_t *senders = malloc((most ? most : 1) * sizeof *senders);
    uint32_t *sorted = malloc((most ? most : 1) * sizeof *sorted);
    if (!count || !senders || !sorted) {
        __atomic_store_n(&j->nomem, 1, __ATOMIC_RELAXED);
    } else {
        for (size_t g = g0; g < g1; g++)
            sweep_group(j, j->rows + j->group[g], j->group[g + 1] - j->group[g], count, senders,
                        sorted);
    }
    free(count);
    free(senders);
    free(sorted);
}

earl_status earl_messages_out_of_order(const earl_events *ev, size_t n_locations, size_t n,
                                       const earl_eid *recv, const earl_eid *recv_call,
                                       const earl_eid *send, int threads, uint8_t *wrong,
                                       earl_error *err)
{
    if (n > UINT32_MAX)
        return earl_fail(err, EARL_ERR_INVALID, "messages out of order: %zu rows, at most %u",
                         n, UINT32_MAX);
    memset(wrong, 0, n);
    if (!n)
        return EARL_OK;
    uint32_t *rows = earl_mem_alloc_temp(n * sizeof *rows);
    size_t *group = earl_mem_alloc_temp((n + 1) * sizeof *group);
    uint32_t *src = earl_mem_alloc_temp(n * sizeof *src);
    uint32_t *dst = earl_mem_alloc_temp(n * sizeof *dst);
    size_t *first = calloc(n_locations + 1, sizeof *first);
    if (!rows || !group || !src || !dst || !first) {
        earl_mem_free(rows); earl_mem_free(group); earl_mem_free(src); earl_mem_free(dst);
        free(first);
        return earl_fail(err, EARL_ERR_NOMEM, "messages out of order: out of memory for %zu "
                         "rows", n);
    }
    order_job j = {ev, n_locations, n, recv, recv_call, send, src, dst, 0, rows, group, 0,
                   earl_parallel_parts(threads, n, (size_t)1 << 16), NULL, wrong, 0};
    earl_parallel(j.parts, locate_part, &j);
    if (j.bad) {
        earl_mem_free(rows); earl_mem_free(group); earl_mem_free(src); earl_mem_free(dst);
        free(first);
        return earl_fail(err, EARL_ERR_INVALID, "messages out of order: row %zu has an "
                         "event id out of range (the trace has %zu events)", j.bad - 1,
                         ev->count);
    }
    /* grouped by receiver already (the message table's order)?  Else a
     * stable counting sort by receiver. */
    size_t n_groups = 0;
    int grouped = 1;
    for (size_t k = 0; k < n && grouped; k++) {
        uint32_t l = dst[k];
        if (k == 0 || l != dst[k - 1]) {
            grouped = !first[l];
            first[l] = 1;
            group[n_groups++] = k;
        }
        rows[k] = (uint32_t)k;
    }
    if (!grouped) {
        memset(first, 0, (n_locations + 1) * sizeof *first);
        for (size_t k = 0; k < n; k++)
            first[dst[k] + 1]++;
        n_groups = 0;
        for (size_t l = 0; l < n_locations; l++) {
            if (first[l + 1])
                group[n_groups++] = first[l];
            first[l + 1] += first[l];
        }
        for (size_t k = 0; k < n; k++)
            rows[first[dst[k]]++] = (uint32_t)k;
    }
    group[n_groups] = n;
    free(first);
    /* receivers dealt out to parts of about equal rows */
    size_t part_group[EARL_MAX_PARTS + 1];
    int parts = earl_parallel_parts(threads, n, (size_t)1 << 16);
    if ((size_t)parts > n_groups)
        parts = (int)n_groups;
    size_t g = 0;
    for (int p = 0; p < parts; p++) {
        part_group[p] = g;
        size_t until = earl_part_start(n, p + 1, parts);
        while (g < n_groups && (p == parts - 1 || group[g + 1] <= until || g == part_group[p]))
            g++;
    }
    part_group[parts] = n_groups;
    j.n_groups = n_groups;
    j.parts = parts;
    j.part_group = part_group;
    earl_parallel(parts, order_part, &j);
    earl_mem_free(rows); earl_mem_free(group); earl_mem_free(src); earl_mem_free(dst);
    if (j.nomem)
        return earl_fail(err, EARL_ERR_NOMEM, "messages out of order: out of memory");
    return EARL_OK;
}
