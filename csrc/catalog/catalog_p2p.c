/*
 * catalog_p2p.c - point-to-point messages for the catalog (earl_catalog.h):
 * the received messages with the calls around them (earl_p2p_find), and the
 * search behind Late Sender, wrong order (earl_wrong_order).
 *
 * earl_p2p_find reads each receive's pointers once and writes only the rows
 * that are kept, where numpy needs a full-length temporary per step.
 * earl_message_sums_build adds the message records up per call path and
 * location in one pass over the events.
 *
 * Every Late Sender asks: on my location, from the first receive after my
 * call on, which is the first message sent before mine?  The messages are
 * put in receive order per location (a counting sort: the receives usually
 * come in the total order already), then each location is swept backwards
 * keeping a stack of the messages that are sent earlier than everything
 * between the sweep's position and them (the suffix minima of the send
 * times, nearest on top).  The first message from position p on that was
 * sent before time v is the nearest stack entry sent before v, found by a
 * binary search in the stack when the sweep stands at p.  Each message is
 * pushed and popped once: O(n log n) overall for any order of the sends
 * (walking forward message by message would be quadratic on a location that
 * receives in reverse sending order).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>

#include "earl_catalog.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/mem.h"
#include "base/parts.h"
#include "base/sorted.h"

static int is_send_kind(uint8_t kind)
{
    return kind == EARL_MPI_SEND || kind == EARL_MPI_ISEND;
}

static int is_recv_kind(uint8_t kind)
{
    return kind == EARL_MPI_RECV || kind == EARL_MPI_IRECV;
}

size_t earl_p2p_capacity(const earl_trace *trace)
{
    const earl_events *ev = earl_trace_events(trace);
    return ev->kind_counts[EARL_MPI_RECV] + ev->kind_counts[EARL_MPI_IRECV];
}

/* The other half of a non-blocking request (the MPI_ISEND_COMPLETE of an
 * MPI_ISEND, the MPI_IRECV_REQUEST of an MPI_IRECV), else the event itself;
 * row: e's row of the message table. */
static earl_eid request_half(const earl_events *ev, earl_eid e, size_t row, uint8_t kind)
{
    if (ev->kind[e] != kind)
        return e;
    earl_eid half = earl_msg_partner(&ev->msg, row);
    return half >= 0 ? half : e;
}

/* earl_p2p_find in parts: the message table's rows are cut into parts, each
 * writing its receives to its own stretch of the columns (offsets from a
 * first count), then the kept rows are closed up in part order and the
 * remaining columns filled in parts of the kept rows. */
typedef struct p2p_job {
    const earl_events *ev;
    earl_states *states;
    const earl_eid32 *enterptr;
    earl_p2p_messages *out;
    int parts;
    size_t *count;  /* per part: its receives (pass 1), then those kept */
    size_t *offset; /* per part: where its receives start in the columns */
    size_t kept;    /* rows kept in all: the range of the last pass */
} p2p_job;

static void p2p_rows(const p2p_job *j, int part, size_t *from, size_t *to)
{
    *from = earl_part_start(j->ev->msg.count, part, j->parts);
    *to = earl_part_start(j->ev->msg.count, part + 1, j->parts);
}

static void p2p_count(void *arg, int part)
{
    p2p_job *j = arg;
    const earl_events *ev = j->ev;
    size_t from, to, n = 0;
    p2p_rows(j, part, &from, &to);
    for (size_t row = from; row < to; row++)
        n += is_recv_kind(ev->kind[ev->msg.event[row]]);
    j->count[part] = n;
}

/* A part's receives, their sends and calls, the kept ones closed up at the
 * start of its stretch.  Column by column, as numpy would, but in place: the
 * loads of one pass do not depend on each other, so the processor overlaps
 * their cache misses; one pass doing everything per message would wait for
 * a chain of dependent misses (receive, its send, the send's call, ...). */
