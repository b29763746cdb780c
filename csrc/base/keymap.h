/*
 * keymap.h - a map from 64-bit keys to small non-negative ints (keymap.c),
 * for the tables of rows keyed by a pair of ids.
 */
#ifndef EARL_BASE_KEYMAP_H
#define EARL_BASE_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

/* Zero-initialised it is empty. */
typedef struct earl_keymap {
    uint64_t *keys;
    int32_t *slots; /* value + 1, 0 for an empty slot */
    size_t n_slots, n_used;
} earl_keymap;
/* The value of key; when absent, key gets the value `fresh` (*added = 1).
 * -1 when out of memory. */
int32_t earl_keymap_get(earl_keymap *m, uint64_t key, int32_t fresh, int *added);
void earl_keymap_free(earl_keymap *m);

#endif
