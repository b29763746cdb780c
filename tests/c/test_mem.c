/*
 * test_mem.c - cmocka tests of mem.c, the store's memory: contents survive
 * growth, freed large blocks are kept and reused for requests they fit and
 * not for much smaller ones, earl_mem_release, EARLC_KEEP_MEMORY=0 and the
 * expiry (by the reaper thread, without further calls) give memory back;
 * a bank moves consumed pages under output without faults and never
 * touches the pages at the edges of a range; in guard mode dead memory
 * faults when touched.  Under AddressSanitizer every
 * block comes from malloc, so the tests of keeping and moving are skipped
 * there.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include "base/mem.h"


#define MB ((size_t)1 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() skip()
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4093)
        p[i] = (unsigned char)(i * 31 + seed);
    p[n - 1] = (unsigned char)seed;
}

static int same(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4093)
        if (p[i] != (unsigned char)(i * 31 + seed))
            return 0;
    return p[n - 1] == (unsigned char)seed;
}

static void test_growth_keeps_contents(void **state)
{
    (void)state;
    /* small -> small -> large -> larger, the way side tables grow */
    size_t sizes[] = {100, 100 * 1000, 3 * MB, 40 * MB};
    unsigned char *p = earl_mem_alloc(10);
    assert_non_null(p);
    fill(p, 10, 7);
    size_t have = 10;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        p = earl_mem_realloc(p, sizes[k]);
        assert_non_null(p);
        assert_true(same(p, have, 7));
        fill(p, sizes[k], 7);
        have = sizes[k];
    }
    earl_mem_free(p);
    earl_mem_free(NULL); /* like free */
}

static void test_large_blocks_kept_and_reused(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    earl_mem_release();
    earl_mem_stats s0 = earl_mem_get_stats();
    unsigned char *a = earl_mem_alloc(16 * MB);
    assert_non_null(a);
    fill(a, 16 * MB, 3);
    earl_mem_free(a);
    earl_mem_stats s1 = earl_mem_get_stats();
    assert_int_equal(s1.kept_blocks, 1);
    assert_true(s1.kept_bytes >= 16 * MB);
    assert_int_equal(s1.mapped, s0.mapped + 1);

    /* a request it fits takes it back: the same, already touched block */
    unsigned char *b = earl_mem_alloc(15 * MB);
    assert_ptr_equal(b, a);
    earl_mem_stats s2 = earl_mem_get_stats();
    assert_int_equal(s2.reused, s1.reused + 1);
    assert_int_equal(s2.kept_blocks, 0);
    earl_mem_free(b);

    /* a growing array may move into it (up to 8 times its request) */
    unsigned char *c = earl_mem_alloc(100 * 1000);
    fill(c, 100 * 1000, 5);
    c = earl_mem_realloc(c, 3 * MB);
    assert_ptr_equal(c, a);
    assert_true(same(c, 100 * 1000, 5));
    earl_mem_free(c);

    /* a much smaller request does not pin it, and a miss of the store leaves
     * it kept for a request it fits */
    unsigned char *d = earl_mem_alloc(3 * MB);
    assert_ptr_not_equal(d, a);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 1);
    /* an analysis's temporary below 32 MB comes from malloc, whose heap reuses
     * freed temporaries of any size: it leaves kept blocks alone and maps
     * nothing */
    earl_mem_stats before_temp = earl_mem_get_stats();
    unsigned char *temp = earl_mem_calloc_temp(1, 3 * MB);
    assert_non_null(temp);
    assert_int_equal(temp[0] | temp[3 * MB - 1], 0);
    fill(temp, 3 * MB, 6);
    temp = earl_mem_realloc_temp(temp, 6 * MB);
    assert_non_null(temp);
    assert_true(same(temp, 3 * MB, 6));
    assert_int_equal(earl_mem_get_stats().kept_blocks, 1);
    assert_int_equal(earl_mem_get_stats().mapped, before_temp.mapped);
    earl_mem_free(temp);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 1);
    earl_mem_trim();
    /* a scratch array's miss gives kept blocks back, so that the kernel
     * recycles their pages for the new mapping (and so does a temporary's
     * from 32 MB on) */
    unsigned char *e = earl_mem_calloc_scratch(1, 3 * MB);
    assert_ptr_not_equal(e, a);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 0);
    assert_int_equal(e[0] | e[3 * MB - 1], 0);
    earl_mem_free(d);
    earl_mem_free(e);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 2);
    unsigned char *big = earl_mem_alloc_temp(40 * MB); /* a miss: d and e go */
    earl_mem_free(big);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 1);
    unsigned char *big2 = earl_mem_calloc_temp(1, 36 * MB);
    assert_ptr_equal(big2, big);
    assert_int_equal(big2[0] | big2[36 * MB - 1], 0);
    earl_mem_free(big2);
    earl_mem_release();

    /* calloc from a kept block is zeroed */
    unsigned char *f = earl_mem_alloc(16 * MB);
    fill(f, 16 * MB, 9);
    earl_mem_free(f);
    unsigned char *g = earl_mem_calloc(4, 4 * MB);
    assert_ptr_equal(g, f);
    for (size_t i = 0; i < 16 * MB; i += 4093)
        assert_int_equal(g[i], 0);
    earl_mem_free(g);

    earl_mem_release();
    earl_mem_stats s3 = earl_mem_get_stats();
    assert_int_equal(s3.kept_blocks, 0);
    assert_int_equal(s3.kept_bytes, 0);
}

