/*
 * mem.c - memory for the event store: large blocks that stay warm.
 *
 * Opening a trace writes 40 to 70 bytes per event into memory the process
 * has not touched yet, hundreds of megabytes for a large trace.  Fresh pages
 * are the dearest part of an open: the kernel zeroes each one on first touch,
 * and on a virtual machine whose balloon reports free memory back to the host
 * (virtio free page reporting) a page freed for more than about two seconds
 * must be faulted in by the host again.  On the development VM that is about
 * 2 ns per byte, against 0.07 ns for a page the process touched before: more
 * than the decoding of the events itself (docs/benchmarks.md).
 *
 * So the store takes its columns from here.  Blocks of at least MEM_LARGE
 * bytes are mapped directly (from a huge page on, aligned to one); when
 * freed they are kept, up to a total and for a limited time, and handed to
 * the next large request they fit, the way jemalloc and tcmalloc keep freed
 * pages for a while instead of returning them at once.  Smaller blocks come
 * from malloc.  Every block carries a header, so earl_mem_free and
 * earl_mem_realloc need no size from the caller.
 *
 * Three classes of blocks (mem_class): the store's (columns that live with a
 * trace), scratch arrays (an open's reading buffers: short-lived, in sizes
 * that follow the trace) and an analysis's temporaries (numpy's arrays during
 * earlc.analyze, the analysis kernels' tables), which come in sizes no one
 * can predict, one after another.  Temporaries below MEM_TEMP_FROM_MALLOC
 * come from malloc: glibc keeps freed chunks of up to 32 MB in its heap (its
 * mmap threshold adapts up to that) and carves any later request from them,
 * so a sequence of temporaries runs on the same pages; mapped and kept here,
 * each size that no kept block fitted took fresh pages (a whole analysis
 * faulted in twice the memory it ever held at once).  Larger ones, which
 * glibc would map and unmap each time, are scratch arrays: mostly the
 * per-event arrays of one trace, of a few sizes, that kept blocks serve.
 *
 * Policy (docs/model.md, "Memory"): a kept block serves a request of at least
 * two thirds of its capacity, or a growing array up to MEM_GROW_REACH times
 * its request; a scratch array that no kept block fits first unmaps kept
 * blocks so that the kernel recycles their pages; blocks unused for
 * EARL_MEM_KEEP_SECONDS are unmapped, by the next call or by a reaper thread
 * that runs only while blocks are kept; at most a quarter of the physical
 * memory is kept; EARLC_KEEP_MEMORY in the environment sets the seconds (0 or
 * "no": keep nothing), and earl_mem_release returns every kept block at
 * once.
 *
 * Blocks are not advised for transparent huge pages (MADV_HUGEPAGE) unless
 * EARLC_HUGE_PAGES=1: the system's policy decides.  A huge page is six times
 * cheaper to fault in than 512 small ones when the host backs its memory, and
 * six times dearer when it does not: on a VM whose balloon reports free
 * memory, the free 2 MB blocks a huge page needs are those the host took
 * back, and a fresh process's whole analysis spent three times as long in the
 * kernel with the advice (docs/model.md, "Memory").  Where the policy is
 * "always" the 2 MB alignment still lets the kernel use huge pages.
 *
 * Blocks consumed front to back (an open's reading buffers, while the merge
 * writes the trace's columns) hand their consumed pages to a bank that
 * moves them under the columns being written (earl_mem_bank, at the end of
 * this file), or give them back (earl_mem_discard), and are unmapped when
 * freed (earl_mem_free_unkept): the open's resident memory stays near the
 * size of the finished trace instead of the reading buffers plus the trace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* mremap */
#endif
#include "base/clock.h"
#include "base/mem.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Under AddressSanitizer every block comes from malloc, so that the
 * sanitizer still checks the bounds of the columns. */
#if defined(__SANITIZE_ADDRESS__)
#define MEM_KEEPS 0
#else
#define MEM_KEEPS 1
#endif
#define MEM_LARGE ((size_t)256 << 10)
/* blocks of this size and more are mapped and kept (temporaries from
 * MEM_TEMP_FROM_MALLOC on) */
