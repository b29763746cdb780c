/*
 * rc_maps.c - call-path maps (earl_rc_map): growing them query by query,
 * the dense accumulator their entries are summed in, and the excess of one
 * map over another (the delays of a late location over a waiting one).
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

int rc_map_begin(rc_map_builder *b, earl_rc_map *out, size_t queries)
{
    memset(out, 0, sizeof *out);
    b->map = out;
    b->cnode_cap = b->value_cap = 0;
    b->done = 0;
    out->queries = queries;
    out->offset = calloc(queries + 1, sizeof *out->offset);
    return out->offset ? 0 : -1;
}

int rc_map_push_grown(rc_map_builder *b, int64_t cnode, double value)
{
    earl_rc_map *m = b->map;
    size_t n = (size_t)m->offset[b->done + 1];
    if (EARL_GROW_TEMP(m->cnode, b->cnode_cap, n + 1) < 0 ||
        EARL_GROW_TEMP(m->value, b->value_cap, n + 1) < 0)
        return -1;
    m->cnode[n] = cnode;
    m->value[n] = value;
    m->offset[b->done + 1] = (int64_t)n + 1;
    return 0;
}

void rc_map_end_query(rc_map_builder *b)
{
    earl_rc_map *m = b->map;
    b->done++;
    if (b->done < m->queries)
        m->offset[b->done + 1] = m->offset[b->done];
}

void earl_rc_map_free(earl_rc_map *map)
{
    if (!map)
        return;
    free(map->offset);
    earl_mem_free(map->cnode);
    earl_mem_free(map->value);
    memset(map, 0, sizeof *map);
}

int rc_acc_init(rc_accumulator *a, int64_t n_cnodes)
{
    memset(a, 0, sizeof *a);
    size_t n = n_cnodes > 0 ? (size_t)n_cnodes : 1;
    a->n_cnodes = n_cnodes;
    a->ticks = malloc(n * sizeof *a->ticks);
    a->value = malloc(n * sizeof *a->value);
    a->touched = calloc(n, 1);
    a->list = malloc(n * sizeof *a->list);
    if (!a->ticks || !a->value || !a->touched || !a->list) {
        rc_acc_free(a);
        return -1;
    }
    return 0;
}

void rc_acc_free(rc_accumulator *a)
{
    free(a->ticks);
    free(a->value);
    free(a->touched);
    free(a->list);
    memset(a, 0, sizeof *a);
}

void rc_acc_sort(rc_accumulator *a)
{
    /* most intervals touch a handful of call paths: insertion sort, qsort beyond */
    if (a->n_list > 32) {
        qsort(a->list, a->n_list, sizeof *a->list, earl_cmp_i64);
        return;
    }
    for (size_t i = 1; i < a->n_list; i++) {
        int64_t x = a->list[i];
        size_t j = i;
        while (j > 0 && a->list[j - 1] > x) {
            a->list[j] = a->list[j - 1];
            j--;
        }
        a->list[j] = x;
    }
}

void rc_acc_clear(rc_accumulator *a)
{
    for (size_t i = 0; i < a->n_list; i++)
        a->touched[a->list[i]] = 0;
    a->n_list = 0;
}

size_t *rc_order_by_location(const int64_t *loc, size_t queries, int64_t n_locations)
{
    size_t *order = malloc((queries ? queries : 1) * sizeof *order);
    size_t *next = calloc((size_t)n_locations + 1, sizeof *next);
    if (!order || !next) {
        free(order);
        free(next);
        return NULL;
    }
    for (size_t q = 0; q < queries; q++)
        next[loc[q] + 1]++;
    for (int64_t l = 0; l < n_locations; l++)
        next[l + 1] += next[l];
    for (size_t q = 0; q < queries; q++)
        order[next[loc[q]]++] = q;
    free(next);
    return order;
}

