/*
 * order.c - the total order of all events.
 *
 * Each location's events arrive in their recorded order with monotone
 * timestamps (reader.c clamps).  A k-way merge over the locations yields the
 * one total order of the paper's E = {e_1 .. e_max}: by timestamp, ties by
 * dense location index, then by position on the location.  The merge writes
 * the trace's core columns in that order, concatenates the side tables
 * (location by location), turns every local index (side table event column,
 * request partners) into a global event id, and records each location's
 * own sequence (loc_start / loc_events).
 *
 * With P threads the time axis is cut into P slices of about equal event
 * counts, merged concurrently.  Before the merge, P threads copy a P-th of
 * the side-table rows each, and the reading buffers' tables are freed; once
 * all slices are merged, they fix up a P-th of the partners each.  The
 * merge picks the next location with a tournament (a loser tree), replayed
 * once per run of one location's events, not once per event.
 *
 * Memory: the reading buffers are consumed front to back, so both the row
 * copy and the merge move their consumed pages under the trace's columns
 * about to be written (earl_mem_bank, one per thread): the open needs little
 * more than the finished trace, and faults in fresh pages only where the
 * trace outgrows the reading buffers (a page given back and written again
 * costs as much as a fresh one).
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A location's next event in the merge: its time, then the location (ties
 * by dense location index). */
typedef struct merge_pos {
    earl_time time;
    earl_loc loc;
} merge_pos;

/* The merge's tournament over the locations (a loser tree): leaf l is
 * location l's next event as one 128-bit key, its time above its location,
 * so that a single comparison orders by time, then location; KEY_DONE for
 * a location with nothing left.  Internal node n (1 .. K-1, children 2n
 * and 2n+1, leaf l at K + l) holds the location that lost the match there,
 * node 0 the overall winner.  Replacing the winner's key replays its path
 * only: log2 K comparisons, written so that the compiler makes them
 * selections rather than branches (which of two events comes first is a
 * coin toss on interleaved locations, and a binary heap's mispredicted
 * branches were most of the merge's time on 16 ranks). */
typedef unsigned __int128 merge_key;
#define KEY_DONE (~(merge_key)0)

typedef struct tournament {
    size_t K;          /* leaves: a power of two, at least the locations */
    merge_key *key;    /* per leaf */
    uint32_t *node;    /* node[0] the winner, node[n] the loser at n */
} tournament;

static inline merge_key key_of(earl_time t, earl_loc l)
{
    return (merge_key)t << 32 | (uint32_t)l;
}

/* Play every match (scratch: 2K entries). */
static void tournament_build(tournament *t, uint32_t *scratch)
{
    size_t K = t->K;
    for (size_t l = 0; l < K; l++)
        scratch[K + l] = (uint32_t)l;
    for (size_t n = K - 1; n >= 1; n--) {
        uint32_t a = scratch[2 * n], b = scratch[2 * n + 1];
        int b_first = t->key[b] < t->key[a];
        scratch[n] = b_first ? b : a;
        t->node[n] = b_first ? a : b;
    }
    t->node[0] = scratch[1];
}

/* Leaf w's key changed (w was the winner): replay its path. */
static inline void tournament_replay(tournament *t, uint32_t w)
{
    const merge_key *key = t->key;
    uint32_t *node = t->node;
    merge_key kw = key[w];
    for (size_t n = (t->K + w) >> 1; n; n >>= 1) {
        uint32_t o = node[n];
        merge_key ko = key[o];
        int o_first = ko < kw;
        node[n] = o_first ? w : o;
        w = o_first ? o : w;
        kw = o_first ? ko : kw;
    }
    node[0] = w;
}

/* The first event after the winner's: the best of those that lost to it on
 * its path. */
static inline merge_pos tournament_runner_up(const tournament *t)
{
    uint32_t w = t->node[0];
    merge_key best = KEY_DONE;
    for (size_t n = (t->K + w) >> 1; n; n >>= 1) {
        merge_key k = t->key[t->node[n]];
        best = k < best ? k : best;
    }
    if (best == KEY_DONE)
        return (merge_pos){UINT64_MAX, INT32_MAX};
    return (merge_pos){(earl_time)(best >> 32), (earl_loc)(uint32_t)best};
}

/* Allocate the global side tables, location l's rows of family f to start
 * at base[l * N_FAMILIES + f] (location after location; base has one
 * location more, so that rows_of works for the last), and copy the metric
 * values.  The rows themselves are copied by P threads (copy_rows), a share
 * each. */
