/*
 * clock.h - the clocks the core measures its own work with: wall time for
 * the statistics of a search or a generated trace and for the age of kept
 * memory blocks, a thread's processor time for the search's per-thread
 * statistics.  Never used for anything a result depends on.
 */
#ifndef EARL_BASE_CLOCK_H
#define EARL_BASE_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock (from an arbitrary start). */
static inline double earl_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Processor seconds the calling thread has used. */
static inline double earl_thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
