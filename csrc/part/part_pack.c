/*
 * part_pack.c - earl_ghosts_pack / earl_ghosts_unpack: ghost records in a
 * narrow byte stream, for the analysis in turn, which writes every part's
 * ghosts to a scratch folder and reads them back once.
 *
 * An earl_ghost is 80 bytes so that it can travel as it is between the
 * MPI processes of the analysis in parts; most of it is defaults (a
 * region's ENTER uses its time, position, location and region) or small
 * numbers.  Written as they are, the ghosts were three quarters of the bytes
 * the analysis in turn wrote and read (0.57 ghosts per own event on a 2D
 * halo exchange, 45 of the 59 bytes per event).  Packed, a record is:
 *
 *   kind                    one byte
 *   mask                    varint: which fields differ from their default
 *                           (the value earl_part_export leaves in a field its
 *                           kind does not use), one bit per field of FIELDS
 *   position, time          zigzag varints of the difference to the previous
 *                           record's (ghosts come sorted by location and
 *                           position: small steps)
 *   the fields of the mask  varints, zigzag for signed ones; the partner as
 *                           the difference to the record's position, the
 *                           location as the difference to the previous one
 *
 * a few bytes for an ENTER or LEAVE, under 20 for a message record (8.8 on
 * average over the ghosts of a 2D halo exchange).  Every
 * field travels, defaults are only left out: unpacking gives the records
 * back bit for bit, whatever they hold.  One stream holds one run of
 * records (a part's ghosts from one other part); the state of the deltas
 * starts at zero with each stream, so a stream is read from its start, record
 * after record (part_unpacker: whole, or a location at a time by
 * earl_part_add_packed).
 */
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "earl_part.h"
#include "part_internal.h"

/* The optional fields, in mask order. */
enum {
    F_LOCATION,  /* the location changes: delta to the previous record's */
    F_PARTNER,   /* partner >= 0: delta to position; -1 is the default */
    F_BYTES,
    F_REQUEST,
    F_REF,
    F_PEER,
    F_PEER_RANK,
    F_TAG,
    F_REQ_SOURCE,
    F_REQ_TAG,
    F_SEQ,
    F_MEMBERS,
    F_RESERVED,
    F_PARTNER_RAW, /* a negative partner other than -1: as it is */
};

static inline uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline uint8_t *put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* A varint from [*p, end); 0 when it runs past end or past 64 bits. */
static inline int get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && q < end; shift += 7) {
        uint8_t b = *q++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *v = r;
            return 1;
        }
    }
    return 0;
}

