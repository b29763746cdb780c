/*
 * races_matches.c - the potential-match test of the race analysis
 * (Theorem 5.5 of Vo's dissertation over the clocks of races_replay.c) and
 * the result table it fills.
 *
 * The sends are grouped by channel (destination, communicator, source, tag),
 * each group in send order.  MPI's non-overtaking rule makes a channel's
 * sends taken in that order by receives posted in order, so "taken by r or
 * a receive posted after it, or never taken" is a suffix of each group, found
 * by binary search over the running maximum of the posting event of each
 * send's receive (the maximum makes the search right even on a trace that
 * breaks the rule).  For a wildcard receive r, the first send of that suffix
 * is the only one of its channel r could take; over the tags r accepts, the
 * earliest per source.  Unless it is the send r took, it is an alternative
 * when it is late for r (docs/races.md).
 */
#include <stdlib.h>
#include <string.h>

#include "races_internal.h"

/* One channel's sends: slots [start, start + n) of the send arrays. */
typedef struct channel {
    earl_loc dest;
    uint32_t comm;
    earl_loc source;
    uint32_t tag;
    size_t start, n;
} channel;

static int same_channel(const channel *ch, earl_loc d, uint32_t c, earl_loc s, uint32_t t)
{
    return ch->dest == d && ch->comm == c && ch->source == s && ch->tag == t;
}

/* The sends grouped by channel. */
typedef struct send_groups {
    channel *chans;
    size_t n_chans, cap_chans;
    size_t *sorted;     /* channel ids by (dest, comm, source, tag) */
    earl_eid *send;     /* per slot: the send event */
    earl_eid *key_max;  /* per slot: running max of the posting of the sends' receives */
    size_t n_sends;
} send_groups;

static void groups_free(send_groups *g)
{
    free(g->chans);
    free(g->sorted);
    earl_mem_free(g->send);
    earl_mem_free(g->key_max);
    memset(g, 0, sizeof *g);
}

static int is_send(uint8_t kind)
{
    return kind == EARL_MPI_SEND || kind == EARL_MPI_ISEND;
}

/* Where the receive of record r was posted: itself, or its MPI_IRECV_REQUEST. */
static earl_eid posted_at(const earl_events *ev, earl_eid r)
{
    earl_eid request = ev->kind[r] == EARL_MPI_IRECV && ev->ref[r] >= 0
                           ? earl_msg_partner(&ev->msg, (size_t)ev->ref[r]) : EARL_NONE;
    return request >= 0 ? request : r;
}

static int cmp_key(const channel *x, const channel *y)
{
    if (x->dest != y->dest)
        return x->dest < y->dest ? -1 : 1;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return 0;
}

static int cmp_channel(const void *a, const void *b, void *chans)
{
    const channel *c = chans;
    return cmp_key(&c[*(const size_t *)a], &c[*(const size_t *)b]);
}

typedef struct slot_pair {
    earl_eid send, key;
} slot_pair;

static int cmp_pair(const void *a, const void *b)
{
    earl_eid x = ((const slot_pair *)a)->send, y = ((const slot_pair *)b)->send;
    return x < y ? -1 : x > y;
}

/* The channel of send row m in the index (key: destination and
 * communicator, source and tag), inserting it when new (then counted in g);
 * UINT32_MAX when out of memory. */
static uint32_t channel_of(const earl_events *ev, size_t m, send_groups *g, earl_map *index)
{
    const earl_msg_table *msg = &ev->msg;
    earl_loc d = msg->peer[m], s = ev->location[msg->event[m]];
    uint32_t c = msg->comm[m], t = msg->tag[m];
    int added;
    int64_t *id = earl_map_slot(index, (uint64_t)(uint32_t)d << 32 | c,
                                (uint64_t)(uint32_t)s << 32 | t, (int64_t)g->n_chans, &added);
    if (!id)
        return UINT32_MAX;
    if (added) {
        if (EARL_GROW(g->chans, g->cap_chans, g->n_chans + 1) != 0)
            return UINT32_MAX;
        g->chans[g->n_chans++] = (channel){d, c, s, t, 0, 0};
    }
    return (uint32_t)*id;
}

static int is_grouped(const earl_events *ev, size_t m)
{
    return is_send(ev->kind[ev->msg.event[m]]) && ev->msg.peer[m] >= 0;
}

/* Two passes over the message table, looking each send's channel up twice
 * rather than keeping it: the second lookup is cheaper than the fresh pages
 * of one more array per row. */
