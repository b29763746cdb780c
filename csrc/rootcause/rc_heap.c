/*
 * rc_heap.c - the binary max-heap the root-cause subsystem orders its work
 * with: the critical path's pending ends (rc_critical.c) and the heads of
 * the long-term replay's queues (rc_order.c).  Entries are compared by the
 * heap's own function, so one heap serves both orders.
 */
#include <stdlib.h>

#include "rc_internal.h"

int rc_heap_key_less(const rc_heap_entry *x, const rc_heap_entry *y, const void *ctx)
{
    (void)ctx;
    return x->key < y->key;
}

int rc_heap_push(rc_heap *h, rc_heap_entry e)
{
    if (EARL_GROW(h->a, h->cap, h->n + 1) != 0)
        return -1;
    size_t i = h->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!h->less(&h->a[up], &e, h->ctx))
            break;
        h->a[i] = h->a[up];
        i = up;
    }
    h->a[i] = e;
    return 0;
}

rc_heap_entry rc_heap_pop(rc_heap *h)
{
    rc_heap_entry top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->less(&h->a[c], &h->a[c + 1], h->ctx))
            c++;
        if (!h->less(&last, &h->a[c], h->ctx))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = last;
    return top;
}

void rc_heap_free(rc_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}
