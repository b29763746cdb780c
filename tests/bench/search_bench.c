/*
 * search_bench.c - the pattern search on the bench trace: how fast the
 * engine evaluates constraints.
 *
 *   search_bench ANCHOR [FIRST_VALUES] [REPEATS]
 *   search_bench --parallel ANCHOR FIRST_VALUES THREADS...
 *
 * In one run: earl_trace_open, earl_states_build, then three searches of two
 * variables with a || constraint:
 *   checks  "every MPI_ISEND concurrent with an MPI_ISEND" with range pruning
 *           off, so that every pair is checked: the constraint evaluation
 *           itself; the first variable is limited to its first FIRST_VALUES
 *           values (default 64), a task of the whole search (the rest would
 *           take hours: without pruning the search is quadratic);
 *   windows the same search, complete, with range pruning: each value of the
 *           first variable selects, on each location, the window of concurrent
 *           values of the second by binary search;
 *   pruned  "every MPI_ISEND of rank 0 concurrent with an MPI_ISEND of rank 1",
 *           complete, each class on one location.
 * Best of REPEATS (default 3) executions each, after one prepare (classes and
 * timestamps, timed too).
 *
 * --parallel runs the first search (FIRST_VALUES values of $a, 0: all; no
 * pruning, so that the work is the whole quadratic search) once with each
 * number of threads given: its time and, per thread count, the spread of the
 * nodes the threads visited (max / mean), which predicts the efficiency on a
 * machine with that many cores; the matches must equal the one-thread run.
 * It first measures what the machine gives two threads: the speed-up of two
 * copies of a plain arithmetic loop over one (2.0 on two free cores; less
 * when the cores are shared with other work), the yardstick of the search's
 * own speed-up.
 *
 * Prints "key value" lines for tests/bench/run.py.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "earl.h"
#include "earl_search.h"
#include "earl_states.h"
#include "bench.h"

/* CPU time of the whole process (all threads). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const earl_error *err)
{
    fprintf(stderr, "search_bench: %s\n", err->message);
    exit(1);
}

/* Prepare once, execute `repeats` times; prints key_* lines. */
static void run(const char *key, const char *text, const earl_trace *t, earl_states *s,
                size_t first_values, int no_pruning, int repeats)
{
    earl_error err;
    earl_search_program *p = NULL;
    if (earl_search_parse(text, &p, &err) != EARL_OK)
        die(&err);
    earl_search_prepare_options po = {NULL, 1, NULL, NULL};
    earl_search_query *q = NULL;
    double t0 = bench_now();
    if (earl_search_prepare(p, t, s, &po, &q, &err) != EARL_OK)
        die(&err);
    double prepare = bench_now() - t0;
    earl_search_options xo = {0};
    xo.first_end = first_values;
    xo.threads = 1;
    xo.no_pruning = no_pruning;
    earl_search_stats best = {0};
    best.seconds = 1e30;
    size_t rows = 0;
    for (int r = 0; r < repeats; r++) {
        earl_search_result *res = NULL;
        if (earl_search_execute(q, &xo, &res, &err) != EARL_OK)
            die(&err);
        earl_search_stats st = earl_search_result_stats(res);
        if (st.seconds < best.seconds)
            best = st;
        rows = earl_search_result_rows(res);
        earl_search_result_free(res);
    }
    earl_search_variable_info a, b;
    earl_search_query_variable(q, 0, &a);
    earl_search_query_variable(q, 1, &b);
    size_t bytes = 0, stamped = earl_search_query_stamped(q, &bytes);
    printf("%s_prepare_seconds %.6f\n%s_stamped %zu\n%s_stamp_bytes %zu\n", key, prepare, key,
           stamped, key, bytes);
    printf("%s_domain_a %zu\n%s_domain_b %zu\n", key, a.domain, key, b.domain);
    printf("%s_seconds %.6f\n%s_checks %llu\n%s_nodes %llu\n%s_pruned %llu\n%s_matches %zu\n",
           key, best.seconds, key, (unsigned long long)best.checks, key,
           (unsigned long long)best.nodes, key, (unsigned long long)best.pruned, key, rows);
    earl_search_query_free(q);
    earl_search_program_free(p);
}

static const char *const PAIRS = "Isend := [\"\", \"MPI_ISEND\", \"\"]; Isend $a, $b; P := $a || $b;";

static void *spin(void *arg)
{
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < 400000000u; i++)
        x += i;
    (void)arg;
    return NULL;
}

/* Seconds for `n` threads running spin() each. */
static double spin_seconds(int n)
{
    pthread_t t[2];
    double t0 = bench_now();
    for (int k = 0; k < n; k++)
        pthread_create(&t[k], NULL, spin, NULL);
    for (int k = 0; k < n; k++)
        pthread_join(t[k], NULL);
    return bench_now() - t0;
}