static void p2p_match(void *arg, int part)
{
    p2p_job *j = arg;
    const earl_events *ev = j->ev;
    earl_p2p_messages *out = j->out;
    size_t from, to, at = j->offset[part], n = 0;
    p2p_rows(j, part, &from, &to);
    earl_eid *recv = out->recv + at, *send = out->send + at;
    earl_eid *recv_call = out->recv_call + at, *send_call = out->send_call + at;
    /* the rows of the receive and of its send, kept where p2p_calls finds
     * them (the columns it fills last) */
    earl_eid *recv_row = out->request_call + at, *send_row = out->completion_call + at;
    const int32_t *match = earl_states_get_view(j->states)->msg_match;
    for (size_t row = from; row < to; row++) {
        earl_eid e = ev->msg.event[row];
        if (is_recv_kind(ev->kind[e])) {
            recv[n] = e;
            recv_row[n] = (earl_eid)row;
            send_row[n++] = match[row];
        }
    }
    for (size_t k = 0; k < n; k++) /* sendptr, from the rows at hand */
        send[k] = send_row[k] >= 0 ? (earl_eid)ev->msg.event[send_row[k]] : EARL_NONE;
    for (size_t k = 0; k < n; k++) {
        recv_call[k] = earl_eid_from32(j->enterptr[recv[k]]);
        send_call[k] = send[k] >= 0 ? earl_eid_from32(j->enterptr[send[k]]) : EARL_NONE;
    }
    size_t kept = 0; /* messages with a send, received and sent inside calls */
    for (size_t k = 0; k < n; k++)
        if (recv_call[k] >= 0 && send_call[k] >= 0) {
            recv[kept] = recv[k];
            send[kept] = send[k];
            recv_call[kept] = recv_call[k];
            send_call[kept] = send_call[k];
            recv_row[kept] = recv_row[k];
            send_row[kept] = send_row[k];
            kept++;
        }
    j->count[part] = kept;
}

/* The times of the kept rows' calls, and the calls completing the sends and
 * posting the receives (the events first, their calls in passes of their own). */
static void p2p_calls(void *arg, int part)
{
    p2p_job *j = arg;
    const earl_events *ev = j->ev;
    const earl_eid32 *enterptr = j->enterptr;
    earl_p2p_messages *out = j->out;
    size_t from = earl_part_start(j->kept, part, j->parts);
    size_t to = earl_part_start(j->kept, part + 1, j->parts);
    for (size_t k = from; k < to; k++) {
        out->recv_call_time[k] = (int64_t)ev->time[out->recv_call[k]];
        out->send_call_time[k] = (int64_t)ev->time[out->send_call[k]];
    }
    for (size_t k = from; k < to; k++) { /* from the rows p2p_match left there */
        out->completion_call[k] = request_half(ev, out->send[k], (size_t)out->completion_call[k],
                                               EARL_MPI_ISEND);
        out->request_call[k] = request_half(ev, out->recv[k], (size_t)out->request_call[k],
                                            EARL_MPI_IRECV);
    }
    for (size_t k = from; k < to; k++)
        out->completion_call[k] = earl_eid_from32(enterptr[out->completion_call[k]]);
    for (size_t k = from; k < to; k++) /* an MPI_RECV posts itself: its call is recv_call */
        out->request_call[k] = out->request_call[k] == out->recv[k]
                                   ? out->recv_call[k]
                                   : earl_eid_from32(enterptr[out->request_call[k]]);
}

earl_status earl_p2p_find(const earl_trace *trace, earl_states *states, earl_p2p_messages *out,
                          int threads, earl_error *err)
{
    const earl_events *ev = earl_trace_events(trace);
    size_t cap = earl_p2p_capacity(trace);
    size_t count[EARL_MAX_PARTS], offset[EARL_MAX_PARTS];
    p2p_job j = {ev, states, earl_states_get_view(states)->enterptr, out,
                 earl_parallel_parts(threads, ev->msg.count, (size_t)1 << 16), count, offset, 0};
    earl_parallel(j.parts, p2p_count, &j);
    size_t n = 0;
    for (int p = 0; p < j.parts; p++) {
        offset[p] = n;
        n += count[p];
    }
    if (n > cap) /* more receives than the kind counts say: a broken store */
        return earl_fail(err, EARL_ERR_INVALID, "%s: more receive records than counted",
                         earl_trace_path(trace));
    earl_parallel(j.parts, p2p_match, &j);
    /* each part's kept rows after the earlier parts' (usually where they are) */
    earl_eid *cols[6] = {out->recv, out->send, out->recv_call, out->send_call,
                         out->completion_call, out->request_call}; /* the last two: rows */
    for (int p = 0; p < j.parts; p++) {
        if (j.kept != offset[p])
            for (int c = 0; c < 6; c++)
                memmove(cols[c] + j.kept, cols[c] + offset[p], count[p] * sizeof *cols[c]);
        j.kept += count[p];
    }
    out->n = j.kept;
    j.parts = earl_parallel_parts(threads, j.kept, (size_t)1 << 16);
    earl_parallel(j.parts, p2p_calls, &j);
    return EARL_OK;
}

