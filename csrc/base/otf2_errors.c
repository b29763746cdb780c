/*
 * otf2_errors.c - the libotf2 error handler of otf2_errors.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <otf2/otf2.h>

#include "base/errors.h"
#include "base/otf2_errors.h"

/* libotf2 reports errors through one process-wide callback.  We keep the
 * message per thread, because reading threads run concurrently, and return
 * the code unchanged so libotf2's own error handling goes on as usual. */
static _Thread_local char otf2_message[512];
/* the first code reported since the message was cleared: libotf2 reports a
 * failure up its call chain, and only the first one says what went wrong (a
 * damaged anchor's chunk size, "no valid chunk size", is reported again by
 * its callers as "this could not be done with the given memory") */
static _Thread_local OTF2_ErrorCode otf2_code;

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
    if (otf2_code == OTF2_SUCCESS)
        otf2_code = code;
    return code;
}

void earl_otf2_install_error_handler(void)
{
    OTF2_Error_RegisterCallback(capture_otf2_error, NULL);
}

const char *earl_otf2_last_message(void) { return otf2_message; }

void earl_otf2_clear_message(void)
{
    otf2_message[0] = '\0';
    otf2_code = OTF2_SUCCESS;
}

earl_status earl_otf2_blame_memory(earl_error *err, earl_status st)
{
    int memory = otf2_code == OTF2_ERROR_MEM_FAULT || otf2_code == OTF2_ERROR_MEM_ALLOC_FAILED ||
                 otf2_code == OTF2_ERROR_ENOMEM;
    if (st == EARL_OK || st == EARL_ERR_NOMEM || !memory)
        return st;
    if (!err)
        return EARL_ERR_NOMEM;
    char was[sizeof err->message];
    memcpy(was, err->message, sizeof was);
    return earl_fail(err, EARL_ERR_NOMEM, "out of memory: %.*s",
                     (int)(sizeof was - sizeof "out of memory: "), was);
}
