/*
 * hb_clock.c - the machinery of the causal-order replays (hb_clock.h): the
 * store of saved vector clocks, the locations waiting in dependency order,
 * and the shapes of collectives.
 */
#include <otf2/otf2.h>
#include <stdlib.h>

#include "hb_clock.h"
#include "base/grow.h"

void hb_clock_pool_init(hb_clock_pool *pool, uint32_t width)
{
    memset(pool, 0, sizeof *pool);
    pool->width = width;
}

void hb_clock_pool_free(hb_clock_pool *pool)
{
    free(pool->data);
    free(pool->free_slots);
    memset(pool, 0, sizeof *pool);
}

uint32_t hb_clock_take(hb_clock_pool *pool, const uint32_t *src)
{
    uint32_t slot;
    if (pool->n_free) {
        slot = pool->free_slots[--pool->n_free];
    } else {
        if (pool->used == pool->cap) {
            uint32_t cap = pool->cap ? pool->cap * 2 : 64;
            if (cap <= pool->cap) /* 2^32 slots: out of ids */
                return UINT32_MAX;
            size_t entries = (size_t)cap * (pool->width ? pool->width : 1);
            uint32_t *data = realloc(pool->data, entries * sizeof *data);
            if (!data)
                return UINT32_MAX;
            pool->data = data;
            pool->cap = cap;
        }
        slot = pool->used++;
    }
    uint32_t *c = hb_clock_at(pool, slot);
    if (src)
        hb_clock_copy(c, src, pool->width);
    else
        memset(c, 0, (size_t)pool->width * sizeof *c);
    return slot;
}

void hb_clock_release(hb_clock_pool *pool, uint32_t slot)
{
    if (pool->n_free == pool->cap_free) {
        size_t cap = pool->cap_free;
        /* the pool can hold its own cap slots, so one id per slot suffices */
        if (EARL_GROW(pool->free_slots, cap, (size_t)pool->cap) != 0)
            return; /* out of memory: the slot is lost, not corrupted */
        pool->cap_free = (uint32_t)cap;
    }
    pool->free_slots[pool->n_free++] = slot;
}

/* ---- waiting ------------------------------------------------------------------ */

int hb_waiters_init(hb_waiters *w, size_t n_locations)
{
    memset(w, 0, sizeof *w);
    size_t n = n_locations ? n_locations : 1;
    w->key = malloc(n * sizeof *w->key);
    w->next = malloc(n * sizeof *w->next);
    if (!w->key || !w->next) {
        hb_waiters_free(w);
        return -1;
    }
    for (size_t l = 0; l < n; l++) {
        w->key[l] = -1;
        w->next[l] = -1;
    }
    w->n = n_locations;
    hb_event_map_init(&w->heads);
    return 0;
}

void hb_waiters_free(hb_waiters *w)
{
    free(w->key);
    free(w->next);
    hb_event_map_free(&w->heads);
    memset(w, 0, sizeof *w);
}

size_t hb_waiters_bytes(const hb_waiters *w)
{
    return w->n * (sizeof *w->key + sizeof *w->next) + hb_event_map_bytes(&w->heads);
}

int hb_wait(hb_waiters *w, int32_t l, int64_t key)
{
    uint32_t head = hb_event_map_get(&w->heads, key);
    w->key[l] = key;
    w->next[l] = head == UINT32_MAX ? -1 : (int32_t)head;
    return hb_event_map_put(&w->heads, key, (uint32_t)l);
}

size_t hb_wake(hb_waiters *w, int64_t key, int32_t *out)
{
    if (!w->heads.n)
        return 0;
    uint32_t head = hb_event_map_take(&w->heads, key);
    size_t n = 0;
    for (int32_t l = head == UINT32_MAX ? -1 : (int32_t)head; l >= 0;) {
        int32_t next = w->next[l];
        w->key[l] = -1;
        w->next[l] = -1;
        out[n++] = l;
        l = next;
    }
    return n;
}

void hb_unwait(hb_waiters *w, int32_t l)
{
    int64_t key = w->key[l];
    if (key < 0)
        return;
    uint32_t head = hb_event_map_get(&w->heads, key);
    if (head == (uint32_t)l) {
        if (w->next[l] < 0)
            hb_event_map_take(&w->heads, key);
        else /* overwrites an existing key: never needs memory */
            hb_event_map_put(&w->heads, key, (uint32_t)w->next[l]);
    } else {
        for (int32_t p = (int32_t)head; p >= 0; p = w->next[p])
            if (w->next[p] == l) {
                w->next[p] = w->next[l];
                break;
            }
    }
    w->key[l] = -1;
    w->next[l] = -1;
}

int32_t hb_waiters_earliest(const hb_waiters *w, earl_eid (*next_event)(void *ctx, int32_t l),
                            void *ctx)
{
    int32_t pick = -1;
    earl_eid first = EARL_NONE;
    for (size_t l = 0; l < w->n; l++) {
        if (w->key[l] < 0)
            continue;
        earl_eid e = next_event(ctx, (int32_t)l);
        if (pick < 0 || e < first) {
            pick = (int32_t)l;
            first = e;
        }
    }
    return pick;
}

/* ---- collective shapes ----------------------------------------------------------- */

hb_shape hb_collective_shape(uint8_t op)
{
    switch (op) {
    case OTF2_COLLECTIVE_OP_BCAST:
    case OTF2_COLLECTIVE_OP_SCATTER:
    case OTF2_COLLECTIVE_OP_SCATTERV:
        return HB_SHAPE_FROM_ROOT;
    case OTF2_COLLECTIVE_OP_GATHER:
    case OTF2_COLLECTIVE_OP_GATHERV:
    case OTF2_COLLECTIVE_OP_REDUCE:
        return HB_SHAPE_TO_ROOT;
    case OTF2_COLLECTIVE_OP_SCAN:
        return HB_SHAPE_SCAN;
    case OTF2_COLLECTIVE_OP_EXSCAN:
        return HB_SHAPE_EXSCAN;
    default:
        return HB_SHAPE_ALL;
    }
}

int64_t hb_comm_rank(const earl_defs *defs, uint32_t comm, earl_loc loc)
{
    if (comm >= defs->n_comms || !defs->comms[comm].member_locations)
        return -1;
    const earl_comm *c = &defs->comms[comm];
    for (uint32_t r = 0; r < c->size; r++)
        if (c->member_locations[r] == loc)
            return r;
    return -1;
}