static earl_status group_sends(const earl_events *ev, earl_states *states, send_groups *g,
                               earl_error *err, const char *path)
{
    const earl_msg_table *msg = &ev->msg;
    earl_map ix = {0};
    for (size_t m = 0; m < msg->count; m++) {
        if (!is_grouped(ev, m))
            continue;
        uint32_t id = channel_of(ev, m, g, &ix);
        if (id == UINT32_MAX)
            goto nomem;
        g->chans[id].n++;
        g->n_sends++;
    }
    size_t at = 0;
    for (size_t k = 0; k < g->n_chans; k++) {
        g->chans[k].start = at;
        at += g->chans[k].n;
        g->chans[k].n = 0;
    }
    size_t ns = g->n_sends ? g->n_sends : 1;
    g->send = earl_mem_alloc(ns * sizeof *g->send);
    g->key_max = earl_mem_alloc(ns * sizeof *g->key_max);
    g->sorted = malloc((g->n_chans ? g->n_chans : 1) * sizeof *g->sorted);
    if (!g->send || !g->key_max || !g->sorted)
        goto nomem;
    for (size_t m = 0; m < msg->count; m++) {
        if (!is_grouped(ev, m))
            continue;
        channel *ch = &g->chans[channel_of(ev, m, g, &ix)];
        earl_eid s = msg->event[m];
        earl_eid r = earl_states_ptr(states, EARL_PTR_RECV, s);
        size_t at = ch->start + ch->n++;
        g->send[at] = s;
        g->key_max[at] = r >= 0 ? posted_at(ev, r) : INT64_MAX;
    }
    for (size_t k = 0; k < g->n_chans; k++) {
        earl_eid *send = g->send + g->chans[k].start, *key = g->key_max + g->chans[k].start;
        size_t n = g->chans[k].n;
        for (size_t j = 1; j < n; j++)
            if (send[j] < send[j - 1]) { /* rows out of event order: sort this channel */
                slot_pair *p = malloc(n * sizeof *p);
                if (!p)
                    goto nomem;
                for (size_t i = 0; i < n; i++)
                    p[i] = (slot_pair){send[i], key[i]};
                qsort(p, n, sizeof *p, cmp_pair);
                for (size_t i = 0; i < n; i++) {
                    send[i] = p[i].send;
                    key[i] = p[i].key;
                }
                free(p);
                break;
            }
        for (size_t j = 1; j < n; j++)
            key[j] = key[j] > key[j - 1] ? key[j] : key[j - 1];
    }
    for (size_t k = 0; k < g->n_chans; k++)
        g->sorted[k] = k;
    qsort_r(g->sorted, g->n_chans, sizeof *g->sorted, cmp_channel, g->chans);
    earl_map_free(&ix);
    return EARL_OK;
nomem:
    earl_map_free(&ix);
    return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory grouping the sends", path);
}

/* The sorted channels below a key. */
typedef struct channel_bound {
    const send_groups *g;
    channel key;
} channel_bound;

static int channel_before(const void *ctx, size_t k)
{
    const channel_bound *b = ctx;
    return cmp_key(&b->g->chans[b->g->sorted[k]], &b->key) < 0;
}

/* The first sorted channel whose (dest, comm, source, tag) >= (d, c, s, t). */
static size_t lower_channel(const send_groups *g, earl_loc d, uint32_t c, earl_loc s, uint32_t t)
{
    channel_bound b = {g, {d, c, s, t, 0, 0}};
    return earl_partition_point(0, g->n_chans, channel_before, &b);
}

/* The first send of channel ch whose receive was posted at or after
 * `posted` (or that was never received), -1. */
static earl_eid first_after(const send_groups *g, const channel *ch, earl_eid posted)
{
    size_t lo = earl_i64_lower_bound(g->key_max + ch->start, 0, ch->n, posted);
    return lo < ch->n ? g->send[ch->start + lo] : -1;
}

/* ---- the table ------------------------------------------------------------------- */

/* The receive arrays for n receives, from the store's warm blocks (the
 * table has a row for every wildcard receive: millions on large traces). */
static int alloc_receives(races_table *t, size_t n)
{
    t->cap_receives = n + 1;
    t->recv = earl_mem_alloc(t->cap_receives * sizeof *t->recv);
    t->recv_posted = earl_mem_alloc(t->cap_receives * sizeof *t->recv_posted);
    t->recv_send = earl_mem_alloc(t->cap_receives * sizeof *t->recv_send);
    t->recv_any_tag = earl_mem_alloc(t->cap_receives);
    t->alt_start = earl_mem_alloc(t->cap_receives * sizeof *t->alt_start);
    return t->recv && t->recv_posted && t->recv_send && t->recv_any_tag && t->alt_start ? 0 : -1;
}

