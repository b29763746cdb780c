/*
 * errors.h - how the core reports a failure: every fallible function fills
 * the caller's earl_error (earl.h) with a status and a sentence naming the
 * file and the problem, and returns the status.
 */
#ifndef EARL_BASE_ERRORS_H
#define EARL_BASE_ERRORS_H

#include "earl.h"
#include "base/compiler.h"

/* Fill err (may be NULL) with code and the formatted message; returns code. */
earl_status earl_fail(earl_error *err, earl_status code, const char *fmt, ...)
    EARL_PRINTF(3, 4);

#endif
