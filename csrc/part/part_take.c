/*
 * part_take.c - earl_part_add_packed: a part's ghosts taken from the packed
 * runs the analysis in turn reads back from its scratch folder, unpacked,
 * merged with the representatives of its collectives, folded and added, in
 * one call that runs without the interpreter.
 *
 * Pass 2 of the analysis in turn (python/earlc/parts/inturn.py) gives each
 * part the ghosts the other parts wrote for it in pass 1: one packed run per
 * other part (part_pack.c), sorted by (location, position), and the
 * representatives of its collectives, packed per location and window of
 * instances.  Made from Python, that took a call per location and step
 * (unpack, split by location, merge, fold, add) with numpy between them, on
 * the calling thread, which held the interpreter meanwhile: half of that
 * thread's time on a halo exchange, which no other core could take.
 *
 * Here a location at a time: its records are unpacked from the run (the
 * unpacker carries its deltas from one location to the next), its
 * representatives unpacked beside them and merged in front
 * (earl_ghosts_merge: theirs stay where both hold an event), the calls
 * folded when asked, and the records added (earl_part_add_ghosts).  Only one
 * location's records are wide at a time, where the Python path held one
 * other part's.  The locations only representatives hold come last, in
 * ascending order, as the Python path added them: the trace made is the
 * same, record for record.
 */
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/grow.h"
#include "base/sorted.h"
#include "earl_part.h"
#include "part_internal.h"

/* What one call works in: a location's records, its representatives, the
 * merge's output, and the result growing. */
typedef struct taker {
    earl_reading *reading;
    const earl_packed_run *reps;
    size_t n_reps, n_ghosts;
    unsigned flags;
    unsigned char *rep_taken;          /* per representatives' run */
    earl_ghost *records, *rep, *merged;
    size_t records_cap, rep_cap, merged_cap;
    const earl_ghost **runs;           /* the merge's runs: a location's reps, then its ghosts */
    size_t *lengths, *at;
    size_t runs_cap;                   /* of runs, lengths and at */
    size_t locations_cap, offsets_cap, positions_cap;
    earl_added_ghosts *out;
} taker;

static earl_status nomem(earl_error *err)
{
    return earl_fail(err, EARL_ERR_NOMEM, "out of memory adding packed ghost records");
}

static earl_status damaged(taker *t, size_t run, size_t n, earl_error *err)
{
    t->out->damaged = run;
    return earl_fail(err, EARL_ERR_INVALID, "packed ghost records: %s run %zu of %zu records "
                     "is cut short or damaged",
                     run < t->n_ghosts ? "the ghosts'" : "the representatives'",
                     run < t->n_ghosts ? run : run - t->n_ghosts, n);
}

/* A search of the representatives' runs (ascending by location) for loc. */
typedef struct rep_bound {
    const earl_packed_run *reps;
    int32_t loc;
} rep_bound;

static int rep_before(const void *ctx, size_t k)
{
    const rep_bound *b = ctx;
    return b->reps[k].location < b->loc;
}

/* The first of the representatives' runs of location loc (n_reps: none). */
static size_t first_rep(const taker *t, int32_t loc)
{
    rep_bound b = {t->reps, loc};
    return earl_partition_point(0, t->n_reps, rep_before, &b);
}

/* Unpack the representatives' runs [a, b) into t->rep, one after another,
 * and list them as the merge's first runs. */
static earl_status unpack_reps(taker *t, size_t a, size_t b, earl_error *err)
{
    size_t total = 0;
    for (size_t r = a; r < b; r++)
        total += t->reps[r].n;
    if (EARL_GROW(t->rep, t->rep_cap, total ? total : 1) != 0)
        return nomem(err);
    if (b - a + 1 > t->runs_cap) {
        size_t cap = earl_grow_capacity(t->runs_cap, b - a + 1), was = t->runs_cap;
        if (EARL_GROW(t->runs, was, cap) != 0)
            return nomem(err);
        was = t->runs_cap;
        if (EARL_GROW(t->lengths, was, cap) != 0)
            return nomem(err);
        was = t->runs_cap;
        if (EARL_GROW(t->at, was, cap) != 0)
            return nomem(err);
        t->runs_cap = cap;
    }
    size_t k = 0;
    for (size_t r = a; r < b; r++) {
        const earl_packed_run *run = &t->reps[r];
        if (earl_ghosts_unpack(run->bytes, run->size, t->rep + k, run->n, NULL) != EARL_OK)
            return damaged(t, t->n_ghosts + r, run->n, err);
        for (size_t i = 0; i < run->n; i++)
            if (t->rep[k + i].location != run->location)
                return damaged(t, t->n_ghosts + r, run->n, err);
        t->runs[r - a] = t->rep + k;
        t->lengths[r - a] = run->n;
        k += run->n;
    }
    return EARL_OK;
}