/* Resident pages of [p, p + bytes), by mincore. */
static size_t resident_pages(const void *p, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);
    size_t n = (hi - lo) / page, resident = 0;
    unsigned char *vec = malloc(n);
    assert_non_null(vec);
    assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
    for (size_t k = 0; k < n; k++)
        resident += vec[k] & 1;
    free(vec);
    return resident;
}

/* A block read front to back gives back the whole pages of what was
 * consumed, never the pages at the ends of the range, and is then freed
 * without being kept. */
static void test_discard_gives_back_whole_pages(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    earl_mem_release();
    unsigned char *a = earl_mem_alloc(8 * MB);
    assert_non_null(a);
    memset(a, 0x5a, 8 * MB);
    assert_int_equal(resident_pages(a, 8 * MB), 8 * MB / page);
    /* [100, 3 MB + 100): the pages holding bytes 0..99 and 3 MB..3 MB+99 stay */
    size_t upto = earl_mem_discard(a, 100, 3 * MB + 100);
    assert_int_equal(upto, 3 * MB);
    assert_int_equal(a[99], 0x5a);
    assert_int_equal(a[page - 1], 0x5a);   /* the first page is kept whole */
    assert_int_equal(a[3 * MB], 0x5a);
    assert_int_equal(resident_pages(a + page, 3 * MB - page), 0);
    assert_int_equal(a[page], 0);          /* a page given back reads as zeros */
    /* continuing from where it stopped: nothing below it twice, no gap */
    assert_int_equal(earl_mem_discard(a, upto, upto + page / 2), upto); /* less than a page */
    assert_int_equal(earl_mem_discard(a, upto, 5 * MB), 5 * MB);
    assert_int_equal(resident_pages(a + 3 * MB, 2 * MB), 0);
    assert_int_equal(a[5 * MB], 0x5a);
    earl_mem_free_unkept(a);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 0);

    /* small blocks come from malloc and are left alone */
    unsigned char *s = earl_mem_alloc(64 * 1024);
    memset(s, 1, 64 * 1024);
    assert_int_equal(earl_mem_discard(s, 0, 64 * 1024), 0);
    assert_int_equal(s[32 * 1024], 1);
    earl_mem_free_unkept(s);
    earl_mem_free_unkept(NULL);
}

static long minor_faults(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_minflt;
}

/* Consumed pages deposited in a bank are moved under output with no fault:
 * the output's edge pages, partly someone else's, keep their bytes; the
 * input reads as zeros where its pages left; ranges shorter than a move
 * wait, or are given back when settled; a block that received pages still
 * grows (by a copy) and frees. */
