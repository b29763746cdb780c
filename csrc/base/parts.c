/*
 * parts.c - cores and parts on threads (parts.h).
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
