/*
 * warnings.c - counted warnings for inconsistent trace content (a LEAVE
 * without ENTER, a request never completed, time running backwards, ...).
 * Every occurrence is counted; the first EARL_WARNING_DETAIL_MAX of each code
 * are kept with their location, position and a short detail, so that a user
 * can find them without the list growing with the trace.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void warning_add(warning_list *w, earl_warning_code code, earl_loc loc,
                 uint64_t position, const char *fmt, ...)
{
    if (w->counts[code]++ >= EARL_WARNING_DETAIL_MAX)
        return;
    if (EARL_GROW(w->items, w->cap, w->n + 1) != 0)
        return; /* the count stays exact; only the detail is lost */
    earl_warning *it = &w->items[w->n++];
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
