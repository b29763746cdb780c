/*
 * warnings.c - counted warnings for inconsistent trace content (a LEAVE
 * without ENTER, a request never completed, time running backwards, ...).
 * Every occurrence is counted; the first EARL_WARNING_DETAIL_MAX of each code
 * are kept with their location, position and a short detail, so that a user
 * can find them without the list growing with the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void *warning_slot(uint64_t *counts, int code, void **items, size_t *n, size_t *cap,
                   size_t item_size)
{
    if (counts[code]++ >= EARL_WARNING_DETAIL_MAX)
        return NULL;
    if (earl_grow(items, cap, *n + 1, item_size) != 0)
        return NULL;
    void *it = (char *)*items + (*n)++ * item_size;
    memset(it, 0, item_size);
    return it;
}

void warning_add(warning_list *w, earl_warning_code code, earl_loc loc,
                 uint64_t position, const char *fmt, ...)
{
    earl_warning *it = warning_slot(w->counts, code, (void **)&w->items, &w->n, &w->cap,
                                    sizeof *w->items);
    if (!it)
        return;
    it->code = code;
    it->location = loc;
    it->position = position;
    it->event = EARL_NONE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->detail, sizeof it->detail, fmt, ap);
    va_end(ap);
}

void warning_list_free(warning_list *w)
{
    free(w->items);
    w->items = NULL;
    w->n = w->cap = 0;
}