static void test_bank_moves_pages_under_output(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    earl_mem_release();
    unsigned char *in = earl_mem_alloc_scratch(8 * MB);
    unsigned char *out = earl_mem_alloc(8 * MB);
    assert_non_null(in);
    assert_non_null(out);
    memset(in, 0x11, 8 * MB);
    out[page - 1] = 0x77;              /* a neighbour's byte on the first page */
    earl_mem_bank bank;
    earl_mem_bank_init(&bank, 0);
    bank.enabled = 1; /* moving is opt-in (EARLC_MOVE_PAGES=1) */
    assert_int_equal(bank.min_move, 64 * 1024);
    /* too short to move: waits (nothing taken), or is given back when settled */
    assert_int_equal(earl_mem_bank_deposit(&bank, in, 0, 32 * 1024, 0), 0);
    assert_int_equal(bank.n, 0);
    assert_int_equal(in[page], 0x11);
    size_t taken = earl_mem_bank_deposit(&bank, in, 100, 4 * MB + 100, 0);
    assert_int_equal(taken, 4 * MB);
    assert_int_equal(in[99], 0x11);    /* its first page stays */
    assert_int_equal(bank.n, 1);
    /* output [page - 1, 3 MB + 10): whole pages from the second to 3 MB */
    long faults = minor_faults();
    size_t placed = earl_mem_bank_place(&bank, out, page - 1, 3 * MB + 10);
    assert_int_equal(placed, 3 * MB);
    memset(out + page, 0x22, 3 * MB - page);
    assert_true(minor_faults() - faults < 16); /* about 768 without the bank */
    assert_int_equal(out[page - 1], 0x77);
    assert_int_equal(out[3 * MB - 1], 0x22);
    assert_int_equal(resident_pages(out + page, 3 * MB - page), 3 * MB / page - 1);
    assert_int_equal(in[4 * MB - 1], 0); /* moved away (a range's tail first): zeros */
    assert_int_equal(in[4 * MB], 0x11);
    assert_int_equal(in[page], 0x11);
    /* continuing: what is left in the bank goes on from where it stopped */
    size_t more = earl_mem_bank_place(&bank, out, placed, 8 * MB);
    assert_int_equal(more, 4 * MB);     /* the bank held 4 MB minus a page */
    assert_int_equal(bank.n, 0);
    assert_int_equal(bank.moved, 4 * MB - page);
    assert_int_equal(in[page], 0);
    assert_int_equal(earl_mem_bank_place(&bank, out, more, 8 * MB), more); /* empty */
    memset(out + 3 * MB, 0x33, 5 * MB);
    /* settled, a short range is given back */
    assert_int_equal(earl_mem_bank_deposit(&bank, in, 4 * MB, 4 * MB + 32 * 1024, 1),
                     4 * MB + 32 * 1024);
    assert_int_equal(in[4 * MB], 0);
    earl_mem_bank_empty(&bank);
    assert_true(earl_mem_get_stats().moved_bytes >= 4 * MB - page);
    /* the output is now several mappings: it grows by a copy */
    out = earl_mem_realloc(out, 64 * MB);
    assert_non_null(out);
    assert_int_equal(out[page - 1], 0x77);
    assert_int_equal(out[page], 0x22);
    assert_int_equal(out[8 * MB - 1], 0x33);
    memset(out + 8 * MB, 0, 56 * MB);
    earl_mem_free(out);
    earl_mem_free_unkept(in);
    earl_mem_release();

    /* blocks from malloc are left alone, and nothing is placed there */
    unsigned char *s = earl_mem_alloc(64 * 1024), *t = earl_mem_alloc(64 * 1024);
    memset(s, 1, 64 * 1024);
    earl_mem_bank_init(&bank, 0);
    bank.enabled = 1;
    assert_int_equal(earl_mem_bank_deposit(&bank, s, 0, 64 * 1024, 1), 0);
    assert_int_equal(bank.n, 0);
    assert_int_equal(earl_mem_bank_place(&bank, t, 0, 64 * 1024), 0);
    assert_int_equal(s[100], 1);
    earl_mem_free(s);
    earl_mem_free(t);
}

