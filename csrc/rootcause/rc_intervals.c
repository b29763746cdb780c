/*
 * rc_intervals.c - the time a location spends between two of its
 * synchronisation points, per call path: raw sums of its time chunks, and
 * Scalasca's pruned time maps of synchronisation intervals (without the
 * waiting time at the points in between and the first point's call before
 * its completion).
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

/* Where the previous query of each location found its chunks and points:
 * a location's queries mostly come in time order, so the next search starts
 * there (earl_i64_gallop_lower_bound). */
typedef struct hints {
    rc_chunk_cursor *chunk;
    size_t *point;
    int64_t n_locations;
} hints;

static int hints_init(hints *h, const int64_t *loc, size_t queries)
{
    int64_t n = 0;
    for (size_t q = 0; q < queries; q++)
        if (loc[q] + 1 > n)
            n = loc[q] + 1;
    h->n_locations = n;
    h->chunk = calloc(n ? (size_t)n : 1, sizeof *h->chunk);
    h->point = calloc(n ? (size_t)n : 1, sizeof *h->point);
    return h->chunk && h->point ? 0 : -1;
}

static void hints_free(hints *h)
{
    free(h->chunk);
    free(h->point);
}

/* The spans' locations (not negative) and the chunks. */
static earl_status check_inputs(const earl_rc_chunks *chunks, const earl_rc_spans *spans,
                                const char *what, earl_error *err)
{
    for (size_t q = 0; q < spans->count; q++)
        if (spans->location[q] < 0)
            return earl_fail(err, EARL_ERR_INVALID, "%s: query %zu has location %lld", what, q,
                             (long long)spans->location[q]);
    return rc_chunks_check(chunks, what, err);
}

earl_status earl_rc_chunk_sums(const earl_rc_chunks *chunks, const earl_rc_spans *spans,
                               earl_rc_map *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    earl_status st = check_inputs(chunks, spans, "root-cause chunk sums", err);
    if (st != EARL_OK)
        return st;
    const size_t queries = spans->count;
    const int64_t *loc = spans->location, *lo = spans->start, *hi = spans->end;
    rc_accumulator acc;
    rc_map_builder b;
    hints h;
    size_t *order = NULL;
    if (rc_acc_init(&acc, chunks->n_cnodes) < 0)
        return earl_fail(err, EARL_ERR_NOMEM, "root-cause chunk sums: out of memory");
    if (hints_init(&h, loc, queries) < 0 ||
        !(order = rc_order_by_location(loc, queries, h.n_locations)) ||
        rc_map_begin(&b, out, queries) < 0)
        goto nomem;
    for (size_t r = 0; r < queries; r++) {
        size_t q = order[r];
        st = rc_sum_chunks(chunks, loc[q], lo[q], hi[q], &acc, &h.chunk[loc[q]],
                           "root-cause chunk sums", err);
        if (st != EARL_OK)
            goto fail;
        rc_acc_sort(&acc);
        for (size_t i = 0; i < acc.n_list; i++)
            if (rc_map_push(&b, acc.list[i], (double)acc.ticks[acc.list[i]]) < 0)
                goto nomem;
        rc_acc_clear(&acc);
        rc_map_end_query(&b);
    }
    if (rc_csr_unorder(queries, order, &out->offset, 2,
                       (void **[]){(void **)&out->cnode, (void **)&out->value}) < 0)
        goto nomem;
    st = EARL_OK;
    goto done;
nomem:
    st = earl_fail(err, EARL_ERR_NOMEM, "root-cause chunk sums: out of memory");
fail:
    earl_rc_map_free(out);
done:
    rc_acc_free(&acc);
    hints_free(&h);
    free(order);
    return st;
}

void earl_rc_intervals_free(earl_rc_intervals *iv)
{
    if (!iv)
        return;
    earl_rc_map_free(&iv->time);
    free(iv->wait_sum);
    free(iv->between_offset);
    earl_mem_free(iv->between_row);
    memset(iv, 0, sizeof *iv);
}

