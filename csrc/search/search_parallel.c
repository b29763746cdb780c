/*
 * search_parallel.c - the pattern search on several threads, with the same
 * matches in the same order as the sequential search (search_engine.c).
 *
 * Three parts, after chapters 4 and 5 of Ekpenyong's thesis and the team
 * organisation of or-parallel Prolog on clusters:
 *
 *   Task generation (grouped, section 4.3): about S = 8 x threads tasks.
 *   The first d variables are "fixed", d the smallest depth whose product of
 *   domain sizes reaches S (never beyond the $ variables).  The fixed leaf
 *   nodes are grouped g at a time, g = ceil(leaves / S); a task never spans
 *   two subtrees of depth d-1 (Rule 4.2), and g is adjusted to the leaf
 *   domain |D_d| when g > lambda |D_d| (lambda = 0.707) or to |D_d| / 2 when
 *   g > |D_d| / 2, so that the tasks stay even and at most about 1.41 S.
 *   Each task is a prefix of fixed values plus a range of the last fixed
 *   variable: the tasks are disjoint and together cover the tree (Rule 4.1).
 *
 *   Dynamic load balancing: a thread whose team has an idle thread and no
 *   pending task gives away, at its next peek (every `peek` nodes, perturbed
 *   per thread so that threads do not peek in lockstep), the upper half of
 *   the remaining values at its shallowest splittable depth (search_engine.c,
 *   split()).
 *
 *   Teams: the threads form teams; the initial tasks are split statically
 *   between the teams in contiguous blocks, and work moves between threads
 *   only inside a team.  One team of all threads is the default; the layout is
 *   the one a run over several machines would use (a team per machine).
 *
 *   Machines: a trace in parts is searched by all its processes, each with
 *   its threads, and the same split is made between them.  Every process
 *   makes the same initial tasks (the number wanted is given: 8 per thread
 *   of all processes) and searches its block (search_run_options.block);
 *   the blocks' matches, in block order, are the answer.
 *
 * Determinism: every task's matches are a consecutive run of the canonical
 * order, so sorting the tasks by search_task_compare and concatenating their
 * matches gives exactly the sequential answer, whatever the timing.  With a
 * limit K each task keeps at most K matches, pending tasks are taken in
 * canonical order, and the search stops as soon as the tasks that are done
 * and come first in canonical order hold K matches: the first K are then
 * certain.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

#define SEARCH_LAMBDA 0.707
#define SEARCH_TASKS_PER_THREAD 8

/* ---- task generation ------------------------------------------------------------- */

static int push_task(search_task **tasks, size_t *n, size_t *cap, const search_task *t)
{
    if (EARL_GROW(*tasks, *cap, *n + 1))
        return -1;
    (*tasks)[(*n)++] = *t;
    return 0;
}

size_t search_make_tasks(const size_t *sizes, uint32_t n_fixable, size_t lo, size_t hi,
                         size_t wanted, search_task **out)
{
    search_task *tasks = NULL, t;
    size_t n = 0, cap = 0;
    memset(&t, 0, sizeof t);
    *out = NULL;
    if (hi <= lo)
        return 0;
    if (n_fixable == 0 || wanted <= 1) {
        t.lo = lo;
        t.hi = hi;
        if (push_task(&tasks, &n, &cap, &t))
            return (size_t)-1;
        *out = tasks;
        return n;
    }
    /* the depth d: the product of the domain sizes reaches `wanted` */
    uint32_t d = 1;
    size_t leaves = hi - lo;
    while (leaves < wanted && d < n_fixable) {
        if (sizes[d] == 0)
            return 0;
        leaves = sizes[d] > SIZE_MAX / leaves ? SIZE_MAX : leaves * sizes[d];
        d++;
    }
    size_t g = (leaves + wanted - 1) / wanted;
    if (d == 1) {
        for (size_t a = lo; a < hi; a += g) {
            t.lo = a;
            t.hi = hi - a > g ? a + g : hi;
            if (push_task(&tasks, &n, &cap, &t)) {
                free(tasks);
                return (size_t)-1;
            }
        }
        *out = tasks;
        return n;
    }
    size_t leaf = sizes[d - 1];
    if ((double)g > SEARCH_LAMBDA * (double)leaf)
        g = leaf;
    else if (2 * g > leaf)
        g = (leaf + 1) / 2;
    /* every prefix of values of the variables 0 .. d-2, in lexicographic order */
    t.depth = d - 1;
    t.prefix[0] = lo;
    for (uint32_t k = 1; k + 1 < d; k++)
        t.prefix[k] = 0;
    for (;;) {
        for (size_t a = 0; a < leaf; a += g) {
            t.lo = a;
            t.hi = leaf - a > g ? a + g : leaf;
            if (push_task(&tasks, &n, &cap, &t)) {
                free(tasks);
                return (size_t)-1;
            }
        }
        /* the next prefix (an odometer; level 0 runs over [lo, hi)) */
        int32_t k = (int32_t)d - 2;
        while (k >= 0) {
            size_t end = k == 0 ? hi : sizes[k];
            if (++t.prefix[k] < end)
                break;
            t.prefix[k] = k == 0 ? lo : 0;
            k--;
        }
        if (k < 0)
            break;
    }
    *out = tasks;
    return n;
}