/* The sums of one (cnode, location) of sends or receives, found through a
 * hash map. */
typedef struct cell_sum {
    uint64_t key; /* cnode << 32 | location: ascending (cnode, location) */
    int64_t records, payload;
    uint64_t bytes; /* wraps like numpy's int64 sums, without signed overflow */
} cell_sum;

typedef struct cell_sums {
    earl_map cells;
    cell_sum *sum;
    size_t n, cap;
} cell_sums;

/* The cell a location added to last, per side: consecutive records of a
 * location mostly fall into one call path. */
typedef struct last_cell {
    uint64_t key;
    int32_t cell;
} last_cell;

static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const cell_sum *)a)->key, y = ((const cell_sum *)b)->key;
    return (x > y) - (x < y);
}

static int add_to_cell(cell_sums *c, last_cell *last, uint64_t key, uint64_t bytes)
{
    int32_t k = last->cell;
    if (k < 0 || key != last->key) {
        int added;
        int64_t *slot = earl_map_slot(&c->cells, key, 0, (int64_t)c->n, &added);
        if (!slot || (added && EARL_GROW(c->sum, c->cap, c->n + 1) != 0))
            return -1;
        k = (int32_t)*slot;
        if (added)
            c->sum[c->n++] = (cell_sum){key, 0, 0, 0};
        *last = (last_cell){key, k};
    }
    c->sum[k].records++;
    c->sum[k].payload += bytes != 0;
    c->sum[k].bytes += bytes;
    return 0;
}

/* The cells in (cnode, location) order into out's columns. */
static int finish_cells(cell_sums *c, earl_message_sums *out)
{
    size_t n = c->n;
    if (n)
        qsort(c->sum, n, sizeof *c->sum, by_key);
    int64_t **col[5] = {&out->cnode, &out->location, &out->records, &out->payload, &out->bytes};
    for (int j = 0; j < 5; j++)
        if (!(*col[j] = malloc((n ? n : 1) * sizeof **col[j])))
            return -1;
    for (size_t k = 0; k < n; k++) {
        out->cnode[k] = (int64_t)(c->sum[k].key >> 32);
        out->location[k] = (int64_t)(uint32_t)c->sum[k].key;
        out->records[k] = c->sum[k].records;
        out->payload[k] = c->sum[k].payload;
        out->bytes[k] = (int64_t)c->sum[k].bytes;
    }
    out->n = n;
    return 0;
}

earl_status earl_message_sums_build(const earl_events *ev, const int32_t *event_cnode,
                                    size_t n_locations, earl_message_sums *sends,
                                    earl_message_sums *recvs, earl_error *err)
{
    *sends = *recvs = (earl_message_sums){0};
    cell_sums c[2]; /* sends, receives */
    memset(c, 0, sizeof c);
    last_cell *last = malloc(2 * (n_locations ? n_locations : 1) * sizeof *last);
    int ok = last != NULL;
    for (size_t l = 0; ok && l < 2 * n_locations; l++)
        last[l] = (last_cell){0, -1};
    /* the events in the total order, not the message table's (grouped by
     * location): the columns are read front to back instead of once per
     * location, each time a few items of every cache line */
    for (size_t e = 0; e < ev->count && ok; e++) {
        uint8_t kind = ev->kind[e];
        int side = is_send_kind(kind) ? 0 : is_recv_kind(kind) ? 1 : -1;
        if (side < 0 || event_cnode[e] < 0 || ev->ref[e] < 0)
            continue;
        earl_loc l = ev->location[e];
        uint64_t key = (uint64_t)(uint32_t)event_cnode[e] << 32 | (uint32_t)l;
        ok = add_to_cell(&c[side], &last[2 * (size_t)l + (size_t)side], key,
                         ev->msg.bytes[ev->ref[e]]) == 0;
    }
    ok = ok && finish_cells(&c[0], sends) == 0 && finish_cells(&c[1], recvs) == 0;
    for (int side = 0; side < 2; side++) {
        earl_map_free(&c[side].cells);
        free(c[side].sum);
    }
    free(last);
    if (!ok) {
        earl_message_sums_free(sends);
        earl_message_sums_free(recvs);
        return earl_fail(err, EARL_ERR_NOMEM, "message sums: out of memory");
    }
    return EARL_OK;
}

void earl_message_sums_free(earl_message_sums *s)
{
    if (!s)
        return;
    free(s->cnode); free(s->location); free(s->records); free(s->payload); free(s->bytes);
    *s = (earl_message_sums){0};
}

