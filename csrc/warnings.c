/*
 * warnings.c - counted warnings for inconsistent trace content (a LEAVE
 * without ENTER, a request never completed, time running backwards, ...).
 * Every occurrence is counted; the first EARL_WARNING_DETAIL_MAX of each code
 * are kept with their location, position and a short detail, so that a user
 * can find them without the list growing with the trace.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/details.h"

void warning_add(warning_list *w, earl_warning_code code, earl_loc loc,
                 uint64_t position, const char *fmt, ...)
{
    earl_warning *it = earl_detail_slot(w->counts, code, (void **)&w->items, &w->n, &w->cap,
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
