/*
 * part_ghosts.c - earl_part_add_ghosts: other parts' events, received as
 * earl_ghost records, appended to the reading buffers of their (not own)
 * locations, as the reader would have appended them had it read only
 * those events.  The merge (order.c) then places them in the total order
 * beside the own events; a ghost's index on its location is its rank among
 * the location's ghosts, and a request's other half, given by its position
 * in the whole trace, becomes that index.  A collective end's sequence
 * number and the members it stands for (earl_ghost.seq, .members) are noted
 * with the reading, which puts them in the trace's collective table once
 * the merge gave the event its row.
 *
 * earl_part_fold_calls, before, drops the LEAVEs of ghost message calls that
 * the EARL layer can close at the next ENTER instead (earl_part.h): a
 * location is folded only when its records do not nest, which one look at
 * the depth after each record tells.
 */
#include <stdlib.h>
#include <string.h>

#include "base/sorted.h"
#include "earl_part.h"
#include "internal.h"

static earl_status bad(earl_error *err, size_t k, const earl_ghost *g, const char *why)
{
    return earl_fail(err, EARL_ERR_INVALID,
                     "ghost record %zu (location %d, position %llu, kind %u): %s", k,
                     g->location, (unsigned long long)g->position, g->kind, why);
}

/* Make buffer b hold n more events and rows of family f (count more). */
static int reserve(loc_events *b, size_t events, const size_t rows[N_FAMILIES])
{
    earl_colset core = {3, {{(void **)&b->time, sizeof *b->time}, {(void **)&b->kind, 1},
                            {(void **)&b->payload, sizeof *b->payload}}};
    if (earl_colset_reserve_scratch(&core, &b->cap, b->n + events) != 0)
        return -1;
    for (int f = EARL_FAMILY_MSG; f < N_FAMILIES; f++) {
        if (!rows[f])
            continue;
        earl_colset s;
        side_tables_row_columns(&b->tables, (earl_family)f, &s);
        size_t have = *side_tables_count(&b->tables, (earl_family)f);
        if (earl_colset_reserve_scratch(&s, &b->tables.cap[f], have + rows[f]) != 0)
            return -1;
    }
    return 0;
}

static void append(loc_events *b, const earl_ghost *g)
{
    size_t i = b->n++;
    b->time[i] = g->time;
    b->kind[i] = g->kind;
    b->payload[i] = EARL_UNDEFINED_REF;
    if (earl_kind_has_region(g->kind)) {
        b->payload[i] = g->ref;
    } else if (earl_kind_family(g->kind) == EARL_FAMILY_MSG) {
        earl_msg_table *m = &b->tables.msg;
        size_t r = m->count++;
        b->payload[i] = (uint32_t)r;
        m->peer[r] = g->peer;
        m->peer_rank[r] = g->peer_rank;
        m->comm[r] = g->ref;
        m->tag[r] = g->tag;
        m->bytes[r] = g->bytes;
        m->request[r] = g->request;
        m->partner[r] = EARL_EID32_NONE; /* linked below */
        if (m->requested_source) {
            m->requested_source[r] = g->requested_source;
            m->requested_tag[r] = g->requested_tag;
        }
    } else if (g->kind == EARL_MPI_COLLECTIVE_END) {
        earl_coll_table *c = &b->tables.coll;
        size_t r = c->count++;
        b->payload[i] = (uint32_t)r;
        c->comm[r] = g->ref;
        c->root[r] = g->peer;
        c->root_rank[r] = g->peer_rank;
        c->op[r] = (uint8_t)g->tag;
        c->sent[r] = g->bytes;
        c->received[r] = g->request;
    }
}

/* The kinds that travel as ghosts (earl_part.h). */
static int travels(uint8_t kind)
{
    switch (kind) {
    case EARL_ENTER: case EARL_LEAVE: case EARL_MPI_SEND: case EARL_MPI_ISEND:
    case EARL_MPI_ISEND_COMPLETE: case EARL_MPI_IRECV_REQUEST: case EARL_MPI_IRECV:
    case EARL_MPI_RECV: case EARL_MPI_COLLECTIVE_BEGIN: case EARL_MPI_COLLECTIVE_END:
        return 1;
    default:
        return 0;
    }
}

/* Check the records of one location, [k0, k1), and count their rows. */
static earl_status check_run(const earl_ghost *g, size_t k0, size_t k1, const loc_events *b,
                             size_t rows[N_FAMILIES], earl_error *err)
{
    memset(rows, 0, N_FAMILIES * sizeof *rows);
    if (b->n)
        return bad(err, k0, &g[k0], "its location's ghosts came already");
    for (size_t k = k0; k < k1; k++) {
        if (!travels(g[k].kind))
            return bad(err, k, &g[k], "no kind that travels between parts");
        if (k > k0 && g[k].position <= g[k - 1].position)
            return bad(err, k, &g[k], "positions of a location must ascend");
        if (k > k0 && g[k].time < g[k - 1].time)
            return bad(err, k, &g[k], "timestamps of a location must not decrease");
        rows[earl_kind_family(g[k].kind)]++;
    }
    return EARL_OK;
}

/* Request halves by position: the records [k0, k1) are the location's
 * events from index `base` on, ascending by position (check_run); each
 * partner position becomes an index.  The other half of a request is
 * usually a few records away: searched outward from the record itself
 * (a galloping search over the run's positions), where a binary search
 * over the whole run missed the cache at every step, the most of adding the
 * ghosts of a large part.  -1 when out of memory for the positions. */
