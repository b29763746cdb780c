/*
 * test_part.c - a trace opened in parts (earl_part.h): each part reads its
 * own locations, exports the ghosts the others need, adds the ghosts it
 * receives and orders its events.  On generated traces of every kind, split
 * into 2 and 3 parts:
 *   - a part's own events are the whole trace's events of those locations,
 *     in the same order and with the same payload;
 *   - every own receive is matched (EARL layer) to a send with the same
 *     location, timestamp and position as in the whole trace, and every own
 *     send to the same receive, and every collective instance with an own
 *     member has all its members;
 *   - the exports depend only on the trace and the partition.
 * And bad ghost records are refused, each with a message naming the record;
 * ghost records packed narrow (earl_ghosts_pack) come back bit for bit, and
 * so do those packed as they are exported (earl_part_export_packed,
 * part_test_util.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "earl.h"
#include "earl_part.h"
#include "earl_states.h"
#include "earl_synth.h"
#include "part_test_util.h"

static earl_error err;

static void ok(earl_status st)
{
    if (st != EARL_OK)
        fail_msg("status %d: %s", (int)st, err.message);
}

/* Records packed (earl_ghosts_pack) and unpacked are the same bytes; the
 * exports of the generated programs pack to less than a third. */
static void check_packed(const earl_ghost *records, size_t n)
{
    uint8_t *packed;
    size_t bytes;
    ok(earl_ghosts_pack(records, n, &packed, &bytes, &err));
    if (n)
        assert_true(bytes * 3 < n * sizeof(earl_ghost));
    earl_ghost *back = malloc((n ? n : 1) * sizeof *back);
    assert_non_null(back);
    ok(earl_ghosts_unpack(packed, bytes, back, n, &err));
    if (n)
        assert_memory_equal(records, back, n * sizeof *back);
    free(back);
    free(packed);
}

/* Pointer ptr of part p's event e (the whole trace's event w) is the whole
 * trace's: absent in both, or the same event.  A LEAVE pointer may be absent
 * in the part alone where leave_folded says the event is a ghost ENTER,
 * whose LEAVE was folded away (earl_part_fold_calls). */
static void check_same_pointer(const earl_trace *whole, const ptu_parts *ps, int p, earl_states *st,
                               earl_states *ws, earl_pointer ptr, earl_eid e, earl_eid w,
                               int leave_folded)
{
    earl_eid a = earl_states_ptr(st, ptr, e);
    earl_eid b = earl_states_ptr(ws, ptr, w);
    if (a < 0 && b >= 0 && leave_folded && ptr == EARL_PTR_LEAVE)
        return;
    if (b < 0) {
        assert_true(a < 0);
        return;
    }
    assert_true(a >= 0);
    assert_int_equal(ptu_whole_event(whole, ps, p, a), b);
}

/* Parts whose ghosts' message calls were folded (earl_part_fold_calls):
 * every own event has the whole trace's partners, as unfolded; every ghost
 * is a whole trace's event of its kind, and a ghost inside a call has the
 * whole trace's enterptr (its call); a ghost ENTER that lost its LEAVE has
 * none, any other keeps the whole trace's.  Returns how many LEAVEs were folded away. */
