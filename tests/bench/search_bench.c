/*
 * search_bench.c - the pattern search on the bench trace: how fast the
 * engine evaluates constraints.
 *
 *   search_bench ANCHOR [FIRST_VALUES] [REPEATS]
 *
 * In one run: earl_trace_open, earl_states_build, then two searches of two
 * variables with a || constraint:
 *   checks  "every MPI_ISEND concurrent with an MPI_ISEND": both classes span
 *           every location, so nothing is pruned and every pair is checked;
 *           the first variable is limited to its first FIRST_VALUES values
 *           (default 64), a task of the whole search (the rest would take
 *           hours: the full search is quadratic);
 *   pruned  "every MPI_ISEND of rank 0 concurrent with an MPI_ISEND of rank 1",
 *           complete: each class lies on one location, so each value of the
 *           first variable selects the window of concurrent values of the
 *           second by binary search.
 * Best of REPEATS (default 3) executions each, after one prepare (classes and
 * timestamps, timed too).  Prints "key value" lines for tests/bench/run.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "earl.h"
#include "earl_search.h"
#include "earl_states.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const earl_error *err)
{
    fprintf(stderr, "search_bench: %s\n", err->message);
    exit(1);
}

/* Prepare once, execute `repeats` times; prints key_* lines. */
static void run(const char *key, const char *text, const earl_trace *t, earl_states *s,
                size_t first_values, int repeats)
{
    earl_error err;
    earl_search_program *p = NULL;
    if (earl_search_parse(text, &p, &err) != EARL_OK)
        die(&err);
    earl_search_prepare_options po = {NULL, 1, NULL, NULL};
    earl_search_query *q = NULL;
    double t0 = now();
    if (earl_search_prepare(p, t, s, &po, &q, &err) != EARL_OK)
        die(&err);
    double prepare = now() - t0;
    earl_search_options xo = {0};
    xo.first_end = first_values;
    xo.threads = 1;
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ANCHOR [FIRST_VALUES] [REPEATS]\n", argv[0]);
        return 2;
    }
    size_t first_values = argc > 2 ? strtoull(argv[2], NULL, 10) : 64;
    int repeats = argc > 3 ? atoi(argv[3]) : 3;
    if (repeats < 1)
        repeats = 1;
    earl_error err;
    earl_trace *t = NULL;
    earl_open_options o = {0, NULL, NULL};
    if (earl_trace_open(argv[1], &o, &t, &err) != EARL_OK)
        die(&err);
    earl_states *s = NULL;
    if (earl_states_build(t, NULL, &s, &err) != EARL_OK)
        die(&err);
    printf("events %zu\n", earl_trace_events(t)->count);
    run("checks", "Isend := [\"\", \"MPI_ISEND\", \"\"]; Isend $a, $b; P := $a || $b;", t, s,
        first_values, repeats);
    run("pruned", "A := [\"rank 0\", \"MPI_ISEND\", \"\"]; B := [\"rank 1\", \"MPI_ISEND\", \"\"];"
                  "A $a; B $b; P := $a || $b;", t, s, 0, repeats);
    earl_states_free(s);
    earl_trace_close(t);
    return 0;
}
