/*
 * hashmap.h - the core's one hash map: keys of two 64-bit words to int64
 * values, by open addressing with linear probing.
 *
 * A key is whatever its user packs into the two words: one id (the second
 * word 0), a pair of ids, four 32-bit fields (a message channel), or the
 * 64-bit hash of a string (then two strings may share a key, and the user
 * tells them apart by the entries of that key, earl_map_first/next).  Every
 * key is mixed by earl_hash_mix.
 *
 * The table holds at most half as many entries as slots, doubling when it
 * must; a slot keeps the key's hash beside the key and the value.
 * A removal shifts the later entries of its probe run back into the hole
 * (no tombstones), so a map that entries enter and leave by the million (a
 * replay's messages in flight) keeps short runs.  Entries of one key, added
 * with earl_map_add, are found in the order they were added, removals
 * included: a map is also a multimap of first-in, first-out queues.
 *
 * A zeroed earl_map is empty; it is used by one thread at a time.
 */
#ifndef EARL_BASE_HASHMAP_H
#define EARL_BASE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

/* A slot: an entry, or empty (hash 0). */
typedef struct earl_map_entry {
    uint64_t hash;     /* earl_hash_mix of the key (never 0 in an entry) */
    uint64_t k1, k2;   /* the key's words */
    int64_t val;
} earl_map_entry;

typedef struct earl_map {
    earl_map_entry *slots;
    size_t cap, n;     /* slots (a power of two, or 0) and entries */
    unsigned shift;    /* 64 - log2(cap): a key's home slot is hash >> shift */
} earl_map;

/* No slot: earl_map_first/next at the end of a key's entries. */
#define EARL_MAP_END SIZE_MAX

/* The hash of a key: Fibonacci hashing of the words combined, whose high
 * bits (the ones a table takes) depend on every bit of both words, and
 * which spreads the keys that come in runs (event ids, consecutive ids in
 * one word) evenly over a table. */
static inline uint64_t earl_hash_mix(uint64_t a, uint64_t b)
{
    return (a ^ b * 0xC2B2AE3D27D4EB4Full) * 0x9E3779B97F4A7C15ull;
}

/* A 64-bit hash of n bytes (FNV-1a), for keys that are strings. */
static inline uint64_t earl_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

/* Make room for `expected` entries before the first grows the table; 0, or
 * -1 when out of memory.  Optional: a zeroed map grows as entries come. */
int earl_map_init(earl_map *m, size_t expected);
void earl_map_free(earl_map *m);

/* The value of key (a, b) (its first entry), or NULL when absent.  A value
 * pointer is valid until the next insertion or removal. */
int64_t *earl_map_find(const earl_map *m, uint64_t a, uint64_t b);
/* The value of key (a, b), inserted with value init when absent (then
 * *added = 1, else 0; added may be NULL); NULL when out of memory. */
int64_t *earl_map_slot(earl_map *m, uint64_t a, uint64_t b, int64_t init, int *added);
/* Add an entry of key (a, b) with value v, after the key's entries already
 * there; 0, or -1 when out of memory. */
int earl_map_add(earl_map *m, uint64_t a, uint64_t b, int64_t v);
/* Remove the first entry of key (a, b) and give its value to *value (may be
 * NULL); 1, or 0 when the key is absent. */
int earl_map_take(earl_map *m, uint64_t a, uint64_t b, int64_t *value);

/* The slot of the first entry of key (a, b), and of the entry after slot
 * `slot` of that key; EARL_MAP_END when there is none.  The value of a slot
 * is m->slots[slot].val.  (Every entry: the slots of m->cap whose hash is
 * not 0, in no meaningful order.) */
size_t earl_map_first(const earl_map *m, uint64_t a, uint64_t b);
size_t earl_map_next(const earl_map *m, size_t slot, uint64_t a, uint64_t b);

/* Heap bytes the map holds. */
static inline size_t earl_map_bytes(const earl_map *m)
{
    return m->cap * sizeof(earl_map_entry);
}

#endif