static size_t check_folded(const earl_trace *whole, earl_states *ws, const char *path,
                           int n)
{
    const earl_events *we = earl_trace_events(whole);
    int32_t part_of[64];
    ptu_parts ps, plain;
    ptu_open_parts_fold(path, n, part_of, &ps, 1);
    ptu_open_parts(path, n, part_of, &plain);
    size_t folded = 0;
    earl_states *plain_states[PTU_MAX_PARTS];
    for (int p = 0; p < n; p++)
        ok(earl_states_build(plain.trace[p], NULL, &plain_states[p], &err));
    for (int p = 0; p < n; p++) {
        const earl_events *pe = earl_trace_events(ps.trace[p]);
        folded += earl_trace_events(plain.trace[p])->count - pe->count;
        earl_states *st;
        ok(earl_states_build(ps.trace[p], NULL, &st, &err));
        for (size_t e = 0; e < pe->count; e++) {
            earl_eid w = ptu_whole_event(whole, &ps, p, (earl_eid)e);
            assert_int_equal(pe->kind[e], we->kind[w]);
            int own = part_of[pe->location[e]] == p;
            earl_pointer ptrs[] = {EARL_PTR_ENTER, EARL_PTR_LEAVE, EARL_PTR_SEND, EARL_PTR_RECV};
            if (!own && pe->kind[e] == EARL_ENTER) {
                /* a ghost call's enterptr (none, or a ghost call it is inside) as
                 * the unfolded part has it: a folded call ends at the next ENTER */
                earl_loc l = pe->location[e];
                earl_eid a = earl_states_ptr(st, EARL_PTR_ENTER, (earl_eid)e);
                earl_eid b = earl_states_ptr(plain_states[p], EARL_PTR_ENTER,
                                             ptu_local_event(&plain, p, l,
                                                             ptu_position(&ps, p, (earl_eid)e)));
                assert_int_equal(a < 0, b < 0);
                if (a >= 0)
                    assert_int_equal(ptu_local_event(&plain, p, pe->location[a],
                                                     ptu_position(&ps, p, a)), b);
            }
            for (size_t k = 0; k < (own ? 4u : 2u); k++) {
                /* a ghost's call is there, not the calls around it */
                if (!own && (ptrs[k] == EARL_PTR_ENTER) == (pe->kind[e] == EARL_ENTER))
                    continue;
                check_same_pointer(whole, &ps, p, st, ws, ptrs[k], (earl_eid)e, w,
                                   !own && pe->kind[e] == EARL_ENTER);
            }
        }
        earl_states_free(st);
    }
    for (int p = 0; p < n; p++)
        earl_states_free(plain_states[p]);
    ptu_close_parts(&plain);
    ptu_close_parts(&ps);
    return folded;
}