earl_status earl_rc_interval_times(const earl_rc_chunks *chunks, const earl_rc_points *points,
                                   const earl_rc_spans *spans, earl_rc_intervals *out,
                                   earl_error *err)
{
    memset(out, 0, sizeof *out);
    earl_status st = check_inputs(chunks, spans, "root-cause intervals", err);
    if (st != EARL_OK)
        return st;
    const size_t queries = spans->count;
    const int64_t *loc = spans->location, *prev = spans->start, *at = spans->end;
    const int64_t stride = chunks->stride, n_cnodes = chunks->n_cnodes;
    for (size_t j = 0; j < points->count; j++)
        if (points->cnode[j] >= n_cnodes)
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause intervals: point %zu has call path %lld, not below %lld",
                             j, (long long)points->cnode[j], (long long)n_cnodes);
    rc_accumulator acc;
    rc_map_builder b;
    hints h;
    size_t *order = NULL;
    size_t n_between = 0, cap_between = 0;
    if (rc_acc_init(&acc, n_cnodes) < 0)
        return earl_fail(err, EARL_ERR_NOMEM, "root-cause intervals: out of memory");
    out->wait_sum = calloc(queries + 1, sizeof *out->wait_sum);
    out->between_offset = calloc(queries + 1, sizeof *out->between_offset);
    if (hints_init(&h, loc, queries) < 0 || !out->wait_sum || !out->between_offset ||
        !(order = rc_order_by_location(loc, queries, h.n_locations)) ||
        rc_map_begin(&b, &out->time, queries) < 0)
        goto nomem;
    /* answered location by location; the tables are put in query order after */
    for (size_t r = 0; r < queries; r++) {
        size_t q = order[r];
        int64_t start = prev[q] >= 0 ? prev[q] : -1;
        int64_t base = loc[q] * stride;
        size_t *point_hint = &h.point[loc[q]];
        st = rc_sum_chunks(chunks, loc[q], start, at[q], &acc, &h.chunk[loc[q]],
                           "root-cause intervals", err);
        if (st != EARL_OK)
            goto fail;
        for (size_t i = 0; i < acc.n_list; i++)
            acc.value[acc.list[i]] = (double)acc.ticks[acc.list[i]];
        /* the points strictly in between: their waiting time is not the
         * location's own time (it propagates from elsewhere) */
        size_t j = earl_i64_gallop_lower_bound(points->key, points->count, base + start + 1, *point_hint);
        size_t j_end = earl_i64_gallop_lower_bound(points->key, points->count, base + at[q], j);
        *point_hint = j_end;
        double wait_sum = 0.0;
        for (; j < j_end; j++) {
            double w = points->wait[j];
            if (!(w > 0))
                continue;
            wait_sum += w;
            if (EARL_GROW_TEMP(out->between_row, cap_between, n_between + 1) < 0)
                goto nomem;
            out->between_row[n_between++] = points->row[j];
            int64_t c = points->cnode[j];
            if (c >= 0 && acc.touched[c])
                acc.value[c] += -w;
        }
        out->wait_sum[q] = wait_sum;
        out->between_offset[r + 1] = (int64_t)n_between;
        /* the first point's own call counts only from its completion on */
        double cut = 0.0;
        int64_t cut_cnode = -1;
        if (prev[q] >= 0) {
            size_t p = earl_i64_gallop_lower_bound(points->key, points->count, base + prev[q], j);
            if (p < points->count && points->key[p] == base + prev[q]) {
                cut_cnode = points->cnode[p];
                cut = points->cut[p];
            }
        }
        rc_acc_sort(&acc);
        for (size_t i = 0; i < acc.n_list; i++) {
            int64_t c = acc.list[i];
            double v = acc.value[c];
            if (!(v > 0))
                continue;
            if (c == cut_cnode) {
                v = v - cut;
                if (!(v > 0))
                    continue;
            }
            if (rc_map_push(&b, c, v) < 0)
                goto nomem;
        }
        rc_acc_clear(&acc);
        rc_map_end_query(&b);
    }
    if (rc_csr_unorder(queries, order, &out->time.offset, 2,
                       (void **[]){(void **)&out->time.cnode, (void **)&out->time.value}) < 0 ||
        rc_csr_unorder(queries, order, &out->between_offset, 1,
                       (void **[]){(void **)&out->between_row}) < 0)
        goto nomem;
    st = EARL_OK;
    goto done;
nomem:
    st = earl_fail(err, EARL_ERR_NOMEM, "root-cause intervals: out of memory");
fail:
    earl_rc_intervals_free(out);
done:
    rc_acc_free(&acc);
    hints_free(&h);
    free(order);
    return st;
}