#define IS_LARGE(bytes) (MEM_KEEPS && (bytes) >= MEM_LARGE)
#define IS_MAPPED(bytes, cls) \
    (IS_LARGE(bytes) && ((cls) != MEM_TEMP || (bytes) >= MEM_TEMP_FROM_MALLOC))
#define MEM_ALIGN ((size_t)2 << 20)
#define MEM_MAGIC_SMALL 0x6561726c736d6c6cULL
#define MEM_MAGIC_LARGE 0x6561726c6c617267ULL
#define MEM_MAX_KEPT 256                 /* blocks, not bytes */
#define MEM_TEMP_FROM_MALLOC ((size_t)32 << 20)
#define MEM_GROW_REACH 8                 /* see take_fitting */

/* Who asks for a block (see the top of this file). */
typedef enum mem_class {
    MEM_STORE,   /* a miss leaves the kept blocks to the requests they fit */
    MEM_SCRATCH, /* a miss gives kept blocks back first */
    MEM_TEMP     /* from malloc below MEM_TEMP_FROM_MALLOC, else scratch */
} mem_class;

/* Sits right before every block handed out; its 32 bytes keep malloc's
 * 16-byte alignment for small blocks. */
typedef struct mem_header {
    uint64_t magic;
    size_t capacity;   /* usable bytes from the block's start */
    void *map;         /* large blocks: the mapping that holds the block */
    size_t map_bytes;
} mem_header;

typedef struct kept_block {
    void *block;
    size_t capacity;
    double since;      /* when it was freed, CLOCK_MONOTONIC seconds */
} kept_block;

static struct {
    pthread_mutex_t lock;
    kept_block kept[MEM_MAX_KEPT];
    int n_kept;
    size_t kept_bytes;
    size_t max_kept_bytes; /* 0 until first use: then from the environment */
    int disabled;
    int huge_pages;        /* EARLC_HUGE_PAGES: advise mapped blocks for huge pages */
    int no_moves;          /* unless EARLC_MOVE_PAGES=1: banks give back instead of moving */
    int guard;             /* EARLC_MEM_GUARD=1: dead memory faults (guard mode) */
    double keep_seconds;
    int reaper_running;    /* the reaper thread exists */
    pthread_cond_t wake;   /* the reaper sleeps on it; earl_mem_release wakes it */
    earl_mem_stats stats;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* pool.guard, for readers that may not take pool.lock (guarding) */
static _Atomic int guard_on;

static mem_header *header_of(void *p)
{
    return (mem_header *)p - 1;
}

static void forget_reaper(void);

static void configure_locked(void)
{
    if (pool.max_kept_bytes)
        return;
    pthread_atfork(NULL, NULL, forget_reaper);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t phys = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)4 << 30;
    pool.max_kept_bytes = phys / 4;
    /* EARLC_KEEP_MEMORY: "0" or "no" keeps nothing, a number of seconds
     * changes how long */
    const char *env = getenv("EARLC_KEEP_MEMORY");
    char *end = NULL;
    double seconds = env ? strtod(env, &end) : 0;
    pool.keep_seconds = EARL_MEM_KEEP_SECONDS;
    if (env && (strcmp(env, "no") == 0 || (end != env && seconds <= 0)))
        pool.disabled = 1;
    else if (env && end != env)
        pool.keep_seconds = seconds;
    const char *huge = getenv("EARLC_HUGE_PAGES");
    pool.huge_pages = huge && (strcmp(huge, "1") == 0 || strcmp(huge, "yes") == 0);
    const char *move = getenv("EARLC_MOVE_PAGES");
    /* opt-in while a crash of the EARL layer after an open, seen once in a
     * process that had opened hundreds of traces, is not explained */
    pool.no_moves = !(move && (strcmp(move, "1") == 0 || strcmp(move, "yes") == 0));
    const char *guard = getenv("EARLC_MEM_GUARD");
    pool.guard = guard && (strcmp(guard, "1") == 0 || strcmp(guard, "yes") == 0);
    atomic_store(&guard_on, pool.guard);
}