static void check_kind(earl_synth_kind kind, uint32_t ranks, uint32_t threads)
{
    char path[512];
    char *dir = ptu_generate(kind, ranks, threads, path, sizeof path);
    earl_trace *whole;
    ok(earl_trace_open(path, NULL, &whole, &err));
    earl_states *ws;
    ok(earl_states_build(whole, NULL, &ws, &err));
    const earl_events *we = earl_trace_events(whole);
    for (int n = 2; n <= 3; n++) {
        size_t folded = check_folded(whole, ws, path, n);
        if (kind == EARL_SYNTH_RING || kind == EARL_SYNTH_HALO)
            assert_true(folded > 0); /* their messages cross between the parts */
        int32_t part_of[64];
        ptu_parts ps;
        ptu_open_parts(path, n, part_of, &ps);
        for (int p = 0; p < n; p++) {
            const earl_trace *t = ps.trace[p];
            const earl_events *pe = earl_trace_events(t);
            earl_states *st;
            ok(earl_states_build(t, NULL, &st, &err));
            for (size_t e = 0; e < pe->count; e++) {
                earl_loc l = pe->location[e];
                earl_eid w = ptu_whole_event(whole, &ps, p, (earl_eid)e);
                assert_int_equal(pe->time[e], we->time[w]);
                assert_int_equal(pe->kind[e], we->kind[w]);
                assert_int_equal(l, we->location[w]);
                if (earl_kind_has_region(pe->kind[e]))
                    assert_int_equal(pe->region[e], we->region[w]);
                if (part_of[l] != p)
                    continue;
                /* an own event's partners are the whole trace's */
                earl_pointer ptrs[] = {EARL_PTR_SEND, EARL_PTR_RECV, EARL_PTR_ENTER, EARL_PTR_LEAVE};
                for (size_t k = 0; k < sizeof ptrs / sizeof *ptrs; k++) {
                    check_same_pointer(whole, &ps, p, st, ws, ptrs[k], (earl_eid)e, w, 0);
                }
            }
            earl_states_free(st);
        }
        /* packed narrow and unpacked: the same records, in far fewer bytes */
        for (int p = 0; p < n; p++)
            check_packed(ps.exported[p].records, ps.exported[p].offset[n]);
        /* exported again: the same bytes */
        ptu_parts again;
        int32_t part_again[64];
        ptu_open_parts(path, n, part_again, &again);
        for (int p = 0; p < n; p++) {
            assert_int_equal(ps.exported[p].offset[n], again.exported[p].offset[n]);
            assert_memory_equal(ps.exported[p].records, again.exported[p].records,
                                ps.exported[p].offset[n] * sizeof(earl_ghost));
        }
        ptu_close_parts(&again);
        ptu_close_parts(&ps);
    }
    earl_states_free(ws);
    earl_trace_close(whole);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_ring(void **s) { (void)s; check_kind(EARL_SYNTH_RING, 4, 1); }
static void test_halo(void **s) { (void)s; check_kind(EARL_SYNTH_HALO, 6, 1); }
static void test_master_worker(void **s) { (void)s; check_kind(EARL_SYNTH_MASTER_WORKER, 4, 1); }
static void test_collectives(void **s) { (void)s; check_kind(EARL_SYNTH_COLLECTIVES, 5, 1); }
static void test_hybrid(void **s) { (void)s; check_kind(EARL_SYNTH_HYBRID, 3, 2); }

/* Ghost records that cannot be added are refused, naming the record. */
static void test_bad_ghosts(void **s)
{
    (void)s;
    char path[512];
    char *dir = ptu_generate(EARL_SYNTH_RING, 3, 1, path, sizeof path);
    earl_reading *r;
    ok(earl_reading_open(path, NULL, &r, &err));
    uint8_t mask[3] = {1, 0, 0};
    ok(earl_reading_read(r, mask, &err));
    earl_ghost g[2];
    memset(g, 0, sizeof g);
    g[0].location = 0; /* own */
    g[0].kind = EARL_ENTER;
    assert_int_equal(earl_part_add_ghosts(r, g, 1, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "own"));
    g[0].location = 7; /* no such location */
    assert_int_equal(earl_part_add_ghosts(r, g, 1, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "no such location"));
    g[0].location = 1;
    g[0].kind = EARL_OMP_FORK; /* does not travel */
    assert_int_equal(earl_part_add_ghosts(r, g, 1, &err), EARL_ERR_INVALID);
    g[0].kind = EARL_ENTER;
    g[1] = g[0];
    g[0].position = 5;
    g[1].position = 3; /* positions must ascend */
    assert_int_equal(earl_part_add_ghosts(r, g, 2, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "record 1"));
    g[1].position = 6;
    ok(earl_part_add_ghosts(r, g, 2, &err));
    assert_int_equal(earl_part_add_ghosts(r, g, 2, &err), EARL_ERR_INVALID); /* twice */
    earl_reading_free(r);
    wtu_remove_tree(dir);
    free(dir);
}

/* earl_part_fold_calls drops the LEAVE of a message call followed by a call
 * on a location whose calls do not nest, and marks that location's records;
 * a location that nests, has an event outside a call or drops nothing stays
 * as it was. */
static void test_fold_calls(void **s)
{
    (void)s;
    static const struct { int32_t loc; uint8_t kind; } in[] = {
        /* location 1: flat; the LEAVEs of the Isend and the Irecv calls go, the
         * collective call's and the last call's stay */
        {1, EARL_ENTER}, {1, EARL_MPI_ISEND}, {1, EARL_LEAVE},
        {1, EARL_ENTER}, {1, EARL_MPI_IRECV_REQUEST}, {1, EARL_LEAVE},
        {1, EARL_ENTER}, {1, EARL_MPI_COLLECTIVE_BEGIN}, {1, EARL_MPI_COLLECTIVE_END},
        {1, EARL_LEAVE}, {1, EARL_ENTER}, {1, EARL_LEAVE},
        {1, EARL_ENTER}, {1, EARL_MPI_IRECV}, {1, EARL_LEAVE},
        /* location 2: a call inside another */
        {2, EARL_ENTER}, {2, EARL_MPI_ISEND}, {2, EARL_ENTER}, {2, EARL_MPI_IRECV},
        {2, EARL_LEAVE}, {2, EARL_LEAVE}, {2, EARL_ENTER}, {2, EARL_LEAVE},
        /* location 3: an event outside every call */
        {3, EARL_MPI_ISEND}, {3, EARL_ENTER}, {3, EARL_MPI_ISEND}, {3, EARL_LEAVE},
        {3, EARL_ENTER}, {3, EARL_LEAVE},
        /* location 4: one call, nothing to fold */
        {4, EARL_ENTER}, {4, EARL_MPI_SEND}, {4, EARL_LEAVE},
    };
    size_t n = sizeof in / sizeof *in;
    earl_ghost g[sizeof in / sizeof *in];
    memset(g, 0, sizeof g);
    for (size_t k = 0; k < n; k++) {
        g[k].location = in[k].loc;
        g[k].kind = in[k].kind;
        g[k].position = k;
    }
    size_t kept = earl_part_fold_calls(g, n);
    assert_int_equal(kept, n - 2);
    /* location 1 lost the records at positions 2 and 5 */
    static const uint64_t loc1[] = {0, 1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    for (size_t k = 0; k < sizeof loc1 / sizeof *loc1; k++) {
        assert_int_equal(g[k].position, loc1[k]);
        assert_int_equal(g[k].reserved[0], EARL_GHOST_FOLDED);
    }
    for (size_t k = sizeof loc1 / sizeof *loc1; k < kept; k++) {
        assert_int_equal(g[k].position, k + 2);
        assert_int_equal(g[k].reserved[0], 0);
    }
    assert_int_equal(earl_part_fold_calls(g, 0), 0);
}

/* Packing keeps every field of any record, defaults or not, in any order;
 * bytes cut short, left over or damaged are refused. */
static void test_pack_any_record(void **s)
{
    (void)s;
    earl_ghost g[5];
    memset(g, 0, sizeof g);
    g[0] = (earl_ghost){UINT64_MAX, UINT64_C(1) << 39, -1, 0, 0, 3, EARL_UNDEFINED_REF,
                        EARL_NONE, EARL_UNDEFINED_REF, 0, EARL_REQUESTED_UNKNOWN,
                        EARL_REQUESTED_UNKNOWN, 0, 0, EARL_ENTER, {0, 0, 0}};
    g[1] = (earl_ghost){5, 2, -7, UINT64_MAX, 1, INT32_MIN, 0, INT32_MAX, 0, UINT32_MAX,
                        INT32_MIN, INT32_MAX, UINT32_MAX, 1, EARL_MPI_ISEND, {1, 2, 3}};
    g[2] = g[1];
    g[2].partner = INT64_MAX; /* far after its position */
    g[2].location = INT32_MAX;
    g[3] = g[2];
    g[3].partner = 0; /* before it */
    g[3].time = 0;
    g[4] = g[0];
    g[4].location = -1;
    g[4].kind = 255;
    uint8_t *packed;
    size_t bytes;
    ok(earl_ghosts_pack(g, 5, &packed, &bytes, &err));
    earl_ghost back[5];
    ok(earl_ghosts_unpack(packed, bytes, back, 5, &err));
    assert_memory_equal(g, back, sizeof g);
    /* cut short: the last record ends past the bytes */
    assert_int_equal(earl_ghosts_unpack(packed, bytes - 1, back, 5, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "record 4"));
    /* one record fewer than packed: bytes left over */
    assert_int_equal(earl_ghosts_unpack(packed, bytes, back, 4, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "left"));
    /* a mask naming a field no packing writes */
    packed[1] = 0x80;
    packed[2] = 0x80;
    packed[3] = 0x01; /* bit 14 */
    assert_int_equal(earl_ghosts_unpack(packed, bytes, back, 5, &err), EARL_ERR_INVALID);
    free(packed);
    ok(earl_ghosts_pack(g, 0, &packed, &bytes, &err));
    assert_int_equal(bytes, 0);
    ok(earl_ghosts_unpack(packed, bytes, back, 0, &err));
    free(packed);
}

/* Sorted runs merged: sorted, each event once, the earliest run's record of
 * an event kept; an unsorted run refused. */
static void test_merge_runs(void **s)
{
    (void)s;
    earl_ghost a[3], b[4], out[7];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    int64_t ka[3][2] = {{1, 5}, {1, 9}, {2, 1}}, kb[4][2] = {{0, 3}, {1, 5}, {1, 7}, {2, 1}};
    for (int k = 0; k < 3; k++) {
        a[k].location = (int32_t)ka[k][0];
        a[k].position = (uint64_t)ka[k][1];
        a[k].members = 7; /* a representative */
    }
    for (int k = 0; k < 4; k++) {
        b[k].location = (int32_t)kb[k][0];
        b[k].position = (uint64_t)kb[k][1];
    }
    const earl_ghost *runs[2] = {a, b};
    size_t lengths[2] = {3, 4}, at[2], n;
    ok(earl_ghosts_merge(runs, lengths, 2, at, out, &n, &err));
    int64_t want[5][3] = {{0, 3, 0}, {1, 5, 7}, {1, 7, 0}, {1, 9, 7}, {2, 1, 7}};
    assert_int_equal(n, 5);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(out[k].location, want[k][0]);
        assert_int_equal(out[k].position, want[k][1]);
        assert_int_equal(out[k].members, want[k][2]);
    }
    b[2].position = 4; /* (1, 5) then (1, 4) */
    assert_int_equal(earl_ghosts_merge(runs, lengths, 2, at, out, &n, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "run 1"));
}

/* Part self of ps's trace read again (a fresh reading of its own locations). */
static earl_reading *reread(const char *path, const int32_t *part_of, int self)
{
    earl_reading *r;
    ok(earl_reading_open(path, NULL, &r, &err));
    const earl_defs *d = earl_reading_defs(r);
    uint8_t mask[PTU_MAX_LOCATIONS] = {0};
    for (uint32_t l = 0; l < d->n_locations; l++)
        mask[l] = part_of[l] == self;
    ok(earl_reading_read(r, mask, &err));
    return r;
}

/* Records [a, b) merged with representatives (NULL: none), folded, added. */
static void add_one_location(earl_reading *r, const earl_ghost *rep, size_t n_rep,
                             const earl_ghost *g, size_t n)
{
    earl_ghost *out = malloc((n + n_rep + 1) * sizeof *out);
    assert_non_null(out);
    const earl_ghost *runs[2] = {rep, g};
    size_t lengths[2] = {n_rep, n}, at[2], kept = n;
    if (n_rep)
        ok(earl_ghosts_merge(runs, lengths, 2, at, out, &kept, &err));
    else
        memcpy(out, g, n * sizeof *out);
    kept = earl_part_fold_calls(out, kept);
    ok(earl_part_add_ghosts(r, out, kept, &err));
    free(out);
}

/* A part's ghosts added packed in one call (earl_part_add_packed): one run
 * per other part, the representatives of one location merged in front of its
 * records (in two runs, as two windows of instances give them), and a
 * location that only representatives hold, all folded: the same trace, event
 * for event, as merging, folding and adding them a location at a time; the
 * positions reported are the records kept.  A run cut short is refused,
 * naming itself. */
static void test_add_packed(void **s)
{
    (void)s;
    char path[512];
    char *dir = ptu_generate(EARL_SYNTH_HALO, 6, 1, path, sizeof path);
    enum { N = 3, SELF = 1 };
    int32_t part_of[64];
    ptu_parts ps;
    ptu_open_parts(path, N, part_of, &ps);
    earl_reading *a = reread(path, part_of, SELF), *b = reread(path, part_of, SELF);
    earl_packed_run runs[N], reps[3];
    uint8_t *bytes[N + 3] = {0};
    size_t n_runs = 0, n_reps = 0, locations = 0, received = 0;
    earl_ghost *dup = NULL, *only = NULL;
    for (int q = 0; q < N; q++) {
        const earl_ghosts *g = &ps.exported[q];
        const earl_ghost *rec = g->records + g->offset[SELF];
        size_t n = g->offset[SELF + 1] - g->offset[SELF];
        if (q == SELF || !n)
            continue;
        /* the run's last location travels as representatives only */
        size_t last = n;
        while (last > 0 && rec[last - 1].location == rec[n - 1].location)
            last--;
        if (!only && last > 0) {
            only = malloc((n - last) * sizeof *only);
            memcpy(only, rec + last, (n - last) * sizeof *only);
            size_t half = (n - last) / 2;
            ok(earl_ghosts_pack(only, half, &bytes[N + 1], &reps[1].size, &err));
            ok(earl_ghosts_pack(only + half, n - last - half, &bytes[N + 2], &reps[2].size,
                                &err));
            reps[1] = (earl_packed_run){bytes[N + 1], reps[1].size, half, only[0].location};
            reps[2] = (earl_packed_run){bytes[N + 2], reps[2].size, n - last - half,
                                        only[0].location};
            n = last;
        }
        /* the first location's every other record is also a representative */
        if (!dup) {
            size_t first = 0;
            while (first < n && rec[first].location == rec[0].location)
                first++;
            dup = malloc(first * sizeof *dup);
            size_t k = 0;
            for (size_t i = 0; i < first; i += 2)
                dup[k++] = rec[i];
            ok(earl_ghosts_pack(dup, k, &bytes[N], &reps[0].size, &err));
            reps[0] = (earl_packed_run){bytes[N], reps[0].size, k, dup[0].location};
        }
        size_t size;
        ok(earl_ghosts_pack(rec, n, &bytes[q], &size, &err));
        runs[n_runs++] = (earl_packed_run){bytes[q], size, n, -1};
        /* the reference: a location at a time */
        for (size_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && rec[j].location == rec[i].location; j++)
                ;
            int with = dup && rec[i].location == dup[0].location;
            add_one_location(a, with ? dup : NULL, with ? reps[0].n : 0, rec + i, j - i);
            locations++;
        }
    }
    assert_non_null(dup);
    assert_non_null(only);
    n_reps = reps[0].location < reps[1].location ? 3 : 0;
    if (!n_reps) { /* keep them ascending by location */
        earl_packed_run t = reps[0];
        reps[0] = reps[1];
        reps[1] = reps[2];
        reps[2] = t;
        n_reps = 3;
    }
    add_one_location(a, only, reps[0].location == only[0].location ? reps[0].n + reps[1].n
                                                                    : reps[1].n + reps[2].n,
                     NULL, 0);
    locations++;
    earl_added_ghosts added;
    ok(earl_part_add_packed(b, runs, n_runs, reps, n_reps, EARL_ADD_FOLD, &added, &err));
    assert_int_equal(added.n_locations, locations);
    assert_int_equal(added.damaged, SIZE_MAX);
    earl_trace *ta, *tb;
    ok(earl_reading_finish(a, &ta, &err));
    ok(earl_reading_finish(b, &tb, &err));
    const earl_events *ea = earl_trace_events(ta), *eb = earl_trace_events(tb);
    assert_int_equal(ea->count, eb->count);
    assert_memory_equal(ea->time, eb->time, ea->count * sizeof *ea->time);
    assert_memory_equal(ea->kind, eb->kind, ea->count * sizeof *ea->kind);
    assert_memory_equal(ea->location, eb->location, ea->count * sizeof *ea->location);
    /* the positions: one per ghost event, ascending on each location */
    size_t ghosts = 0;
    for (size_t e = 0; e < eb->count; e++)
        ghosts += part_of[eb->location[e]] != SELF;
    assert_int_equal(added.offset[added.n_locations], ghosts);
    for (size_t i = 0; i < added.n_locations; i++)
        for (size_t k = added.offset[i] + 1; k < added.offset[i + 1]; k++)
            assert_true(added.position[k] > added.position[k - 1]);
    received = added.received;
    assert_true(received >= ghosts);
    earl_added_ghosts_free(&added);
    /* a ghost run cut short: refused, naming the run */
    earl_reading *c = reread(path, part_of, SELF);
    runs[n_runs - 1].size--;
    assert_int_equal(earl_part_add_packed(c, runs, n_runs, reps, n_reps, 0, &added, &err),
                     EARL_ERR_INVALID);
    assert_int_equal(added.damaged, n_runs - 1);
    earl_added_ghosts_free(&added);
    earl_reading_free(c);
    /* representatives out of order by location: refused */
    c = reread(path, part_of, SELF);
    earl_packed_run swapped[2] = {reps[2], reps[0]};
    if (swapped[0].location != swapped[1].location) {
        assert_int_equal(earl_part_add_packed(c, NULL, 0, swapped, 2, 0, &added, &err),
                         EARL_ERR_INVALID);
        assert_non_null(strstr(err.message, "comes after"));
        earl_added_ghosts_free(&added);
    }
    earl_reading_free(c);
    earl_trace_close(ta);
    earl_trace_close(tb);
    for (int k = 0; k < N + 3; k++)
        free(bytes[k]);
    free(dup);
    free(only);
    ptu_close_parts(&ps);
    wtu_remove_tree(dir);
    free(dir);
}

