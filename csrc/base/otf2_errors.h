/*
 * otf2_errors.h - libotf2's error messages, captured for earlc's own: the
 * reader (trace.c, defs.c, reader.c) and the writer quote what libotf2 said
 * in the messages that name the file, and libotf2 must not print to stderr
 * behind the caller's back.
 */
#ifndef EARL_BASE_OTF2_ERRORS_H
#define EARL_BASE_OTF2_ERRORS_H

/* Install the handler (once per process, before libotf2 is used): it keeps
 * the last message per thread and keeps libotf2 from printing it. */
void earl_otf2_install_error_handler(void);
/* The last message libotf2 reported on this thread ("" if none). */
const char *earl_otf2_last_message(void);
void earl_otf2_clear_message(void);

#endif
