/*
 * part_internal.h - what the files of the part subsystem share (not public):
 * the sort of (key, value) pairs that puts ghost records in the order a
 * part adds them, and the lists of records each part gets.
 */
#ifndef EARL_PART_INTERNAL_H
#define EARL_PART_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "earl_part.h"

/* Sort n keys ascending, carrying values (NULL: keys only) along; stable.
 * An LSD radix sort over the bits in which the keys differ, with scratch of
 * n keys and values; -1 when out of memory (the input is then unchanged). */
int part_sort(uint64_t *key, uint64_t *value, size_t n);

/* A location and a position packed into one sort key: parts are small
 * numbers, locations below 2^24, positions below 2^40. */
#define PART_POSITION_BITS 40
static inline uint64_t part_key(uint64_t high, uint64_t position)
{
    return high << PART_POSITION_BITS | position;
}
static inline uint64_t part_key_position(uint64_t key)
{
    return key & ((UINT64_C(1) << PART_POSITION_BITS) - 1);
}
static inline uint64_t part_key_high(uint64_t key) { return key >> PART_POSITION_BITS; }

/* Per part, a growing list of (location, position) keys and, where the
 * record cannot be read back from a reading (representatives), the record
 * itself: packed into an earl_ghosts once every list is complete. */
typedef struct part_lists {
    size_t n_parts;
    uint64_t **key;
    earl_ghost **record;  /* NULL unless made with records */
    size_t *n, *cap;
    int nomem;
} part_lists;

int part_lists_init(part_lists *l, size_t n_parts, int with_records);
void part_lists_add(part_lists *l, size_t part, uint64_t key);
void part_lists_add_record(part_lists *l, size_t part, uint64_t key, const earl_ghost *g);
void part_lists_free(part_lists *l);
/* out->offset from the lists' lengths and out->records allocated for all
 * of them (filled by the caller, part after part, in list order). */
int part_lists_layout(const part_lists *l, earl_ghosts *out);

#endif
