/*
 * text.h - owned copies of strings, for the names and messages the core
 * keeps (definitions, pattern variables, column names).
 */
#ifndef EARL_BASE_TEXT_H
#define EARL_BASE_TEXT_H

#include <stdlib.h>
#include <string.h>

/* A malloc'd copy of s (NULL reads as ""); NULL when out of memory. */
static inline char *earl_strdup(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s ? s : "", n);
    return d;
}

#endif