static int parallel(int argc, char **argv)
{
    double one = 1e30, two = 1e30;
    for (int r = 0; r < 3; r++) {
        double a = spin_seconds(1), b = spin_seconds(2);
        one = a < one ? a : one;
        two = b < two ? b : two;
    }
    printf("machine_speedup2 %.4f\n", 2 * one / two);
    earl_error err;
    earl_trace *t = NULL;
    earl_open_options o = {0, NULL, NULL};
    if (earl_trace_open(argv[2], &o, &t, &err) != EARL_OK)
        die(&err);
    earl_states *s = NULL;
    if (earl_states_build(t, NULL, &s, &err) != EARL_OK)
        die(&err);
    earl_search_program *p = NULL;
    earl_search_query *q = NULL;
    if (earl_search_parse(PAIRS, &p, &err) != EARL_OK)
        die(&err);
    if (earl_search_prepare(p, t, s, NULL, &q, &err) != EARL_OK)
        die(&err);
    size_t first_values = strtoull(argv[3], NULL, 10);
    earl_search_result *ref = NULL;
    for (int k = 4; k < argc; k++) {
        earl_search_options xo = {0};
        xo.first_end = first_values;
        xo.threads = atoi(argv[k]);
        xo.no_pruning = 1;
        earl_search_result *r = NULL;
        double cpu0 = cpu_now();
        if (earl_search_execute(q, &xo, &r, &err) != EARL_OK)
            die(&err);
        double cpu = cpu_now() - cpu0;
        earl_search_stats st = earl_search_result_stats(r);
        size_t n = earl_search_result_threads(r);
        double mean = (double)st.nodes / (double)n, max = 0, idle = 0, cpu_sum = 0, cpu_max = 0;
        for (size_t j = 0; j < n; j++) {
            earl_search_thread_stats ts = earl_search_result_thread(r, j);
            if ((double)ts.nodes > max)
                max = (double)ts.nodes;
            idle += ts.idle_seconds;
            cpu_sum += ts.cpu_seconds;
            if (ts.cpu_seconds > cpu_max)
                cpu_max = ts.cpu_seconds;
        }
        printf("par%d_cpu_spread %.4f\n", xo.threads,
               xo.threads > 1 && cpu_sum > 0 ? cpu_max / (cpu_sum / (double)n) : 1.0);
        int same = 1;
        if (!ref) {
            ref = r;
        } else {
            size_t rows = earl_search_result_rows(r), cols = earl_search_result_columns(r);
            same = rows == earl_search_result_rows(ref) &&
                   memcmp(earl_search_result_events(r), earl_search_result_events(ref),
                          rows * cols * sizeof(earl_eid)) == 0;
        }
        printf("par%d_cpu_seconds %.6f\n", xo.threads, cpu);
        printf("par%d_seconds %.6f\npar%d_nodes %llu\npar%d_spread %.4f\npar%d_tasks %llu\n"
               "par%d_stolen %llu\npar%d_idle_seconds %.6f\npar%d_same %d\n",
               xo.threads, st.seconds, xo.threads, (unsigned long long)st.nodes, xo.threads,
               max / mean, xo.threads, (unsigned long long)st.tasks, xo.threads,
               (unsigned long long)st.stolen, xo.threads, idle, xo.threads, same);
        if (r != ref)
            earl_search_result_free(r);
    }
    earl_search_result_free(ref);
    earl_search_query_free(q);
    earl_search_program_free(p);
    earl_states_free(s);
    earl_trace_close(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--parallel") == 0) {
        if (argc < 5) {
            fprintf(stderr, "usage: %s --parallel ANCHOR FIRST_VALUES THREADS...\n", argv[0]);
            return 2;
        }
        return parallel(argc, argv);
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s ANCHOR [FIRST_VALUES] [REPEATS]\n", argv[0]);
        return 2;
    }
    size_t first_values = argc > 2 ? strtoull(argv[2], NULL, 10) : 64;
    int repeats = bench_repeats(argc, argv, 3, 3);
    earl_error err;
    earl_trace *t = NULL;
    earl_open_options o = {0, NULL, NULL};
    if (earl_trace_open(argv[1], &o, &t, &err) != EARL_OK)
        die(&err);
    earl_states *s = NULL;
    if (earl_states_build(t, NULL, &s, &err) != EARL_OK)
        die(&err);
    printf("events %zu\n", earl_trace_events(t)->count);
    run("checks", PAIRS, t, s, first_values, 1, repeats);
    run("windows", PAIRS, t, s, 0, 0, repeats);
    run("pruned", "A := [\"rank 0\", \"MPI_ISEND\", \"\"]; B := [\"rank 1\", \"MPI_ISEND\", \"\"];"
                  "A $a; B $b; P := $a || $b;", t, s, 0, 0, repeats);
    earl_states_free(s);
    earl_trace_close(t);
    return 0;
}
