/*
 * part_outbox.h - who waits for the clocks a part produces in a replay in
 * parts, and the outbox of each round (csrc/part/part_outbox.c).  Internal:
 * the happened-before replay (csrc/hb) and the matches-before replay
 * (csrc/races) share it; what a driver sees is the earl_outbox of
 * earl_part.h.
 */
#ifndef EARL_PART_OUTBOX_H
#define EARL_PART_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "earl_part.h"

/* Who waits for what a part produces in a replay: (key, part, ticket)
 * triples, a key being the producer's name for what it produces (an event
 * id, or an event id with a kind), the part one that waits for it and the
 * ticket that part gave it.  Added in any order, looked up by key. */
typedef struct earl_exports {
    size_t n, cap;
    struct earl_export *items;
    int sorted;
} earl_exports;
earl_status earl_exports_add(earl_exports *x, int64_t key, int32_t part, uint64_t ticket,
                             earl_error *err);
void earl_exports_free(earl_exports *x);

/* The outbox of n items produced (keys[k], in the order they were produced)
 * for parts 0 .. n_parts - 1: a record for every part that waits for an
 * item, each part's records in production order; fill(ctx, k, dst) writes
 * item k's clock (clock_bytes) after its ticket.  EARL_ERR_INVALID when an
 * export names a part >= n_parts. */
earl_status earl_outbox_build(earl_exports *x, size_t n_parts, size_t n, const int64_t *keys,
                              size_t clock_bytes, void (*fill)(void *ctx, size_t k, uint8_t *dst),
                              void *ctx, earl_outbox *out, earl_error *err);

/* The records another part's outbox sent here (a ticket, then width uint32
 * clock entries each): the size checked, each ticket checked against the
 * n_needs this part gave out, then take(ctx, ticket, clock) for each in
 * order; take returns nonzero when it runs out of memory (EARL_ERR_NOMEM). */
earl_status earl_outbox_receive(const void *records, size_t bytes, uint32_t width,
                                size_t n_needs,
                                int (*take)(void *ctx, uint64_t ticket, const uint32_t *clock),
                                void *ctx, earl_error *err);

#endif
