/*
 * rc_intervals.c - the time a location spends between two of its
 * synchronisation points, per call path: raw sums of its time chunks, and
 * Scalasca's pruned time maps of synchronisation intervals (without the
 * waiting time at the points in between and the first point's call before
 * its completion).  The intervals are answered location by location, in
 * parts of that order on threads of their own (see interval_part).
 */
#include <stdlib.h>
#include <string.h>

#include "base/parts.h"
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

/* The queries of earl_rc_interval_times are answered location by location
 * (rc_order_by_location) and cut into parts of that order, each answered on
 * a thread of its own into tables of its own, with hints of its own: a part's
 * answers do not depend on where it starts (a hint only shortens a search),
 * and the parts are joined in their order, so the tables are the same for
 * any number of parts. */
typedef struct interval_part {
    size_t first, end; /* ranks of the location order */
    earl_rc_map time;  /* its queries in rank order */
    int64_t *between_offset;
    int64_t *between_row;
    void **time_columns[2], **between_columns[1];
    earl_status st;
    earl_error err;
} interval_part;

typedef struct interval_job {
    const earl_rc_chunks *chunks;
    const earl_rc_points *points;
    const earl_rc_spans *spans;
    const size_t *order;
    int64_t n_locations;
    double *wait_sum; /* the caller's, per query: each part writes its own */
    interval_part part[EARL_MAX_PARTS];
} interval_job;

/* Answer one query (q) into the part's tables (acc empty before and after). */
static earl_status answer_query(const interval_job *j, interval_part *p, size_t q,
                                rc_accumulator *acc, rc_map_builder *b, hints *h,
                                size_t *n_between, size_t *cap_between)
{
    const earl_rc_points *points = j->points;
    const int64_t loc = j->spans->location[q], prev = j->spans->start[q], at = j->spans->end[q];
    int64_t start = prev >= 0 ? prev : -1;
    int64_t base = loc * j->chunks->stride;
    size_t *point_hint = &h->point[loc];
    earl_status st = rc_sum_chunks(j->chunks, loc, start, at, acc, &h->chunk[loc],
                                   "root-cause intervals", &p->err);
    if (st != EARL_OK)
        return st;
    for (size_t i = 0; i < acc->n_list; i++)
        acc->value[acc->list[i]] = (double)acc->ticks[acc->list[i]];
    /* the points strictly in between: their waiting time is not the
     * location's own time (it propagates from elsewhere) */
    size_t k = earl_i64_gallop_lower_bound(points->key, points->count, base + start + 1,
                                           *point_hint);
    size_t k_end = earl_i64_gallop_lower_bound(points->key, points->count, base + at, k);
    *point_hint = k_end;
    double wait_sum = 0.0;
    for (; k < k_end; k++) {
        double w = points->wait[k];
        if (!(w > 0))
            continue;
        wait_sum += w;
        if (EARL_GROW_TEMP(p->between_row, *cap_between, *n_between + 1) < 0)
            return EARL_ERR_NOMEM;
        p->between_row[(*n_between)++] = points->row[k];
        int64_t c = points->cnode[k];
        if (c >= 0 && acc->touched[c])
            acc->value[c] += -w;
    }
    j->wait_sum[q] = wait_sum;
    /* the first point's own call counts only from its completion on */
    double cut = 0.0;
    int64_t cut_cnode = -1;
    if (prev >= 0) {
        size_t first = earl_i64_gallop_lower_bound(points->key, points->count, base + prev, k);
        if (first < points->count && points->key[first] == base + prev) {
            cut_cnode = points->cnode[first];
            cut = points->cut[first];
        }
    }
    rc_acc_sort(acc);
    for (size_t i = 0; i < acc->n_list; i++) {
        int64_t c = acc->list[i];
        double v = acc->value[c];
        if (!(v > 0))
            continue;
        if (c == cut_cnode) {
            v = v - cut;
            if (!(v > 0))
                continue;
        }
        if (rc_map_push(b, c, v) < 0)
            return EARL_ERR_NOMEM;
    }
    rc_acc_clear(acc);
    rc_map_end_query(b);
    return EARL_OK;
}