/* Guard mode: does touching p fault?  Run in a child, which the fault kills. */
static int touch_faults(volatile unsigned char *p, int write)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* not cmocka's handler: the fault ends the child */
        if (write)
            *p = 1;
        else
            (void)*p;
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

/* Guard mode (earl_mem_guard, EARLC_MEM_GUARD=1): consumed ranges, the
 * source of moved pages and freed blocks fault when touched; the pages at
 * the edges and the pages moved under output stay usable; a freed block is
 * not handed out again and a block grows by a copy. */
static void test_guard_mode_faults_on_dead_memory(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    earl_mem_guard(1);
    unsigned char *in = earl_mem_alloc_scratch(8 * MB);
    unsigned char *out = earl_mem_alloc(8 * MB);
    assert_non_null(in);
    assert_non_null(out);
    memset(in, 0x11, 8 * MB);
    /* a range given back faults, its edges do not */
    assert_int_equal(earl_mem_discard(in, 100, 2 * MB + 100), 2 * MB);
    assert_true(touch_faults(in + page, 0));
    assert_true(touch_faults(in + 2 * MB - 1, 0));
    assert_false(touch_faults(in + 99, 0));
    assert_false(touch_faults(in + 2 * MB, 0));
    /* a banked range faults from its deposit on; moved under the output, its
     * pages are written there, and its source still faults */
    earl_mem_bank bank;
    earl_mem_bank_init(&bank, 0);
    bank.enabled = 1;
    assert_int_equal(earl_mem_bank_deposit(&bank, in, 2 * MB, 6 * MB, 0), 6 * MB);
    assert_true(touch_faults(in + 3 * MB, 0));
    assert_int_equal(earl_mem_bank_place(&bank, out, 0, 2 * MB), 2 * MB);
    memset(out, 0x22, 2 * MB);
    assert_int_equal(out[2 * MB - 1], 0x22);
    assert_true(touch_faults(in + 6 * MB - 1, 0));
    earl_mem_bank_empty(&bank); /* the rest given back: faults still */
    assert_true(touch_faults(in + 2 * MB, 0));
    assert_int_equal(in[6 * MB], 0x11);
    /* a block that grows leaves its old addresses faulting */
    unsigned char *old = out;
    out = earl_mem_realloc(out, 32 * MB);
    assert_non_null(out);
    assert_ptr_not_equal(out, old);
    assert_int_equal(out[2 * MB - 1], 0x22);
    assert_true(touch_faults(old, 0));
    /* a freed block faults and is not handed out again */
    earl_mem_free(out);
    assert_true(touch_faults(out + MB, 1));
    unsigned char *again = earl_mem_alloc(32 * MB);
    assert_ptr_not_equal(again, out);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 0);
    earl_mem_free(again);
    earl_mem_free_unkept(in);
    assert_true(touch_faults(in + 7 * MB, 0));
    earl_mem_guard(0);
    /* off again: freed blocks are kept */
    unsigned char *k = earl_mem_alloc(32 * MB);
    earl_mem_free(k);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 1);
    earl_mem_release();
}

/* A scratch array growing past its block gives kept blocks back first. */
static void test_scratch_growth_recycles_kept_blocks(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    earl_mem_release();
    unsigned char *p = earl_mem_alloc(1 * MB);
    fill(p, 1 * MB, 4);
    unsigned char *k = earl_mem_alloc(40 * MB);
    earl_mem_free(k);
    assert_int_equal(earl_mem_get_stats().kept_blocks, 1);
    p = earl_mem_realloc_scratch(p, 2 * MB); /* far below the kept block: a miss */
    assert_true(same(p, 1 * MB, 4));
    assert_int_equal(earl_mem_get_stats().kept_blocks, 0);
    earl_mem_free(p);
    earl_mem_release();
}

