/*
 * earl_api.h - what every public header of the earlc C core shares: the
 * version of the API and the mark of its functions.
 *
 * The core is compiled with hidden visibility (-fvisibility=hidden): a
 * shared object built from it (the Python extension, or any library that
 * links libearl.a) exports the functions marked EARL_API, the functions of
 * the public headers in this folder, and nothing else of the core, so that
 * its internal names can never clash with another library's in the same
 * process.  docs/c-api.md describes the API as a whole.
 */
#ifndef EARL_API_H
#define EARL_API_H

/* The version of the package; a function's documentation names the version
 * that introduced it ("Since 0.1.0"). */
#define EARL_VERSION_MAJOR 0
#define EARL_VERSION_MINOR 1
#define EARL_VERSION_PATCH 0
#define EARL_VERSION "0.1.0"

#if defined(__GNUC__)
#define EARL_API __attribute__((visibility("default")))
#else
#define EARL_API
#endif

#endif /* EARL_API_H */