/* The block-th of `blocks` contiguous blocks of the tasks, split as between
 * teams (task k to block k x blocks / n), moved to the front; returns its
 * size.  One block of all when blocks <= 1. */
static size_t take_block(search_task *tasks, size_t n, int block, int blocks)
{
    if (blocks <= 1)
        return n;
    size_t kept = 0;
    for (size_t k = 0; k < n; k++)
        if ((int)(k * (size_t)blocks / n) == block)
            tasks[kept++] = tasks[k];
    return kept;
}

/* ---- the pool ------------------------------------------------------------------- */

typedef struct ptask {
    search_task t;
    search_matches m;
    int done;
} ptask;

typedef struct pteam {
    ptask **pending;        /* sorted by key, descending: the smallest is last */
    size_t n_pending, cap_pending;
    _Atomic size_t pending_now; /* n_pending, for the lock-free want_work */
    _Atomic int idle;       /* threads of the team waiting for a task */
    int running;            /* threads of the team running a task */
} pteam;

typedef struct pool {
    const search_solver *s;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_mutex_t progress_lock;
    ptask **all;
    size_t n_all, cap_all, n_done;
    pteam *teams;
    int n_teams;
    uint64_t limit;
    _Atomic int cancel;
    int failed;
    int interrupted;
    uint64_t stolen;
    const search_run_options *opt;
} pool;

typedef struct worker {
    pool *p;
    int index, team;
    search_engine *e;
    search_hooks hooks;
    double idle_seconds;
    double cpu_seconds;
    uint64_t tasks;
} worker;

static int cmp_ptask(const void *x, const void *y)
{
    return search_task_compare(&(*(ptask *const *)x)->t, &(*(ptask *const *)y)->t);
}

/* Under the lock: a new task, recorded in `all` and queued in team `team`. */
static int add_task(pool *p, int team, const search_task *t)
{
    ptask *pt = calloc(1, sizeof *pt);
    if (!pt || EARL_GROW(p->all, p->cap_all, p->n_all + 1)) {
        free(pt);
        return -1;
    }
    pteam *tm = &p->teams[team];
    if (EARL_GROW(tm->pending, tm->cap_pending, tm->n_pending + 1)) {
        free(pt);
        return -1;
    }
    pt->t = *t;
    pt->m.columns = p->s->columns;
    p->all[p->n_all++] = pt;
    /* insert keeping the pending list sorted descending */
    size_t k = tm->n_pending;
    while (k > 0 && search_task_compare(&tm->pending[k - 1]->t, t) < 0) {
        tm->pending[k] = tm->pending[k - 1];
        k--;
    }
    tm->pending[k] = pt;
    tm->n_pending++;
    atomic_store(&tm->pending_now, tm->n_pending);
    return 0;
}

static int want_work(void *ctx)
{
    worker *w = ctx;
    pteam *tm = &w->p->teams[w->team];
    return atomic_load_explicit(&tm->idle, memory_order_relaxed) > 0 &&
           atomic_load_explicit(&tm->pending_now, memory_order_relaxed) == 0;
}

