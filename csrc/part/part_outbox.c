/*
 * part_outbox.c - what the parts of a replay send each other (earl_outbox,
 * earl_exports in earl_part.h): the happened-before replay (csrc/hb) and the
 * matches-before replay (csrc/races) both produce clocks that other parts
 * wait for, under tickets those parts gave out.  The exports say who waits
 * for what; an outbox packs, round by round, the clocks produced for each
 * part.  One mechanism for both replays.
 */
#include <stdlib.h>
#include <string.h>

#include "part_outbox.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/sorted.h"

/* One export: what `key` names goes to `part` under `ticket`. */
struct earl_export {
    int64_t key;
    int32_t part;
    uint64_t ticket;
};

static int by_key(const void *a, const void *b)
{
    const struct earl_export *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return (x->ticket > y->ticket) - (x->ticket < y->ticket);
}

earl_status earl_exports_add(earl_exports *x, int64_t key, int32_t part, uint64_t ticket,
                             earl_error *err)
{
    if (part < 0)
        return earl_fail(err, EARL_ERR_INVALID, "clocks for part %d: no such part", (int)part);
    if (EARL_GROW(x->items, x->cap, x->n + 1) != 0)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the clocks a part sends");
    x->items[x->n++] = (struct earl_export){key, part, ticket};
    x->sorted = 0;
    return EARL_OK;
}

void earl_exports_free(earl_exports *x)
{
    free(x->items);
    memset(x, 0, sizeof *x);
}

void earl_outbox_free(earl_outbox *o)
{
    if (!o)
        return;
    free(o->offset);
    free(o->records);
    memset(o, 0, sizeof *o);
}

/* The exports below a key (sorted by key). */
typedef struct export_bound {
    const struct earl_export *items;
    int64_t key;
} export_bound;

static int export_before(const void *ctx, size_t k)
{
    const export_bound *b = ctx;
    return b->items[k].key < b->key;
}

/* The exports of key: [*lo, return). */
static size_t exports_of(const earl_exports *x, int64_t key, size_t *lo)
{
    export_bound b = {x->items, key};
    size_t hi = *lo = earl_partition_point(0, x->n, export_before, &b);
    while (hi < x->n && x->items[hi].key == key)
        hi++;
    return hi;
}

earl_status earl_outbox_build(earl_exports *x, size_t n_parts, size_t n, const int64_t *keys,
                              size_t clock_bytes, void (*fill)(void *ctx, size_t k, uint8_t *dst),
                              void *ctx, earl_outbox *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!x->sorted) {
        if (x->n)
            qsort(x->items, x->n, sizeof *x->items, by_key);
        x->sorted = 1;
    }
    size_t rb = sizeof(uint64_t) + clock_bytes;
    out->n_parts = n_parts;
    out->record_bytes = rb;
    out->offset = calloc(n_parts + 2, sizeof *out->offset);
    if (!out->offset)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the clocks a part sends");
    /* count per part (offset[q + 2]), then the starts (offset[q + 1]) */
    for (size_t k = 0; k < n; k++) {
        size_t lo, hi = exports_of(x, keys[k], &lo);
        for (size_t e = lo; e < hi; e++) {
            if ((size_t)x->items[e].part >= n_parts) {
                earl_outbox_free(out);
                return earl_fail(err, EARL_ERR_INVALID, "clocks for part %d of %zu parts",
                                 (int)x->items[e].part, n_parts);
            }
            out->offset[x->items[e].part + 2]++;
        }
    }
    for (size_t q = 0; q < n_parts; q++)
        out->offset[q + 2] += out->offset[q + 1];
    out->records = malloc(out->offset[n_parts + 1] * rb + 1);
    if (!out->records) {
        earl_outbox_free(out);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the clocks a part sends");
    }
    /* offset[q + 1] is where part q's next record goes; it ends at q's end */
    for (size_t k = 0; k < n; k++) {
        size_t lo, hi = exports_of(x, keys[k], &lo);
        for (size_t e = lo; e < hi; e++) {
            uint8_t *r = out->records + out->offset[x->items[e].part + 1]++ * rb;
            memcpy(r, &x->items[e].ticket, sizeof(uint64_t));
            fill(ctx, k, r + sizeof(uint64_t));
        }
    }
    return EARL_OK;
}

earl_status earl_outbox_receive(const void *records, size_t bytes, uint32_t width,
                                size_t n_needs,
                                int (*take)(void *ctx, uint64_t ticket, const uint32_t *clock),
                                void *ctx, earl_error *err)
{
    size_t rb = sizeof(uint64_t) + (size_t)width * sizeof(uint32_t);
    if (bytes % rb)
        return earl_fail(err, EARL_ERR_INVALID, "clock records of %zu bytes: not a multiple of "
                         "the record size %zu", bytes, rb);
    /* a record's clock is not aligned for uint32_t: copied out first */
    uint32_t *clock = malloc(((size_t)width + 1) * sizeof *clock);
    if (!clock)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for received clocks");
    const uint8_t *r = records;
    earl_status st = EARL_OK;
    for (size_t k = 0; k < bytes / rb && st == EARL_OK; k++, r += rb) {
        uint64_t ticket;
        memcpy(&ticket, r, sizeof ticket);
        if (ticket >= n_needs) {
            st = earl_fail(err, EARL_ERR_INVALID, "a clock record with ticket %llu: this part "
                           "gave out %zu", (unsigned long long)ticket, n_needs);
            break;
        }
        memcpy(clock, r + sizeof ticket, (size_t)width * sizeof *clock);
        if (take(ctx, ticket, clock) != 0)
            st = earl_fail(err, EARL_ERR_NOMEM, "out of memory for received clocks");
    }
    free(clock);
    return st;
}
