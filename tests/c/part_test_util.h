/*
 * part_test_util.h - helpers of the C tests of a trace in parts
 * (csrc/part/earl_part.h): generated traces, a partition by process, the
 * parts of a trace opened in one process (each reads its own locations,
 * exports the ghosts the others need, adds those it receives), the whole
 * trace's event behind a part's event, and a driver of the replays in parts
 * (the happened-before and the matches-before one) that runs their steps
 * part after part.  Header-only (static functions), so
 * that each test program is one file; the test defines `ok`, which fails
 * with the message of `err`.
 */
#ifndef PART_TEST_UTIL_H
#define PART_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include <otf2/otf2.h>

#include "earl.h"
#include "earl_part.h"
#include "earl_synth.h"
#include "earl_writer.h"
#include "writer_test_util.h"

#define PTU_MAX_PARTS 4
#define PTU_MAX_LOCATIONS 64

/* The test's: the last error, and a check that fails the test with its message. */
static earl_error err;
static void ok(earl_status st);

/* A generated trace of `kind` with `ranks` processes of `threads` threads in
 * a fresh scratch folder (returned: the caller removes and frees it). */
static inline char *ptu_generate(earl_synth_kind kind, uint32_t ranks, uint32_t threads, char *path,
                          size_t size)
{
    char *dir = wtu_scratch();
    snprintf(path, size, "%s/t", dir);
    earl_synth_options o;
    earl_synth_defaults(kind, &o);
    o.ranks = ranks;
    o.threads = threads;
    o.iterations = 6;
    o.delay = 300;
    o.delay_rank = 1;
    earl_synth_result r;
    ok(earl_synth_run(&o, path, &r, &err));
    return dir;
}

/* Part p of n: location l is in part group(l) * n / groups (whole processes
 * of one location each in these traces, or the threads of a process
 * together: by process). */
static inline void ptu_partition(const earl_defs *d, int n, int32_t *part_of)
{
    uint32_t groups = 0;
    for (uint32_t l = 0; l < d->n_locations; l++)
        if (d->locations[l].group + 1 > groups)
            groups = d->locations[l].group + 1;
    for (uint32_t l = 0; l < d->n_locations; l++)
        part_of[l] = (int32_t)((uint64_t)d->locations[l].group * (uint64_t)n / groups);
}

typedef struct ptu_parts {
    int n;
    earl_trace *trace[PTU_MAX_PARTS];
    earl_ghosts exported[PTU_MAX_PARTS];
} ptu_parts;

/* Fold every part's records of export g (earl_part_fold_calls), the
 * buffer kept compact: part p's records stay [offset[p], offset[p + 1]). */
static inline void ptu_fold(earl_ghosts *g, int n)
{
    size_t w = 0;
    for (int p = 0; p < n; p++) {
        size_t a = g->offset[p], b = g->offset[p + 1];
        size_t kept = earl_part_fold_calls(g->records + a, b - a);
        memmove(g->records + w, g->records + a, kept * sizeof *g->records);
        g->offset[p] = w;
        w += kept;
    }
    g->offset[n] = w;
}

static void ptu_open_parts_fold(const char *path, int n, int32_t *part_of, ptu_parts *out,
                                int fold);

/* earl_part_export_packed gives, per part, a run that unpacks to the
 * records earl_part_export gives it, bit for bit, and the same members. */
static inline void ptu_check_packed(earl_reading *r, const int32_t *part_of, int n, int self,
                                    const earl_ghosts *wide)
{
    earl_packed_ghosts narrow;
    ok(earl_part_export_packed(r, part_of, (size_t)n, self, NULL, NULL, &narrow, &err));
    assert_int_equal(narrow.n_parts, n);
    for (int p = 0; p < n; p++) {
        size_t count = narrow.count[p + 1] - narrow.count[p];
        assert_int_equal(narrow.count[p], wide->offset[p]);
        assert_int_equal(count, wide->offset[p + 1] - wide->offset[p]);
        earl_ghost *back = malloc((count ? count : 1) * sizeof *back);
        assert_non_null(back);
        ok(earl_ghosts_unpack(narrow.bytes + narrow.offset[p],
                              narrow.offset[p + 1] - narrow.offset[p], back, count, &err));
        if (count)
            assert_memory_equal(back, wide->records + wide->offset[p], count * sizeof *back);
        free(back);
    }
    earl_packed_ghosts_free(&narrow);
    /* with the member list: the same members as the wide export's */
    earl_coll_member *ma, *mb;
    size_t na, nb;
    earl_ghosts w2;
    ok(earl_part_export(r, part_of, (size_t)n, self, &ma, &na, &w2, &err));
    ok(earl_part_export_packed(r, part_of, (size_t)n, self, &mb, &nb, &narrow, &err));
    assert_int_equal(na, nb);
    if (na)
        assert_memory_equal(ma, mb, na * sizeof *ma);
    assert_int_equal(narrow.count[n], w2.offset[n]);
    free(ma);
    free(mb);
    earl_ghosts_free(&w2);
    earl_packed_ghosts_free(&narrow);
}