/* Threads allocating, growing and freeing blocks of many sizes at once, as
 * reading threads and the merge do: every block keeps its own contents. */
static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    unsigned char *held[4] = {0};
    size_t size[4] = {0};
    unsigned tag[4] = {0}; /* the seed each block was filled with */
    int bad = 0;
    for (int round = 0; round < 300; round++) {
        int k = round % 4;
        if (held[k]) {
            bad |= !same(held[k], size[k], tag[k]);
            if (round % 3 == 0) {
                size_t grown = size[k] + size[k] / 2;
                held[k] = earl_mem_realloc(held[k], grown);
                bad |= !held[k] || !same(held[k], size[k], tag[k]);
                size[k] = grown;
                fill(held[k], size[k], tag[k]);
                continue;
            }
            earl_mem_free(held[k]);
        }
        seed = seed * 1103515245u + 12345u;
        size[k] = (size_t)(seed >> 8) % (6 * MB) + 1000;
        tag[k] = seed;
        held[k] = (round & 1) ? earl_mem_alloc(size[k]) : earl_mem_calloc_scratch(1, size[k]);
        bad |= !held[k];
        fill(held[k], size[k], tag[k]);
    }
    for (int k = 0; k < 4; k++)
        earl_mem_free(held[k]);
    return (void *)(uintptr_t)bad;
}

static void test_threads_share_the_pool(void **state)
{
    (void)state;
    pthread_t t[4];
    for (uintptr_t k = 0; k < 4; k++)
        assert_int_equal(pthread_create(&t[k], NULL, churn, (void *)(k + 1)), 0);
    for (int k = 0; k < 4; k++) {
        void *bad = NULL;
        pthread_join(t[k], &bad);
        assert_null(bad);
    }
    earl_mem_release();
}

/* Children run in a fresh process: the setting is read once per process. */
static int keep_off_child(void)
{
    void *p = earl_mem_alloc(8 * MB);
    earl_mem_free(p);
    return p && earl_mem_get_stats().kept_blocks == 0 ? 0 : 1;
}

/* Kept for 0.2 s: gone soon after without any further call (the reaper
 * thread; reading the statistics expires nothing itself).  Waits up to 10 s,
 * for a loaded machine. */
static int keep_briefly_child(void)
{
    void *p = earl_mem_alloc(8 * MB);
    earl_mem_free(p);
    if (!p || earl_mem_get_stats().kept_blocks != 1)
        return 1;
    for (int waited = 0; waited < 200; waited++) {
        usleep(50 * 1000);
        if (earl_mem_get_stats().kept_blocks == 0)
            return 0;
    }
    return 1;
}

static void run_child(const char *keep, const char *role)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("EARLC_KEEP_MEMORY", keep, 1);
        execl("/proc/self/exe", "test_mem", role, (char *)NULL);
        _exit(2);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_keeping_can_be_turned_off(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    run_child("0", "--keep-off-child");
    run_child("no", "--keep-off-child");
}

static void test_kept_blocks_expire_without_calls(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    run_child("0.2", "--keep-briefly-child");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--keep-off-child") == 0)
        return keep_off_child();
    if (argc > 1 && strcmp(argv[1], "--keep-briefly-child") == 0)
        return keep_briefly_child();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_growth_keeps_contents),
        cmocka_unit_test(test_large_blocks_kept_and_reused),
        cmocka_unit_test(test_discard_gives_back_whole_pages),
        cmocka_unit_test(test_bank_moves_pages_under_output),
        cmocka_unit_test(test_scratch_growth_recycles_kept_blocks),
        cmocka_unit_test(test_threads_share_the_pool),
        cmocka_unit_test(test_keeping_can_be_turned_off),
        cmocka_unit_test(test_kept_blocks_expire_without_calls),
        /* last: a failure would leave guard mode on for the tests after it */
        cmocka_unit_test(test_guard_mode_faults_on_dead_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