/* ---- guard mode (EARLC_MEM_GUARD=1, earl_mem_guard) -------------------------
 *
 * A debugging aid for the lifetime of mapped blocks, which AddressSanitizer
 * does not see (under it every block comes from malloc, and nothing is kept
 * or moved): memory that is dead faults on its next touch, with the stack of
 * whoever touched it, instead of reading zeros or someone else's data.
 *   - a consumed range (earl_mem_discard, earl_mem_bank_deposit) becomes
 *     PROT_NONE; pages a bank moves become writable again at their
 *     destination, their source range stays PROT_NONE;
 *   - a freed large block is never kept nor handed out again: its addresses
 *     are replaced by a PROT_NONE reservation (quarantine) of the same size,
 *     the oldest reservations unmapped once GUARD_QUARANTINE are held;
 *   - a large block grows by a copy, never by mremap, so that its old
 *     addresses are quarantined too.
 * It costs address space and some mappings, not resident memory; guarded
 * ranges' pages are given back as before. */
#define GUARD_QUARANTINE 4096

static struct {
    pthread_mutex_t lock;
    struct { void *at; size_t bytes; } held[GUARD_QUARANTINE];
    size_t next;  /* ring position of the oldest once full */
    size_t n;
} quarantine = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Whether guard mode is on.  Without a lock (unmap_block runs under
 * pool.lock): every caller holds a mapped block, so the pool was configured
 * when that block was mapped. */
static int guarding(void)
{
    return atomic_load_explicit(&guard_on, memory_order_relaxed);
}

void earl_mem_guard(int on)
{
    pthread_mutex_lock(&pool.lock);
    configure_locked();
    pool.guard = on != 0;
    atomic_store(&guard_on, pool.guard);
    pthread_mutex_unlock(&pool.lock);
    if (on)
        earl_mem_release(); /* kept blocks would be handed out again */
}

/* Replace the pages of [at, at + bytes) by a reservation that faults. */
static void quarantine_range(void *at, size_t bytes)
{
    if (mmap(at, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
             0) == MAP_FAILED) {
        munmap(at, bytes); /* out of mappings: freed as without the guard */
        return;
    }
    pthread_mutex_lock(&quarantine.lock);
    if (quarantine.n == GUARD_QUARANTINE) {
        munmap(quarantine.held[quarantine.next].at, quarantine.held[quarantine.next].bytes);
        quarantine.held[quarantine.next].at = at;
        quarantine.held[quarantine.next].bytes = bytes;
        quarantine.next = (quarantine.next + 1) % GUARD_QUARANTINE;
    } else {
        quarantine.held[quarantine.n].at = at;
        quarantine.held[quarantine.n].bytes = bytes;
        quarantine.n++;
    }
    pthread_mutex_unlock(&quarantine.lock);
}

/* Dead bytes [lo, hi) (whole pages): given back, and faulting in guard mode. */
static int bury_pages(uintptr_t lo, uintptr_t hi)
{
    if (madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0)
        return -1;
    if (guarding())
        mprotect((void *)lo, hi - lo, PROT_NONE);
    return 0;
}

static void unmap_block(void *block)
{
    mem_header *h = header_of(block);
    if (guarding())
        quarantine_range(h->map, h->map_bytes);
    else
        munmap(h->map, h->map_bytes);
}

/* Drop kept block k (the caller unmaps or reuses it). */
static void *take_kept_locked(int k)
{
    void *block = pool.kept[k].block;
    pool.kept_bytes -= pool.kept[k].capacity;
    pool.kept[k] = pool.kept[--pool.n_kept];
    return block;
}

/* The kept block freed longest ago (pool.n_kept > 0). */
static int oldest_kept_locked(void)
{
    int oldest = 0;
    for (int k = 1; k < pool.n_kept; k++)
        if (pool.kept[k].since < pool.kept[oldest].since)
            oldest = k;
    return oldest;
}