static int ids_in_range(const earl_eid *ids, size_t n, size_t count)
{
    for (size_t k = 0; k < n; k++)
        if (ids[k] < 0 || (size_t)ids[k] >= count)
            return 0;
    return 1;
}

static int by_event(const void *a, const void *b, void *recv)
{
    earl_eid x = ((const earl_eid *)recv)[*(const size_t *)a];
    earl_eid y = ((const earl_eid *)recv)[*(const size_t *)b];
    return (x > y) - (x < y);
}

/* The messages in receive order per location, as rows: rows row_start[l] ..
 * row_start[l + 1] are location l's; row r is message row_msg[r], received in
 * call row_call[r], sent at row_sent[r].  The receivers' locations and the
 * send times are gathered first, each in a pass of its own (independent
 * loads, whose cache misses the processor overlaps; msg_loc and msg_sent
 * are temporaries), then the rows are scattered into place (few locations fill
 * at a time, so the writes stay in cache) and later read front to back. */
static void order_by_receiver(const earl_events *ev, size_t n_locations, size_t n_msgs,
                              const earl_eid *recv, const earl_eid *recv_call,
                              const earl_eid *send, earl_loc *msg_loc, int64_t *msg_sent,
                              size_t *row_start, size_t *row_msg, earl_eid *row_call,
                              int64_t *row_sent)
{
    for (size_t k = 0; k < n_msgs; k++)
        msg_loc[k] = ev->location[recv[k]];
    for (size_t k = 0; k < n_msgs; k++)
        msg_sent[k] = (int64_t)ev->time[send[k]];
    memset(row_start, 0, (n_locations + 1) * sizeof *row_start);
    for (size_t k = 0; k < n_msgs; k++)
        row_start[msg_loc[k] + 1]++;
    for (size_t l = 0; l < n_locations; l++)
        row_start[l + 1] += row_start[l];
    for (size_t k = 0; k < n_msgs; k++) { /* row_start[l] advances to the end of l's rows */
        size_t r = row_start[msg_loc[k]]++;
        row_msg[r] = k;
        row_call[r] = recv_call[k];
        row_sent[r] = msg_sent[k];
    }
    memmove(row_start + 1, row_start, n_locations * sizeof *row_start);
    row_start[0] = 0;
    for (size_t l = 0; l < n_locations; l++) {
        size_t lo = row_start[l], hi = row_start[l + 1];
        for (size_t r = lo + 1; r < hi; r++)
            if (recv[row_msg[r]] < recv[row_msg[r - 1]]) {
                qsort_r(row_msg + lo, hi - lo, sizeof *row_msg, by_event, (void *)recv);
                for (size_t q = lo; q < hi; q++) {
                    row_call[q] = recv_call[row_msg[q]];
                    row_sent[q] = msg_sent[row_msg[q]];
                }
                break;
            }
    }
}

/* The first row in [lo, hi) whose call comes after `call` (rows of one call
 * are adjacent and calls ascend along a location).  The Late Senders usually
 * come in call order, so the search gallops from `from` (the previous answer
 * on the location): a few probes near the last answer instead of a binary
 * search over the location's rows. */
static size_t after_call(const earl_eid *row_call, size_t lo, size_t hi, size_t from,
                         earl_eid call)
{
    size_t hint = from >= lo && from <= hi ? from - lo : 0;
    return lo + earl_i64_gallop_lower_bound(row_call + lo, hi - lo, call + 1, hint);
}

/* The entries of a stack of rows sent before a bound (their send times
 * ascend from the bottom). */
typedef struct sent_before {
    const int64_t *row_sent;
    const size_t *stack;
    int64_t bound;
} sent_before;

static int is_sent_before(const void *ctx, size_t k)
{
    const sent_before *b = ctx;
    return b->row_sent[b->stack[k]] < b->bound;
}