static earl_status plan_tables(earl_trace *tr, loc_events *bufs, size_t n_locs, size_t *base,
                               size_t *value_base, earl_error *err)
{
    side_tables *g = &tr->tables;
    for (int f = EARL_FAMILY_MSG; f < N_FAMILIES; f++) {
        size_t total = 0;
        for (size_t l = 0; l < n_locs; l++) {
            base[l * N_FAMILIES + f] = total;
            total += *side_tables_count(&bufs[l].tables, (earl_family)f);
        }
        base[n_locs * N_FAMILIES + f] = total;
        earl_colset s;
        side_tables_columns(g, (earl_family)f, &s);
        if (total && earl_colset_reserve(&s, &g->cap[f], total) != 0)
            return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory ordering events", tr->anchor);
        *side_tables_count(g, (earl_family)f) = total;
    }
    size_t n_values = 0;
    for (size_t l = 0; l < n_locs; l++) {
        value_base[l] = n_values;
        n_values += bufs[l].tables.metric.n_values;
    }
    if (n_values) {
        g->metric.values = malloc(n_values * sizeof *g->metric.values);
        g->metric.value_types = malloc(n_values);
        if (!g->metric.values || !g->metric.value_types)
            return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory ordering events", tr->anchor);
        for (size_t l = 0; l < n_locs; l++) {
            const earl_metric_table *m = &bufs[l].tables.metric;
            if (m->n_values) { /* else its columns are NULL */
                memcpy(g->metric.values + value_base[l], m->values, m->n_values * sizeof *m->values);
                memcpy(g->metric.value_types + value_base[l], m->value_types, m->n_values);
            }
        }
        g->metric.n_values = n_values;
        g->cap_values = n_values;
    }
    return EARL_OK;
}

/* The output columns written in the total order, which the bank feeds:
 * widest first, so that the pages moved go where one saves most faults. */
enum { OUT_TIME, OUT_PAYLOAD, OUT_LOCATION, OUT_KIND, N_OUT };

/* One slice of the output: all events with start <= time < end, whose
 * positions in the total order are [first, first + count). */
typedef struct merge_part {
    earl_trace *tr;
    const loc_events *bufs;
    size_t n_locs;
    const size_t *base;
    const size_t *start;       /* per location: first local index of the slice */
    const size_t *stop;        /* per location: one past the last (= next slice's start) */
    size_t *cursor;            /* per location: private read position */
    size_t first;
    size_t share, n_shares;    /* this part's share of the row copies and fix-ups */
    const size_t *value_base;  /* per location: first of its metric values */
    uint64_t kind_counts[EARL_KIND_COUNT];
    earl_eid32 *event_col[N_FAMILIES];
    uint8_t family_of[256];
    tournament tour;
    uint32_t *tour_scratch;    /* 2K entries, to build the tournament */
    /* per location and input column: the byte offset up to which the pages
     * this part consumed were given back (give_back_consumed) */
    size_t (*given_back)[3];
    /* the pages this part consumed, to be moved under its output */
    earl_mem_bank bank;
    /* per output column (OUT_*): the byte offset up to which pages were
     * placed under this part's slice */
    size_t placed[N_OUT];
    size_t end;                /* one past the part's last position in the total order */
    int settle;                /* consumed ranges too short to move are given back */
} merge_part;

/* Rows [lo, hi) of this part's share of n rows. */
static void share_of(const merge_part *p, size_t n, size_t *lo, size_t *hi)
{
    *lo = n * p->share / p->n_shares;
    *hi = n * (p->share + 1) / p->n_shares;
}

static void place_ahead(merge_part *p, size_t g);

/* Bytes of a row copy between two exchanges with the bank. */
#define COPY_STEP ((size_t)1 << 20)

/* Copy bytes [from, from + n) of block src to [at, at + n) of block dst,
 * step by step: each step's output pages are the copied input of the steps
 * before, moved by the bank (the first step's pages fault in). */
static void copy_share(earl_mem_bank *bank, void *dst, size_t at, void *src, size_t from,
                       size_t n)
{
    size_t placed = at, taken = from;
    for (size_t done = 0; done < n;) {
        size_t step = n - done < COPY_STEP ? n - done : COPY_STEP;
        /* whole pages from the one after the last written byte */
        placed = earl_mem_bank_place(bank, dst, placed > at + done ? placed : at + done,
                                     at + done + step);
        memcpy((char *)dst + at + done, (const char *)src + from + done, step);
        done += step;
        taken = earl_mem_bank_deposit(bank, src, taken, from + done, done == n);
    }
}

