/*
 * compiler.h - the compiler hints the core uses: printf-style format
 * checking of the functions that take a format, and branch likelihood on
 * the hot paths of the passes over every event.  Without GCC or Clang they
 * expand to nothing.
 */
#ifndef EARL_BASE_COMPILER_H
#define EARL_BASE_COMPILER_H

#if defined(__GNUC__)
#define EARL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define EARL_LIKELY(x) __builtin_expect(!!(x), 1)
#define EARL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define EARL_PRINTF(f, a)
#define EARL_LIKELY(x) (x)
#define EARL_UNLIKELY(x) (x)
#endif

#endif
