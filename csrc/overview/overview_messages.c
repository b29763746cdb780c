/*
 * overview_messages.c - messages bundled for a timeline picture
 * (earl_overview_messages, see earl_overview.h).
 *
 * At a zoom where many messages between the same two rows start within a few
 * pixels, their lines cannot be told apart; drawn one by one they merge into
 * a solid block over every row in between.  A bundle stands for them: the
 * messages from one row to another whose sends fall in the same span of
 * bins_per_bundle bins.  The messages are ordered by (sender row, receiver
 * row, span) - with the input position last, so the order, and with it every
 * bundle, is the same on every run - and each run of equal keys becomes one
 * bundle.  A trace's sends come in time order, so a counting sort by pair of
 * rows, which keeps that order within each pair, orders them in O(n) (the
 * HTML page bundles a million messages once per level of detail); other
 * input is sorted by qsort.
 */
#include <stdlib.h>

#include "earl_overview.h"
#include "overview_internal.h"
#include "base/errors.h"

/* A message's sort key and where it came from. */
typedef struct keyed {
    uint32_t src, dst, span, at;
} keyed;

static int same_bundle(const keyed *x, const keyed *y)
{
    return x->src == y->src && x->dst == y->dst && x->span == y->span;
}

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->span != y->span)
        return x->span < y->span ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Pairs of rows a counting sort handles at most (a count of 4 bytes each). */
#define COUNTING_PAIRS ((size_t)1 << 22)

/* Order keys[0..m) by (src, dst, span, at).  On failure *keys is freed. */
static earl_status order_keys(keyed **keys, size_t m, earl_error *err)
{
    keyed *k = *keys;
    uint32_t rows = 0;
    int in_order = 1;
    for (size_t i = 0; i < m; i++) {
        rows = k[i].src >= rows ? k[i].src + 1 : rows;
        rows = k[i].dst >= rows ? k[i].dst + 1 : rows;
        if (i && k[i].span < k[i - 1].span)
            in_order = 0;
    }
    size_t pairs = (size_t)rows * rows;
    if (!in_order || pairs > COUNTING_PAIRS || pairs > m * 4 + 1024) {
        qsort(k, m, sizeof *k, by_key);
        return EARL_OK;
    }
    uint32_t *start = calloc(pairs + 1, sizeof *start);
    keyed *out = malloc((m ? m : 1) * sizeof *out);
    if (!start || !out) {
        free(start);
        free(out);
        free(k);
        *keys = NULL;
        return earl_fail(err, EARL_ERR_NOMEM, "earl_overview_messages: out of memory for %zu "
                         "messages", m);
    }
    for (size_t i = 0; i < m; i++)
        start[(size_t)k[i].src * rows + k[i].dst + 1]++;
    for (size_t p = 0; p < pairs; p++)
        start[p + 1] += start[p];
    for (size_t i = 0; i < m; i++) /* stable: spans and positions stay ascending */
        out[start[(size_t)k[i].src * rows + k[i].dst]++] = k[i];
    free(start);
    free(k);
    *keys = out;
    return EARL_OK;
}

earl_status earl_overview_messages(const int64_t *send_time, const int64_t *recv_time,
                                   const uint32_t *src, const uint32_t *dst, size_t n,
                                   const earl_overview_window *window, uint32_t n_bins,
                                   uint32_t bins_per_bundle, earl_overview_bundle **out,
                                   size_t *n_out, earl_error *err)
{
    if (!out || !n_out || !window || (n && (!send_time || !recv_time || !src || !dst)))
        return earl_fail(err, EARL_ERR_INVALID,
                         "earl_overview_messages: a required argument is NULL");
    *out = NULL;
    *n_out = 0;
    earl_status st = overview_check_window(window, n_bins, "earl_overview_messages", err);
    if (st != EARL_OK)
        return st;
    if (bins_per_bundle < 1)
        return earl_fail(err, EARL_ERR_INVALID,
                         "earl_overview_messages: a bundle spans at least one bin");
    if (n > UINT32_MAX)
        return earl_fail(err, EARL_ERR_INVALID,
                         "earl_overview_messages: at most %u messages at a time", UINT32_MAX);
    keyed *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return earl_fail(err, EARL_ERR_NOMEM, "earl_overview_messages: out of memory for %zu "
                         "messages", n);
    const overview_bins bins = overview_bins_of(window->span, n_bins);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t t = send_time[i] - window->t0;
        if (t < 0 || t >= window->span)
            continue;
        keys[m].src = src[i];
        keys[m].dst = dst[i];
        keys[m].span = overview_bin_of(&bins, t) / bins_per_bundle;
        keys[m].at = (uint32_t)i;
        m++;
    }
    st = order_keys(&keys, m, err);
    if (st != EARL_OK)
        return st;
    earl_overview_bundle *b = malloc((m ? m : 1) * sizeof *b);
    if (!b) {
        free(keys);
        return earl_fail(err, EARL_ERR_NOMEM, "earl_overview_messages: out of memory for %zu "
                         "bundles", m);
    }
    size_t nb = 0;
    for (size_t k = 0; k < m; k++) {
        uint32_t i = keys[k].at;
        if (k == 0 || !same_bundle(&keys[k], &keys[k - 1])) {
            b[nb++] = (earl_overview_bundle){.src = keys[k].src, .dst = keys[k].dst, .count = 0,
                                             .send_first = send_time[i], .send_last = send_time[i],
                                             .recv_first = recv_time[i], .recv_last = recv_time[i]};
        }
        earl_overview_bundle *u = &b[nb - 1];
        u->count++;
        if (send_time[i] < u->send_first)
            u->send_first = send_time[i];
        if (send_time[i] > u->send_last)
            u->send_last = send_time[i];
        if (recv_time[i] < u->recv_first)
            u->recv_first = recv_time[i];
        if (recv_time[i] > u->recv_last)
            u->recv_last = recv_time[i];
    }
    free(keys);
    *out = b;
    *n_out = nb;
    return EARL_OK;
}
