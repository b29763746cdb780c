/*
 * rc_order.c - the order of the long-term backward replay (rc_longterm.c):
 * Scalasca's parallel backward replay, run on one thread.
 *
 * In Scalasca every location walks its events backwards; it takes each wait
 * state it delayed at its own point (the late side's event), and the cost
 * that wait state reads at a waiting point is complete once the waiting
 * location has walked past that point, that is once every wait state that
 * location delayed at a later point has been taken.  Here every location
 * has a queue of the wait states it delayed, latest point first; the head of
 * a queue is ready when every location it reads from has no head left later
 * than the point read there.  Among the ready heads the one at the latest
 * event goes first (a deterministic choice: any order of ready heads gives
 * the same costs, up to the order of floating-point sums).
 *
 * A head that is not ready waits in the queue of the first location it reads
 * from whose head is still later than its point, keyed by that point, and is
 * looked at again when that location's head moves past it: every read is
 * checked once it holds (heads only move back in time), so the order costs
 * O((items + reads) log items).  When no head is ready the dependencies form
 * a cycle (an inconsistent trace): the latest head goes anyway, counted.
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

/* The items' ranks in the order of a location's queue: its latest point
 * first, a collective before a point-to-point wait state at one event, else
 * in the order given. */
int rc_later_first(const rc_order_item *a, const rc_order_item *b)
{
    if (a->event != b->event)
        return a->event > b->event ? -1 : 1;
    if (a->collective != b->collective)
        return a->collective > b->collective ? -1 : 1;
    return 0;
}

/* An item with its sort keys beside it (qsort passes no context). */
typedef struct keyed_item {
    rc_order_item item;
    size_t index;
} keyed_item;

static int by_location_then_later(const void *x, const void *y)
{
    const keyed_item *a = x, *b = y;
    if (a->item.location != b->item.location)
        return a->item.location < b->item.location ? -1 : 1;
    int c = rc_later_first(&a->item, &b->item);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* The state of the walk: the queues (ranges of `queue`, item indices by
 * location, latest first), each one's head, the heads ready to go and the
 * heads waiting for another location. */
typedef struct walk {
    const rc_order_item *items;
    const rc_order_read *reads;
    size_t n_locations;
    size_t *queue;
    size_t *end, *head;         /* per location: its range of queue is [head, end) */
    size_t *read_cursor;        /* per item: its first read not known to hold */
    rc_heap ready;              /* value: location; ordered by its head's item */
    rc_heap *waiting;           /* per location: heads waiting for it, keyed by their point */
} walk;

/* The event of location l's head, -1 when its queue is done. */
static int64_t head_event(const walk *w, size_t l)
{
    return w->head[l] < w->end[l] ? w->items[w->queue[w->head[l]]].event : -1;
}

static int ready_less(const rc_heap_entry *x, const rc_heap_entry *y, const void *ctx)
{
    const walk *w = ctx;
    size_t i = w->queue[w->head[x->value]], j = w->queue[w->head[y->value]];
    int c = rc_later_first(&w->items[i], &w->items[j]);
    return c ? c > 0 : i > j;
}

/* Look at location l's head: ready, or waiting for the first location it
 * reads from whose head is later than the point read there.  -1 when out of
 * memory. */
static int look_at(walk *w, size_t l)
{
    size_t item = w->queue[w->head[l]];
    const rc_order_item *it = &w->items[item];
    for (size_t r = w->read_cursor[item]; r < it->n_reads; r++) {
        const rc_order_read *rd = &w->reads[it->first_read + r];
        size_t x = (size_t)rd->location;
        /* a point of its own location is walked past by its own queue */
        if (x != l && head_event(w, x) > rd->event) {
            w->read_cursor[item] = r;
            return rc_heap_push(&w->waiting[x], (rc_heap_entry){rd->event, l, w->head[l]});
        }
    }
    w->read_cursor[item] = it->n_reads;
    return rc_heap_push(&w->ready, (rc_heap_entry){0, l, w->head[l]});
}

/* The location of the latest head of all (the walk goes on there when no
 * head is ready). */
static size_t latest_head(const walk *w)
{
    size_t best = w->n_locations;
    for (size_t l = 0; l < w->n_locations; l++) {
        if (w->head[l] == w->end[l])
            continue;
        if (best == w->n_locations ||
            rc_later_first(&w->items[w->queue[w->head[l]]], &w->items[w->queue[w->head[best]]]) < 0)
            best = l;
    }
    return best;
}

static void walk_free(walk *w)
{
    free(w->queue);
    free(w->end);
    free(w->head);
    free(w->read_cursor);
    rc_heap_free(&w->ready);
    for (size_t l = 0; w->waiting && l < w->n_locations; l++)
        rc_heap_free(&w->waiting[l]);
    free(w->waiting);
}

int rc_replay_order(size_t n_items, const rc_order_item *items, const rc_order_read *reads,
                    size_t n_locations, size_t *order, size_t *out_of_order)
{
    walk w = {items, reads, n_locations, NULL, NULL, NULL, NULL, {0}, NULL};
    w.ready.less = ready_less;
    w.ready.ctx = &w;
    size_t nl = n_locations ? n_locations : 1;
    *out_of_order = 0;
    keyed_item *sorted = malloc((n_items ? n_items : 1) * sizeof *sorted);
    w.queue = malloc((n_items ? n_items : 1) * sizeof *w.queue);
    w.end = calloc(nl, sizeof *w.end);
    w.head = calloc(nl, sizeof *w.head);
    w.read_cursor = calloc(n_items ? n_items : 1, sizeof *w.read_cursor);
    w.waiting = calloc(nl, sizeof *w.waiting);
    if (!sorted || !w.queue || !w.end || !w.head || !w.read_cursor || !w.waiting) {
        free(sorted);
        goto nomem;
    }
    for (size_t l = 0; l < n_locations; l++)
        w.waiting[l].less = rc_heap_key_less;
    for (size_t i = 0; i < n_items; i++)
        sorted[i] = (keyed_item){items[i], i};
    qsort(sorted, n_items, sizeof *sorted, by_location_then_later);
    for (size_t k = 0; k < n_items; k++) {
        w.queue[k] = sorted[k].index;
        w.end[sorted[k].item.location] = k + 1;
    }
    free(sorted);
    /* location l's queue starts where the previous one's ends */
    for (size_t l = 0, start = 0; l < n_locations; l++) {
        if (w.end[l] < start)
            w.end[l] = start;
        w.head[l] = start;
        start = w.end[l];
    }
    for (size_t l = 0; l < n_locations; l++)
        if (w.head[l] < w.end[l] && look_at(&w, l) < 0)
            goto nomem;
    for (size_t done = 0; done < n_items; done++) {
        size_t l;
        if (w.ready.n) {
            l = rc_heap_pop(&w.ready).value;
        } else {
            l = latest_head(&w);
            ++*out_of_order;
        }
        order[done] = w.queue[w.head[l]];
        w.head[l]++;
        /* l's head moved back in time: the heads waiting for it may go */
        rc_heap *h = &w.waiting[l];
        int64_t now = head_event(&w, l);
        while (h->n && h->a[0].key >= now) {
            rc_heap_entry e = rc_heap_pop(h);
            if (w.head[e.value] == e.stamp && look_at(&w, e.value) < 0)
                goto nomem;
        }
        if (w.head[l] < w.end[l] && look_at(&w, l) < 0)
            goto nomem;
    }
    walk_free(&w);
    return 0;
nomem:
    walk_free(&w);
    return -1;
}
