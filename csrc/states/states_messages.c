/*
 * states_messages.c - message queues M^{s,d} (paper section 4.2): sendptr,
 * recvptr and the queue query.
 *
 * A channel is (source location, destination location, communicator, tag);
 * MPI's non-overtaking rule makes each channel FIFO, so the k-th receive of
 * a channel matches its k-th send.  Each channel keeps the message rows
 * still unmatched, linked through msg_next (one int32 per message row, for
 * the pass only): pending sends, or pending receives when a receive was
 * ordered before its send (clock skew; matched when the send comes, with a
 * warning).  Sends are MPI_SEND and MPI_ISEND (the request's start),
 * receives MPI_RECV and MPI_IRECV (the completion of a non-blocking
 * receive); peers, communicators and tags come resolved from the msg table.
 * What is still pending after the last event is a counted warning.
 *
 * queue(i, s, d) uses an index built on the first query: the sends of each
 * (s, d) pair in order, with a max segment tree of their receive ids, so
 * the messages in transfer at i are found without scanning the past.
 */
#include <stdlib.h>
#include <string.h>

#include "states_internal.h"

int messages_init(states_pass *p)
{
    size_t nm = p->ev->msg.count;
    p->msg_next = malloc((nm ? nm : 1) * sizeof *p->msg_next);
    if (!p->msg_next)
        return -1;
    return earl_map_init(&p->channels, 64);
}

void messages_free(states_pass *p)
{
    free(p->msg_next);
    free(p->ch_head);
    free(p->ch_tail);
    free(p->ch_recvs);
    earl_map_free(&p->channels);
}

static int64_t channel(states_pass *p, earl_loc src, earl_loc dst, uint32_t comm, uint32_t tag)
{
    uint64_t k1 = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
    uint64_t k2 = (uint64_t)comm << 32 | tag;
    int64_t *slot = earl_map_slot(&p->channels, k1, k2, EARL_NONE, NULL);
    if (!slot) {
        p->nomem = 1;
        return EARL_NONE;
    }
    if (*slot >= 0)
        return *slot;
    size_t c = p->n_channels;
    size_t cap = p->cap_channels;
    if (c + 1 > cap) {
        size_t c1 = cap, c2 = cap;
        if (EARL_GROW(p->ch_head, c1, c + 1) || EARL_GROW(p->ch_tail, c2, c + 1) ||
            EARL_GROW(p->ch_recvs, p->cap_channels, c + 1)) {
            p->nomem = 1;
            return EARL_NONE;
        }
    }
    p->ch_head[c] = p->ch_tail[c] = EARL_NONE;
    p->ch_recvs[c] = 0;
    p->n_channels++;
    /* the slot may have moved if a grow happened: look it up again */
    *earl_map_find(&p->channels, k1, k2) = (int64_t)c;
    return (int64_t)c;
}

static void push(states_pass *p, int64_t ch, int32_t row, uint8_t is_recv)
{
    p->msg_next[row] = -1;
    if (p->ch_head[ch] < 0) {
        p->ch_head[ch] = row;
        p->ch_recvs[ch] = is_recv;
    } else {
        p->msg_next[p->ch_tail[ch]] = row;
    }
    p->ch_tail[ch] = row;
}

static int32_t pop(states_pass *p, int64_t ch)
{
    int32_t row = (int32_t)p->ch_head[ch];
    p->ch_head[ch] = p->msg_next[row];
    if (p->ch_head[ch] < 0)
        p->ch_tail[ch] = EARL_NONE;
    return row;
}

static void link_pair(states_pass *p, int32_t send_row, int32_t recv_row)
{
    p->s->msg_match[send_row] = recv_row;
    p->s->msg_match[recv_row] = send_row;
}

