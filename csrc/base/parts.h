/*
 * parts.h - work split into parts that run on threads of their own: how
 * many cores there are, and running a function on every part.
 *
 * The core's parallel passes (reading the locations, merging the total
 * order, the vector-clock replay, the states pass, the parallel search, the
 * call tree and the catalog's kernels) give each thread a part of its own
 * and join them all; none of them may depend on how many threads really ran,
 * so a part whose thread cannot be started runs on the caller instead of
 * failing the pass.
 *
 * Two ways in, one mechanism: earl_parts_run for passes whose parts are
 * structs of their own, earl_parallel for kernels that cut n items into
 * ranges (or whole groups) and give every part the same job; the second runs
 * on the first.
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

/* ---- kernels cut into ranges of items ---------------------------------------
 * A kernel with `threads` (0: one per core) cuts its items into
 * earl_parallel_parts(threads, items, min_items) parts of at least min_items
 * each (fewer items: fewer parts, at least one, at most EARL_MAX_PARTS) and
 * runs fn(arg, part) for every part with earl_parallel, which returns once
 * all are done.  Part k of n items over P parts is
 * [earl_part_start(n, k, P), earl_part_start(n, k + 1, P)).  A kernel's
 * result must not depend on P: each part writes to places of its own, joined
 * in part order.  The environment variable EARLC_PARALLEL_GRAIN (items)
 * replaces every min_items, so that tests cut small inputs into parts. */
#define EARL_MAX_PARTS 64

/* Parts for `items` items on `threads` threads (0: one per core). */
int earl_parallel_parts(int threads, size_t items, size_t min_items);

/* fn(arg, part) for part = 0 .. parts - 1 (earl_parts_run: part 0 on the
 * caller); returns when all are done. */
void earl_parallel(int parts, void (*fn)(void *arg, int part), void *arg);

/* The first item of part `part` of n items cut into `parts` parts. */
static inline size_t earl_part_start(size_t n, int part, int parts)
{
    return (size_t)((unsigned __int128)n * (unsigned)part / (unsigned)parts);
}

#endif
