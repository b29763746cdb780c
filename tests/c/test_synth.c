/*
 * test_synth.c - the workload generator's simulator (earl_synth_run) on tiny
 * cases whose severities are computed by hand (docs/generator.md), its
 * parameter checks (nothing written on bad input), the expected.json file,
 * and bounded memory on a larger run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>

#include "earl_synth.h"
#include "writer_test_util.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static earl_error err;

static int64_t total(const earl_synth_result *r, const char *prop)
{
    int p = earl_synth_property_from_name(prop);
    assert_true(p >= 0);
    return r->property_total[p];
}

static uint64_t instances(const earl_synth_result *r, const char *prop)
{
    return r->property_instances[earl_synth_property_from_name(prop)];
}

static void run(earl_synth_options *o, const char *name, earl_synth_result *r)
{
    char *dir = wtu_scratch();
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (earl_synth_run(o, path, r, &err) != EARL_OK)
        fail_msg("synth: %s", err.message);
    char file[600];
    snprintf(file, sizeof(file), "%s/traces.otf2", path);
    assert_true(wtu_exists(file));
    snprintf(file, sizeof(file), "%s/expected.json", path);
    assert_true(wtu_exists(file));
    uint64_t sum = 0;
    for (int k = 0; k < EARL_KIND_COUNT; k++)
        sum += r->kind_counts[k];
    assert_int_equal(sum, r->events);
    wtu_remove_tree(dir);
    free(dir);
}

static void quiet(earl_synth_kind kind, earl_synth_options *o)
{
    earl_synth_defaults(kind, o);
    o->iterations = 1;
    o->compute = 100;
    o->imbalance = 0;
    o->latency = 10;
}

/* ping-pong: rank 0 computes 150 (50 delay) and sends at 150 (buffered: no time), rank 1
 * waits in MPI_Recv from 100 to 160: late sender 50; rank 1 answers at 161, rank 0 waits
 * from 150: late sender 11; it receives at 171 and leaves main at 172. */
static void test_pingpong_late_sender(void **state)
{
    (void)state;
    earl_synth_options o;
    earl_synth_result r;
    quiet(EARL_SYNTH_PINGPONG, &o);
    o.ranks = 2;
    o.delay = 50;
    o.delay_rank = 0;
    run(&o, "pp", &r);
    assert_int_equal(total(&r, "late_sender"), 61);
    assert_int_equal(instances(&r, "late_sender"), 2);
    assert_int_equal(total(&r, "late_receiver"), 0);
    assert_int_equal(r.duration, 172);
    assert_int_equal(r.kind_counts[EARL_MPI_SEND], 2);
    assert_int_equal(r.kind_counts[EARL_MPI_RECV], 2);
    /* time: both ranks' main covers [0, leave]: 172 + 161 */
    assert_int_equal(total(&r, "time"), 172 + 161);
}

/* ring of 2 with synchronous sends: rank 0 sends at 100, rank 1 (receives first) enters
 * MPI_Recv at 140: late receiver 40; its MPI_Send blocks until 141. */
static void test_ring_late_receiver(void **state)
{
    (void)state;
    earl_synth_options o;
    earl_synth_result r;
    quiet(EARL_SYNTH_RING, &o);
    o.ranks = 2;
    o.bytes = 1 << 20;
    o.delay = 40;
    o.delay_rank = 1;
    run(&o, "ring", &r);
    assert_int_equal(total(&r, "late_receiver"), 40);
    assert_int_equal(instances(&r, "late_receiver"), 1);
    /* rank 0 enters MPI_Recv at 141, rank 1's MPI_Send starts at 142 */
    assert_int_equal(total(&r, "late_sender"), 1);
    /* buffered: nobody waits for a receiver; rank 0 sends at 100 (no time) and waits in
     * MPI_Recv from 100 for rank 1's send at 140 */
    o.bytes = 8;
    run(&o, "ring2", &r);
    assert_int_equal(total(&r, "late_receiver"), 0);
    assert_int_equal(total(&r, "late_sender"), 40);
}

/* collectives: rank 2 computes 130 instead of 100 before each operation. */
static void test_collectives_wait(void **state)
{
    (void)state;
    earl_synth_options o;
    earl_synth_result r;
    quiet(EARL_SYNTH_COLLECTIVES, &o);
    o.ranks = 3;
    o.split = 1;
    o.delay = 30;
    o.delay_rank = 2;
    o.root = 2;
    run(&o, "coll", &r);
    /* the barrier is the first operation: everybody starts at 0 */
    assert_int_equal(total(&r, "wait_at_barrier"), 60);
    assert_int_equal(instances(&r, "wait_at_barrier"), 2);
    assert_true(total(&r, "wait_at_nxn") >= 2 * 28);
    /* a late root: the others wait at MPI_Bcast and MPI_Scatter, the root never early */
    assert_true(total(&r, "late_broadcast") >= 4 * 28);
    assert_int_equal(total(&r, "early_reduce"), 0);
    assert_int_equal(r.kind_counts[EARL_MPI_COLLECTIVE_END], 3 * 8);
    /* a late rank 0: the root 2 reduces early, ranks 1 and 2 scan early */
    o.delay_rank = 0;
    run(&o, "coll2", &r);
    assert_true(total(&r, "early_reduce") >= 2 * 28);
    assert_int_equal(instances(&r, "early_reduce"), 2);
    assert_true(total(&r, "early_scan") >= 2 * 28);
    assert_int_equal(total(&r, "late_broadcast"), 0);
}

