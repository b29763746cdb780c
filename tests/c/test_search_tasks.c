/*
 * test_search_tasks.c - the pieces of the parallel pattern search that can be
 * checked without timing (search_internal.h):
 *   - grouped task generation: for random domain sizes, depths and wanted
 *     counts, every leaf of the search tree over the fixable variables lies in
 *     exactly one task (Rule 4.1 and its theorem), tasks come in canonical
 *     order and their number stays near the wanted one;
 *   - splitting: a search whose every node gives work away (a hook that always
 *     wants work), with the given tasks searched the same way, returns, once
 *     the tasks are sorted, exactly the sequential matches;
 *   - the parallel search for 1..64 threads and several teams and limits gives
 *     the sequential answer (on a generated trace).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "earl.h"
#include "earl_search.h"
#include "earl_states.h"
#include "earl_synth.h"
#include "search/search_internal.h"
#include "writer_test_util.h"
#include "base/grow.h"
#include "base/parts.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return n ? rng_state % n : 0;
}

/* The task holding leaf v[0 .. depth) (v[0] in [lo, hi)), counted. */
static void check_cover(const size_t *sizes, uint32_t n_fix, size_t lo, size_t hi,
                        const search_task *tasks, size_t n_tasks)
{
    size_t v[8];
    for (uint32_t k = 0; k < n_fix; k++)
        v[k] = k == 0 ? lo : 0;
    for (;;) {
        size_t owners = 0;
        for (size_t t = 0; t < n_tasks; t++) {
            const search_task *x = &tasks[t];
            int in = 1;
            for (uint32_t k = 0; k < x->depth && in; k++)
                in = v[k] == x->prefix[k];
            if (in && x->depth < n_fix)
                in = v[x->depth] >= x->lo && v[x->depth] < x->hi;
            owners += in;
        }
        if (owners != 1)
            fail_msg("leaf (%zu, %zu, ...) of depth %u lies in %zu tasks", v[0],
                     n_fix > 1 ? v[1] : 0, n_fix, owners);
        int32_t k = (int32_t)n_fix - 1;
        while (k >= 0) {
            size_t end = k == 0 ? hi : sizes[k];
            if (++v[k] < end)
                break;
            v[k] = k == 0 ? lo : 0;
            k--;
        }
        if (k < 0)
            break;
    }
}

static void test_grouped_tasks_cover_the_tree_once(void **state)
{
    (void)state;
    for (int round = 0; round < 400; round++) {
        uint32_t n_fix = 1 + (uint32_t)rnd(4);
        size_t sizes[8];
        size_t leaves = 1;
        for (uint32_t k = 0; k < n_fix; k++) {
            sizes[k] = 1 + rnd(k == 0 ? 40 : 9);
            leaves *= sizes[k];
        }
        size_t lo = rnd(sizes[0]), hi = lo + 1 + rnd(sizes[0] - lo);
        size_t wanted = 1 + rnd(70);
        search_task *tasks = NULL;
        size_t n = search_make_tasks(sizes, n_fix, lo, hi, wanted, &tasks);
        assert_true(n != (size_t)-1 && n > 0);
        check_cover(sizes, n_fix, lo, hi, tasks, n);
        for (size_t t = 1; t < n; t++)
            assert_true(search_task_compare(&tasks[t - 1], &tasks[t]) < 0);
        /* the grouped approach with its adjusted group size: at most 1.5 x wanted
         * tasks (about 1.41 x when the group size is adjusted) */
        if (2 * n > 3 * wanted + 1)
            fail_msg("%zu tasks for %zu wanted (depth %u, %zu leaves)", n, wanted, n_fix,
                     leaves);
        free(tasks);
    }
}

/* ---- splitting on a generated trace -------------------------------------------- */

typedef struct fixture {
    char *dir;
    earl_trace *trace;
    earl_states *states;
} fixture;

static earl_error err;

static void ok(earl_status st)
{
    if (st != EARL_OK)
        fail_msg("status %d: %s", (int)st, err.message);
}

