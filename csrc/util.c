/*
 * util.c - error reporting, libotf2 error capture and growable arrays used
 * throughout the core.  See util.h.
 */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

earl_status earl_fail(earl_error *err, earl_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* libotf2 reports errors through one process-wide callback.  We keep the
 * message per thread, because reading threads run concurrently, and return
 * the code unchanged so libotf2's own error handling goes on as usual. */
static _Thread_local char otf2_message[512];

static OTF2_ErrorCode capture_otf2_error(void *user_data, const char *file,
                                         uint64_t line, const char *function,
                                         OTF2_ErrorCode code, const char *fmt,
                                         va_list va)
{
    (void)user_data; (void)file; (void)line; (void)function;
    char text[384] = "";
    if (fmt)
        vsnprintf(text, sizeof text, fmt, va);
    snprintf(otf2_message, sizeof otf2_message, "%s%s%s",
             OTF2_Error_GetDescription(code), text[0] ? ": " : "", text);
    return code;
}

void earl_otf2_install_error_handler(void)
{
    OTF2_Error_RegisterCallback(capture_otf2_error, NULL);
}

const char *earl_otf2_last_message(void) { return otf2_message; }
void earl_otf2_clear_message(void) { otf2_message[0] = '\0'; }

static int grow_with(void **p, size_t *cap, size_t need, size_t elem,
                     void *(*realloc_block)(void *, size_t))
{
    if (need <= *cap)
        return 0;
    /* a first reservation is taken exactly: callers reserve known counts */
    size_t n = *cap ? *cap : (need > 16 ? need : 16);
    while (n < need)
        n += n / 2 + 16;
    void *q = realloc_block(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

int earl_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    return grow_with(p, cap, need, elem, realloc);
}

int earl_grow_temp(void **p, size_t *cap, size_t need, size_t elem)
{
    return grow_with(p, cap, need, elem, earl_mem_realloc_temp);
}

static int colset_reserve_with(const earl_colset *set, size_t *cap, size_t need,
                               void *(*realloc_block)(void *, size_t))
{
    if (need <= *cap)
        return 0;
    /* a first reservation is taken exactly: callers reserve known counts */
    size_t n = *cap ? *cap : (need > 16 ? need : 16);
    while (n < need)
        n += n / 2 + 16;
    for (int i = 0; i < set->n; i++) {
        void *q = realloc_block(*set->col[i].data, n * set->col[i].width);
        if (!q)
            return -1; /* columns already grown keep their larger blocks */
        *set->col[i].data = q;
    }
    *cap = n;
    return 0;
}

int earl_colset_reserve(const earl_colset *set, size_t *cap, size_t need)
{
    return colset_reserve_with(set, cap, need, earl_mem_realloc);
}

int earl_colset_reserve_scratch(const earl_colset *set, size_t *cap, size_t need)
{
    return colset_reserve_with(set, cap, need, earl_mem_realloc_scratch);
}

static void colset_free_with(const earl_colset *set, void (*free_block)(void *))
{
    for (int i = 0; i < set->n; i++) {
        free_block(*set->col[i].data);
        *set->col[i].data = NULL;
    }
}

void earl_colset_free(const earl_colset *set) { colset_free_with(set, earl_mem_free); }
void earl_colset_free_unkept(const earl_colset *set) { colset_free_with(set, earl_mem_free_unkept); }

char *earl_strdup(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s ? s : "", n);
    return d;
}

size_t earl_eid_lower_bound(const earl_eid *a, size_t lo, size_t hi, earl_eid x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t earl_eid32_lower_bound(const earl_eid32 *a, size_t lo, size_t hi, earl_eid x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((earl_eid)a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t earl_u64_lower_bound(const uint64_t *a, size_t lo, size_t hi, uint64_t x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