/* Copy this part's share of every location's side-table rows to their
 * global place, the copied pages of the reading buffers moved under the
 * trace's tables as the copy goes on.  The
 * buffers have no event column (side_tables_row_columns): the merge writes
 * the trace's. */
static void *copy_rows(void *arg)
{
    merge_part *p = arg;
    for (int f = EARL_FAMILY_MSG; f < N_FAMILIES; f++) {
        earl_colset dst;
        side_tables_columns(&p->tr->tables, (earl_family)f, &dst);
        for (size_t l = 0; l < p->n_locs; l++) {
            side_tables *local = (side_tables *)&p->bufs[l].tables;
            earl_colset src;
            side_tables_row_columns(local, (earl_family)f, &src);
            size_t lo, hi, row0 = p->base[l * N_FAMILIES + f];
            share_of(p, *side_tables_count(local, (earl_family)f), &lo, &hi);
            for (int c = 0; c < src.n && hi > lo; c++) {
                size_t w = src.col[c].width;
                copy_share(&p->bank, *dst.col[c + 1].data, (row0 + lo) * w, *src.col[c].data,
                           lo * w, (hi - lo) * w);
            }
        }
    }
    /* what is left goes under the part's first events, before the reading
     * buffers' tables are unmapped */
    place_ahead(p, p->first);
    earl_mem_bank_empty(&p->bank);
    return NULL;
}

/* Rows of location l in family f (base has a row for one location more). */
static size_t rows_of(const size_t *base, size_t l, earl_family f)
{
    return base[(l + 1) * N_FAMILIES + f] - base[l * N_FAMILIES + f];
}

/* After every slice is merged: this part's share of the request partners
 * (a local index on the same location -> an event id) and of the metric
 * rows' first values (local -> global). */
static void *fix_rows(void *arg)
{
    merge_part *p = arg;
    earl_trace *tr = p->tr;
    for (size_t l = 0; l < p->n_locs; l++) {
        size_t lo, hi, row0 = p->base[l * N_FAMILIES + EARL_FAMILY_MSG];
        share_of(p, rows_of(p->base, l, EARL_FAMILY_MSG), &lo, &hi);
        earl_eid32 *partner = tr->tables.msg.partner + row0;
        const earl_eid32 *seq = tr->loc_events + tr->loc_start[l];
        for (size_t r = lo; r < hi; r++)
            if (partner[r] != EARL_EID32_NONE)
                partner[r] = seq[partner[r]];
        row0 = p->base[l * N_FAMILIES + EARL_FAMILY_METRIC];
        share_of(p, rows_of(p->base, l, EARL_FAMILY_METRIC), &lo, &hi);
        for (size_t r = lo; r < hi; r++)
            tr->tables.metric.first[row0 + r] += (uint32_t)p->value_base[l];
    }
    return NULL;
}

/* Events merged between two give-backs of the consumed input (3.4 MB of
 * it per merging thread), for a few thousand system calls per 10 M events;
 * the pages moved are placed this far ahead of the writing. */
#define GIVE_BACK_STEP ((size_t)1 << 18)
/* Consumed bytes a merging thread may hold while its ranges of every
 * location and column grow long enough to be moved (earl_mem_bank). */
#define MAX_WAITING ((size_t)8 << 20)

/* Move banked pages under the output of this part's events [g, g +
 * GIVE_BACK_STEP), whose columns would otherwise fault in fresh pages,
 * from the page after the one being written (pages at the edges of the
 * part's slice may hold a neighbour's output and stay). */
static void place_ahead(merge_part *p, size_t g)
{
    earl_trace *tr = p->tr;
    void *col[N_OUT] = {tr->time, tr->payload, tr->location, tr->kind};
    const size_t width[N_OUT] = {sizeof *tr->time, sizeof *tr->payload, sizeof *tr->location,
                                 sizeof *tr->kind};
    size_t ahead = g + GIVE_BACK_STEP < p->end ? g + GIVE_BACK_STEP : p->end;
    for (int c = 0; c < N_OUT; c++) {
        size_t from = p->placed[c] > g * width[c] ? p->placed[c] : g * width[c];
        p->placed[c] = earl_mem_bank_place(&p->bank, col[c], from, ahead * width[c]);
    }
}

