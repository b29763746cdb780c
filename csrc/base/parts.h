/*
 * parts.h - work split into parts that run on threads of their own: how
 * many cores there are, and running a function on every part.
 *
 * The core's parallel passes (reading the locations, merging the total
 * order, the vector-clock replay, the states pass, the parallel search) give
 * each thread a part of its own and join them all; none of them may depend
 * on how many threads really ran, so a part whose thread cannot be started
 * runs on the caller instead of failing the pass.
 */
#ifndef EARL_BASE_PARTS_H
#define EARL_BASE_PARTS_H

#include <stddef.h>

/* The cores online, at least 1. */
int earl_online_cores(void);

/* Threads for an option whose 0 (or any value below 1) means one per core:
 * asked when it is 1 or more, else earl_online_cores(). */
int earl_threads_or_cores(int asked);

/* Run fn on each of the n parts, part k being the part_size bytes at
 * (char *)parts + k * part_size: part 0 on the caller, parts 1.. on threads
 * of their own, started before part 0 runs; a part whose thread cannot be
 * started runs on the caller after part 0.  Returns when every part is done,
 * with the number of parts that ran on threads of their own. */
size_t earl_parts_run(void *(*fn)(void *), void *parts, size_t part_size, size_t n);

#endif
