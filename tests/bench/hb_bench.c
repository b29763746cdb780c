/*
 * hb_bench.c - vector timestamps of the events of two classes (every send
 * and every receive) against opening the trace.
 *
 *   hb_bench ANCHOR [REPEATS] [THREADS]
 *
 * In one run, on the same archive: earl_trace_open, earl_states_build, then
 * earl_hb_build over the sends (MPI_SEND, MPI_ISEND) and receives (MPI_RECV,
 * MPI_IRECV), best of REPEATS (default 3) each.  Prints "key value" lines for
 * tests/bench/run.py: events, stamped, open_seconds, states_seconds,
 * hb_seconds, hb_bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "earl.h"
#include "earl_hb.h"
#include "earl_states.h"
#include "bench.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ANCHOR [REPEATS] [THREADS]\n", argv[0]);
        return 2;
    }
    int repeats = bench_repeats(argc, argv, 2, 3);
    int threads = argc > 3 ? atoi(argv[3]) : 0;
    earl_error err;
    earl_trace *t = NULL;
    earl_open_options o = {0, NULL, NULL};
    double best_open = 1e30, best_states = 1e30, best_hb = 1e30;
    size_t n = 0, bytes = 0;
    for (int r = 0; r < repeats; r++) {
        double t0 = bench_now();
        if (earl_trace_open(argv[1], &o, &t, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t1 = bench_now();
        earl_states *s = NULL;
        if (earl_states_build(t, NULL, &s, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t2 = bench_now();
        const earl_events *ev = earl_trace_events(t);
        earl_eid *ids = malloc((ev->count + 1) * sizeof *ids);
        n = 0;
        for (size_t i = 0; i < ev->count; i++) {
            uint8_t k = ev->kind[i];
            if (k == EARL_MPI_SEND || k == EARL_MPI_ISEND || k == EARL_MPI_RECV ||
                k == EARL_MPI_IRECV)
                ids[n++] = (earl_eid)i;
        }
        earl_hb_options ho = {threads, NULL, NULL};
        earl_hb *hb = NULL;
        double t3 = bench_now();
        if (earl_hb_build(t, s, ids, n, &ho, &hb, &err) != EARL_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t4 = bench_now();
        bytes = earl_hb_bytes(hb);
        if (t1 - t0 < best_open)
            best_open = t1 - t0;
        if (t2 - t1 < best_states)
            best_states = t2 - t1;
        if (t4 - t3 < best_hb)
            best_hb = t4 - t3;
        printf("events %zu\n", ev->count);
        earl_hb_free(hb);
        free(ids);
        earl_states_free(s);
        earl_trace_close(t);
    }
    printf("stamped %zu\n", n);
    printf("open_seconds %.6f\n", best_open);
    printf("states_seconds %.6f\n", best_states);
    printf("hb_seconds %.6f\n", best_hb);
    printf("hb_bytes %zu\n", bytes);
    return 0;
}