static void give(void *ctx, const search_task *t)
{
    worker *w = ctx;
    pool *p = w->p;
    pthread_mutex_lock(&p->lock);
    if (add_task(p, w->team, t) == 0) {
        p->stolen++;
    } else {
        /* out of memory: the work was taken off the giver, so the answer
         * would be incomplete; fail the search */
        p->failed = 1;
        atomic_store(&p->cancel, 1);
    }
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

/* Under the lock, after a task is done: with a limit, are the first K certain? */
static void check_limit(pool *p)
{
    if (!p->limit)
        return;
    if (p->n_all)
        qsort(p->all, p->n_all, sizeof *p->all, cmp_ptask);
    uint64_t rows = 0;
    for (size_t k = 0; k < p->n_all && p->all[k]->done; k++) {
        rows += p->all[k]->m.rows;
        if (rows >= p->limit) {
            atomic_store(&p->cancel, 1);
            return;
        }
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    pool *p = w->p;
    pteam *tm = &p->teams[w->team];
    double cpu0 = earl_thread_cpu_seconds();
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (atomic_load(&p->cancel))
            break;
        if (tm->n_pending > 0) {
            ptask *pt = tm->pending[--tm->n_pending];
            atomic_store(&tm->pending_now, tm->n_pending);
            tm->running++;
            pthread_mutex_unlock(&p->lock);
            int rc = search_engine_run(w->e, &pt->t, p->limit, &pt->m, &w->hooks, NULL);
            w->tasks++;
            pthread_mutex_lock(&p->lock);
            tm->running--;
            pt->done = 1;
            p->n_done++;
            if (rc) {
                if (rc == -2)
                    p->interrupted = 1;
                else
                    p->failed = 1;
                atomic_store(&p->cancel, 1);
            }
            check_limit(p);
            size_t done = p->n_done, total = p->n_all;
            pthread_cond_broadcast(&p->wake);
            if (p->opt->progress) {
                pthread_mutex_unlock(&p->lock);
                pthread_mutex_lock(&p->progress_lock);
                p->opt->progress(p->opt->progress_data, p->opt->phase, done, total);
                pthread_mutex_unlock(&p->progress_lock);
                pthread_mutex_lock(&p->lock);
            }
            continue;
        }
        if (tm->running == 0)
            break; /* nothing pending and nobody left who could split work off */
        atomic_fetch_add(&tm->idle, 1);
        double t0 = earl_now_seconds();
        pthread_cond_wait(&p->wake, &p->lock);
        w->idle_seconds += earl_now_seconds() - t0;
        atomic_fetch_sub(&tm->idle, 1);
    }
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    w->cpu_seconds += earl_thread_cpu_seconds() - cpu0;
    return NULL;
}

/* The tasks' matches, in canonical order, copied into one array: cut into
 * parts of the output rows on threads (its fresh pages are faulted in by
 * every thread, and the copy is as long as the answer). */
typedef struct merge_job {
    ptask **all;
    size_t n_all;
    earl_eid *ev;
    size_t rows;
    uint32_t columns;
    int parts;
} merge_job;

static void merge_part(void *arg, int part)
{
    merge_job *j = arg;
    size_t from = earl_part_start(j->rows, part, j->parts);
    size_t to = earl_part_start(j->rows, part + 1, j->parts);
    size_t at = 0; /* the first row of task k */
    for (size_t k = 0; k < j->n_all && at < to; k++) {
        size_t n = j->all[k]->m.rows;
        size_t a = at > from ? at : from, b = at + n < to ? at + n : to;
        if (a < b && j->columns)
            memcpy(j->ev + a * j->columns, j->all[k]->m.ev + (a - at) * j->columns,
                   (b - a) * j->columns * sizeof(earl_eid));
        at += n;
    }
}

earl_status search_solve_parallel(const search_solver *s, const search_run_options *opt,
                                  int threads, int teams, search_matches *out, int *truncated,
                                  earl_search_stats *stats, earl_search_thread_stats *per_thread,
                                  earl_error *err)
{
    if (teams < 1)
        teams = 1;
    if (teams > threads)
        teams = threads;
    size_t n0 = s->n_vars ? s->vars[0].dom->n : 0;
    size_t lo = 0, hi = n0;
    if (opt->first_begin || opt->first_end) {
        lo = opt->first_begin < n0 ? opt->first_begin : n0;
        hi = opt->first_end < n0 ? opt->first_end : n0;
        if (hi < lo)
            hi = lo;
    }
    if (s->first_forall == 0) /* only * variables: one check, one task */
        lo = 0, hi = 1;
    size_t sizes[SEARCH_MAX_VARS];
    for (uint32_t v = 0; v < s->n_vars; v++)
        sizes[v] = s->vars[v].dom->n;
    search_task *initial = NULL;
    size_t wanted = opt->tasks ? opt->tasks : (size_t)SEARCH_TASKS_PER_THREAD * (size_t)threads;
    size_t n_initial = search_make_tasks(sizes, s->n_returned, lo, hi, wanted, &initial);
    if (n_initial == (size_t)-1)
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory making tasks");
    n_initial = take_block(initial, n_initial, opt->block, opt->blocks);

    pool p;
    memset(&p, 0, sizeof p);
    p.s = s;
    p.limit = opt->limit;
    p.opt = opt;
    atomic_init(&p.cancel, 0);
    pthread_mutex_init(&p.lock, NULL);
    pthread_mutex_init(&p.progress_lock, NULL);
    pthread_cond_init(&p.wake, NULL);
    p.n_teams = teams;
    p.teams = calloc((size_t)teams, sizeof *p.teams);
    worker *ws = calloc((size_t)threads, sizeof *ws);
    earl_status st = EARL_OK;
    if (!p.teams || !ws) {
        st = earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory starting the search");
        goto done;
    }
    for (int k = 0; k < teams; k++) {
        atomic_init(&p.teams[k].pending_now, 0);
        atomic_init(&p.teams[k].idle, 0);
    }
    /* the static split between teams: contiguous blocks of the initial tasks */
    for (size_t k = 0; k < n_initial; k++)
        if (add_task(&p, (int)(k * (size_t)teams / n_initial), &initial[k])) {
            st = earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory making tasks");
            goto done;
        }
    for (int k = 0; k < threads; k++) {
        worker *w = &ws[k];
        w->p = &p;
        w->index = k;
        w->team = (int)((long)k * teams / threads);
        w->e = search_engine_new(s);
        if (w->e)
            search_engine_set_pruning(w->e, !opt->no_pruning);
        /* peeks perturbed per thread, so that threads do not peek in lockstep */
        w->hooks.peek = SEARCH_PEEK / 2 + (uint32_t)(((uint64_t)k * 2654435761u) % SEARCH_PEEK);
        w->hooks.want_work = want_work;
        w->hooks.give = give;
        w->hooks.cancel = &p.cancel;
        w->hooks.ctx = w;
        w->hooks.interrupt = opt->interrupt;
        w->hooks.interrupt_data = opt->interrupt_data;
        if (!w->e) {
            st = earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory starting the search");
            break;
        }
    }
    if (st == EARL_OK)
        earl_parts_run(work, ws, sizeof *ws, (size_t)threads);
    /* the workers' progress reports may arrive out of order: end with the total */
    if (st == EARL_OK && opt->progress)
        opt->progress(opt->progress_data, opt->phase, p.n_all, p.n_all);
    if (st == EARL_OK && p.failed)
        st = earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory during the search");
    if (st == EARL_OK && p.interrupted)
        st = earl_fail(err, EARL_ERR_INVALID, "pattern: search interrupted");
    double merge_start = earl_now_seconds();
    if (st == EARL_OK) {
        /* the answer: the tasks in canonical order, their matches concatenated */
        if (p.n_all)
            qsort(p.all, p.n_all, sizeof *p.all, cmp_ptask);
        size_t rows = 0;
        for (size_t k = 0; k < p.n_all; k++)
            rows += p.all[k]->m.rows;
        if (p.limit && rows > p.limit)
            rows = (size_t)p.limit;
        out->ev = malloc((rows * s->columns + 1) * sizeof(earl_eid));
        if (!out->ev) {
            st = earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory merging matches");
        } else {
            merge_job mj = {p.all, p.n_all, out->ev, rows, s->columns, 1};
            mj.parts = earl_parallel_parts(threads, rows * s->columns, (size_t)1 << 16);
            earl_parallel(mj.parts, merge_part, &mj);
            out->rows = out->cap_rows = rows;
            *truncated = p.limit && rows >= p.limit;
        }
    }
    memset(stats, 0, sizeof *stats);
    stats->merge_seconds = earl_now_seconds() - merge_start;
    stats->tasks = n_initial;
    stats->stolen = p.stolen;
    for (int k = 0; k < threads; k++) {
        earl_search_stats es = {0};
        if (ws && ws[k].e)
            es = search_engine_stats(ws[k].e);
        stats->nodes += es.nodes;
        stats->checks += es.checks;
        stats->pruned += es.pruned;
        if (per_thread) {
            per_thread[k].nodes = es.nodes;
            per_thread[k].checks = es.checks;
            per_thread[k].tasks = ws ? ws[k].tasks : 0;
            per_thread[k].idle_seconds = ws ? ws[k].idle_seconds : 0;
            per_thread[k].cpu_seconds = ws ? ws[k].cpu_seconds : 0;
            per_thread[k].team = ws ? ws[k].team : 0;
        }
    }
done:
    for (int k = 0; ws && k < threads; k++)
        search_engine_free(ws[k].e);
    free(ws);
    for (size_t k = 0; k < p.n_all; k++) {
        free(p.all[k]->m.ev);
        free(p.all[k]);
    }
    free(p.all);
    for (int k = 0; p.teams && k < teams; k++)
        free(p.teams[k].pending);
    free(p.teams);
    free(initial);
    pthread_cond_destroy(&p.wake);
    pthread_mutex_destroy(&p.lock);
    pthread_mutex_destroy(&p.progress_lock);
    return st;
}