/* A part of nothing but definitions: no event, every location held by none. */
static void test_definitions_only(void **s)
{
    (void)s;
    char path[512];
    char *dir = ptu_generate(EARL_SYNTH_RING, 3, 1, path, sizeof path);
    earl_reading *r;
    ok(earl_reading_open(path, NULL, &r, &err));
    uint8_t none[3] = {0, 0, 0};
    ok(earl_reading_read(r, none, &err));
    earl_trace *t;
    ok(earl_reading_finish(r, &t, &err));
    assert_int_equal(earl_trace_events(t)->count, 0);
    assert_int_equal(earl_trace_defs(t)->n_locations, 3);
    for (int l = 0; l < 3; l++)
        assert_int_equal(earl_trace_defs(t)->locations[l].held, EARL_HELD_NONE);
    earl_trace_close(t);
    wtu_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),          cmocka_unit_test(test_halo),
        cmocka_unit_test(test_master_worker), cmocka_unit_test(test_collectives),
        cmocka_unit_test(test_hybrid),        cmocka_unit_test(test_bad_ghosts),
        cmocka_unit_test(test_definitions_only), cmocka_unit_test(test_pack_any_record),
        cmocka_unit_test(test_merge_runs),    cmocka_unit_test(test_fold_calls),
        cmocka_unit_test(test_add_packed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
