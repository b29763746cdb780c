/*
 * open_bench.c - earl_trace_open against the floor: a bare libotf2 read.
 *
 *   open_bench ANCHOR [REPEATS]
 *   open_bench --bare ANCHOR [REPEATS]
 *
 * In one run, on the same archive, it times
 *   - bare:   every event of every location through libotf2's reader with
 *             empty callbacks, one location after another (one thread);
 *   - open/1: earl_trace_open with one reading thread;
 *   - open/N: earl_trace_open with one thread per core;
 * taking the best of REPEATS (default 3) for each, and prints one
 * "key value" line per measurement for tests/bench/run.py.  The first open
 * of the process is reported on its own as well: it pays for memory the
 * process never touched, while later ones reuse the blocks mem.c keeps
 * (docs/benchmarks.md says why that dominates on a VM).  Memory: the
 * resident set growth across an open, and the store's own byte counts.
 * With --bare only the floor is timed (best of REPEATS), for benchmarks
 * that compare a whole analysis in fresh processes with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "earl.h"
#include "bench.h"

static long resident_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static long minor_faults(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_minflt;
}

/* ---- the floor: a bare libotf2 read --------------------------------------------------- */

typedef struct { uint64_t *ids; size_t n, cap; } id_list;

static OTF2_CallbackCode on_location(void *ud, OTF2_LocationRef self, OTF2_StringRef name,
                                     OTF2_LocationType type, uint64_t n_events,
                                     OTF2_LocationGroupRef group)
{
    (void)name; (void)type; (void)n_events; (void)group;
    id_list *l = ud;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->ids = realloc(l->ids, l->cap * sizeof *l->ids);
    }
    l->ids[l->n++] = self;
    return OTF2_CALLBACK_SUCCESS;
}

#define EMPTY(name, ...)                                                                    \
    static OTF2_CallbackCode name(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void *u, \
                                  OTF2_AttributeList *a, __VA_ARGS__)                       \
    {                                                                                       \
        (void)l; (void)t; (void)p; (void)u; (void)a;                                        \
        return OTF2_CALLBACK_SUCCESS;                                                       \
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
EMPTY(e_region, OTF2_RegionRef r)
EMPTY(e_p2p, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len)
EMPTY(e_ip2p, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req)
EMPTY(e_req, uint64_t req)
EMPTY(e_coll_end, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t s, uint64_t r)
#pragma GCC diagnostic pop
static OTF2_CallbackCode e_plain(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void *u,
                                 OTF2_AttributeList *a)
{
    (void)l; (void)t; (void)p; (void)u; (void)a;
    return OTF2_CALLBACK_SUCCESS;
}

static uint64_t bare_read(const char *anchor)
{
    OTF2_Reader *r = OTF2_Reader_Open(anchor);
    if (!r) {
        fprintf(stderr, "open_bench: cannot open %s\n", anchor);
        exit(1);
    }
    OTF2_Reader_SetSerialCollectiveCallbacks(r);
    id_list locs = {0};
    OTF2_GlobalDefReader *g = OTF2_Reader_GetGlobalDefReader(r);
    OTF2_GlobalDefReaderCallbacks *gcb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, on_location);
    OTF2_Reader_RegisterGlobalDefCallbacks(r, g, gcb, &locs);
    OTF2_GlobalDefReaderCallbacks_Delete(gcb);
    uint64_t n = 0;
    OTF2_Reader_ReadAllGlobalDefinitions(r, g, &n);
    for (size_t i = 0; i < locs.n; i++)
        OTF2_Reader_SelectLocation(r, locs.ids[i]);
    int have_defs = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
    OTF2_Reader_OpenEvtFiles(r);
    for (size_t i = 0; i < locs.n && have_defs; i++) {
        OTF2_DefReader *d = OTF2_Reader_GetDefReader(r, locs.ids[i]);
        if (d) {
            OTF2_Reader_ReadAllLocalDefinitions(r, d, &n);
            OTF2_Reader_CloseDefReader(r, d);
        }
    }
    if (have_defs)
        OTF2_Reader_CloseDefFiles(r);
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, e_region);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, e_region);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, e_p2p);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, e_p2p);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, e_ip2p);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, e_ip2p);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, e_req);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, e_req);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, e_plain);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, e_coll_end);
    uint64_t total = 0;
    for (size_t i = 0; i < locs.n; i++) {
        OTF2_EvtReader *e = OTF2_Reader_GetEvtReader(r, locs.ids[i]);
        OTF2_Reader_RegisterEvtCallbacks(r, e, cb, NULL);
        uint64_t got = 0;
        OTF2_Reader_ReadAllLocalEvents(r, e, &got);
        total += got;
        OTF2_Reader_CloseEvtReader(r, e);
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
    free(locs.ids);
    return total;
}