/* Note the kept records' location and positions in the result. */
static earl_status note(taker *t, int32_t loc, const earl_ghost *g, size_t n, earl_error *err)
{
    earl_added_ghosts *o = t->out;
    size_t have = o->offset[o->n_locations];
    if (EARL_GROW(o->location, t->locations_cap, o->n_locations + 1) != 0 ||
        EARL_GROW(o->offset, t->offsets_cap, o->n_locations + 2) != 0 ||
        EARL_GROW(o->position, t->positions_cap, have + n ? have + n : 1) != 0)
        return nomem(err);
    for (size_t k = 0; k < n; k++)
        o->position[have + k] = g[k].position;
    o->location[o->n_locations++] = loc;
    o->offset[o->n_locations] = have + n;
    return EARL_OK;
}

/* One location's n records (in t->records; none for a location only
 * representatives hold): merged with its representatives, folded, added. */
static earl_status take(taker *t, int32_t loc, size_t n, earl_error *err)
{
    earl_ghost *g = t->records;
    size_t a = first_rep(t, loc), b = a;
    while (b < t->n_reps && t->reps[b].location == loc)
        t->rep_taken[b++] = 1;
    if (b > a) {
        earl_status st = unpack_reps(t, a, b, err);
        if (st != EARL_OK)
            return st;
        size_t runs = b - a, total = n;
        for (size_t r = 0; r < runs; r++)
            total += t->lengths[r];
        t->runs[runs] = t->records;
        t->lengths[runs] = n;
        if (EARL_GROW(t->merged, t->merged_cap, total ? total : 1) != 0)
            return nomem(err);
        st = earl_ghosts_merge(t->runs, t->lengths, runs + 1, t->at, t->merged, &n, err);
        if (st != EARL_OK)
            return st;
        g = t->merged;
    }
    t->out->received += n;
    if (t->flags & EARL_ADD_FOLD)
        n = earl_part_fold_calls(g, n);
    earl_status st = earl_part_add_ghosts(t->reading, g, n, err);
    if (st != EARL_OK)
        return st;
    return note(t, loc, g, n, err);
}

/* The ghost run r, a location at a time. */
static earl_status take_run(taker *t, size_t r, const earl_packed_run *run, earl_error *err)
{
    part_unpacker u;
    part_unpacker_init(&u, run->bytes, run->size, run->n);
    earl_ghost next;
    int got = part_unpacker_next(&u, &next);
    while (got > 0) {
        int32_t loc = next.location;
        size_t n = 0;
        do {
            if (EARL_GROW(t->records, t->records_cap, n + 1) != 0)
                return nomem(err);
            t->records[n++] = next;
        } while ((got = part_unpacker_next(&u, &next)) > 0 && next.location == loc);
        if (got < 0)
            break;
        earl_status st = take(t, loc, n, err);
        if (st != EARL_OK)
            return st;
    }
    if (got < 0 || !part_unpacker_done(&u))
        return damaged(t, r, run->n, err);
    return EARL_OK;
}

static void taker_free(taker *t)
{
    free(t->rep_taken);
    free(t->records);
    free(t->rep);
    free(t->merged);
    free(t->runs);
    free(t->lengths);
    free(t->at);
}

void earl_added_ghosts_free(earl_added_ghosts *added)
{
    if (!added)
        return;
    free(added->location);
    free(added->offset);
    free(added->position);
    memset(added, 0, sizeof *added);
    added->damaged = SIZE_MAX;
}

earl_status earl_part_add_packed(earl_reading *reading, const earl_packed_run *ghosts,
                                 size_t n_ghosts, const earl_packed_run *reps, size_t n_reps,
                                 unsigned flags, earl_added_ghosts *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    out->damaged = SIZE_MAX;
    if (flags & ~EARL_ADD_FOLD)
        return earl_fail(err, EARL_ERR_INVALID, "adding packed ghosts: unknown flags %#x",
                         flags);
    for (size_t r = 1; r < n_reps; r++)
        if (reps[r].location < reps[r - 1].location)
            return earl_fail(err, EARL_ERR_INVALID, "adding packed ghosts: the representatives' "
                             "run %zu (location %d) comes after location %d", r,
                             reps[r].location, reps[r - 1].location);
    taker t = {.reading = reading, .reps = reps, .n_reps = n_reps, .n_ghosts = n_ghosts,
               .flags = flags, .out = out};
    t.rep_taken = calloc(n_reps ? n_reps : 1, 1);
    if (!t.rep_taken || EARL_GROW(out->offset, t.offsets_cap, 1) != 0) {
        taker_free(&t);
        return nomem(err);
    }
    out->offset[0] = 0;
    earl_status st = EARL_OK;
    for (size_t r = 0; r < n_ghosts && st == EARL_OK; r++)
        st = take_run(&t, r, &ghosts[r], err);
    /* the locations only representatives hold, ascending */
    for (size_t r = 0; r < n_reps && st == EARL_OK; r++)
        if (!t.rep_taken[r])
            st = take(&t, reps[r].location, 0, err);
    taker_free(&t);
    return st;
}
