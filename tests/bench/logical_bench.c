/*
 * logical_bench.c - logical time (earl_logical_build) against opening the
 * trace.
 *
 *   logical_bench ANCHOR [REPEATS]
 *
 * In one run, on the same archive, best of REPEATS (default 3) each:
 * earl_trace_open with one thread per core and with one thread, the EARL
 * layer (earl_states_build), then earl_logical_build.  Prints "key value"
 * lines for tests/bench/run.py: events, stepped, steps, open_seconds,
 * open1_seconds, states_seconds, logical_seconds, logical_bytes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "earl.h"
#include "earl_hb.h"
#include "earl_states.h"
#include "bench.h"

static earl_trace *open_trace(const char *path, int threads, double *seconds)
{
    earl_error err;
    earl_trace *t = NULL;
    earl_open_options o = {threads, NULL, NULL};
    double t0 = bench_now();
    if (earl_trace_open(path, &o, &t, &err) != EARL_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    *seconds = bench_now() - t0;
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ANCHOR [REPEATS]\n", argv[0]);
        return 2;
    }
    int repeats = bench_repeats(argc, argv, 2, 3);
    double best_open = 1e30, best_open1 = 1e30, best_states = 1e30, best_logical = 1e30;
    size_t n = 0, stepped = 0, bytes = 0;
    uint32_t steps = 0;
    for (int r = 0; r < repeats; r++) {
        double s;
        earl_trace_close(open_trace(argv[1], 1, &s));
        if (s < best_open1)
            best_open1 = s;
        earl_trace *t = open_trace(argv[1], 0, &s);
        if (s < best_open)
            best_open = s;
        earl_error err;
        earl_states *st = NULL;
        double t0 = bench_now();
        if (earl_states_build(t, NULL, &st, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t1 = bench_now();
        earl_logical *lt = NULL;
        if (earl_logical_build(t, st, NULL, &lt, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t2 = bench_now();
        if (t1 - t0 < best_states)
            best_states = t1 - t0;
        if (t2 - t1 < best_logical)
            best_logical = t2 - t1;
        n = earl_trace_events(t)->count;
        stepped = earl_logical_count(lt);
        steps = earl_logical_n_steps(lt);
        bytes = earl_logical_bytes(lt);
        earl_logical_free(lt);
        earl_states_free(st);
        earl_trace_close(t);
    }
    printf("events %zu\n", n);
    printf("stepped %zu\n", stepped);
    printf("steps %u\n", (unsigned)steps);
    printf("open_seconds %.6f\n", best_open);
    printf("open1_seconds %.6f\n", best_open1);
    printf("states_seconds %.6f\n", best_states);
    printf("logical_seconds %.6f\n", best_logical);
    printf("logical_bytes %zu\n", bytes);
    return 0;
}