void messages_send(states_pass *p, earl_eid i, earl_loc l)
{
    const earl_msg_table *m = &p->ev->msg;
    int32_t row = p->ev->ref[i];
    if (EARL_UNLIKELY(row < 0))
        return;
    earl_loc dst = m->peer[row];
    if (EARL_UNLIKELY(dst < 0)) {
        states_warn(p->warnings, EARL_SW_MESSAGE_UNRESOLVED, l, i,
                    "send to rank %u of communicator %u: destination unknown",
                    (unsigned)m->peer_rank[row], (unsigned)m->comm[row]);
        return;
    }
    int64_t ch = channel(p, l, dst, m->comm[row], m->tag[row]);
    if (ch < 0)
        return;
    if (p->ch_head[ch] >= 0 && p->ch_recvs[ch]) {
        int32_t recv_row = pop(p, ch);
        earl_eid recv = m->event[recv_row];
        link_pair(p, row, recv_row);
        states_warn(p->warnings, EARL_SW_RECV_BEFORE_SEND, p->ev->location[recv], recv,
                    "receive ordered before its send (event %lld)", (long long)i);
    } else {
        push(p, ch, row, 0);
    }
}

void messages_recv(states_pass *p, earl_eid i, earl_loc l)
{
    const earl_msg_table *m = &p->ev->msg;
    int32_t row = p->ev->ref[i];
    if (EARL_UNLIKELY(row < 0))
        return;
    earl_loc src = m->peer[row];
    if (EARL_UNLIKELY(src < 0)) {
        states_warn(p->warnings, EARL_SW_MESSAGE_UNRESOLVED, l, i,
                    "receive from rank %u of communicator %u: source unknown",
                    (unsigned)m->peer_rank[row], (unsigned)m->comm[row]);
        return;
    }
    int64_t ch = channel(p, src, l, m->comm[row], m->tag[row]);
    if (ch < 0)
        return;
    if (p->ch_head[ch] >= 0 && !p->ch_recvs[ch])
        link_pair(p, pop(p, ch), row);
    else
        push(p, ch, row, 1);
}

void messages_finish(states_pass *p)
{
    const earl_msg_table *m = &p->ev->msg;
    for (size_t c = 0; c < p->n_channels; c++) {
        for (int64_t row = p->ch_head[c]; row >= 0; row = p->msg_next[row]) {
            earl_eid e = m->event[row];
            if (p->ch_recvs[c])
                states_warn(p->warnings, EARL_SW_RECV_WITHOUT_SEND, p->ev->location[e], e,
                            "receive from location %d (communicator %u, tag %u) without a send",
                            (int)m->peer[row], (unsigned)m->comm[row], (unsigned)m->tag[row]);
            else
                states_warn(p->warnings, EARL_SW_SEND_NOT_RECEIVED, p->ev->location[e], e,
                            "send to location %d (communicator %u, tag %u) never received",
                            (int)m->peer[row], (unsigned)m->comm[row], (unsigned)m->tag[row]);
        }
    }
}

/* ---- the queue index and query ------------------------------------------------ */

void messages_index_free(earl_states *s)
{
    earl_map_free(&s->queue_pairs);
    free(s->queue_start);
    free(s->queue_sends);
    free(s->tree_start);
    free(s->queue_tree);
    s->queue_start = s->tree_start = NULL;
    s->queue_sends = s->queue_tree = NULL;
    s->queue_built = 0;
}

static int is_send(uint8_t k)
{
    return k == EARL_MPI_SEND || k == EARL_MPI_ISEND;
}

static size_t tree_size(size_t m)
{
    size_t p = 1;
    while (p < m)
        p <<= 1;
    return m ? 2 * p : 0;
}