static int add_pair(races_table *t, earl_eid send, uint8_t lamport)
{
    if (t->n_pairs == t->cap_pairs) {
        size_t cap = t->cap_pairs, c2 = t->cap_pairs;
        if (EARL_GROW(t->alt_send, cap, t->n_pairs + 1) != 0 ||
            EARL_GROW(t->alt_lamport, c2, t->n_pairs + 1) != 0)
            return -1;
        t->cap_pairs = cap < c2 ? cap : c2;
    }
    t->alt_send[t->n_pairs] = send;
    t->alt_lamport[t->n_pairs++] = lamport;
    return 0;
}

/* Most alternatives first, ties in event order.  The receives were added in
 * the message table's order (location by location), so a sort by (count
 * descending, receive event) is needed: the order then depends on the
 * events alone, and the parts of a trace in parts merge into it. */
typedef struct receive_key {
    size_t count;
    earl_eid recv;
    size_t k;
} receive_key;

static int by_count_then_event(const void *a, const void *b)
{
    const receive_key *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->recv > y->recv) - (x->recv < y->recv);
}

static earl_status order_receives(races_table *t, earl_error *err, const char *path)
{
    size_t n = t->n_receives;
    int ordered = 1;
    for (size_t k = 1; k < n && ordered; k++) {
        size_t c0 = t->alt_start[k] - t->alt_start[k - 1], c1 = t->alt_start[k + 1] - t->alt_start[k];
        ordered = c1 < c0 || (c1 == c0 && t->recv[k] > t->recv[k - 1]);
    }
    if (ordered)
        return EARL_OK;
    receive_key *keys = malloc((n ? n : 1) * sizeof *keys);
    races_table o = {0};
    earl_eid *alt = malloc((t->n_pairs ? t->n_pairs : 1) * sizeof *alt);
    uint8_t *lam = malloc(t->n_pairs ? t->n_pairs : 1);
    earl_status st = EARL_OK;
    if (!keys || alloc_receives(&o, n) != 0 || !alt || !lam) {
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory ordering the races", path);
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        keys[k] = (receive_key){t->alt_start[k + 1] - t->alt_start[k], t->recv[k], k};
    qsort(keys, n, sizeof *keys, by_count_then_event);
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
        size_t k = keys[j].k;
        o.recv[j] = t->recv[k];
        o.recv_posted[j] = t->recv_posted[k];
        o.recv_send[j] = t->recv_send[k];
        o.recv_any_tag[j] = t->recv_any_tag[k];
        o.alt_start[j] = at;
        size_t c = t->alt_start[k + 1] - t->alt_start[k];
        if (c) { /* a receive without alternatives: the columns may be NULL */
            memcpy(alt + at, t->alt_send + t->alt_start[k], c * sizeof *alt);
            memcpy(lam + at, t->alt_lamport + t->alt_start[k], c);
        }
        at += c;
    }
    o.alt_start[n] = at;
    o.n_receives = n;
    o.n_pairs = t->n_pairs;
    o.cap_pairs = t->n_pairs;
    o.alt_send = alt;
    o.alt_lamport = lam;
    o.lamport_missed = t->lamport_missed;
    o.recv_without_send = t->recv_without_send;
    alt = NULL;
    lam = NULL;
    races_table_free(t);
    *t = o;
    memset(&o, 0, sizeof o);
done:
    races_table_free(&o);
    free(keys);
    free(alt);
    free(lam);
    return st;
}

