/*
 * keymap.c - a map from 64-bit keys to small non-negative ints (open
 * addressing, linear probing), for the tables of rows keyed by a pair of
 * ids: the call tree's cnodes by (parent, region) and its metric rows by
 * (location, cnode), the catalog's message sums by (cnode, location).
 * See keymap.h.
 */
#include <stdlib.h>

#include "base/keymap.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31; x *= 0x9e3779b97f4a7c15ULL; x ^= x >> 29;
    return x;
}

static int grow(earl_keymap *m)
{
    size_t n = m->n_slots ? 2 * m->n_slots : 1024;
    uint64_t *keys = calloc(n, sizeof *keys);
    int32_t *slots = calloc(n, sizeof *slots);
    if (!keys || !slots) {
        free(keys); free(slots);
        return -1;
    }
    for (size_t i = 0; i < m->n_slots; i++) {
        if (!m->slots[i])
            continue;
        size_t j = mix(m->keys[i]) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        keys[j] = m->keys[i];
        slots[j] = m->slots[i];
    }
    free(m->keys); free(m->slots);
    m->keys = keys; m->slots = slots; m->n_slots = n;
    return 0;
}

int32_t earl_keymap_get(earl_keymap *m, uint64_t key, int32_t fresh, int *added)
{
    *added = 0;
    if ((m->n_used + 1) * 2 > m->n_slots && grow(m) != 0)
        return -1;
    size_t j = mix(key) & (m->n_slots - 1);
    while (m->slots[j]) {
        if (m->keys[j] == key)
            return m->slots[j] - 1;
        j = (j + 1) & (m->n_slots - 1);
    }
    m->keys[j] = key;
    m->slots[j] = fresh + 1;
    m->n_used++;
    *added = 1;
    return fresh;
}

void earl_keymap_free(earl_keymap *m)
{
    free(m->keys); free(m->slots);
    m->keys = NULL; m->slots = NULL;
    m->n_slots = m->n_used = 0;
}