static void open_halo(fixture *f)
{
    f->dir = wtu_scratch();
    char path[600];
    snprintf(path, sizeof path, "%s/t", f->dir);
    earl_synth_options o;
    earl_synth_defaults(EARL_SYNTH_HALO, &o);
    o.ranks = 4;
    o.iterations = 6;
    earl_synth_result r;
    ok(earl_synth_run(&o, path, &r, &err));
    ok(earl_trace_open(path, NULL, &f->trace, &err));
    ok(earl_states_build(f->trace, NULL, &f->states, &err));
}

static void close_halo(fixture *f)
{
    earl_states_free(f->states);
    earl_trace_close(f->trace);
    wtu_remove_tree(f->dir);
    free(f->dir);
}

typedef struct given {
    search_task *t;
    size_t n, cap;
} given;

static int always(void *ctx)
{
    (void)ctx;
    return 1;
}

static void collect(void *ctx, const search_task *t)
{
    given *g = ctx;
    if (EARL_GROW(g->t, g->cap, g->n + 1))
        abort();
    g->t[g->n++] = *t;
}

typedef struct done_task {
    search_task t;
    search_matches m;
} done_task;

static int cmp_done(const void *x, const void *y)
{
    return search_task_compare(&((const done_task *)x)->t, &((const done_task *)y)->t);
}

static const char *const patterns[] = {
    "S := [\"\", \"MPI_ISEND\", \"\"]; S $a, $b; P := $a || $b;",
    "S := [\"\", \"MPI_ISEND\", \"\"]; R := [\"\", \"MPI_IRECV\", \"\"]; E := [\"\", \"ENTER\", "
    "\"\"]; S $a; R $r; E ~e; P := $a --> $r & ~e || $r & $a --> ~e;",
    "S := [\"\", \"MPI_ISEND\", \"\"]; S $s, *all; R := [\"\", \"MPI_IRECV\", \"\"]; R $r;"
    "P := $s --> $r & (*all !--> $r | $s !--> *all);",
    "E := [\"rank 1\", \"ENTER\", \"\"]; S := [\"\", \"MPI_ISEND\", \"\"]; E $e; S $a, $b;"
    "P := $e || $a & $a --> $b;",
};

static void run_sequential(const earl_search_query *q, const earl_search_options *base,
                           earl_search_result **out)
{
    earl_search_options o = *base;
    o.threads = 1;
    ok(earl_search_execute(q, &o, out, &err));
}

static void test_split_everywhere_gives_the_sequential_answer(void **state)
{
    (void)state;
    fixture f;
    open_halo(&f);
    for (size_t k = 0; k < sizeof patterns / sizeof *patterns; k++) {
        earl_search_program *p;
        earl_search_query *q;
        ok(earl_search_parse(patterns[k], &p, &err));
        ok(earl_search_prepare(p, f.trace, f.states, NULL, &q, &err));
        earl_search_options so = {0};
        earl_search_result *seq;
        run_sequential(q, &so, &seq);
        /* every node splits: a queue of tasks searched one after the other */
        given g = {0};
        search_hooks h = {.peek = 1, .want_work = always, .give = collect, .ctx = &g};
        search_engine *e = search_engine_new(q->top);
        done_task *done = NULL;
        size_t n_done = 0, cap_done = 0;
        search_task first = {0};
        first.hi = q->top->vars[0].dom->n;
        collect(&g, &first);
        for (size_t next = 0; next < g.n; next++) {
            search_task t = g.t[next];
            if (EARL_GROW(done, cap_done, n_done + 1))
                abort();
            done[n_done].t = t;
            memset(&done[n_done].m, 0, sizeof done[n_done].m);
            done[n_done].m.columns = q->top->columns;
            assert_int_equal(search_engine_run(e, &t, 0, &done[n_done].m, &h, NULL), 0);
            n_done++;
        }
        assert_true(n_done > 10); /* the search did split */
        qsort(done, n_done, sizeof *done, cmp_done);
        size_t rows = 0, cols = q->top->columns;
        const earl_eid *want = earl_search_result_events(seq);
        for (size_t t = 0; t < n_done; t++) {
            for (size_t r = 0; r < done[t].m.rows; r++, rows++) {
                assert_true(rows < earl_search_result_rows(seq));
                assert_memory_equal(done[t].m.ev + r * cols, want + rows * cols,
                                    cols * sizeof(earl_eid));
            }
            free(done[t].m.ev);
        }
        assert_int_equal(rows, earl_search_result_rows(seq));
        assert_true(rows > 0);
        free(done);
        free(g.t);
        search_engine_free(e);
        earl_search_result_free(seq);
        earl_search_query_free(q);
        earl_search_program_free(p);
    }
    close_halo(&f);
}