/* OpenMP: thread 1's loop lasts 150, thread 0's 100: 50 at the implicit barrier; the
 * explicit barrier follows work of half a loop: 75 against 50. */
static void test_omp_barriers(void **state)
{
    (void)state;
    earl_synth_options o;
    earl_synth_result r;
    quiet(EARL_SYNTH_OMP, &o);
    o.threads = 2;
    o.delay = 50;
    o.delay_rank = 0;
    o.delay_thread = 1;
    o.lock_rounds = 0;
    run(&o, "omp", &r);
    assert_int_equal(total(&r, "omp_barrier_wait_implicit"), 50);
    assert_int_equal(total(&r, "omp_barrier_wait_explicit"), 25);
    assert_int_equal(total(&r, "lock_contention"), 0);
    assert_int_equal(r.kind_counts[EARL_THREAD_FORK], 1);
    assert_int_equal(r.kind_counts[EARL_THREAD_TEAM_BEGIN], 2);
    /* lock contention needs two threads and something to contend for */
    o.lock_rounds = 3;
    o.hold = 100;
    run(&o, "omp2", &r);
    assert_true(total(&r, "lock_contention") > 0);
    assert_int_equal(total(&r, "lock_contention"),
                     total(&r, "lock_contention_critical") + total(&r, "lock_contention_api"));
    assert_int_equal(r.kind_counts[EARL_THREAD_ACQUIRE_LOCK], 2 * 2 * 3);
}

static void expect_invalid(earl_synth_options *o, const char *words)
{
    char *dir = wtu_scratch();
    char path[512];
    earl_synth_result r;
    snprintf(path, sizeof(path), "%s/bad", dir);
    assert_int_equal(earl_synth_run(o, path, &r, &err), EARL_ERR_INVALID);
    if (!strstr(err.message, words))
        fail_msg("message '%s' lacks '%s'", err.message, words);
    assert_int_equal(wtu_count_prefixed(dir, ""), 0);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    earl_synth_options o;
    earl_synth_defaults(EARL_SYNTH_RING, &o);
    o.ranks = 0;
    expect_invalid(&o, "ranks must be at least 1");
    earl_synth_defaults(EARL_SYNTH_COLLECTIVES, &o);
    o.root = 4;
    expect_invalid(&o, "outside MPI_COMM_WORLD");
    earl_synth_defaults(EARL_SYNTH_RING, &o);
    o.delay = -1;
    o.delay_rank = 0;
    expect_invalid(&o, "breaks causality");
    earl_synth_defaults(EARL_SYNTH_PINGPONG, &o);
    o.wrong_order = 1;
    o.bytes = o.eager_limit + 1;
    expect_invalid(&o, "deadlocks");
    earl_synth_defaults(EARL_SYNTH_RING, &o);
    o.kind = (earl_synth_kind)99;
    expect_invalid(&o, "unknown kind");
    assert_int_equal(earl_synth_kind_from_name("master-worker"), EARL_SYNTH_MASTER_WORKER);
    assert_int_equal(earl_synth_kind_from_name("nope"), -1);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* 3 million events with an 8 MiB writer budget: the simulator keeps one iteration. */
static void test_bounded_memory(void **state)
{
    (void)state;
    earl_synth_options o;
    earl_synth_result r;
    earl_synth_defaults(EARL_SYNTH_HYBRID, &o);
    o.ranks = 8;
    o.threads = 2;
    o.events = 500000;
    o.memory_limit = 8 << 20;
    run(&o, "warm", &r);
    long before = max_rss_kb();
    o.events = 3000000;
    run(&o, "big", &r);
    long growth = max_rss_kb() - before;
    assert_true(r.events >= 3000000);
    if (growth > 48 * 1024)
        fail_msg("resident memory grew by %ld KiB for %llu events", growth,
                 (unsigned long long)r.events);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pingpong_late_sender),
        cmocka_unit_test(test_ring_late_receiver),
        cmocka_unit_test(test_collectives_wait),
        cmocka_unit_test(test_omp_barriers),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_bounded_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
