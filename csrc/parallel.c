/*
 * parallel.c - the one way the core's kernels split their work over threads
 * (util.h): a kernel cuts its items into parts, earl_parallel runs one part
 * per thread (the caller runs the first) and returns when all are done, so
 * no thread outlives the call and none waits busily.
 *
 * Results never depend on the number of parts: a kernel writes each part's
 * results to places of their own and joins them in part order afterwards
 * (counts summed as integers, lists concatenated).  A part whose thread
 * cannot be started runs on the caller, after the first: slower, the same.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

int earl_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* EARLC_PARALLEL_GRAIN=N makes parts of N items at least instead of what
 * kernels ask for: tests cut small traces into parts with it (read at each
 * call, so that a test can set it for a while). */
static size_t grain_override(void)
{
    const char *env = getenv("EARLC_PARALLEL_GRAIN");
    return env && *env ? strtoull(env, NULL, 10) : 0;
}

int earl_parallel_parts(int threads, size_t items, size_t min_items)
{
    if (threads < 1)
        threads = earl_cores();
    size_t grain = grain_override();
    if (grain)
        min_items = grain;
    if (min_items < 1)
        min_items = 1;
    size_t most = items / min_items;
    if ((size_t)threads > most)
        threads = most > 0 ? (int)most : 1;
    return threads > EARL_MAX_PARTS ? EARL_MAX_PARTS : threads;
}

typedef struct part_call {
    void (*fn)(void *arg, int part);
    void *arg;
    int part;
} part_call;

static void *run_part(void *p)
{
    part_call *c = p;
    c->fn(c->arg, c->part);
    return NULL;
}

void earl_parallel(int parts, void (*fn)(void *arg, int part), void *arg)
{
    if (parts <= 1) {
        fn(arg, 0);
        return;
    }
    if (parts > EARL_MAX_PARTS)
        parts = EARL_MAX_PARTS;
    part_call calls[EARL_MAX_PARTS];
    pthread_t tids[EARL_MAX_PARTS];
    int started[EARL_MAX_PARTS] = {0};
    for (int k = 1; k < parts; k++) {
        calls[k] = (part_call){fn, arg, k};
        started[k] = pthread_create(&tids[k], NULL, run_part, &calls[k]) == 0;
    }
    fn(arg, 0);
    for (int k = 1; k < parts; k++)
        if (!started[k])
            fn(arg, k);
    for (int k = 1; k < parts; k++)
        if (started[k])
            pthread_join(tids[k], NULL);
}
