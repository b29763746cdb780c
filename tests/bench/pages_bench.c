/*
 * pages_bench.c - the floor of an open on this machine: what it costs to
 * make N bytes of memory resident, by the ways an open can get them.
 *
 *   pages_bench [MEGABYTES]      (default 360: the store of a 10 M event trace)
 *
 * In one process, on two anonymous mappings of MEGABYTES each, it times
 *   - fresh:    a memset of pages the process never touched (first faults);
 *   - touched:  the same memset again (no faults: the cost of the writes);
 *   - refault:  a MiB at a time, MADV_DONTNEED then memset, which is what an
 *               open that gives consumed pages back and writes new ones pays;
 *   - moved:    a MiB at a time, the pages moved to the other mapping with
 *               mremap, then written there (csrc/base/mem.c's earl_mem_bank);
 * wall and processor seconds, one "key value" line each.  The fresh line
 * is the floor of any open that must make its store resident once; on a VM
 * whose balloon reports free memory to the host it is dominated by the host
 * faulting the pages in again (docs/benchmarks.md).  Run it in a process of
 * its own: the first line is only fresh there.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "bench.h"

static double cpu_seconds(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + (double)r.ru_stime.tv_sec +
           r.ru_stime.tv_usec * 1e-6;
}

static void report(const char *key, double wall0, double cpu0, size_t bytes)
{
    double wall = bench_now() - wall0, cpu = cpu_seconds() - cpu0;
    printf("%s_seconds %.4f\n%s_cpu_seconds %.4f\n%s_ns_per_byte %.3f\n", key, wall, key, cpu,
           key, wall / (double)bytes * 1e9);
}

int main(int argc, char **argv)
{
    size_t mb = (size_t)bench_repeats(argc, argv, 1, 360), bytes = mb << 20, step = (size_t)1 << 20;
    char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED || b == MAP_FAILED) {
        perror("pages_bench: mmap");
        return 1;
    }
    printf("bytes %zu\n", bytes);
    double w = bench_now(), c = cpu_seconds();
    memset(a, 1, bytes);
    report("fresh", w, c, bytes);
    w = bench_now(), c = cpu_seconds();
    memset(a, 2, bytes);
    report("touched", w, c, bytes);
    w = bench_now(), c = cpu_seconds();
    for (size_t at = 0; at < bytes; at += step) {
        madvise(a + at, step, MADV_DONTNEED);
        memset(a + at, 3, step);
    }
    report("refault", w, c, bytes);
    w = bench_now(), c = cpu_seconds();
    for (size_t at = 0; at < bytes; at += step) {
        if (mremap(a + at, step, step, MREMAP_MAYMOVE | MREMAP_FIXED, b + at) == MAP_FAILED) {
            perror("pages_bench: mremap");
            return 1;
        }
        memset(b + at, 4, step);
    }
    report("moved", w, c, bytes);
    return 0;
}