int rc_csr_unorder_parts(size_t queries, const size_t *order, rc_csr_part *parts,
                         int n_parts, int n_columns, int64_t **offset, void **columns[])
{
    int64_t *by_query = malloc((queries + 1) * sizeof *by_query);
    size_t rows = 0;
    if (!by_query)
        return -1;
    by_query[0] = 0;
    for (int k = 0; k < n_parts; k++) {
        const rc_csr_part *p = &parts[k];
        for (size_t i = 0; i < p->count; i++)
            by_query[order[p->first + i] + 1] = p->offset[i + 1] - p->offset[i];
        rows += (size_t)p->offset[p->count];
    }
    for (size_t q = 0; q < queries; q++)
        by_query[q + 1] += by_query[q];
    /* one column at a time, each part's freed once copied: the peak holds one
     * column twice, not the whole table */
    for (int c = 0; c < n_columns; c++) {
        char *fresh = earl_mem_alloc_temp(rows ? rows * 8 : 1);
        if (!fresh) {
            free(by_query);
            return -1;
        }
        for (int k = 0; k < n_parts; k++) {
            const rc_csr_part *p = &parts[k];
            const char *from = *p->columns[c];
            for (size_t i = 0; i < p->count; i++) {
                size_t n = (size_t)(p->offset[i + 1] - p->offset[i]);
                if (n)
                    memcpy(fresh + 8 * (size_t)by_query[order[p->first + i]],
                           from + 8 * (size_t)p->offset[i], 8 * n);
            }
            earl_mem_free(*p->columns[c]);
            *p->columns[c] = NULL;
        }
        *columns[c] = fresh;
    }
    for (int k = 0; k < n_parts; k++) {
        free(*parts[k].offset_owner);
        *parts[k].offset_owner = NULL;
    }
    *offset = by_query;
    return 0;
}

int rc_csr_unorder(size_t queries, const size_t *order, int64_t **offset, int n_columns,
                   void **columns[])
{
    rc_csr_part whole = {0, queries, *offset, offset, columns};
    return rc_csr_unorder_parts(queries, order, &whole, 1, n_columns, offset, columns);
}

/* Whether query q of map holds cnode, walking its entries from *pos on (the
 * callers ask for ascending cnodes); the entry's index, or -1. */
static int64_t find_ascending(const earl_rc_map *map, int64_t *pos, int64_t end, int64_t cnode)
{
    while (*pos < end && map->cnode[*pos] < cnode)
        (*pos)++;
    return *pos < end && map->cnode[*pos] == cnode ? *pos : -1;
}

static int query_ok(const earl_rc_map *map, const int64_t *q, size_t k)
{
    return !map || (q[k] >= 0 && (size_t)q[k] < map->queries);
}

earl_status earl_rc_excess(const earl_rc_excess_pairs *p, earl_rc_map *out, double *sum,
                           earl_error *err)
{
    const earl_rc_map *late = p->late, *early = p->early, *within = p->within;
    const int64_t *late_q = p->late_query, *early_q = p->early_query, *within_q = p->within_query;
    const size_t pairs = p->count;
    rc_map_builder b;
    if (rc_map_begin(&b, out, pairs) < 0)
        goto nomem;
    for (size_t k = 0; k < pairs; k++) {
        if (!query_ok(late, late_q, k) || !query_ok(early, early_q, k) ||
            !query_ok(within, within_q, k)) {
            earl_rc_map_free(out);
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause excess: pair %zu names a query out of range", k);
        }
        int64_t e_pos = early->offset[early_q[k]], e_end = early->offset[early_q[k] + 1];
        int64_t w_pos = 0, w_end = 0;
        if (within) {
            w_pos = within->offset[within_q[k]];
            w_end = within->offset[within_q[k] + 1];
        }
        double total = 0.0;
        for (int64_t i = late->offset[late_q[k]]; i < late->offset[late_q[k] + 1]; i++) {
            int64_t c = late->cnode[i];
            if (within && find_ascending(within, &w_pos, w_end, c) < 0)
                continue;
            double v = late->value[i];
            int64_t j = find_ascending(early, &e_pos, e_end, c);
            if (j >= 0)
                v = v + -early->value[j];
            if (!(v > 0))
                continue;
            if (rc_map_push(&b, c, v) < 0)
                goto nomem;
            total += v;
        }
        sum[k] = total;
        rc_map_end_query(&b);
    }
    return EARL_OK;
nomem:
    earl_rc_map_free(out);
    return earl_fail(err, EARL_ERR_NOMEM, "root-cause excess: out of memory");
}