/* The n parts of the trace at path, partitioned by ptu_partition (part_of
 * gets the partition). */
static inline void ptu_open_parts(const char *path, int n, int32_t *part_of, ptu_parts *out)
{
    ptu_open_parts_fold(path, n, part_of, out, 0);
}

/* The same, each part's ghosts with their message calls folded (fold). */
static inline void ptu_open_parts_fold(const char *path, int n, int32_t *part_of,
                                       ptu_parts *out, int fold)
{
    earl_reading *r[PTU_MAX_PARTS];
    memset(out, 0, sizeof *out);
    out->n = n;
    for (int p = 0; p < n; p++) {
        ok(earl_reading_open(path, NULL, &r[p], &err));
        const earl_defs *d = earl_reading_defs(r[p]);
        if (p == 0)
            ptu_partition(d, n, part_of);
        uint8_t mask[PTU_MAX_LOCATIONS] = {0};
        assert_true(d->n_locations <= PTU_MAX_LOCATIONS);
        for (uint32_t l = 0; l < d->n_locations; l++)
            mask[l] = part_of[l] == p;
        ok(earl_reading_read(r[p], mask, &err));
        ok(earl_part_export(r[p], part_of, (size_t)n, p, NULL, NULL, &out->exported[p], &err));
        assert_int_equal(out->exported[p].offset[p], out->exported[p].offset[p + 1]);
        ptu_check_packed(r[p], part_of, n, p, &out->exported[p]);
        if (fold)
            ptu_fold(&out->exported[p], n);
    }
    for (int p = 0; p < n; p++) {
        for (int q = 0; q < n; q++) {
            const earl_ghosts *g = &out->exported[q];
            ok(earl_part_add_ghosts(r[p], g->records + g->offset[p],
                                    g->offset[p + 1] - g->offset[p], &err));
        }
        ok(earl_reading_finish(r[p], &out->trace[p], &err));
    }
}

static inline void ptu_close_parts(ptu_parts *ps)
{
    for (int p = 0; p < ps->n; p++) {
        earl_trace_close(ps->trace[p]);
        earl_ghosts_free(&ps->exported[p]);
    }
}

/* The position in the whole trace of part `self`'s event e on its location:
 * its index there for an own location, for a ghost the position its record
 * carried. */
static inline size_t ptu_position(const ptu_parts *ps, int self, earl_eid e)
{
    const earl_trace *part = ps->trace[self];
    const earl_events *pe = earl_trace_events(part);
    earl_loc l = pe->location[e];
    size_t k = 0;
    while (pe->loc_events[pe->loc_start[l] + k] != (earl_eid32)e)
        k++;
    if (earl_trace_defs(part)->locations[l].held == EARL_HELD_ALL)
        return k;
    size_t seen = 0; /* the k-th ghost of l: find its record */
    for (int q = 0; q < ps->n; q++) {
        const earl_ghosts *g = &ps->exported[q];
        for (size_t i = g->offset[self]; i < g->offset[self + 1]; i++)
            if (g->records[i].location == l && seen++ == k)
                return g->records[i].position;
    }
    fail_msg("event %lld of part %d: no ghost record", (long long)e, self);
    return SIZE_MAX;
}

/* The whole trace's id of part `self`'s event e. */
static inline earl_eid ptu_whole_event(const earl_trace *whole, const ptu_parts *ps, int self, earl_eid e)
{
    const earl_events *we = earl_trace_events(whole);
    earl_loc l = earl_trace_events(ps->trace[self])->location[e];
    return we->loc_events[we->loc_start[l] + ptu_position(ps, self, e)];
}

/* The id in part q of the event at (location l, position pos) of the whole
 * trace, which q holds (own, or a ghost). */
static inline earl_eid ptu_local_event(const ptu_parts *ps, int q, earl_loc l, size_t pos)
{
    const earl_events *qe = earl_trace_events(ps->trace[q]);
    size_t first = qe->loc_start[l];
    if (earl_trace_defs(ps->trace[q])->locations[l].held == EARL_HELD_ALL)
        return qe->loc_events[first + pos];
    size_t k = 0;
    for (int o = 0; o < ps->n; o++) {
        const earl_ghosts *g = &ps->exported[o];
        for (size_t i = g->offset[q]; i < g->offset[q + 1]; i++)
            if (g->records[i].location == l) {
                if (g->records[i].position == pos)
                    return qe->loc_events[first + k];
                k++;
            }
    }
    fail_msg("part %d holds no event at position %zu of location %d", q, pos, (int)l);
    return -1;
}

/* ---- a replay in parts, driven in one process ----------------------------------- */

/* The steps of a replay in parts (earl_hb_part_*, earl_races_part_*), on
 * void handles; `producer` names the location whose part produces what a
 * need (kind, event of part p) waits for. */