static void expire_locked(double now)
{
    for (int k = pool.n_kept - 1; k >= 0; k--)
        if (now - pool.kept[k].since > pool.keep_seconds)
            unmap_block(take_kept_locked(k));
}

/* Unmaps kept blocks as they expire, so that memory goes back to the system
 * even when the process never calls again (a Python session that closed its
 * trace).  Exits once nothing is kept; free_large starts it again. */
static void *reap(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&pool.lock);
    while (pool.n_kept) {
        double due = pool.kept[oldest_kept_locked()].since + pool.keep_seconds + 0.01;
        /* sleep on CLOCK_REALTIME, which pthread_cond_timedwait uses */
        struct timespec at;
        clock_gettime(CLOCK_REALTIME, &at);
        double wait = due - earl_now_seconds();
        if (wait > 0) {
            double whole = (double)(long)wait;
            at.tv_sec += (time_t)whole;
            at.tv_nsec += (long)((wait - whole) * 1e9);
            if (at.tv_nsec >= 1000000000L) {
                at.tv_sec++;
                at.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&pool.wake, &pool.lock, &at);
        }
        expire_locked(earl_now_seconds());
    }
    pool.reaper_running = 0;
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* With pool.lock held: make sure a reaper watches the kept blocks. */
static void start_reaper_locked(void)
{
    if (pool.reaper_running)
        return;
    pthread_attr_t attr;
    pthread_t tid;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* without a reaper, blocks still expire at the next call */
    if (pthread_create(&tid, &attr, reap, NULL) == 0)
        pool.reaper_running = 1;
    pthread_attr_destroy(&attr);
}

/* A child of fork() has no reaper thread, whatever the flag says. */
static void forget_reaper(void)
{
    pool.reaper_running = 0;
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
}

static void *map_block(size_t bytes, int huge_pages)
{
    /* blocks of a huge page and more start on a huge-page boundary */
    size_t align = bytes >= MEM_ALIGN ? MEM_ALIGN : (size_t)4096;
    size_t rounded = (bytes + align - 1) & ~(align - 1);
    size_t map_bytes = rounded + align;
    void *map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    /* the block starts on a huge-page boundary with its header just before */
    uintptr_t start = ((uintptr_t)map + sizeof(mem_header) + align - 1) & ~(align - 1);
    mem_header *h = (mem_header *)start - 1;
    h->magic = MEM_MAGIC_LARGE;
    h->capacity = (uintptr_t)map + map_bytes - start;
    h->map = map;
    h->map_bytes = map_bytes;
#ifdef MADV_HUGEPAGE
    if (huge_pages) /* the whole mapping: one VMA, which mremap moves with its advice */
        madvise(map, map_bytes, MADV_HUGEPAGE); /* advice only */
#endif
    return (void *)start;
}

/* The smallest kept block of at least bytes, or NULL.  A block serves
 * requests of two thirds of it and up, so that a small request does not pin
 * a large block; a growing array (growing != 0) takes blocks up to
 * MEM_GROW_REACH times its request, as it is on its way to filling them. */
static void *take_fitting(size_t bytes, int growing)
{
    pthread_mutex_lock(&pool.lock);
    configure_locked();
    expire_locked(earl_now_seconds());
    int best = -1;
    for (int k = 0; k < pool.n_kept; k++) {
        size_t c = pool.kept[k].capacity;
        if (c >= bytes &&
            (growing ? c / MEM_GROW_REACH <= bytes : c - bytes <= c / 3 + MEM_ALIGN) &&
            (best < 0 || c < pool.kept[best].capacity))
            best = k;
    }
    void *block = best >= 0 ? take_kept_locked(best) : NULL;
    if (block)
        pool.stats.reused++;
    pthread_mutex_unlock(&pool.lock);
    return block;
}

/* Unmap kept blocks, oldest first, until at least bytes are given back or
 * nothing is kept. */