static void test_threads_teams_and_limits_give_the_sequential_answer(void **state)
{
    (void)state;
    fixture f;
    open_halo(&f);
    static const int threads[] = {2, 3, 8, 64};
    static const uint64_t limits[] = {0, 1, 7, 100};
    for (size_t k = 0; k < sizeof patterns / sizeof *patterns; k++) {
        earl_search_program *p;
        earl_search_query *q;
        ok(earl_search_parse(patterns[k], &p, &err));
        ok(earl_search_prepare(p, f.trace, f.states, NULL, &q, &err));
        for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
            earl_search_options o = {0};
            o.limit = limits[l];
            earl_search_result *seq;
            run_sequential(q, &o, &seq);
            size_t cols = earl_search_result_columns(seq);
            for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
                for (int teams = 1; teams <= 3; teams += 2) {
                    o.threads = threads[t];
                    o.teams = teams;
                    earl_search_result *par;
                    ok(earl_search_execute(q, &o, &par, &err));
                    assert_int_equal(earl_search_result_rows(par), earl_search_result_rows(seq));
                    assert_int_equal(earl_search_result_threads(par), (size_t)threads[t]);
                    if (earl_search_result_rows(seq))
                        assert_memory_equal(earl_search_result_events(par),
                                            earl_search_result_events(seq),
                                            earl_search_result_rows(seq) * cols *
                                                sizeof(earl_eid));
                    assert_int_equal(earl_search_result_truncated(par),
                                     earl_search_result_truncated(seq));
                    earl_search_result_free(par);
                }
            }
            earl_search_result_free(seq);
        }
        earl_search_query_free(q);
        earl_search_program_free(p);
    }
    close_halo(&f);
}

/* NULL options are the defaults, those of a zeroed struct, at every step
 * (every core searches); a NULL error is allowed where a step fails. */
static void test_null_options_are_the_defaults(void **state)
{
    (void)state;
    fixture f;
    open_halo(&f);
    earl_search_program *p;
    earl_search_query *q;
    ok(earl_search_parse(patterns[0], &p, &err));
    ok(earl_search_prepare(p, f.trace, f.states, NULL, &q, &err));
    earl_search_options zero = {0};
    earl_search_result *by_null, *by_zero, *seq;
    ok(earl_search_execute(q, NULL, &by_null, &err));
    ok(earl_search_execute(q, &zero, &by_zero, &err));
    run_sequential(q, &zero, &seq);
    assert_int_equal(earl_search_result_threads(by_null), earl_online_cores());
    assert_int_equal(earl_search_result_threads(by_zero), earl_online_cores());
    assert_int_equal(earl_search_result_rows(by_null), earl_search_result_rows(seq));
    assert_memory_equal(earl_search_result_events(by_null), earl_search_result_events(seq),
                        earl_search_result_rows(seq) * earl_search_result_columns(seq) *
                            sizeof(earl_eid));
    earl_search_query *none = (earl_search_query *)1;
    earl_search_prepare_options unknown = {.pattern = "Nowhere"};
    assert_int_equal(earl_search_prepare(p, f.trace, f.states, &unknown, &none, NULL),
                     EARL_ERR_INVALID);
    assert_null(none);
    earl_search_result_free(by_null);
    earl_search_result_free(by_zero);
    earl_search_result_free(seq);
    earl_search_query_free(q);
    earl_search_program_free(p);
    close_halo(&f);
}