static uint8_t *pack_one(uint8_t *p, const earl_ghost *g, const earl_ghost *prev)
{
    uint32_t mask = 0;
    mask |= (uint32_t)(g->location != prev->location) << F_LOCATION;
    if (g->partner != -1)
        mask |= g->partner >= 0 ? 1u << F_PARTNER : 1u << F_PARTNER_RAW;
    mask |= (uint32_t)(g->bytes != 0) << F_BYTES;
    mask |= (uint32_t)(g->request != 0) << F_REQUEST;
    mask |= (uint32_t)(g->ref != EARL_UNDEFINED_REF) << F_REF;
    mask |= (uint32_t)(g->peer != EARL_NONE) << F_PEER;
    mask |= (uint32_t)(g->peer_rank != EARL_UNDEFINED_REF) << F_PEER_RANK;
    mask |= (uint32_t)(g->tag != 0) << F_TAG;
    mask |= (uint32_t)(g->requested_source != EARL_REQUESTED_UNKNOWN) << F_REQ_SOURCE;
    mask |= (uint32_t)(g->requested_tag != EARL_REQUESTED_UNKNOWN) << F_REQ_TAG;
    mask |= (uint32_t)(g->seq != 0) << F_SEQ;
    mask |= (uint32_t)(g->members != 0) << F_MEMBERS;
    mask |= (uint32_t)(g->reserved[0] || g->reserved[1] || g->reserved[2]) << F_RESERVED;
    *p++ = g->kind;
    p = put(p, mask);
    p = put(p, zigzag((int64_t)(g->position - prev->position)));
    p = put(p, zigzag((int64_t)(g->time - prev->time)));
    if (mask & 1u << F_LOCATION)
        p = put(p, zigzag((int64_t)g->location - (int64_t)prev->location));
    if (mask & 1u << F_PARTNER)
        p = put(p, zigzag((int64_t)((uint64_t)g->partner - g->position)));
    if (mask & 1u << F_PARTNER_RAW)
        p = put(p, zigzag(g->partner));
    if (mask & 1u << F_BYTES)
        p = put(p, g->bytes);
    if (mask & 1u << F_REQUEST)
        p = put(p, g->request);
    if (mask & 1u << F_REF)
        p = put(p, g->ref);
    if (mask & 1u << F_PEER)
        p = put(p, zigzag(g->peer));
    if (mask & 1u << F_PEER_RANK)
        p = put(p, g->peer_rank);
    if (mask & 1u << F_TAG)
        p = put(p, g->tag);
    if (mask & 1u << F_REQ_SOURCE)
        p = put(p, zigzag(g->requested_source));
    if (mask & 1u << F_REQ_TAG)
        p = put(p, zigzag(g->requested_tag));
    if (mask & 1u << F_SEQ)
        p = put(p, g->seq);
    if (mask & 1u << F_MEMBERS)
        p = put(p, g->members);
    if (mask & 1u << F_RESERVED) {
        memcpy(p, g->reserved, sizeof g->reserved);
        p += sizeof g->reserved;
    }
    return p;
}

/* ---- a growing stream (part_internal.h) ---------------------------------------- */

int part_packer_init(part_packer *pk, size_t expected)
{
    memset(pk, 0, sizeof *pk);
    /* a first guess of 24 bytes a record, grown when records run longer */
    pk->cap = expected * 24 + PART_MAX_PACKED;
    pk->bytes = malloc(pk->cap);
    return pk->bytes ? 0 : -1;
}

void part_packer_restart(part_packer *pk)
{
    memset(&pk->prev, 0, sizeof pk->prev);
}

int part_packer_add(part_packer *pk, const earl_ghost *g)
{
    if (pk->cap - pk->used < PART_MAX_PACKED) {
        size_t more = pk->cap + pk->cap / 2 + PART_MAX_PACKED;
        uint8_t *grown = realloc(pk->bytes, more);
        if (!grown)
            return -1;
        pk->bytes = grown;
        pk->cap = more;
    }
    pk->used = (size_t)(pack_one(pk->bytes + pk->used, g, &pk->prev) - pk->bytes);
    pk->prev = *g;
    return 0;
}

uint8_t *part_packer_take(part_packer *pk, size_t *bytes)
{
    uint8_t *fit = realloc(pk->bytes, pk->used ? pk->used : 1); /* the guess's slack back */
    uint8_t *out = fit ? fit : pk->bytes;
    *bytes = pk->used;
    memset(pk, 0, sizeof *pk);
    return out;
}

void part_packer_free(part_packer *pk)
{
    free(pk->bytes);
    memset(pk, 0, sizeof *pk);
}

earl_status earl_ghosts_pack(const earl_ghost *records, size_t n, uint8_t **out, size_t *bytes,
                             earl_error *err)
{
    *out = NULL;
    *bytes = 0;
    part_packer pk;
    if (part_packer_init(&pk, n) != 0)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory packing ghost records");
    for (size_t k = 0; k < n; k++)
        if (part_packer_add(&pk, &records[k]) != 0) {
            part_packer_free(&pk);
            return earl_fail(err, EARL_ERR_NOMEM, "out of memory packing ghost records");
        }
    *out = part_packer_take(&pk, bytes);
    return EARL_OK;
}

