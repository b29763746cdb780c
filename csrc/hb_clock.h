/*
 * hb_clock.h - vector clocks and the store of saved clocks, shared by the
 * replays that compute causal orders over a trace: the happened-before
 * timestamps (hb_replay.c) and the matches-before clocks of the race
 * analysis (races_*).  Not part of the public API.
 *
 * A replay keeps one running clock per location and must remember the clock
 * some events had until the events that depend on them are replayed: a send
 * until its receive, a collective's begin until the members' ends.  Those
 * saved clocks live in an hb_clock_pool (fixed-width slots, recycled through
 * a free list) and are found by event id through an hb_event_map.
 */
#ifndef EARL_HB_CLOCK_H
#define EARL_HB_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "earl.h"

/* dst[k] = max(dst[k], src[k]) for k < width. */
static inline void hb_clock_max(uint32_t *restrict dst, const uint32_t *restrict src,
                                uint32_t width)
{
    for (uint32_t k = 0; k < width; k++)
        dst[k] = dst[k] > src[k] ? dst[k] : src[k];
}

static inline void hb_clock_copy(uint32_t *restrict dst, const uint32_t *restrict src,
                                 uint32_t width)
{
    memcpy(dst, src, (size_t)width * sizeof *dst);
}

/* Slots of width entries each.  Slot ids stay valid until released; the
 * pointer of a slot may move when another slot is taken (the storage grows),
 * so take the pointer again after hb_clock_take. */
typedef struct hb_clock_pool {
    uint32_t width;
    uint32_t *data;        /* cap slots x width entries */
    uint32_t cap;          /* slots allocated */
    uint32_t used;         /* slots ever handed out (high-water mark) */
    uint32_t *free_slots;  /* released slot ids, reused first */
    uint32_t n_free, cap_free;
} hb_clock_pool;

void hb_clock_pool_init(hb_clock_pool *pool, uint32_t width);
void hb_clock_pool_free(hb_clock_pool *pool);
/* A slot holding a copy of src (zeros when src is NULL); UINT32_MAX when out
 * of memory. */
uint32_t hb_clock_take(hb_clock_pool *pool, const uint32_t *src);
void hb_clock_release(hb_clock_pool *pool, uint32_t slot);
static inline uint32_t *hb_clock_at(const hb_clock_pool *pool, uint32_t slot)
{
    return pool->data + (size_t)slot * pool->width;
}
static inline size_t hb_clock_pool_bytes(const hb_clock_pool *pool)
{
    return (size_t)pool->cap * pool->width * sizeof(uint32_t) +
           (size_t)pool->cap_free * sizeof(uint32_t);
}

/* Event id -> value (a slot, a counter), open addressing with linear
 * probing; removal shifts entries back, so no tombstones accumulate while a
 * replay puts and takes millions of messages. */
typedef struct hb_event_map {
    earl_eid *keys;        /* -1: empty */
    uint32_t *values;
    size_t cap;            /* a power of two */
    size_t count;
} hb_event_map;

void hb_event_map_init(hb_event_map *map);
void hb_event_map_free(hb_event_map *map);
/* Insert or overwrite; 0, or -1 when out of memory. */
int hb_event_map_put(hb_event_map *map, earl_eid key, uint32_t value);
/* The value of key, or UINT32_MAX when absent. */
uint32_t hb_event_map_get(const hb_event_map *map, earl_eid key);
/* Remove key and return its value, or UINT32_MAX when absent. */
uint32_t hb_event_map_take(hb_event_map *map, earl_eid key);
static inline size_t hb_event_map_bytes(const hb_event_map *map)
{
    return map->cap * (sizeof(earl_eid) + sizeof(uint32_t));
}

#endif /* EARL_HB_CLOCK_H */
