/*
 * hashmap.c - the hash map of hashmap.h.
 *
 * A slot keeps its key's hash beside the key (0: an empty slot; a hash of 0
 * is stored as 1, which has the same home), so that a probe compares one
 * word before the key's two, and growing and removing never hash a key
 * again.  A key's home is the high bits of its hash (Fibonacci hashing).  A
 * slot is 32 bytes: a probe run of a few slots reads one or two cache
 * lines.
 */
#include <stdlib.h>

#include "base/hashmap.h"

static uint64_t hash_of(uint64_t a, uint64_t b)
{
    uint64_t h = earl_hash_mix(a, b);
    return h ? h : 1;
}

static int alloc_slots(earl_map *m, size_t cap)
{
    earl_map_entry *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    m->slots = s;
    m->cap = cap;
    m->shift = (unsigned)__builtin_clzll((unsigned long long)cap) + 1;
    return 0;
}

int earl_map_init(earl_map *m, size_t expected)
{
    size_t cap = 16;
    while (cap < 2 * expected)
        cap <<= 1;
    m->n = 0;
    return alloc_slots(m, cap);
}

void earl_map_free(earl_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
    m->shift = 0;
}

/* The slot of the first entry of (a, b) whose hash is h, or the empty slot
 * that ends its probe run. */
static size_t probe(const earl_map *m, uint64_t h, uint64_t a, uint64_t b)
{
    size_t mask = m->cap - 1, j = (size_t)(h >> m->shift);
    const earl_map_entry *s = m->slots;
    while (s[j].hash && !(s[j].hash == h && s[j].k1 == a && s[j].k2 == b))
        j = (j + 1) & mask;
    return j;
}

/* The empty slot that ends the probe run from hash h: a new entry's place,
 * after every entry of its key. */
static size_t free_slot(const earl_map *m, uint64_t h)
{
    size_t mask = m->cap - 1, j = (size_t)(h >> m->shift);
    while (m->slots[j].hash)
        j = (j + 1) & mask;
    return j;
}

/* Make room for one more entry (at most half the slots are used); 1 when
 * the table was rebuilt, 0 when it was not, -1 when out of memory. */
static int reserve_one(earl_map *m)
{
    if (!m->cap)
        return earl_map_init(m, 1) == 0 ? 1 : -1;
    if (2 * (m->n + 1) <= m->cap)
        return 0;
    earl_map old = *m;
    if (alloc_slots(m, old.cap * 2) != 0) {
        *m = old;
        return -1;
    }
    m->n = old.n;
    /* in slot order from the start of a run, which keeps each key's entries
     * in their order */
    size_t start = 0;
    while (old.slots[start].hash)
        start++;
    for (size_t i = 0; i < old.cap; i++) {
        const earl_map_entry *e = &old.slots[(start + i) & (old.cap - 1)];
        if (e->hash)
            m->slots[free_slot(m, e->hash)] = *e;
    }
    free(old.slots);
    return 1;
}

int64_t *earl_map_find(const earl_map *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return NULL;
    size_t j = probe(m, hash_of(a, b), a, b);
    return m->slots[j].hash ? &m->slots[j].val : NULL;
}

static int64_t *put(earl_map *m, size_t j, uint64_t h, uint64_t a, uint64_t b, int64_t v)
{
    m->slots[j] = (earl_map_entry){h, a, b, v};
    m->n++;
    return &m->slots[j].val;
}

int64_t *earl_map_slot(earl_map *m, uint64_t a, uint64_t b, int64_t init, int *added)
{
    uint64_t h = hash_of(a, b);
    if (added)
        *added = 0;
    size_t j = 0;
    if (m->cap) {
        j = probe(m, h, a, b);
        if (m->slots[j].hash)
            return &m->slots[j].val;
    }
    int rebuilt = reserve_one(m);
    if (rebuilt < 0)
        return NULL;
    if (rebuilt)
        j = free_slot(m, h);
    if (added)
        *added = 1;
    return put(m, j, h, a, b, init);
}

int earl_map_add(earl_map *m, uint64_t a, uint64_t b, int64_t v)
{
    if (reserve_one(m) < 0)
        return -1;
    uint64_t h = hash_of(a, b);
    put(m, free_slot(m, h), h, a, b, v);
    return 0;
}

int earl_map_take(earl_map *m, uint64_t a, uint64_t b, int64_t *value)
{
    if (!m->cap)
        return 0;
    size_t hole = probe(m, hash_of(a, b), a, b);
    earl_map_entry *s = m->slots;
    if (!s[hole].hash)
        return 0;
    if (value)
        *value = s[hole].val;
    /* backward-shift deletion: pull each later entry of the run into the
     * hole unless its home lies cyclically in (hole, its slot] */
    size_t mask = m->cap - 1, j = hole;
    for (;;) {
        j = (j + 1) & mask;
        if (!s[j].hash)
            break;
        size_t home = (size_t)(s[j].hash >> m->shift);
        int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays)
            continue;
        s[hole] = s[j];
        hole = j;
    }
    s[hole].hash = 0;
    m->n--;
    return 1;
}

size_t earl_map_first(const earl_map *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return EARL_MAP_END;
    size_t j = probe(m, hash_of(a, b), a, b);
    return m->slots[j].hash ? j : EARL_MAP_END;
}

size_t earl_map_next(const earl_map *m, size_t slot, uint64_t a, uint64_t b)
{
    size_t mask = m->cap - 1;
    uint64_t h = m->slots[slot].hash;
    for (size_t j = (slot + 1) & mask; m->slots[j].hash; j = (j + 1) & mask)
        if (m->slots[j].hash == h && m->slots[j].k1 == a && m->slots[j].k2 == b)
            return j;
    return EARL_MAP_END;
}
