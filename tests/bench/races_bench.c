/*
 * races_bench.c - the message-race analysis against opening the trace.
 *
 *   races_bench ANCHOR [REPEATS]
 *
 * In one run, on the same archive: earl_trace_open (one reading thread per
 * core), then the analysis a user gets from `earlc races --wildcard all`:
 * the EARL layer (earl_states_build) and earl_races_build with every receive
 * a wildcard, with vector clocks and with Lamport clocks alone; best of
 * REPEATS (default 3) each.  Prints "key value" lines for tests/bench/run.py:
 * events, open_seconds, states_seconds, races_seconds (vector clocks),
 * lamport_seconds, receives, pairs, lamport_missed, peak_bytes (the
 * analysis's working memory at its peak), result_bytes, max_rss_bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "earl.h"
#include "earl_races.h"
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
    double best_open = 1e30, best_states = 1e30, best_races = 1e30, best_lamport = 1e30;
    size_t events = 0, receives = 0, pairs = 0, peak = 0, result = 0;
    uint64_t missed = 0;
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
        earl_races_options ro = {.clocks = EARL_RACES_VECTOR};
        earl_races *races = NULL;
        if (earl_races_build(t, s, &ro, &races, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t3 = bench_now();
        ro.clocks = EARL_RACES_LAMPORT;
        earl_races *lamport = NULL;
        if (earl_races_build(t, s, &ro, &lamport, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t4 = bench_now();
        best_open = t1 - t0 < best_open ? t1 - t0 : best_open;
        best_states = t2 - t1 < best_states ? t2 - t1 : best_states;
        best_races = t3 - t2 < best_races ? t3 - t2 : best_races;
        best_lamport = t4 - t3 < best_lamport ? t4 - t3 : best_lamport;
        const earl_races_view *v = earl_races_get_view(races);
        events = earl_trace_events(t)->count;
        receives = v->n_receives;
        pairs = v->n_pairs;
        missed = v->lamport_missed;
        peak = earl_races_peak_bytes(races);
        result = earl_races_bytes(races);
        earl_races_free(lamport);
        earl_races_free(races);
        earl_states_free(s);
        earl_trace_close(t);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("events %zu\n", events);
    printf("open_seconds %.6f\n", best_open);
    printf("states_seconds %.6f\n", best_states);
    printf("races_seconds %.6f\n", best_races);
    printf("lamport_seconds %.6f\n", best_lamport);
    printf("receives %zu\n", receives);
    printf("pairs %zu\n", pairs);
    printf("lamport_missed %llu\n", (unsigned long long)missed);
    printf("peak_bytes %zu\n", peak);
    printf("result_bytes %zu\n", result);
    printf("max_rss_bytes %ld\n", ru.ru_maxrss * 1024L);
    return 0;
}