static void free_kept_bytes(size_t bytes)
{
    pthread_mutex_lock(&pool.lock);
    size_t freed = 0;
    while (freed < bytes && pool.n_kept) {
        int oldest = oldest_kept_locked();
        freed += pool.kept[oldest].capacity;
        unmap_block(take_kept_locked(oldest));
    }
    pthread_mutex_unlock(&pool.lock);
}

/* Map a new block after a miss.  For scratch arrays and temporaries, kept
 * blocks are unmapped first, oldest first, as many bytes as the new block
 * needs: the kernel hands pages freed a moment ago to the next mapping, and
 * those are still warm, while kept blocks that no request of these
 * unpredictable sizes fits would leave the new mapping to pages nobody
 * touched for long.  The store's own requests repeat from one open to the
 * next, so there a miss leaves the kept blocks to the requests they fit. */
static void *map_after_miss(size_t bytes, mem_class cls)
{
    pthread_mutex_lock(&pool.lock);
    configure_locked();
    pool.stats.mapped++;
    int huge_pages = pool.huge_pages;
    pthread_mutex_unlock(&pool.lock);
    if (cls != MEM_STORE)
        free_kept_bytes(bytes);
    return map_block(bytes, huge_pages);
}

static void *alloc_large(size_t bytes, mem_class cls)
{
    void *block = take_fitting(bytes, 0);
    return block ? block : map_after_miss(bytes, cls);
}

static void free_large(void *block)
{
    size_t capacity = header_of(block)->capacity;
    pthread_mutex_lock(&pool.lock);
    configure_locked();
    double now = earl_now_seconds();
    expire_locked(now);
    int keep = !pool.disabled && !pool.guard && capacity <= pool.max_kept_bytes;
    /* make room: the oldest kept blocks go first */
    while (keep && (pool.n_kept == MEM_MAX_KEPT ||
                    pool.kept_bytes + capacity > pool.max_kept_bytes)) {
        unmap_block(take_kept_locked(oldest_kept_locked()));
    }
    if (keep) {
        pool.kept[pool.n_kept++] = (kept_block){block, capacity, now};
        pool.kept_bytes += capacity;
        start_reaper_locked();
    }
    pthread_mutex_unlock(&pool.lock);
    if (!keep)
        unmap_block(block);
}

/* A block from malloc or calloc (h, NULL when out of memory) with its header. */
static void *small_block(mem_header *h, size_t bytes)
{
    if (!h)
        return NULL;
    h->magic = MEM_MAGIC_SMALL;
    h->capacity = bytes;
    h->map = NULL;
    h->map_bytes = 0;
    return h + 1;
}

static void *mem_alloc(size_t bytes, mem_class cls)
{
    if (IS_MAPPED(bytes, cls))
        return alloc_large(bytes, cls);
    return small_block(malloc(sizeof(mem_header) + (bytes ? bytes : 1)), bytes);
}

static void *mem_calloc(size_t n, size_t size, mem_class cls)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    if (!IS_MAPPED(bytes, cls))
        return small_block(calloc(1, sizeof(mem_header) + (bytes ? bytes : 1)), bytes);
    void *block = take_fitting(bytes, 0);
    if (block) {
        memset(block, 0, bytes); /* a kept block: touched pages, cheaper than fresh ones */
        return block;
    }
    return map_after_miss(bytes, cls); /* fresh anonymous pages read as zero */
}

void *earl_mem_alloc(size_t bytes) { return mem_alloc(bytes, MEM_STORE); }
void *earl_mem_calloc(size_t n, size_t size) { return mem_calloc(n, size, MEM_STORE); }
void *earl_mem_alloc_scratch(size_t bytes) { return mem_alloc(bytes, MEM_SCRATCH); }
void *earl_mem_calloc_scratch(size_t n, size_t size) { return mem_calloc(n, size, MEM_SCRATCH); }
void *earl_mem_alloc_temp(size_t bytes) { return mem_alloc(bytes, MEM_TEMP); }
void *earl_mem_calloc_temp(size_t n, size_t size) { return mem_calloc(n, size, MEM_TEMP); }

