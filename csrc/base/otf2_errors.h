/*
 * otf2_errors.h - libotf2's error messages, captured for earlc's own: the
 * reader (trace.c, defs.c, reader.c) and the writer quote what libotf2 said
 * in the messages that name the file, and libotf2 must not print to stderr
 * behind the caller's back.
 */
#ifndef EARL_BASE_OTF2_ERRORS_H
#define EARL_BASE_OTF2_ERRORS_H

#include "earl.h"

/* Install the handler (once per process, before libotf2 is used): it keeps
 * the last message per thread and keeps libotf2 from printing it. */
void earl_otf2_install_error_handler(void);
/* The last message libotf2 reported on this thread ("" if none). */
const char *earl_otf2_last_message(void);
void earl_otf2_clear_message(void);

/* A failure st (filled into err) that libotf2 caused on this thread, and
 * whose cause libotf2 first reported as memory (it cannot get a buffer: "this
 * could not be done with the given memory"), is no fault of the archive:
 * it becomes EARL_ERR_NOMEM, its message prefixed with "out of memory: ".
 * Any other status is returned as it is. */
earl_status earl_otf2_blame_memory(earl_error *err, earl_status st);

#endif
