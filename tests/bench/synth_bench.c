/*
 * synth_bench.c - the workload generator's speed and memory.
 *
 *   synth_bench DIR N_EVENTS [KIND [RANKS [THREADS]]]
 *
 * Generates a trace of KIND (default halo) with RANKS processes (default 2)
 * of THREADS threads (default 1) and about N_EVENTS events into DIR with
 * earl_synth_run, and prints "key value" lines: events, seconds,
 * events_per_second, max_rss_bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "earl_synth.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: synth_bench DIR N_EVENTS [KIND [RANKS [THREADS]]]\n");
        return 2;
    }
    int kind = earl_synth_kind_from_name(argc > 3 ? argv[3] : "halo");
    if (kind < 0) {
        fprintf(stderr, "synth_bench: unknown kind %s\n", argv[3]);
        return 2;
    }
    earl_synth_options o;
    earl_synth_defaults((earl_synth_kind)kind, &o);
    o.events = strtoull(argv[2], NULL, 10);
    o.ranks = argc > 4 ? (uint32_t)atoi(argv[4]) : 2;
    if (argc > 5)
        o.threads = (uint32_t)atoi(argv[5]);
    o.delay = 200;
    o.delay_rank = o.ranks > 1 ? 1 : 0;
    o.delay_every = 3;
    earl_synth_result r;
    earl_error err;
    if (earl_synth_run(&o, argv[1], &r, &err) != EARL_OK) {
        fprintf(stderr, "synth_bench: %s\n", err.message);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("events %llu\nseconds %.6f\nevents_per_second %.0f\nmax_rss_bytes %ld\n",
           (unsigned long long)r.events, r.seconds, (double)r.events / r.seconds,
           ru.ru_maxrss * 1024L);
    return 0;
}