/* Hand the pages of the reading buffers that this part has consumed (its
 * events [start, cursor) of every location) to its bank (last: the merge
 * is over, give back what is too short to move), and move banked pages under the
 * next output: the merge needs little more memory than the finished trace,
 * and faults only where its output outgrows its input.  Pages at the edges
 * of the part's range may hold a neighbour part's events and stay. */
static void give_back_consumed(merge_part *p, size_t g, int last)
{
    int settle = last || p->settle;
    for (size_t l = 0; l < p->n_locs; l++) {
        const loc_events *b = &p->bufs[l];
        /* in shared slots, the blocks are the shared columns */
        const reading_columns *c = b->shared;
        size_t done = (c ? b->first_slot : 0) + p->cursor[l], *back = p->given_back[l];
        back[0] = earl_mem_bank_deposit(&p->bank, c ? c->time : b->time, back[0],
                                        done * sizeof *b->time, settle);
        back[1] = earl_mem_bank_deposit(&p->bank, c ? c->kind : b->kind, back[1],
                                        done * sizeof *b->kind, settle);
        back[2] = earl_mem_bank_deposit(&p->bank, c ? c->payload : b->payload, back[2],
                                        done * sizeof *b->payload, settle);
    }
    if (!last)
        place_ahead(p, g);
}

/* Write location l's events [i, ...) to positions g... of the total order,
 * up to stop or the first one that comes after bound (the next other
 * location's event); returns the index after the last one written.  The
 * columns come as distinct (restrict) arrays: a store through the one-byte
 * kind column may alias anything else, and the compiler would reload every
 * column's address after it. */
static size_t emit_run(const merge_part *p, earl_loc l, size_t i, size_t stop, merge_pos bound,
                       size_t g, earl_time *restrict time, earl_loc *restrict location,
                       uint8_t *restrict kind_out, uint32_t *restrict payload_out,
                       earl_eid32 *restrict seq, const earl_time *restrict in_time,
                       const uint8_t *restrict in_kind, const uint32_t *restrict in_payload,
                       uint64_t *restrict kind_counts, const uint8_t *restrict family_of)
{
    const size_t *base = p->base + (size_t)l * N_FAMILIES;
    do {
        time[g] = in_time[i];
        location[g] = l;
        uint8_t kind = in_kind[i];
        kind_out[g] = kind;
        kind_counts[kind]++;
        uint32_t payload = in_payload[i];
        uint8_t f = family_of[kind];
        if (f != EARL_FAMILY_NONE) {
            /* a row of the location's own table, whose rows the trace's
             * table holds from base[f] on; ENTER and LEAVE keep their region */
            payload += (uint32_t)base[f];
            p->event_col[f][payload] = (earl_eid32)g;
        }
        payload_out[g] = payload;
        seq[i] = (earl_eid32)g;
        g++;
        i++;
    } while (i < stop && (in_time[i] < bound.time ||
                          (in_time[i] == bound.time && l < bound.loc)));
    return i;
}

static void *merge_slice(void *arg)
{
    merge_part *p = arg;
    earl_trace *tr = p->tr;
    const loc_events *bufs = p->bufs;
    size_t *cursor = p->cursor;
    uint64_t *kind_counts = p->kind_counts;
    memcpy(cursor, p->start, p->n_locs * sizeof *cursor);
    for (size_t l = 0; l < p->n_locs; l++) {
        size_t first = (bufs[l].shared ? bufs[l].first_slot : 0) + p->start[l];
        p->given_back[l][0] = first * sizeof *bufs[l].time;
        p->given_back[l][1] = first * sizeof *bufs[l].kind;
        p->given_back[l][2] = first * sizeof *bufs[l].payload;
    }
    size_t next_give_back = p->first + GIVE_BACK_STEP;
    tournament *t = &p->tour;
    for (size_t l = 0; l < t->K; l++)
        t->key[l] = l < p->n_locs && cursor[l] < p->stop[l]
            ? key_of(bufs[l].time[cursor[l]], (earl_loc)l) : KEY_DONE;
    tournament_build(t, p->tour_scratch);
    size_t g = p->first;
    while (t->key[t->node[0]] != KEY_DONE) {
        /* emit a run of the winner up to the next other location's event,
         * so the tournament is replayed once per run, not once per event */
        earl_loc l = (earl_loc)t->node[0];
        merge_pos bound = tournament_runner_up(t);
        const loc_events *b = &bufs[l];
        size_t i = emit_run(p, l, cursor[l], p->stop[l], bound, g, tr->time, tr->location,
                            tr->kind, tr->payload, tr->loc_events + tr->loc_start[l], b->time,
                            b->kind, b->payload, kind_counts, p->family_of);
        g += i - cursor[l];
        cursor[l] = i;
        t->key[l] = i < p->stop[l] ? key_of(b->time[i], l) : KEY_DONE;
        tournament_replay(t, (uint32_t)l);
        if (g >= next_give_back) {
            give_back_consumed(p, g, 0);
            next_give_back = g + GIVE_BACK_STEP;
        }
    }
    give_back_consumed(p, g, 1);
    earl_mem_bank_empty(&p->bank);
    return NULL;
}