typedef struct ptu_steps {
    size_t (*needs)(void *h, const uint8_t **kinds, const earl_eid **events);
    earl_loc (*producer)(const ptu_parts *ps, int p, void *h, uint8_t kind, earl_eid e);
    earl_status (*export_)(void *h, int32_t to, uint8_t kind, earl_eid e, uint64_t ticket);
    earl_status (*run)(void *h, earl_error *e);
    earl_status (*take)(void *h, size_t n, earl_outbox *out, earl_error *e);
    earl_status (*receive)(void *h, const void *r, size_t bytes, earl_error *e);
    size_t (*unfinished)(const void *h);
    earl_eid (*waiting)(void *h);
    earl_status (*force)(void *h, earl_eid e, earl_error *err);
} ptu_steps;

/* Steps 2 and 3: every part's needs told to the producers. */
static inline void ptu_tell_needs(const ptu_steps *s, const ptu_parts *ps, const int32_t *part_of,
                           void **h)
{
    for (int p = 0; p < ps->n; p++) {
        const uint8_t *kinds;
        const earl_eid *events;
        size_t n = s->needs(h[p], &kinds, &events);
        for (size_t t = 0; t < n; t++) {
            uint8_t kind = kinds ? kinds[t] : 0;
            earl_loc l = s->producer(ps, p, h[p], kind, events[t]);
            int q = part_of[l];
            assert_true(q != p);
            const earl_events *pe = earl_trace_events(ps->trace[p]);
            earl_loc el = pe->location[events[t]];
            earl_eid at = ptu_local_event(ps, q, el, ptu_position(ps, p, events[t]));
            ok(s->export_(h[q], p, kind, at, t));
        }
    }
}

/* Steps 4 and 5 until every part is done: rounds of run, take and receive;
 * when nothing travels and some wait, the cycle broken at the earliest
 * waiting event of all parts (by time, location, position).  Returns the
 * rounds. */
static inline int ptu_rounds(const ptu_steps *s, const ptu_parts *ps, void **h)
{
    int n = ps->n, rounds = 0;
    for (;;) {
        size_t sent = 0;
        earl_outbox out[PTU_MAX_PARTS];
        for (int p = 0; p < n; p++) {
            ok(s->run(h[p], &err));
            ok(s->take(h[p], (size_t)n, &out[p], &err));
            sent += out[p].offset[n];
        }
        for (int p = 0; p < n; p++) {
            for (int q = 0; q < n; q++)
                ok(s->receive(h[q], out[p].records + out[p].offset[q] * out[p].record_bytes,
                              (out[p].offset[q + 1] - out[p].offset[q]) * out[p].record_bytes,
                              &err));
            earl_outbox_free(&out[p]);
        }
        rounds++;
        if (sent)
            continue;
        int pick = -1;
        earl_eid pick_e = -1;
        uint64_t best[3] = {0, 0, 0};
        for (int p = 0; p < n; p++) {
            earl_eid e = s->waiting(h[p]);
            if (e < 0)
                continue;
            const earl_events *pe = earl_trace_events(ps->trace[p]);
            uint64_t key[3] = {pe->time[e], (uint64_t)pe->location[e], ptu_position(ps, p, e)};
            int before = key[0] != best[0] ? key[0] < best[0]
                         : key[1] != best[1] ? key[1] < best[1] : key[2] < best[2];
            if (pick < 0 || before) {
                pick = p;
                pick_e = e;
                memcpy(best, key, sizeof key);
            }
        }
        if (pick < 0)
            break;
        ok(s->force(h[pick], pick_e, &err));
    }
    for (int p = 0; p < n; p++)
        assert_int_equal(s->unfinished(h[p]), 0);
    return rounds;
}

/* An inconsistent trace of `ranks` ranks in a ring: each receives from its
 * left neighbour before it sends to its right one, so that every receive
 * waits for a send that waits for it, `rounds` times. */
static inline char *ptu_cyclic_trace(int ranks, int rounds, char *path, size_t size)
{
    char *dir = wtu_scratch();
    snprintf(path, size, "%s/t", dir);
    earl_writer *w;
    ok(earl_writer_open(path, NULL, 1000, 0, &w, &err));
    uint32_t machine, proc, world;
    earl_loc loc[PTU_MAX_LOCATIONS];
    ok(earl_writer_system_node(w, "machine", "machine", EARL_UNDEFINED_REF, &machine, &err));
    for (int r = 0; r < ranks; r++) {
        char name[32];
        snprintf(name, sizeof name, "rank %d", r);
        ok(earl_writer_process(w, name, machine, r, &proc, &err));
        ok(earl_writer_location(w, proc, "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                                EARL_WRITER_AUTO_ID, &loc[r], &err));
    }
    ok(earl_writer_comm_world(w, NULL, &world, &err));
    for (int r = 0; r < ranks; r++)
        for (int k = 0; k < rounds; k++) {
            earl_time t = (earl_time)(100 * k + 10 + r);
            ok(earl_writer_mpi_recv(w, loc[r], t, (uint32_t)((r + ranks - 1) % ranks), world, 0, 4,
                                    &err));
            ok(earl_writer_mpi_send(w, loc[r], t + 20, (uint32_t)((r + 1) % ranks), world, 0, 4,
                                    &err));
        }
    ok(earl_writer_close(w, &err));
    return dir;
}

#endif
