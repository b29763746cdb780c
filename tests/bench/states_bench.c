/*
 * states_bench.c - the EARL states pass against opening the trace.
 *
 *   states_bench ANCHOR [REPEATS]
 *
 * In one run, on the same archive, it times earl_trace_open (one reading
 * thread per core, the default) and then earl_states_build on the opened
 * trace, best of REPEATS (default 3) each; then (last repetition) building
 * every dense pointer array on request and the first queue query (which
 * builds the queue index).  It prints one "key value" line per measurement
 * for tests/bench/run.py: events, open_seconds, states_seconds,
 * dense_seconds, queue_index_seconds, pass_bytes (heap bytes the states keep
 * after the pass) and states_bytes (with every dense array and the queue
 * index).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "earl.h"
#include "earl_states.h"
#include "bench.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ANCHOR [REPEATS]\n", argv[0]);
        return 2;
    }
    int repeats = bench_repeats(argc, argv, 2, 3);
    earl_error err;
    double best_open = 1e30, best_states = 1e30, queue_seconds = 0, dense_seconds = 0;
    size_t events = 0, bytes = 0, pass_bytes = 0;
    for (int r = 0; r < repeats; r++) {
        earl_trace *t = NULL;
        earl_open_options o = {0, NULL, NULL};
        double t0 = bench_now();
        if (earl_trace_open(argv[1], &o, &t, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t1 = bench_now();
        earl_states *s = NULL;
        if (earl_states_build(t, NULL, &s, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            earl_trace_close(t);
            return 1;
        }
        double t2 = bench_now();
        if (t1 - t0 < best_open)
            best_open = t1 - t0;
        if (t2 - t1 < best_states)
            best_states = t2 - t1;
        events = earl_trace_events(t)->count;
        pass_bytes = earl_states_bytes(s);
        double d0 = bench_now();
        for (int k = 1; k < EARL_POINTER_COUNT; k++)
            earl_states_pointer(s, (earl_pointer)k, &err);
        earl_states_coll_instances(s, &err);
        dense_seconds = bench_now() - d0;
        size_t n = 0;
        double q0 = bench_now();
        earl_states_queue(s, (earl_eid)events / 2, 0, 1, NULL, 0, &n, &err);
        queue_seconds = bench_now() - q0;
        bytes = earl_states_bytes(s);
        earl_states_free(s);
        earl_trace_close(t);
    }
    printf("events %zu\n", events);
    printf("open_seconds %.6f\n", best_open);
    printf("states_seconds %.6f\n", best_states);
    printf("dense_seconds %.6f\n", dense_seconds);
    printf("queue_index_seconds %.6f\n", queue_seconds);
    printf("pass_bytes %zu\n", pass_bytes);
    printf("states_bytes %zu\n", bytes);
    return 0;
}
