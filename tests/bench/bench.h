/*
 * bench.h - what the C benchmarks of `make bench` share: a monotonic clock
 * in seconds and the repeat count from the command line.  Each benchmark
 * prints "key value" lines that tests/bench/run.py turns into ratios.
 */
#ifndef EARL_BENCH_H
#define EARL_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* argv[k] as a repeat count of at least 1, `fallback` when absent. */
static inline int bench_repeats(int argc, char **argv, int k, int fallback)
{
    int n = argc > k ? atoi(argv[k]) : fallback;
    return n < 1 ? 1 : n;
}

#endif