void earl_mem_free(void *p)
{
    if (!p)
        return;
    mem_header *h = header_of(p);
    if (h->magic == MEM_MAGIC_LARGE) {
        free_large(p);
    } else {
        h->magic = 0;
        free(h);
    }
}

void earl_mem_free_unkept(void *p)
{
    if (p && header_of(p)->magic == MEM_MAGIC_LARGE)
        unmap_block(p);
    else
        earl_mem_free(p);
}

static size_t page_bytes(void)
{
    static _Atomic size_t page;
    size_t p = page;
    if (!p) {
        long s = sysconf(_SC_PAGESIZE);
        p = s > 0 ? (size_t)s : 4096;
        page = p;
    }
    return p;
}

size_t earl_mem_discard(void *p, size_t from, size_t to)
{
    if (!p || from >= to || header_of(p)->magic != MEM_MAGIC_LARGE)
        return from; /* malloc's blocks go back whole, when freed */
    uintptr_t page = page_bytes(), start = (uintptr_t)p;
    /* whole pages only: the ones at the ends may hold bytes still in use */
    uintptr_t lo = (start + from + page - 1) & ~(page - 1);
    uintptr_t hi = (start + to) & ~(page - 1);
    if (hi <= lo)
        return from;
    /* MADV_DONTNEED: the pages leave the resident set now, and the range
     * reads as zeros if touched again (faults, in guard mode) */
    if (bury_pages(lo, hi) != 0)
        return from;
    return hi - start;
}

#ifdef MREMAP_MAYMOVE
/* Move the mapping map (old_bytes) to a new place of new_bytes where
 * map + offset, the block, starts on a huge-page boundary (MAP_FAILED when
 * it cannot): where the system's policy gives huge pages, the kernel backs
 * the pages the block grows by with them only in 2 MB ranges aligned in the
 * address space, and a move to wherever there is room would leave most of
 * them to 4 KB faults. */