static int link_requests(loc_events *b, size_t base, const earl_ghost *g, size_t k0, size_t k1)
{
    earl_msg_table *m = &b->tables.msg;
    size_t n = k1 - k0;
    uint64_t *position = NULL;
    for (size_t k = k0; k < k1; k++) {
        if (g[k].partner < 0 || earl_kind_family(g[k].kind) != EARL_FAMILY_MSG)
            continue;
        if (!position) {
            position = malloc(n * sizeof *position);
            if (!position)
                return -1;
            for (size_t i = 0; i < n; i++)
                position[i] = g[k0 + i].position;
        }
        size_t at = earl_u64_gallop_lower_bound(position, n, (uint64_t)g[k].partner, k - k0);
        if (at < n && position[at] == (uint64_t)g[k].partner)
            m->partner[b->payload[base + (k - k0)]] = (earl_eid32)(base + at);
    }
    free(position);
    return 0;
}

earl_status earl_part_add_ghosts(earl_reading *reading, const earl_ghost *records, size_t n,
                                 earl_error *err)
{
    defs_store *defs;
    size_t n_locs;
    loc_events *bufs = reading_buffers(reading, (const defs_store **)&defs, &n_locs);
    for (size_t k0 = 0, k1; k0 < n; k0 = k1) {
        earl_loc loc = records[k0].location;
        if (loc < 0 || (size_t)loc >= n_locs)
            return bad(err, k0, &records[k0], "no such location");
        earl_location *l = &defs->locations[loc];
        if (l->held == EARL_HELD_ALL)
            return bad(err, k0, &records[k0], "its location is own, not a ghost");
        for (k1 = k0 + 1; k1 < n && records[k1].location == loc; k1++)
            ;
        loc_events *b = &bufs[loc];
        size_t rows[N_FAMILIES];
        earl_status st = check_run(records, k0, k1, b, rows, err);
        if (st != EARL_OK)
            return st;
        b->defs = defs;
        b->tables.msg_requested = defs_have_requested(defs);
        if (reserve(b, k1 - k0, rows) != 0)
            return earl_fail(err, EARL_ERR_NOMEM, "out of memory adding ghost events");
        size_t base = b->n;
        for (size_t k = k0; k < k1; k++) {
            append(b, &records[k]);
            if (records[k].kind == EARL_MPI_COLLECTIVE_END && records[k].members &&
                reading_note_ghost_coll(reading, loc, base + (k - k0), records[k].seq,
                                        records[k].members) != 0)
                return earl_fail(err, EARL_ERR_NOMEM, "out of memory adding ghost events");
        }
        if (link_requests(b, base, records, k0, k1) != 0)
            return earl_fail(err, EARL_ERR_NOMEM, "out of memory adding ghost events");
        l->held = records[k0].reserved[0] & EARL_GHOST_FOLDED ? EARL_HELD_GHOSTS_FOLDED
                                                              : EARL_HELD_GHOSTS;
        l->events = b->n;
    }
    return EARL_OK;
}

/* ---- folding the message calls ---------------------------------------------- */

/* Do the records [k0, k1) of one location not nest: every call left, no
 * call inside another, no event outside a call?  Then a call ends where the
 * next begins, and its LEAVE can go. */
static int flat(const earl_ghost *g, size_t k0, size_t k1)
{
    int depth = 0;
    for (size_t k = k0; k < k1; k++) {
        if (g[k].kind == EARL_ENTER) {
            if (depth++)
                return 0;
        } else if (g[k].kind == EARL_LEAVE) {
            if (!depth--)
                return 0;
        } else if (!depth) {
            return 0;
        }
    }
    return depth == 0;
}

/* Fold the flat location [k0, k1) into records from w on; returns the new
 * end.  A call's LEAVE goes when the call holds message events only (a
 * collective call's LEAVE, and MPI_Init's and MPI_Finalize's, are read by
 * the wait states) and an ENTER follows (a location's last call stays
 * closed, as the reader leaves it). */
static size_t fold_run(earl_ghost *g, size_t k0, size_t k1, size_t w)
{
    size_t start = w;
    int messages = 0, others = 0, dropped = 0;
    for (size_t k = k0; k < k1; k++) {
        uint8_t kind = g[k].kind;
        if (kind == EARL_ENTER) {
            messages = others = 0;
        } else if (kind == EARL_LEAVE) {
            if (messages && !others && k + 1 < k1 && g[k + 1].kind == EARL_ENTER) {
                dropped = 1;
                continue;
            }
        } else if (earl_kind_family(kind) == EARL_FAMILY_MSG) {
            messages = 1;
        } else {
            others = 1;
        }
        g[w++] = g[k];
    }
    for (size_t k = start; dropped && k < w; k++)
        g[k].reserved[0] |= EARL_GHOST_FOLDED;
    return w;
}

size_t earl_part_fold_calls(earl_ghost *records, size_t n)
{
    size_t w = 0;
    for (size_t k0 = 0, k1; k0 < n; k0 = k1) {
        for (k1 = k0 + 1; k1 < n && records[k1].location == records[k0].location; k1++)
            ;
        if (flat(records, k0, k1)) {
            w = fold_run(records, k0, k1, w);
        } else {
            memmove(records + w, records + k0, (k1 - k0) * sizeof *records);
            w += k1 - k0;
        }
    }
    return w;
}