earl_status earl_wrong_order(const earl_events *ev, size_t n_locations, size_t n_msgs,
                             const earl_eid *recv, const earl_eid *recv_call,
                             const earl_eid *send, size_t n_late, const earl_eid *late_call,
                             const earl_eid *late_send, int64_t *later_source, earl_error *err)
{
    size_t n = ev->count;
    if (!ids_in_range(recv, n_msgs, n) || !ids_in_range(recv_call, n_msgs, n) ||
        !ids_in_range(send, n_msgs, n) || !ids_in_range(late_call, n_late, n) ||
        !ids_in_range(late_send, n_late, n))
        return earl_fail(err, EARL_ERR_INVALID,
                         "wrong order: an event id is out of range (the trace has %zu events)", n);
    for (size_t j = 0; j < n_late; j++)
        later_source[j] = EARL_NONE;
    if (!n_msgs || !n_late)
        return EARL_OK;
    /* an analysis's temporaries (mem.c), on pages earlier temporaries left
     * warm: fresh pages would be zeroed by the kernel first, which costs more
     * than the search */
    size_t *row_start = earl_mem_alloc_temp((n_locations + 1) * sizeof *row_start);
    size_t *row_msg = earl_mem_alloc_temp(n_msgs * sizeof *row_msg);
    earl_eid *row_call = earl_mem_alloc_temp(n_msgs * sizeof *row_call);
    int64_t *row_sent = earl_mem_alloc_temp(n_msgs * sizeof *row_sent);
    size_t *query_start = earl_mem_calloc_temp(n_msgs + 2, sizeof *query_start);
    size_t *query = earl_mem_alloc_temp(n_late * sizeof *query);
    size_t *query_row = earl_mem_alloc_temp(n_late * sizeof *query_row);
    size_t *stack = earl_mem_alloc_temp(n_msgs * sizeof *stack); /* rows */
    size_t *last_answer = earl_mem_alloc_temp((n_locations + 1) * sizeof *last_answer);
    earl_loc *msg_loc = earl_mem_alloc_temp(n_msgs * sizeof *msg_loc);
    int64_t *msg_sent = earl_mem_alloc_temp(n_msgs * sizeof *msg_sent);
    int64_t *query_bound = earl_mem_alloc_temp(n_late * sizeof *query_bound);
    earl_status st = EARL_OK;
    if (!row_start || !row_msg || !row_call || !row_sent || !query_start || !query ||
        !query_row || !stack || !last_answer || !msg_loc || !msg_sent || !query_bound) {
        st = earl_fail(err, EARL_ERR_NOMEM, "wrong order: out of memory for %zu messages", n_msgs);
        goto done;
    }
    order_by_receiver(ev, n_locations, n_msgs, recv, recv_call, send, msg_loc, msg_sent,
                      row_start, row_msg, row_call, row_sent);
    /* the bounds of the queries, likewise in a pass of their own */
    for (size_t j = 0; j < n_late; j++)
        query_bound[j] = (int64_t)ev->time[late_send[j]];

    /* each Late Sender's query starts at the first row after its call; rows
     * past a location's end ask nothing (query_row = n_msgs) */
    for (size_t l = 0; l < n_locations; l++)
        last_answer[l] = row_start[l];
    for (size_t j = 0; j < n_late; j++) {
        earl_loc l = ev->location[late_call[j]];
        size_t hi = row_start[l + 1];
        size_t r = after_call(row_call, row_start[l], hi, last_answer[l], late_call[j]);
        last_answer[l] = r;
        query_row[j] = r < hi ? r : n_msgs;
        query_start[query_row[j] + 1]++;
    }
    for (size_t r = 0; r <= n_msgs; r++)
        query_start[r + 1] += query_start[r];
    for (size_t j = 0; j < n_late; j++)
        query[query_start[query_row[j]]++] = j;
    memmove(query_start + 1, query_start, (n_msgs + 1) * sizeof *query_start);
    query_start[0] = 0;

    for (size_t l = 0; l < n_locations; l++) {
        size_t depth = 0; /* the send times of the stack's rows ascend from the bottom */
        for (size_t r = row_start[l + 1]; r-- > row_start[l];) {
            while (depth && row_sent[stack[depth - 1]] >= row_sent[r])
                depth--;
            stack[depth++] = r;
            for (size_t q = query_start[r]; q < query_start[r + 1]; q++) {
                size_t j = query[q];
                sent_before b = {row_sent, stack, query_bound[j]};
                size_t lo = earl_partition_point(0, depth, is_sent_before, &b);
                if (lo) /* entries [0, lo) were sent before the bound */
                    later_source[j] = ev->location[send[row_msg[stack[lo - 1]]]];
            }
        }
    }
done:
    earl_mem_free(row_start); earl_mem_free(row_msg); earl_mem_free(row_call);
    earl_mem_free(row_sent); earl_mem_free(query_start); earl_mem_free(query);
    earl_mem_free(query_row); earl_mem_free(stack); earl_mem_free(last_answer);
    earl_mem_free(msg_loc); earl_mem_free(msg_sent); earl_mem_free(query_bound);
    return st;
}