static void answer_part(void *arg, int part)
{
    interval_job *j = arg;
    interval_part *p = &j->part[part];
    const size_t count = p->end - p->first;
    rc_accumulator acc;
    rc_map_builder b;
    hints h = {NULL, NULL, 0};
    size_t n_between = 0, cap_between = 0;
    p->st = EARL_ERR_NOMEM;
    if (rc_acc_init(&acc, j->chunks->n_cnodes) < 0)
        goto done;
    h.n_locations = j->n_locations;
    h.chunk = calloc(j->n_locations ? (size_t)j->n_locations : 1, sizeof *h.chunk);
    h.point = calloc(j->n_locations ? (size_t)j->n_locations : 1, sizeof *h.point);
    p->between_offset = calloc(count + 1, sizeof *p->between_offset);
    if (!h.chunk || !h.point || !p->between_offset || rc_map_begin(&b, &p->time, count) < 0)
        goto done;
    /* the queries come location by location, their spans in the caller's
     * order: a few queries ahead, their spans are fetched while this one is
     * answered */
    enum { AHEAD = 8 };
    const earl_rc_spans *spans = j->spans;
    for (size_t i = 0; i < count; i++) {
        if (i + AHEAD < count) {
            size_t ahead = j->order[p->first + i + AHEAD];
            __builtin_prefetch(&spans->location[ahead]);
            __builtin_prefetch(&spans->start[ahead]);
            __builtin_prefetch(&spans->end[ahead]);
        }
        p->st = answer_query(j, p, j->order[p->first + i], &acc, &b, &h, &n_between,
                             &cap_between);
        if (p->st != EARL_OK)
            goto done;
        p->between_offset[i + 1] = (int64_t)n_between;
    }
    p->st = EARL_OK;
done:
    if (p->st == EARL_ERR_NOMEM)
        earl_fail(&p->err, EARL_ERR_NOMEM, "root-cause intervals: out of memory");
    rc_acc_free(&acc);
    hints_free(&h);
}

static void interval_part_free(interval_part *p)
{
    earl_rc_map_free(&p->time);
    free(p->between_offset);
    earl_mem_free(p->between_row);
}

earl_status earl_rc_interval_times(const earl_rc_chunks *chunks, const earl_rc_points *points,
                                   const earl_rc_spans *spans, int threads,
                                   earl_rc_intervals *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    earl_status st = check_inputs(chunks, spans, "root-cause intervals", err);
    if (st != EARL_OK)
        return st;
    const size_t queries = spans->count;
    for (size_t k = 0; k < points->count; k++)
        if (points->cnode[k] >= chunks->n_cnodes)
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause intervals: point %zu has call path %lld, not below %lld",
                             k, (long long)points->cnode[k], (long long)chunks->n_cnodes);
    interval_job *j = calloc(1, sizeof *j);
    size_t *order = NULL;
    int n_parts = earl_parallel_parts(threads, queries, (size_t)1 << 13);
    if (!j)
        return earl_fail(err, EARL_ERR_NOMEM, "root-cause intervals: out of memory");
    *j = (interval_job){chunks, points, spans, NULL, 0, NULL, {{0}}};
    for (size_t q = 0; q < queries; q++)
        if (spans->location[q] + 1 > j->n_locations)
            j->n_locations = spans->location[q] + 1;
    out->wait_sum = calloc(queries + 1, sizeof *out->wait_sum);
    if (!out->wait_sum || !(order = rc_order_by_location(spans->location, queries,
                                                         j->n_locations)))
        goto nomem;
    j->order = order;
    j->wait_sum = out->wait_sum;
    rc_csr_part time_parts[EARL_MAX_PARTS], between_parts[EARL_MAX_PARTS];
    for (int k = 0; k < n_parts; k++) {
        interval_part *p = &j->part[k];
        p->first = earl_part_start(queries, k, n_parts);
        p->end = earl_part_start(queries, k + 1, n_parts);
    }
    earl_parallel(n_parts, answer_part, j);
    for (int k = 0; k < n_parts; k++) {
        interval_part *p = &j->part[k];
        if (p->st != EARL_OK) {
            st = p->st;
            if (err)
                *err = p->err;
            goto fail;
        }
        p->time_columns[0] = (void **)&p->time.cnode;
        p->time_columns[1] = (void **)&p->time.value;
        p->between_columns[0] = (void **)&p->between_row;
        time_parts[k] = (rc_csr_part){p->first, p->end - p->first, p->time.offset,
                                      &p->time.offset, p->time_columns};
        between_parts[k] = (rc_csr_part){p->first, p->end - p->first, p->between_offset,
                                         &p->between_offset, p->between_columns};
    }
    /* the tables in query order, joined from the parts */
    out->time.queries = queries;
    if (rc_csr_unorder_parts(queries, order, time_parts, n_parts, 2, &out->time.offset,
                             (void **[]){(void **)&out->time.cnode,
                                         (void **)&out->time.value}) < 0 ||
        rc_csr_unorder_parts(queries, order, between_parts, n_parts, 1, &out->between_offset,
                             (void **[]){(void **)&out->between_row}) < 0)
        goto nomem;
    st = EARL_OK;
    goto done;
nomem:
    st = earl_fail(err, EARL_ERR_NOMEM, "root-cause intervals: out of memory");
fail:
    earl_rc_intervals_free(out);
done:
    for (int k = 0; k < n_parts; k++)
        interval_part_free(&j->part[k]);
    free(j);
    free(order);
    return st;
}
