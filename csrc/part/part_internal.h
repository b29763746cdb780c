/*
 * part_internal.h - what the files of the part subsystem share (not public):
 * the sort of (key, value) pairs that puts ghost records in the order a
 * part adds them, the lists of records each part gets, and a stream of
 * records packed narrow (part_pack.c).
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

/* A growing stream of ghost records packed narrow (earl_ghosts_pack's
 * format): records are added one at a time, each packed against the one
 * before, so that a caller that makes records one by one (earl_part_export
 * packed) never holds them wide.  A restart begins a new run: the deltas
 * start from zero again, as earl_ghosts_unpack expects at a run's start. */
#define PART_MAX_PACKED (1 + 3 + 16 * 10) /* kind, mask, 14 varints of <= 10 bytes */
typedef struct part_packer {
    uint8_t *bytes;
    size_t used, cap;
    earl_ghost prev;  /* the record before, zero at a run's start */
} part_packer;

/* Room for about `expected` records; -1 when out of memory. */
int part_packer_init(part_packer *pk, size_t expected);
void part_packer_restart(part_packer *pk);
/* -1 when out of memory (the stream is then unchanged). */
int part_packer_add(part_packer *pk, const earl_ghost *g);
/* The bytes (free() them) and their length; the packer is empty after. */
uint8_t *part_packer_take(part_packer *pk, size_t *bytes);
void part_packer_free(part_packer *pk);

/* The same stream read back a record at a time (earl_ghosts_unpack whole,
 * earl_part_add_packed a location at a time): n records in [p, end). */
typedef struct part_unpacker {
    const uint8_t *p, *end;
    size_t left;      /* records not read yet */
    earl_ghost prev;  /* the record before, zero at the stream's start */
} part_unpacker;

void part_unpacker_init(part_unpacker *u, const uint8_t *bytes, size_t size, size_t n);
/* The next record into *g: 1, 0 once the n records were read, -1 when the
 * bytes end inside it or hold a field no packing writes. */
int part_unpacker_next(part_unpacker *u, earl_ghost *g);
/* Every record read and no byte left over. */
static inline int part_unpacker_done(const part_unpacker *u)
{
    return !u->left && u->p == u->end;
}

#endif