earl_status races_find_matches(const earl_trace *trace, earl_states *states,
                               const earl_races_options *opts, const uint8_t *flags,
                               const races_clocks *clocks, races_table *out, earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    const earl_msg_table *msg = &ev->msg;
    const char *path = earl_trace_path(trace);
    int vector = opts->clocks == EARL_RACES_VECTOR;
    memset(out, 0, sizeof *out);
    send_groups g;
    memset(&g, 0, sizeof g);
    earl_status st = group_sends(ev, states, &g, err, path);
    if (st != EARL_OK)
        return st;
    size_t done = 0, n_wild = 0;
    for (size_t q = 0; q < msg->count; q++)
        n_wild += (flags[q] & RACES_CLOCKED) != 0;
    if (alloc_receives(out, n_wild) != 0)
        goto nomem;
    out->alt_start[0] = 0;
    for (size_t q = 0; q < msg->count && st == EARL_OK; q++) {
        earl_eid r = msg->event[q];
        uint8_t kind = ev->kind[r];
        if ((kind != EARL_MPI_RECV && kind != EARL_MPI_IRECV) || !(flags[q] & RACES_CLOCKED))
            continue;
        if (opts->progress && (++done & 0xffff) == 0)
            opts->progress(opts->progress_data, "matches", q, msg->count);
        size_t k = out->n_receives++;
        earl_eid posted = posted_at(ev, r);
        int any_tag = (flags[q] & RACES_ANY_TAG) != 0;
        out->recv[k] = r;
        out->recv_posted[k] = posted;
        out->recv_send[k] = earl_states_ptr(states, EARL_PTR_SEND, r);
        out->recv_any_tag[k] = (uint8_t)any_tag;
        out->alt_start[k] = out->n_pairs;
        if (out->recv_send[k] < 0)
            out->recv_without_send++;
        earl_loc here = ev->location[r];
        uint32_t comm = msg->comm[q], tag = msg->tag[q];
        size_t c = lower_channel(&g, here, comm, INT32_MIN, 0);
        while (c < g.n_chans) {
            const channel *ch = &g.chans[g.sorted[c]];
            if (ch->dest != here || ch->comm != comm)
                break;
            /* the channels of one source are adjacent, by tag: the earliest candidate
               over the tags r accepts */
            earl_loc source = ch->source;
            earl_eid best = -1;
            if (!any_tag) {
                size_t t = lower_channel(&g, here, comm, source, tag);
                ch = t < g.n_chans ? &g.chans[g.sorted[t]] : NULL;
                if (ch && same_channel(ch, here, comm, source, tag))
                    best = first_after(&g, ch, posted);
                c = source == INT32_MAX ? g.n_chans
                                        : lower_channel(&g, here, comm, source + 1, 0);
            } else {
                for (; c < g.n_chans; c++) {
                    ch = &g.chans[g.sorted[c]];
                    if (ch->dest != here || ch->comm != comm || ch->source != source)
                        break;
                    earl_eid s = first_after(&g, ch, posted);
                    if (s >= 0 && (best < 0 || s < best))
                        best = s;
                }
            }
            /* r's own message first: its sender had nothing else for r */
            if (best < 0 || best == out->recv_send[k])
                continue;
            size_t srow = (size_t)ev->ref[best];
            int lamport_late = clocks->lamport[srow] <= clocks->lamport[q];
            int late = vector ? clocks->own[srow] <= clocks->own[q] : lamport_late;
            if (late && add_pair(out, best, (uint8_t)lamport_late) != 0)
                goto nomem;
            if (late && !lamport_late)
                out->lamport_missed++;
        }
        /* the alternatives in event order (sources came in location order) */
        for (size_t a = out->alt_start[k] + 1; a < out->n_pairs; a++) {
            earl_eid s = out->alt_send[a];
            uint8_t l = out->alt_lamport[a];
            size_t b = a;
            for (; b > out->alt_start[k] && out->alt_send[b - 1] > s; b--) {
                out->alt_send[b] = out->alt_send[b - 1];
                out->alt_lamport[b] = out->alt_lamport[b - 1];
            }
            out->alt_send[b] = s;
            out->alt_lamport[b] = l;
        }
        out->alt_start[k + 1] = out->n_pairs;
    }
    if (st == EARL_OK)
        st = order_receives(out, err, path);
    out->bytes = out->cap_receives * (4 * sizeof(earl_eid) + 1) +
                 out->cap_pairs * (sizeof(earl_eid) + 1);
    out->bytes += g.n_chans * (sizeof(channel) + sizeof(size_t)) +
                  g.n_sends * 2 * sizeof(earl_eid);
    groups_free(&g);
    if (opts->progress)
        opts->progress(opts->progress_data, "matches", msg->count, msg->count);
    return st;
nomem:
    groups_free(&g);
    races_table_free(out);
    return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory listing the races", path);
}

void races_table_free(races_table *t)
{
    earl_mem_free(t->recv);
    earl_mem_free(t->recv_posted);
    earl_mem_free(t->recv_send);
    earl_mem_free(t->recv_any_tag);
    earl_mem_free(t->alt_start);
    free(t->alt_send);
    free(t->alt_lamport);
    memset(t, 0, sizeof *t);
}
