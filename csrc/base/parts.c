/*
 * parts.c - cores and parts on threads (parts.h): earl_parts_run starts,
 * runs and joins the parts' threads; earl_parallel gives it one small
 * struct per part naming the kernel's function, its job and the part.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/parts.h"

int earl_online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int earl_threads_or_cores(int asked)
{
    return asked >= 1 ? asked : earl_online_cores();
}

size_t earl_parts_run(void *(*fn)(void *), void *parts, size_t part_size, size_t n)
{
    if (n == 0)
        return 0;
    char *base = parts;
    /* started[k - 1]: part k runs on tids[k - 1]; without memory for them,
     * every part runs here */
    pthread_t *tids = n > 1 ? malloc((n - 1) * sizeof *tids) : NULL;
    unsigned char *started = n > 1 ? calloc(n - 1, 1) : NULL;
    size_t on_threads = 0;
    for (size_t k = 1; k < n && tids && started; k++) {
        started[k - 1] = pthread_create(&tids[k - 1], NULL, fn, base + k * part_size) == 0;
        on_threads += started[k - 1];
    }
    fn(base);
    for (size_t k = 1; k < n; k++)
        if (!(tids && started && started[k - 1]))
            fn(base + k * part_size);
    for (size_t k = 1; k < n && tids && started; k++)
        if (started[k - 1])
            pthread_join(tids[k - 1], NULL);
    free(tids);
    free(started);
    return on_threads;
}

/* EARLC_PARALLEL_GRAIN=N makes parts of N items at least instead of what
 * kernels ask for: tests cut small inputs into parts with it (read at each
 * call, so that a test can set it for a while). */
static size_t grain_override(void)
{
    const char *env = getenv("EARLC_PARALLEL_GRAIN");
    return env && *env ? strtoull(env, NULL, 10) : 0;
}

int earl_parallel_parts(int threads, size_t items, size_t min_items)
{
    threads = earl_threads_or_cores(threads);
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
    for (int k = 0; k < parts; k++)
        calls[k] = (part_call){fn, arg, k};
    earl_parts_run(run_part, calls, sizeof *calls, (size_t)parts);
}