static void *move_aligned(void *map, size_t old_bytes, size_t new_bytes, size_t offset)
{
    size_t reserve = new_bytes + MEM_ALIGN;
    char *room = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (room == MAP_FAILED)
        return MAP_FAILED;
    uintptr_t block = ((uintptr_t)room + offset + MEM_ALIGN - 1) & ~(MEM_ALIGN - 1);
    char *dest = (char *)(block - offset);
    void *moved = mremap(map, old_bytes, new_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
    if (moved == MAP_FAILED) {
        munmap(room, reserve);
        return MAP_FAILED;
    }
    /* the reservation around the moved mapping */
    if (dest > room)
        munmap(room, (size_t)(dest - room));
    if (dest + new_bytes < room + reserve)
        munmap(dest + new_bytes, (size_t)(room + reserve - (dest + new_bytes)));
    return moved;
}

/* Grow a large block by moving its pages rather than copying them (as glibc
 * does for mapped chunks): side tables grow by half their size at a time,
 * and copying would cost a memcpy of every row once or twice over. */
static void *grow_mapping(void *block, size_t bytes)
{
    mem_header *h = header_of(block);
    size_t offset = (uintptr_t)block - (uintptr_t)h->map;
    size_t align = bytes >= MEM_ALIGN ? MEM_ALIGN : (size_t)4096;
    size_t grown = offset + ((bytes + align - 1) & ~(align - 1));
    void *map = mremap(h->map, h->map_bytes, grown, 0); /* in place, if there is room */
    if (map == MAP_FAILED && align == MEM_ALIGN)
        map = move_aligned(h->map, h->map_bytes, grown, offset);
    if (map == MAP_FAILED)
        map = mremap(h->map, h->map_bytes, grown, MREMAP_MAYMOVE);
    if (map == MAP_FAILED)
        return NULL;
    void *moved = (char *)map + offset;
    h = header_of(moved);
    h->map = map;
    h->map_bytes = grown;
    h->capacity = grown - offset;
    return moved;
}
#endif

static void *mem_realloc(void *p, size_t bytes, mem_class cls)
{
    if (!p)
        return mem_alloc(bytes, cls);
    mem_header *h = header_of(p);
    if (bytes <= h->capacity)
        return p;
    if (h->magic == MEM_MAGIC_SMALL && !IS_MAPPED(bytes, cls)) {
        mem_header *q = realloc(h, sizeof *q + bytes);
        if (!q)
            return NULL;
        q->capacity = bytes;
        return q + 1;
    }
    /* memory touched before beats fresh memory, even at the price of a copy */
    void *q = IS_LARGE(bytes) ? take_fitting(bytes, 1) : NULL;
#ifdef MREMAP_MAYMOVE
    if (!q && h->magic == MEM_MAGIC_LARGE && !guarding()) {
        if (cls != MEM_STORE) /* the pages the block grows by: kept ones given back first */
            free_kept_bytes(bytes - h->capacity);
        void *grown = grow_mapping(p, bytes);
        if (grown)
            return grown;
        /* mremap moves one mapping only: a block that received pages from
         * an earl_mem_bank is several, and is copied */
    }
#endif
    if (!q)
        q = mem_alloc(bytes, cls);
    if (!q)
        return NULL;
    memcpy(q, p, h->capacity);
    earl_mem_free(p);
    return q;
}

void *earl_mem_realloc(void *p, size_t bytes) { return mem_realloc(p, bytes, MEM_STORE); }
void *earl_mem_realloc_scratch(void *p, size_t bytes)
{
    return mem_realloc(p, bytes, MEM_SCRATCH);
}
void *earl_mem_realloc_temp(void *p, size_t bytes) { return mem_realloc(p, bytes, MEM_TEMP); }

void earl_mem_release(void)
{
    pthread_mutex_lock(&pool.lock);
    while (pool.n_kept)
        unmap_block(take_kept_locked(pool.n_kept - 1));
    pthread_cond_signal(&pool.wake); /* the reaper sees nothing is kept and ends */
    pthread_mutex_unlock(&pool.lock);
}

/* Several threads allocating temporaries (an analysis's properties and
 * kernels in parts) would each get a malloc arena of their own, and memory
 * one arena freed serves no request of another: on a 10M-event trace an
 * analysis on two threads held 25 bytes per event more at its peak than on
 * one (docs/benchmarks.md).  One heap serves them all; numpy's temporaries
 * are few and large, so they hardly contend for its lock.  A choice made in
 * the environment (MALLOC_ARENA_MAX, glibc.malloc.arena_max) is left alone. */
int earl_mem_one_heap(void)
{
#ifdef __GLIBC__
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (getenv("MALLOC_ARENA_MAX") || (tunables && strstr(tunables, "arena_max")))
        return 0;
    return mallopt(M_ARENA_MAX, 1) == 1;
#else
    return 0;
#endif
}

void earl_mem_trim(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

earl_mem_stats earl_mem_get_stats(void)
{
    pthread_mutex_lock(&pool.lock);
    earl_mem_stats s = pool.stats;
    s.kept_blocks = (size_t)pool.n_kept;
    s.kept_bytes = pool.kept_bytes;
    pthread_mutex_unlock(&pool.lock);
    return s;
}

/* ---- moving consumed pages under new output (earl_mem_bank) ---------------- */

/* Why move rather than give back: a page given back with MADV_DONTNEED and
 * a page written for the first time cost the same, a fault and the kernel
 * zeroing it (on the development VM about 0.6 ns per byte either way, the
 * host backing it again after the balloon took it), while mremap moves the
 * page table entries of a whole range in one call, at about a fifth of that
 * (docs/benchmarks.md, "The open in a fresh process").  Every moved range
 * becomes a mapping of its own in the destination block (its pages keep
 * their origin), so moves are kept few: at least min_move bytes each.
 * Off unless EARLC_MOVE_PAGES=1 is in the environment (see configure_locked). */

static int is_mapped_block(const void *p)
{
    return p && header_of((void *)p)->magic == MEM_MAGIC_LARGE;
}

void earl_mem_bank_init(earl_mem_bank *b, size_t expected_bytes)
{
    memset(b, 0, sizeof *b);
    size_t min = (size_t)64 << 10, spread = expected_bytes / EARL_MEM_BANK_MOVES;
    b->min_move = spread > min ? spread : min;
#if defined(MREMAP_DONTUNMAP) && MEM_KEEPS
    pthread_mutex_lock(&pool.lock);
    configure_locked();
    b->enabled = !pool.no_moves;
    pthread_mutex_unlock(&pool.lock);
#endif
}

/* Give back banked range k (its pages will not be needed) and drop it. */
static void bank_drop(earl_mem_bank *b, int k)
{
    bury_pages((uintptr_t)b->range[k].at, (uintptr_t)b->range[k].at + b->range[k].bytes);
    b->range[k] = b->range[--b->n];
}

size_t earl_mem_bank_deposit(earl_mem_bank *b, void *p, size_t from, size_t to, int settle)
{
    if (!b->enabled || !is_mapped_block(p))
        return earl_mem_discard(p, from, to);
    uintptr_t page = page_bytes(), start = (uintptr_t)p;
    uintptr_t lo = (start + from + page - 1) & ~(page - 1);
    uintptr_t hi = (start + to) & ~(page - 1);
    if (hi <= lo || (hi - lo < b->min_move && !settle))
        return from; /* a later call takes a larger range */
    if (hi - lo < b->min_move || b->n == EARL_MEM_BANK_RANGES)
        return earl_mem_discard(p, from, to); /* too small to be worth a mapping */
    b->range[b->n].at = (char *)lo;
    b->range[b->n].bytes = hi - lo;
    b->n++;
    if (guarding()) /* dead from now on; its pages stay resident, to be moved */
        mprotect((void *)lo, hi - lo, PROT_NONE);
    b->banked += hi - lo;
    return hi - start;
}

size_t earl_mem_bank_place(earl_mem_bank *b, void *p, size_t from, size_t to)
{
    if (!b->enabled || !b->n || !is_mapped_block(p))
        return from;
    uintptr_t page = page_bytes(), start = (uintptr_t)p;
    uintptr_t lo = (start + from + page - 1) & ~(page - 1);
    uintptr_t hi = (start + to) & ~(page - 1), first = lo;
    while (hi > lo && b->n) {
        int k = b->n - 1; /* the latest range: the one deposited last, still warm */
        size_t bytes = b->range[k].bytes < hi - lo ? b->range[k].bytes : hi - lo;
        if (bytes < b->min_move && bytes < b->range[k].bytes)
            break; /* the rest of the output is too short for a mapping of its own */
        char *src = b->range[k].at + b->range[k].bytes - bytes; /* its tail */
        /* MREMAP_DONTUNMAP: the source range stays mapped (and reads as
         * zeros), so no other mapping can land in the middle of its block */
        if (mremap(src, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
                   (void *)lo) == MAP_FAILED) {
            /* out of mappings (vm.max_map_count) or a kernel before 5.7:
             * the output faults its pages in as before */
            b->enabled = 0;
            while (b->n)
                bank_drop(b, b->n - 1);
            break;
        }
        if (guarding()) /* the pages came PROT_NONE from a guarded range */
            mprotect((void *)lo, bytes, PROT_READ | PROT_WRITE);
        b->moved += bytes;
        b->moves++;
        lo += bytes;
        if ((b->range[k].bytes -= bytes) == 0)
            b->n--;
    }
    return lo > first ? lo - start : from;
}

void earl_mem_bank_empty(earl_mem_bank *b)
{
    while (b->n)
        bank_drop(b, b->n - 1);
    pthread_mutex_lock(&pool.lock);
    pool.stats.moved_bytes += b->moved;
    pthread_mutex_unlock(&pool.lock);
    b->moved = 0;
}