/* One record from [*p, end) after prev; 0 when the stream ends inside it. */
static int unpack_one(const uint8_t **p, const uint8_t *end, earl_ghost *g,
                      const earl_ghost *prev)
{
    uint64_t mask, v;
    if (*p >= end)
        return 0;
    memset(g, 0, sizeof *g);
    g->kind = *(*p)++;
    if (!get(p, end, &mask) || mask >> (F_PARTNER_RAW + 1))
        return 0;
    if (!get(p, end, &v))
        return 0;
    g->position = prev->position + (uint64_t)unzigzag(v);
    if (!get(p, end, &v))
        return 0;
    g->time = prev->time + (uint64_t)unzigzag(v);
    g->location = prev->location;
    g->partner = -1;
    g->ref = EARL_UNDEFINED_REF;
    g->peer = EARL_NONE;
    g->peer_rank = EARL_UNDEFINED_REF;
    g->requested_source = g->requested_tag = EARL_REQUESTED_UNKNOWN;
#define FIELD(bit, assign)                                                                     \
    if (mask & 1u << (bit)) {                                                                  \
        if (!get(p, end, &v))                                                                  \
            return 0;                                                                          \
        assign;                                                                                \
    }
    FIELD(F_LOCATION, g->location = (int32_t)((int64_t)prev->location + unzigzag(v)))
    FIELD(F_PARTNER, g->partner = (int64_t)(g->position + (uint64_t)unzigzag(v)))
    FIELD(F_PARTNER_RAW, g->partner = unzigzag(v))
    FIELD(F_BYTES, g->bytes = v)
    FIELD(F_REQUEST, g->request = v)
    FIELD(F_REF, g->ref = (uint32_t)v)
    FIELD(F_PEER, g->peer = (int32_t)unzigzag(v))
    FIELD(F_PEER_RANK, g->peer_rank = (uint32_t)v)
    FIELD(F_TAG, g->tag = (uint32_t)v)
    FIELD(F_REQ_SOURCE, g->requested_source = (int32_t)unzigzag(v))
    FIELD(F_REQ_TAG, g->requested_tag = (int32_t)unzigzag(v))
    FIELD(F_SEQ, g->seq = (uint32_t)v)
    FIELD(F_MEMBERS, g->members = (uint32_t)v)
#undef FIELD
    if (mask & 1u << F_RESERVED) {
        if (end - *p < (ptrdiff_t)sizeof g->reserved)
            return 0;
        memcpy(g->reserved, *p, sizeof g->reserved);
        *p += sizeof g->reserved;
    }
    return 1;
}

/* ---- a stream read back (part_internal.h) ---------------------------------------- */

void part_unpacker_init(part_unpacker *u, const uint8_t *bytes, size_t size, size_t n)
{
    memset(u, 0, sizeof *u);
    u->p = bytes;
    u->end = bytes + size;
    u->left = n;
}

int part_unpacker_next(part_unpacker *u, earl_ghost *g)
{
    if (!u->left)
        return 0;
    if (!unpack_one(&u->p, u->end, g, &u->prev))
        return -1;
    u->prev = *g;
    u->left--;
    return 1;
}

earl_status earl_ghosts_unpack(const uint8_t *packed, size_t bytes, earl_ghost *out, size_t n,
                               earl_error *err)
{
    part_unpacker u;
    part_unpacker_init(&u, packed, bytes, n);
    for (size_t k = 0; k < n; k++)
        if (part_unpacker_next(&u, &out[k]) < 0)
            return earl_fail(err, EARL_ERR_INVALID, "packed ghost records: record %zu of %zu "
                             "is cut short or damaged (%zu bytes)", k, n, bytes);
    if (!part_unpacker_done(&u))
        return earl_fail(err, EARL_ERR_INVALID, "packed ghost records: %zu bytes left after "
                         "the %zu records", (size_t)(u.end - u.p), n);
    return EARL_OK;
}
