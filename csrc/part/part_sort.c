/*
 * part_sort.c - ordering what travels between parts: a radix sort of 64-bit
 * keys (with values carried along), and per-part lists of keys laid out as
 * one earl_ghosts buffer.
 *
 * The ghosts of a part must reach it sorted by (location, position), and a
 * part's export marks events out of that order (a region's ENTER is marked
 * when the region closes, after the events inside it).  The keys pack the
 * order into one integer (part_key), so a radix sort over the bits in
 * which they differ puts them in order in a few linear passes, where a
 * comparison sort of the marks took most of an export.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "part_internal.h"

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)

int part_sort(uint64_t *key, uint64_t *value, size_t n)
{
    if (n < 2)
        return 0;
    uint64_t all_or = 0, all_and = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        all_or |= key[i];
        all_and &= key[i];
    }
    uint64_t differ = all_or ^ all_and;
    if (!differ)
        return 0;
    int low = __builtin_ctzll(differ), high = 64 - __builtin_clzll(differ);
    uint64_t *k2 = malloc(n * sizeof *k2);
    uint64_t *v2 = value ? malloc(n * sizeof *v2) : NULL;
    size_t *count = malloc(BUCKETS * sizeof *count);
    if (!k2 || (value && !v2) || !count) {
        free(k2); free(v2); free(count);
        return -1;
    }
    uint64_t *ks = key, *vs = value, *kd = k2, *vd = v2;
    for (int shift = low; shift < high; shift += DIGIT_BITS) {
        memset(count, 0, BUCKETS * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(ks[i] >> shift) & (BUCKETS - 1)]++;
        size_t sum = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t at = count[(ks[i] >> shift) & (BUCKETS - 1)]++;
            kd[at] = ks[i];
            if (vs)
                vd[at] = vs[i];
        }
        uint64_t *t = ks; ks = kd; kd = t;
        t = vs; vs = vd; vd = t;
    }
    if (ks != key) { /* an odd number of passes: the result is in the scratch */
        memcpy(key, ks, n * sizeof *key);
        if (value)
            memcpy(value, vs, n * sizeof *value);
    }
    free(ks == key ? kd : ks);
    free(value ? (vs == value ? vd : vs) : NULL);
    free(count);
    return 0;
}

int part_lists_init(part_lists *l, size_t n_parts, int with_records)
{
    memset(l, 0, sizeof *l);
    l->n_parts = n_parts;
    size_t m = n_parts ? n_parts : 1;
    l->key = calloc(m, sizeof *l->key);
    l->record = with_records ? calloc(m, sizeof *l->record) : NULL;
    l->n = calloc(m, sizeof *l->n);
    l->cap = calloc(m, sizeof *l->cap);
    if (!l->key || (with_records && !l->record) || !l->n || !l->cap) {
        part_lists_free(l);
        return -1;
    }
    return 0;
}

static int reserve(part_lists *l, size_t part)
{
    if (l->n[part] < l->cap[part])
        return 0;
    if (EARL_GROW(l->key[part], l->cap[part], l->n[part] + 1))
        return -1;
    if (l->record) { /* as many records as keys (a failure ends the whole export) */
        earl_ghost *r = realloc(l->record[part], l->cap[part] * sizeof *r);
        if (!r)
            return -1;
        l->record[part] = r;
    }
    return 0;
}

void part_lists_add(part_lists *l, size_t part, uint64_t key)
{
    if (reserve(l, part) != 0) {
        l->nomem = 1;
        return;
    }
    l->key[part][l->n[part]++] = key;
}

void part_lists_add_record(part_lists *l, size_t part, uint64_t key, const earl_ghost *g)
{
    if (reserve(l, part) != 0) {
        l->nomem = 1;
        return;
    }
    l->record[part][l->n[part]] = *g;
    l->key[part][l->n[part]++] = key;
}

void part_lists_free(part_lists *l)
{
    for (size_t p = 0; l->key && p < l->n_parts; p++) {
        free(l->key[p]);
        if (l->record)
            free(l->record[p]);
    }
    free(l->record);
    free(l->key);
    free(l->n);
    free(l->cap);
    memset(l, 0, sizeof *l);
}

int part_lists_layout(const part_lists *l, earl_ghosts *out)
{
    memset(out, 0, sizeof *out);
    out->n_parts = l->n_parts;
    out->offset = calloc(l->n_parts + 1, sizeof *out->offset);
    if (!out->offset)
        return -1;
    for (size_t p = 0; p < l->n_parts; p++)
        out->offset[p + 1] = out->offset[p] + l->n[p];
    size_t n = out->offset[l->n_parts];
    out->records = malloc((n ? n : 1) * sizeof *out->records);
    if (!out->records) {
        free(out->offset);
        out->offset = NULL;
        return -1;
    }
    return 0;
}
