/*
 * states_map.c - the hash map of the states pass: 128-bit keys (two uint64)
 * to int64 values, open addressing with linear probing, grown at 1/2 load.
 *
 * The pass keys its few states by it: message channels (source,
 * destination, communicator, tag), collective groups and per-location
 * sequence numbers, locks, and the (source, destination) pairs of the queue
 * index.  It is never keyed by event, so its size follows the number of
 * channels, groups and locks, not the trace length.
 */
#include <stdlib.h>

#include "states_internal.h"

static inline size_t hash2(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    return (size_t)h;
}

static int alloc_slots(states_map *m, size_t cap)
{
    m->k1 = malloc(cap * sizeof *m->k1);
    m->k2 = malloc(cap * sizeof *m->k2);
    m->val = malloc(cap * sizeof *m->val);
    m->used = calloc(cap, 1);
    if (!m->k1 || !m->k2 || !m->val || !m->used) {
        free(m->k1); free(m->k2); free(m->val); free(m->used);
        m->k1 = m->k2 = NULL; m->val = NULL; m->used = NULL;
        return -1;
    }
    m->cap = cap;
    return 0;
}

int states_map_init(states_map *m, size_t expected)
{
    size_t cap = 16;
    while (cap < 2 * expected)
        cap <<= 1;
    m->n = 0;
    return alloc_slots(m, cap);
}

void states_map_free(states_map *m)
{
    free(m->k1);
    free(m->k2);
    free(m->val);
    free(m->used);
    m->k1 = m->k2 = NULL;
    m->val = NULL;
    m->used = NULL;
    m->cap = m->n = 0;
}

static size_t probe(const states_map *m, uint64_t a, uint64_t b)
{
    size_t mask = m->cap - 1, j = hash2(a, b) & mask;
    while (m->used[j] && (m->k1[j] != a || m->k2[j] != b))
        j = (j + 1) & mask;
    return j;
}

static int grow(states_map *m)
{
    states_map old = *m;
    if (alloc_slots(m, old.cap * 2) != 0) {
        *m = old;
        return -1;
    }
    m->n = old.n;
    for (size_t j = 0; j < old.cap; j++) {
        if (!old.used[j])
            continue;
        size_t t = probe(m, old.k1[j], old.k2[j]);
        m->used[t] = 1;
        m->k1[t] = old.k1[j];
        m->k2[t] = old.k2[j];
        m->val[t] = old.val[j];
    }
    states_map_free(&old);
    return 0;
}

int64_t *states_map_slot(states_map *m, uint64_t a, uint64_t b, int64_t init)
{
    size_t j = probe(m, a, b);
    if (m->used[j])
        return &m->val[j];
    if (2 * (m->n + 1) > m->cap) {
        if (grow(m) != 0)
            return NULL;
        j = probe(m, a, b);
    }
    m->used[j] = 1;
    m->k1[j] = a;
    m->k2[j] = b;
    m->val[j] = init;
    m->n++;
    return &m->val[j];
}

int64_t *states_map_find(const states_map *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return NULL;
    size_t j = probe(m, a, b);
    return m->used[j] ? &m->val[j] : NULL;
}