/* ---- earlc ---------------------------------------------------------------------------- */

static earl_trace *earl_open(const char *anchor, int threads)
{
    earl_open_options o = {.threads = threads};
    earl_trace *t = NULL;
    earl_error err;
    if (earl_trace_open(anchor, &o, &t, &err) != EARL_OK) {
        fprintf(stderr, "open_bench: %s\n", err.message);
        exit(1);
    }
    return t;
}

int main(int argc, char **argv)
{
    int bare_only = argc > 1 && strcmp(argv[1], "--bare") == 0;
    if (bare_only) {
        argv++;
        argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: open_bench [--bare] ANCHOR [REPEATS]\n");
        return 2;
    }
    const char *anchor = argv[1];
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double best_bare = 1e30, best_one = 1e30, best_all = 1e30, first_one = 0;
    long faults_first = 0, faults_best = 0, faults_bare = 0;
    uint64_t events = 0;
    long rss_growth = 0;
    size_t store = 0, core = 0;
    if (bare_only) {
        for (int k = 0; k < repeats; k++) {
            double t0 = bench_now();
            events = bare_read(anchor);
            double t1 = bench_now();
            if (t1 - t0 < best_bare)
                best_bare = t1 - t0;
        }
        printf("events %llu\n", (unsigned long long)events);
        printf("bare_seconds %.4f\n", best_bare);
        return 0;
    }
    for (int k = 0; k < repeats; k++) {
        /* interleaved, so that drifting machine load hits all three alike */
        long f0 = minor_faults();
        double t0 = bench_now();
        events = bare_read(anchor);
        double t1 = bench_now();
        if (t1 - t0 < best_bare) {
            best_bare = t1 - t0;
            faults_bare = minor_faults() - f0;
        }

        long before = resident_bytes();
        f0 = minor_faults();
        t0 = bench_now();
        earl_trace *tr = earl_open(anchor, 1);
        t1 = bench_now();
        long faults = minor_faults() - f0;
        if (k == 0) {
            first_one = t1 - t0;
            faults_first = faults;
        }
        if (t1 - t0 < best_one) {
            best_one = t1 - t0;
            faults_best = faults;
        }
        long grown = resident_bytes() - before;
        if (grown > rss_growth) rss_growth = grown;
        store = earl_trace_event_bytes(tr, &core);
        size_t n = earl_trace_events(tr)->count;
        earl_trace_close(tr);

        t0 = bench_now();
        tr = earl_open(anchor, (int)cores);
        t1 = bench_now();
        if (t1 - t0 < best_all) best_all = t1 - t0;
        if (earl_trace_events(tr)->count != n) {
            fprintf(stderr, "open_bench: thread counts disagree\n");
            return 1;
        }
        earl_trace_close(tr);
    }
    printf("events %llu\n", (unsigned long long)events);
    printf("cores %ld\n", cores);
    printf("bare_seconds %.4f\n", best_bare);
    printf("open1_seconds %.4f\n", best_one);
    printf("openN_seconds %.4f\n", best_all);
    printf("open1_first_seconds %.4f\n", first_one);
    printf("faults_bare %ld\n", faults_bare);
    printf("faults_open1_first %ld\n", faults_first);
    printf("faults_open1_best %ld\n", faults_best);
    printf("store_bytes %zu\n", store);
    printf("core_bytes %zu\n", core);
    printf("rss_growth_bytes %ld\n", rss_growth);
    return 0;
}
