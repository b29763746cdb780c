/*
 * errors.c - filling an earl_error (errors.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "base/errors.h"

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
