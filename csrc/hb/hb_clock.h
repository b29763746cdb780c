/*
 * hb_clock.h - the machinery shared by the replays that compute causal
 * orders over a trace: the happened-before timestamps (hb_replay.c) and the
 * matches-before clocks of the race analysis (races_*).  Not part of the
 * public API.
 *
 * A replay keeps one running clock per location and must remember the clock
 * some events had until the events that depend on them are replayed: a send
 * until its receive, a collective's begin until the members' ends.  Those
 * saved clocks live in an hb_clock_pool (fixed-width slots, recycled through
 * a free list) and are found by event id through an hb_event_map.  A
 * location whose next event needs what another location has not replayed
 * yet waits on a key in hb_waiters until that key is published.  Which
 * members' begins a collective's end depends on follows the operation's
 * hb_shape.
 */
#ifndef EARL_HB_CLOCK_H
#define EARL_HB_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "earl.h"
#include "base/hashmap.h"

/* Bit sets over event ids (a byte per 8 events): which events are replayed,
 * stamped, kept for later, members of a collective, waited for elsewhere. */
#define HB_BIT_SET(a, i) ((a)[(size_t)(i) >> 3] |= (uint8_t)(1u << ((size_t)(i) & 7)))
#define HB_BIT_GET(a, i) (((a)[(size_t)(i) >> 3] >> ((size_t)(i) & 7)) & 1u)

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

/* Event id -> value (a slot, a counter): the core's hash map
 * (base/hashmap.h) keyed by the event id, UINT32_MAX standing for an absent
 * key.  Removal shifts entries back, so no tombstones accumulate while a
 * replay puts and takes millions of messages. */
typedef earl_map hb_event_map;

static inline void hb_event_map_init(hb_event_map *map)
{
    memset(map, 0, sizeof *map);
}
static inline void hb_event_map_free(hb_event_map *map)
{
    earl_map_free(map);
}
/* Insert or overwrite; 0, or -1 when out of memory. */
static inline int hb_event_map_put(hb_event_map *map, earl_eid key, uint32_t value)
{
    int64_t *v = earl_map_slot(map, (uint64_t)key, 0, value, NULL);
    if (!v)
        return -1;
    *v = value;
    return 0;
}
/* The value of key, or UINT32_MAX when absent. */
static inline uint32_t hb_event_map_get(const hb_event_map *map, earl_eid key)
{
    const int64_t *v = earl_map_find(map, (uint64_t)key, 0);
    return v ? (uint32_t)*v : UINT32_MAX;
}
/* Remove key and return its value, or UINT32_MAX when absent. */
static inline uint32_t hb_event_map_take(hb_event_map *map, earl_eid key)
{
    int64_t v;
    return earl_map_take(map, (uint64_t)key, 0, &v) ? (uint32_t)v : UINT32_MAX;
}
static inline size_t hb_event_map_bytes(const hb_event_map *map)
{
    return earl_map_bytes(map);
}

/* ---- waiting in dependency order ---------------------------------------- */

/* Locations waiting for keys (keys >= 0: an event id, or whatever a replay
 * encodes in one).  Each location waits on at most one key at a time. */
typedef struct hb_waiters {
    hb_event_map heads;    /* key -> first location waiting on it */
    int64_t *key;          /* per location: the key it waits on, -1 */
    int32_t *next;         /* per location: the next one waiting on the same key, -1 */
    size_t n;
} hb_waiters;

int hb_waiters_init(hb_waiters *w, size_t n_locations); /* 0, or -1 out of memory */
void hb_waiters_free(hb_waiters *w);
size_t hb_waiters_bytes(const hb_waiters *w);
static inline int hb_waiting(const hb_waiters *w, int32_t l)
{
    return w->key[l] >= 0;
}
/* Location l waits on key from now: 0, or -1 when out of memory. */
int hb_wait(hb_waiters *w, int32_t l, int64_t key);
/* Key is published: every location waiting on it stops waiting and is
 * appended to out (room for every location); returns how many. */
size_t hb_wake(hb_waiters *w, int64_t key, int32_t *out);
/* Location l stops waiting without its key (a cycle is broken there). */
void hb_unwait(hb_waiters *w, int32_t l);
/* Where to break a cycle when nothing can go on: the waiting location whose
 * next event (next_event(ctx, l)) comes first in the total order, -1 when
 * none waits. */
int32_t hb_waiters_earliest(const hb_waiters *w, earl_eid (*next_event)(void *ctx, int32_t l),
                            void *ctx);

/* ---- collective shapes ---------------------------------------------------- */

/* Which members' begins the end of a member depends on (docs/patterns.md). */
typedef enum hb_shape {
    HB_SHAPE_ALL,       /* every member's: barrier, all-to-all, communicator creation */
    HB_SHAPE_FROM_ROOT, /* the root's: Bcast, Scatter(v) */
    HB_SHAPE_TO_ROOT,   /* at the root every member's, elsewhere none: Reduce, Gather(v) */
    HB_SHAPE_SCAN,      /* those of lower or equal rank: Scan */
    HB_SHAPE_EXSCAN     /* those of lower rank: Exscan */
} hb_shape;

hb_shape hb_collective_shape(uint8_t op); /* an OTF2_CollectiveOp */
/* Rank of location loc in communicator comm, -1 when it is not a member. */
int64_t hb_comm_rank(const earl_defs *defs, uint32_t comm, earl_loc loc);

#endif /* EARL_HB_CLOCK_H */
