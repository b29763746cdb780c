/*
 * writer_test_util.h - small helpers of the C tests that write archives:
 * scratch folders under /tmp and their removal, running a command.
 * Header-only (static functions) so that each test program is one file.
 */
#ifndef WRITER_TEST_UTIL_H
#define WRITER_TEST_UTIL_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int wtu_remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* rm -rf path */
static inline void wtu_remove_tree(const char *path)
{
    nftw(path, wtu_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh folder /tmp/earl-test-XXXXXX; the caller frees and removes it. */
static inline char *wtu_scratch(void)
{
    char *dir = strdup("/tmp/earl-test-XXXXXX");
    if (!dir || !mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
    return dir;
}

static inline int wtu_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Entries of folder dir whose name starts with prefix. */
static inline int wtu_count_prefixed(const char *dir, const char *prefix)
{
    char cmd[4096];
    int n = 0;
    FILE *p;
    snprintf(cmd, sizeof cmd, "ls -1 '%s' | grep -c '^%s'", dir, prefix);
    p = popen(cmd, "r");
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = 0;
        pclose(p);
    }
    return n;
}

/* Run a shell command; its standard output (and error) in *out (malloc'ed).
 * Returns the exit status, -1 if it could not be run. */
static inline int wtu_run(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (cap - n < 4096) {
            char *b = realloc(buf, cap * 2);
            if (!b)
                break;
            buf = b;
            cap *= 2;
        }
    }
    if (buf)
        buf[n] = 0;
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