/* Events of b with time < t. */
static size_t count_before(const loc_events *b, earl_time t)
{
    return earl_u64_lower_bound(b->time, 0, b->n, t);
}

/* Times t before which fewer than `want` events lie. */
typedef struct time_split {
    const loc_events *bufs;
    size_t n_locs, want;
} time_split;

static int too_few_before(const void *ctx, size_t t)
{
    const time_split *q = ctx;
    size_t c = 0;
    for (size_t l = 0; l < q->n_locs; l++)
        c += count_before(&q->bufs[l], (earl_time)t);
    return c < q->want;
}

/* A time t such that about `want` events lie before it: the smallest with
 * at least `want` before it, searched over the times (a size_t holds them). */
static earl_time split_time(const loc_events *bufs, size_t n_locs, size_t want)
{
    _Static_assert(sizeof(size_t) >= sizeof(earl_time), "times are searched as size_t");
    earl_time hi = 0;
    for (size_t l = 0; l < n_locs; l++)
        if (bufs[l].n && bufs[l].time[bufs[l].n - 1] + 1 > hi)
            hi = bufs[l].time[bufs[l].n - 1] + 1;
    time_split q = {bufs, n_locs, want};
    return earl_partition_point(0, (size_t)hi, too_few_before, &q);
}

earl_status order_events(earl_trace *tr, loc_events *bufs, size_t n_locs, int n_threads,
                         earl_error *err)
{
    size_t n = 0;
    for (size_t l = 0; l < n_locs; l++)
        n += bufs[l].n;
    if (n > EARL_MAX_EVENTS)
        return earl_fail(err, EARL_ERR_INVALID,
                         "%s: the trace has %zu events; earlc opens traces of at most %zu",
                         tr->anchor, n, EARL_MAX_EVENTS);
    if (n_threads < 1 || n < ((size_t)1 << 16))
        n_threads = 1; /* not worth a thread */
    size_t alloc = n ? n : 1;
    tr->time = earl_mem_alloc(alloc * sizeof *tr->time);
    tr->location = earl_mem_alloc(alloc * sizeof *tr->location);
    tr->kind = earl_mem_alloc(alloc);
    tr->payload = earl_mem_alloc(alloc * sizeof *tr->payload);
    tr->loc_events = earl_mem_alloc(alloc * sizeof *tr->loc_events);
    tr->loc_start = malloc((n_locs + 1) * sizeof *tr->loc_start);
    size_t *base = calloc((n_locs + 1) * N_FAMILIES, sizeof *base);
    size_t *value_base = calloc(n_locs + 1, sizeof *value_base);
    size_t P = (size_t)n_threads;
    merge_part *parts = calloc(P, sizeof *parts);
    size_t *cursors = calloc((P + 1) * (n_locs + 1), sizeof *cursors);
    size_t *positions = malloc(P * (n_locs + 1) * sizeof *positions);
    size_t K = 1;
    while (K < n_locs)
        K *= 2;
    merge_key *keys = malloc(P * K * sizeof *keys);
    uint32_t *nodes = malloc(P * 3 * K * sizeof *nodes); /* K nodes, 2K scratch per part */
    size_t (*given_back)[3] = malloc(P * (n_locs + 1) * sizeof *given_back);
    earl_status st = EARL_OK;
    if (!tr->time || !tr->location || !tr->kind || !tr->payload || !tr->loc_events ||
        !tr->loc_start || !base || !value_base || !parts || !cursors || !positions || !keys || !nodes ||
        !given_back) {
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory ordering %zu events", tr->anchor, n);
        goto done;
    }
    tr->tables.msg_requested = defs_have_requested(&tr->defs);
    st = plan_tables(tr, bufs, n_locs, base, value_base, err);
    if (st != EARL_OK)
        goto done;

    size_t side_bytes = 0;
    for (int f = EARL_FAMILY_MSG; f < N_FAMILIES; f++) {
        earl_colset cols;
        side_tables_columns(&tr->tables, (earl_family)f, &cols);
        for (int c = 1; c < cols.n; c++) /* the event column is the merge's */
            side_bytes += base[n_locs * N_FAMILIES + f] * cols.col[c].width;
    }
    tr->loc_start[0] = 0;
    for (size_t l = 0; l < n_locs; l++)
        tr->loc_start[l + 1] = tr->loc_start[l] + bufs[l].n;

    /* slice k holds the events with split[k] <= time < split[k+1]; cursors
     * row k are the per-location starts of slice k */
    for (size_t k = 0; k <= P; k++) {
        size_t *row = cursors + k * (n_locs + 1);
        if (k == 0)
            continue; /* all zero */
        if (k == P) {
            for (size_t l = 0; l < n_locs; l++)
                row[l] = bufs[l].n;
            continue;
        }
        earl_time t = split_time(bufs, n_locs, n / P * k);
        for (size_t l = 0; l < n_locs; l++)
            row[l] = count_before(&bufs[l], t);
    }
    for (size_t k = 0; k < P; k++) {
        merge_part *p = &parts[k];
        p->tr = tr;
        p->bufs = bufs;
        p->n_locs = n_locs;
        p->base = base;
        p->start = cursors + k * (n_locs + 1);
        p->stop = cursors + (k + 1) * (n_locs + 1);
        p->cursor = positions + k * (n_locs + 1);
        p->tour = (tournament){K, keys + k * K, nodes + k * 3 * K};
        p->tour_scratch = nodes + k * 3 * K + K;
        p->given_back = given_back + k * (n_locs + 1);
        for (size_t l = 0; l < n_locs; l++) {
            p->first += p->start[l];
            p->end += p->stop[l];
        }
        p->share = k;
        p->n_shares = P;
        /* about what the open consumes: the core columns' 13 bytes per
         * event and the side-table rows */
        earl_mem_bank_init(&p->bank, n * 13 + side_bytes);
        /* ranges shorter than a move wait for the next give-back, unless
         * that would hold more than MAX_WAITING bytes (many locations) */
        p->settle = 3 * n_locs * p->bank.min_move > MAX_WAITING;
        p->value_base = value_base;
        p->event_col[EARL_FAMILY_MSG] = tr->tables.msg.event;
        p->event_col[EARL_FAMILY_COLL] = tr->tables.coll.event;
        p->event_col[EARL_FAMILY_SYNC] = tr->tables.sync.event;
        p->event_col[EARL_FAMILY_PROGRAM] = tr->tables.program.event;
        p->event_col[EARL_FAMILY_METRIC] = tr->tables.metric.event;
        p->event_col[EARL_FAMILY_RMA] = tr->tables.rma.event;
        for (int kind = 0; kind < EARL_KIND_COUNT; kind++)
            p->family_of[kind] = (uint8_t)earl_kind_family((earl_kind)kind);
    }
    /* the side-table rows first, so that the reading buffers' tables are
     * gone before the core columns are written */
    earl_parts_run(copy_rows, parts, sizeof *parts, P);
    for (size_t l = 0; l < n_locs; l++)
        side_tables_free_unkept(&bufs[l].tables);
    malloc_trim(0); /* small locations' tables came from malloc's heap */
    earl_parts_run(merge_slice, parts, sizeof *parts, P);
    earl_parts_run(fix_rows, parts, sizeof *parts, P);
    memset(tr->view.kind_counts, 0, sizeof tr->view.kind_counts);
    for (size_t k = 0; k < P; k++)
        for (int kind = 0; kind < EARL_KIND_COUNT; kind++)
            tr->view.kind_counts[kind] += parts[k].kind_counts[kind];
    tr->view.count = n;

done:
    free(base);
    free(value_base);
    free(parts);
    free(cursors);
    free(positions);
    free(keys);
    free(nodes);
    free(given_back);
    return st;
}