/* A class matching no event is a warning of the query, not an error: its $
 * variable has no match, its * variable holds vacuously (the $-only part of
 * the formula still holds), on one thread and on several. */
static void test_a_class_matching_no_event_is_a_warning(void **state)
{
    (void)state;
    fixture f;
    open_halo(&f);
    static const struct {
        const char *text;
        const char *same_as;  /* the pattern with the answer, NULL: no match */
        size_t warnings;
    } cases[] = {
        {"N := [\"rank 99\", \"\", \"\"]; S := [\"\", \"MPI_ISEND\", \"\"]; S $a; N $n;"
         "P := $a --> $n;", NULL, 1},
        {"N := [\"rank 99\", \"\", \"\"]; S := [\"\", \"MPI_ISEND\", \"\"]; S $a; N *n;"
         "P := $a !--> *n;", "S := [\"\", \"MPI_ISEND\", \"\"]; S $a; P := $a;", 1},
        {"N := [\"rank 99\", \"\", \"\"]; S := [\"\", \"MPI_ISEND\", \"\"]; "
         "R := [\"\", \"MPI_IRECV\", \"\"]; S $a; R $r; P := $a -(N)-> $r;",
         "S := [\"\", \"MPI_ISEND\", \"\"]; R := [\"\", \"MPI_IRECV\", \"\"]; S $a; R $r;"
         "P := $a --> $r;", 1},
        {"N := [\"rank 99\", \"\", \"\"]; N $n; Never := $n; Never *v; "
         "S := [\"\", \"MPI_ISEND\", \"\"]; S $a; P := $a !--> *v;",
         "S := [\"\", \"MPI_ISEND\", \"\"]; S $a; P := $a;", 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        earl_search_program *p, *p2 = NULL;
        earl_search_query *q, *q2 = NULL;
        ok(earl_search_parse(cases[k].text, &p, &err));
        ok(earl_search_prepare(p, f.trace, f.states, NULL, &q, &err));
        assert_int_equal(earl_search_query_warnings(q), cases[k].warnings);
        assert_non_null(strstr(earl_search_query_warning(q, 0),
                               "the class 'N' [\"rank 99\", \"\", \"\"] matches no event"));
        assert_null(earl_search_query_warning(q, cases[k].warnings));
        earl_search_result *want = NULL;
        if (cases[k].same_as) {
            ok(earl_search_parse(cases[k].same_as, &p2, &err));
            ok(earl_search_prepare(p2, f.trace, f.states, NULL, &q2, &err));
            assert_int_equal(earl_search_query_warnings(q2), 0);
            earl_search_options o = {.threads = 1};
            ok(earl_search_execute(q2, &o, &want, &err));
            assert_true(earl_search_result_rows(want) > 0);
        }
        for (int threads = 1; threads <= 3; threads += 2) {
            earl_search_options o = {.threads = threads};
            earl_search_result *r;
            ok(earl_search_execute(q, &o, &r, &err));
            size_t rows = earl_search_result_rows(r);
            assert_int_equal(rows, want ? earl_search_result_rows(want) : 0);
            if (rows)
                assert_memory_equal(earl_search_result_events(r), earl_search_result_events(want),
                                    rows * earl_search_result_columns(r) * sizeof(earl_eid));
            earl_search_result_free(r);
        }
        earl_search_result_free(want);
        earl_search_query_free(q2);
        earl_search_program_free(p2);
        earl_search_query_free(q);
        earl_search_program_free(p);
    }
    close_halo(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grouped_tasks_cover_the_tree_once),
        cmocka_unit_test(test_split_everywhere_gives_the_sequential_answer),
        cmocka_unit_test(test_threads_teams_and_limits_give_the_sequential_answer),
        cmocka_unit_test(test_null_options_are_the_defaults),
        cmocka_unit_test(test_a_class_matching_no_event_is_a_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