static int build_index(earl_states *s)
{
    const earl_events *ev = earl_trace_events(s->trace);
    const earl_msg_table *m = &ev->msg;
    size_t *count = NULL;
    size_t n_pairs = 0, cap_count = 0;
    if (earl_map_init(&s->queue_pairs, 64) != 0)
        return -1;
    /* pass 1: pairs and their send counts */
    for (size_t r = 0; r < m->count; r++) {
        earl_eid e = m->event[r];
        if (!is_send(ev->kind[e]) || m->peer[r] < 0)
            continue;
        uint64_t key = (uint64_t)(uint32_t)ev->location[e] << 32 | (uint32_t)m->peer[r];
        int64_t *slot = earl_map_slot(&s->queue_pairs, key, 0, EARL_NONE, NULL);
        if (!slot)
            goto fail;
        if (*slot < 0) {
            if (EARL_GROW(count, cap_count, n_pairs + 1))
                goto fail;
            count[n_pairs] = 0;
            *slot = (int64_t)n_pairs++;
        }
        count[*slot]++;
    }
    s->queue_start = malloc((n_pairs + 1) * sizeof *s->queue_start);
    s->tree_start = malloc((n_pairs + 1) * sizeof *s->tree_start);
    if (!s->queue_start || !s->tree_start)
        goto fail;
    s->queue_start[0] = s->tree_start[0] = 0;
    for (size_t q = 0; q < n_pairs; q++) {
        s->queue_start[q + 1] = s->queue_start[q] + count[q];
        s->tree_start[q + 1] = s->tree_start[q] + tree_size(count[q]);
        count[q] = 0;
    }
    s->queue_sends = malloc((s->queue_start[n_pairs] + 1) * sizeof *s->queue_sends);
    s->queue_tree = malloc((s->tree_start[n_pairs] + 1) * sizeof *s->queue_tree);
    if (!s->queue_sends || !s->queue_tree)
        goto fail;
    /* pass 2: the sends of each pair in event order (msg rows are grouped by
     * location and in event order within one: the sends of a pair all come
     * from its source location) */
    for (size_t r = 0; r < m->count; r++) {
        earl_eid e = m->event[r];
        if (!is_send(ev->kind[e]) || m->peer[r] < 0)
            continue;
        uint64_t key = (uint64_t)(uint32_t)ev->location[e] << 32 | (uint32_t)m->peer[r];
        int64_t q = *earl_map_find(&s->queue_pairs, key, 0);
        size_t pos = count[q]++, half = tree_size(s->queue_start[q + 1] - s->queue_start[q]) / 2;
        s->queue_sends[s->queue_start[q] + pos] = e;
        earl_eid rv = states_msg_match(s, ev, r);
        s->queue_tree[s->tree_start[q] + half + pos] = rv < 0 ? INT64_MAX : rv;
    }
    /* the trees: leaves are receive ids (INT64_MAX: never received) */
    for (size_t q = 0; q < n_pairs; q++) {
        size_t mq = count[q], half = tree_size(mq) / 2;
        earl_eid *t = s->queue_tree + s->tree_start[q];
        for (size_t j = mq; j < half; j++)
            t[half + j] = EARL_NONE; /* padding */
        for (size_t j = half - 1; j >= 1 && half; j--)
            t[j] = t[2 * j] > t[2 * j + 1] ? t[2 * j] : t[2 * j + 1];
    }
    free(count);
    s->queue_built = 1;
    return 0;
fail:
    free(count);
    messages_index_free(s);
    return -1;
}

typedef struct queue_walk {
    const earl_eid *tree, *sends;
    size_t half, limit; /* leaves [0, limit) are sends <= i */
    earl_eid i;
    earl_eid *out;
    size_t cap, n;
} queue_walk;

static void walk(queue_walk *w, size_t node, size_t lo, size_t hi)
{
    if (lo >= w->limit || w->tree[node] <= w->i)
        return;
    if (node >= w->half) {
        if (w->n < w->cap)
            w->out[w->n] = w->sends[lo];
        w->n++;
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    walk(w, 2 * node, lo, mid);
    walk(w, 2 * node + 1, mid, hi);
}

earl_status earl_states_queue(earl_states *s, earl_eid i, earl_loc src, earl_loc dst,
                              earl_eid *out, size_t cap, size_t *n, earl_error *err)
{
    *n = 0;
    pthread_mutex_lock(&s->lazy_lock);
    int ok = s->queue_built || build_index(s) == 0;
    pthread_mutex_unlock(&s->lazy_lock);
    if (!ok)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory indexing the message queues",
                         earl_trace_path(s->trace));
    if (i < 0 || src < 0 || dst < 0)
        return EARL_OK;
    uint64_t key = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
    const int64_t *q = earl_map_find(&s->queue_pairs, key, 0);
    if (!q)
        return EARL_OK;
    const earl_eid *sends = s->queue_sends + s->queue_start[*q];
    size_t m = s->queue_start[*q + 1] - s->queue_start[*q];
    size_t lo = earl_i64_lower_bound(sends, 0, m, i + 1); /* sends up to i */
    queue_walk w = {s->queue_tree + s->tree_start[*q], sends, tree_size(m) / 2, lo, i,
                    out, out ? cap : 0, 0};
    if (lo > 0)
        walk(&w, 1, 0, w.half);
    *n = w.n;
    return EARL_OK;
}
