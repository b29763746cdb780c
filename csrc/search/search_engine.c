/*
 * search_engine.c - the backtracking search of one compiled pattern (a
 * search_solver of search_compile.c): a constraint satisfaction search over
 * the variables' domains, in the spirit of chapter 3 of Ekpenyong's thesis.
 *
 * Variables are bound in search order: the $ variables (declaration order),
 * then the ~ variables, then the * variables.
 *   - $ variables enumerate their domains in ascending order; since the
 *     values of every domain are sorted, the matches come out in canonical
 *     order (ascending by their events, column by column) and a limit stops
 *     the search at the K-th match.
 *   - ~ variables are existential: once one binding of them satisfies the
 *     pattern, the search returns to the last $ variable (each match once).
 *   - * variables are universal: at the leaf, every assignment of them
 *     (values distinct from each other and from the bound variables) must
 *     satisfy the conjuncts that mention them.
 * A top-level conjunct is checked at the depth where its last variable is
 * bound.  Distinct variables never take the same value.
 *
 * The universal phase starts, for each * variable, at the value that
 * refuted the previous binding (after Nichols' reordering, section 4.4 of
 * the thesis) and goes on cyclically: consecutive bindings tend to fail on
 * the same value or one near it.
 *
 * Range pruning: the values of a single-event domain on one location are in
 * program order and, for a bound event x, the stamps V_y[loc(x)] grow along
 * them; so "x --> y" selects a suffix, "y --> x" a prefix (pos(y) <
 * V_x[loc(y)]), "x || y" the range between, and the negations of --> their
 * complements.  Each is found by binary search (a time window), per location
 * of the domain (search_domain.by_loc), and only the values inside the
 * windows are tried, in ascending order.
 *
 * The state of a search is explicit (engine.cur: the value index of every
 * bound variable; engine.hi: the end of each depth's range), so a subtree -
 * a prefix assignment plus a range of the next variable (a search_task) - can
 * be run on its own, and a running search can give the rest of a range away
 * (split(), for search_parallel.c).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

struct search_engine {
    const search_solver *s;
    uint32_t nv;
    size_t cur[SEARCH_MAX_VARS];
    /* the end of the range each depth is enumerating: a split lowers it */
    size_t hi[SEARCH_MAX_VARS];
    /* the bound value of each variable: its events' columns */
    const earl_eid *ev[SEARCH_MAX_VARS];
    const earl_loc *loc[SEARCH_MAX_VARS];
    const uint32_t *pos[SEARCH_MAX_VARS];
    const uint32_t *const *stamp[SEARCH_MAX_VARS];
    /* earlier variables whose values may equal a value of this one */
    uint8_t n_clash[SEARCH_MAX_VARS];
    uint8_t clash[SEARCH_MAX_VARS][SEARCH_MAX_VARS];
    /* per * variable, the value that last refuted a binding: tried first next
     * time, as the next binding likely fails on it too (Nichols, section 4.4
     * of the thesis); only the order of the checks changes, not the result */
    size_t forall_hint[SEARCH_MAX_VARS];
    /* per variable, a buffer for the values that range pruning selects */
    size_t *cand[SEARCH_MAX_VARS];
    int no_pruning;
    search_matches *out;
    uint64_t limit;
    int stop;
    int failed;                /* out of memory while recording */
    int interrupted;           /* stopped by hooks->interrupt */
    earl_search_stats st;
    /* the task being run and the work-sharing hooks (NULL: none) */
    uint32_t base;
    const search_hooks *hooks;
    uint32_t until_peek;
    const search_run_options *opt;
    size_t progress_lo;
    uint64_t progress_total;
};
typedef struct search_engine engine;

static inline void bind(engine *e, uint32_t v, size_t i)
{
    const search_domain *d = e->s->vars[v].dom;
    size_t at = i * d->arity;
    e->cur[v] = i;
    e->ev[v] = d->ev + at;
    e->loc[v] = d->loc + at;
    e->pos[v] = d->pos + at;
    e->stamp[v] = d->stamp + at;
}

/* Would value i of variable v equal the value of an earlier bound variable? */
static inline int clashes(const engine *e, uint32_t v, size_t i)
{
    const search_domain *d = e->s->vars[v].dom;
    for (uint8_t k = 0; k < e->n_clash[v]; k++) {
        uint32_t w = e->clash[v][k];
        if (e->s->vars[w].dom == d) {
            if (e->cur[w] == i)
                return 1;
        } else if (memcmp(e->ev[w], d->ev + i * d->arity, d->arity * sizeof(earl_eid)) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Some event of the values of variables L happened before some event of R. */
static int before(const engine *e, const uint8_t *L, uint8_t nl, const uint8_t *R, uint8_t nr)
{
    for (uint8_t x = 0; x < nl; x++) {
        uint32_t vx = L[x], ax = e->s->vars[vx].dom->arity;
        for (uint32_t i = 0; i < ax; i++) {
            earl_loc la = e->loc[vx][i];
            uint32_t pa = e->pos[vx][i];
            earl_eid ea = e->ev[vx][i];
            for (uint8_t y = 0; y < nr; y++) {
                uint32_t vy = R[y], ay = e->s->vars[vy].dom->arity;
                for (uint32_t j = 0; j < ay; j++)
                    if (e->stamp[vy][j][la] > pa && e->ev[vy][j] != ea)
                        return 1;
            }
        }
    }
    return 0;
}

static int share_event(const engine *e, const uint8_t *L, uint8_t nl, const uint8_t *R, uint8_t nr)
{
    for (uint8_t x = 0; x < nl; x++)
        for (uint32_t i = 0; i < e->s->vars[L[x]].dom->arity; i++)
            for (uint8_t y = 0; y < nr; y++)
                for (uint32_t j = 0; j < e->s->vars[R[y]].dom->arity; j++)
                    if (e->ev[L[x]][i] == e->ev[R[y]][j])
                        return 1;
    return 0;
}

static int eval(engine *e, int32_t n)
{
    const search_cnode *x = &e->s->nodes[n];
    switch (x->type) {
    case SN_AND:
        return eval(e, x->a) && eval(e, x->b);
    case SN_OR:
        return eval(e, x->a) || eval(e, x->b);
    case SN_REL: {
        e->st.checks++;
        int r;
        if (x->rel == SR_BEFORE || x->rel == SR_NOT_BEFORE) {
            r = before(e, x->left, x->n_left, x->right, x->n_right);
            return x->rel == SR_BEFORE ? r : !r;
        }
        r = !before(e, x->left, x->n_left, x->right, x->n_right) &&
            !before(e, x->right, x->n_right, x->left, x->n_left) &&
            !share_event(e, x->left, x->n_left, x->right, x->n_right);
        return x->rel == SR_CONCURRENT ? r : !r;
    }
    default:
        return 1;
    }
}

static inline int check(engine *e, const search_conjunct *k)
{
    if (!k->simple)
        return eval(e, k->node);
    e->st.checks++;
    uint32_t a = k->y_is_left ? k->y : k->x, b = k->y_is_left ? k->x : k->y;
    int ab = e->stamp[b][0][e->loc[a][0]] > e->pos[a][0];
    switch (k->rel) {
    case SR_BEFORE:
        return ab; /* distinct variables: a != b */
    case SR_NOT_BEFORE:
        return !ab;
    default: {
        int conc = !ab && !(e->stamp[a][0][e->loc[b][0]] > e->pos[b][0]);
        return k->rel == SR_CONCURRENT ? conc : !conc;
    }
    }
}

static inline int conjuncts_ok(engine *e, uint32_t d)
{
    const search_solver *s = e->s;
    for (uint32_t k = s->ready_start[d]; k < s->ready_start[d + 1]; k++)
        if (!check(e, &s->conj[s->ready_list[k]]))
            return 0;
    return 1;
}

/* ---- range pruning -------------------------------------------------------------- */

/* The positions of a location group of domain d (values by_loc[k], in
 * program order) below a bound: the searches of range pruning. */
typedef struct group_bound {
    const search_domain *d;
    earl_loc l;
    uint32_t p;
    size_t v;
} group_bound;

static int stamp_at_most(const void *ctx, size_t k)
{
    const group_bound *g = ctx;
    return g->d->stamp[g->d->by_loc[k]][g->l] <= g->p;
}

static int position_below(const void *ctx, size_t k)
{
    const group_bound *g = ctx;
    return g->d->pos[g->d->by_loc[k]] < g->p;
}

static int value_below(const void *ctx, size_t k)
{
    const group_bound *g = ctx;
    return g->d->by_loc[k] < g->v;
}

/* Over positions [a, b) of a location group: the first whose stamp entry at
 * location l exceeds p (the entries grow along the group), or b. */
static size_t first_after(const search_domain *d, size_t a, size_t b, earl_loc l, uint32_t p)
{
    group_bound g = {d, l, p, 0};
    return earl_partition_point(a, b, stamp_at_most, &g);
}

/* The first position in [a, b) whose value's position on its location is >= p. */
static size_t first_at(const search_domain *d, size_t a, size_t b, uint32_t p)
{
    group_bound g = {d, 0, p, 0};
    return earl_partition_point(a, b, position_below, &g);
}

/* The first position in [a, b) whose value index is >= v. */
static size_t first_value(const search_domain *d, size_t a, size_t b, size_t v)
{
    group_bound g = {d, 0, 0, v};
    return earl_partition_point(a, b, value_below, &g);
}

static int prunable(const search_conjunct *c, uint32_t v)
{
    return c->simple && c->y == v && c->rel != SR_NOT_CONCURRENT;
}

/* Narrow positions [*a, *b) of the group on location L of variable v's
 * domain by the simple conjuncts ready at v whose other variable is bound. */
static void narrow(const engine *e, const search_domain *d, earl_loc L, uint32_t v, size_t *a,
                   size_t *b)
{
    const search_solver *s = e->s;
    for (uint32_t k = s->ready_start[v]; k < s->ready_start[v + 1] && *a < *b; k++) {
        const search_conjunct *c = &s->conj[s->ready_list[k]];
        if (!prunable(c, v))
            continue;
        uint32_t x = c->x;
        /* y --> x  <=>  pos(y) < V_x[L]: the positions before cut_before */
        size_t cut_before = first_at(d, *a, *b, e->stamp[x][0][L]);
        /* x --> y  <=>  V_y[loc x] > pos x: the positions from cut_after */
        size_t cut_after = first_after(d, *a, *b, e->loc[x][0], e->pos[x][0]);
        size_t na = *a, nb = *b;
        switch (c->rel) {
        case SR_BEFORE:
            if (c->y_is_left)
                nb = cut_before;
            else
                na = cut_after;
            break;
        case SR_NOT_BEFORE:
            if (c->y_is_left)
                na = cut_before;
            else
                nb = cut_after;
            break;
        default: /* SR_CONCURRENT */
            na = cut_before;
            nb = cut_after;
            break;
        }
        *a = na > *a ? na : *a;
        *b = nb < *b ? nb : *b;
        if (*b < *a)
            *b = *a;
    }
}

static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return (a > b) - (a < b);
}

/* The values of variable v in [*lo, *hi) worth trying.  Returns NULL when
 * they are the whole (possibly narrowed) range [*lo, *hi), or a sorted list
 * of *count value indices (a buffer of the engine) when the domain spans
 * several locations and each location gave its own window. */
static const size_t *prune(engine *e, uint32_t v, size_t *lo, size_t *hi, size_t *count)
{
    const search_solver *s = e->s;
    const search_domain *d = s->vars[v].dom;
    if (e->no_pruning || d->arity != 1 || d->n_groups == 0 || *lo >= *hi)
        return NULL;
    int any = 0;
    for (uint32_t k = s->ready_start[v]; k < s->ready_start[v + 1] && !any; k++)
        any = prunable(&s->conj[s->ready_list[k]], v);
    if (!any)
        return NULL;
    if (d->n_groups == 1) { /* by_loc is the identity: positions are value indices */
        narrow(e, d, d->group_loc[0], v, lo, hi);
        return NULL;
    }
    if (!e->cand[v] && !(e->cand[v] = malloc(d->n * sizeof *e->cand[v])))
        return NULL; /* out of memory: try the whole range, which is correct too */
    size_t m = 0;
    for (uint32_t g = 0; g < d->n_groups; g++) {
        size_t a = first_value(d, d->group_start[g], d->group_start[g + 1], *lo);
        size_t b = first_value(d, a, d->group_start[g + 1], *hi);
        narrow(e, d, d->group_loc[g], v, &a, &b);
        memcpy(e->cand[v] + m, d->by_loc + a, (b - a) * sizeof *e->cand[v]);
        m += b - a;
    }
    if (m * 8 > *hi - *lo)
        return NULL; /* little pruned: sorting would cost more than trying them all */
    qsort(e->cand[v], m, sizeof *e->cand[v], cmp_size);
    *count = m;
    return e->cand[v];
}

/* ---- the universal phase -------------------------------------------------------- */

/* Is there any assignment of variables d.. (distinct values)? */
static int completion_exists(engine *e, uint32_t d)
{
    if (d == e->nv)
        return 1;
    const search_domain *dom = e->s->vars[d].dom;
    for (size_t i = 0; i < dom->n; i++) {
        if (clashes(e, d, i))
            continue;
        bind(e, d, i);
        if (completion_exists(e, d + 1))
            return 1;
    }
    return 0;
}

/* Is value i of * variable d, with d+1.. still to come, a counterexample?
 * *failed_here tells whether d's own conjuncts failed (then d+1.. need no
 * look: no completion exists, so the failure is vacuous). */
static int refutes(engine *e, uint32_t d, size_t i, int *failed_here)
{
    bind(e, d, i);
    e->st.nodes++;
    if (!conjuncts_ok(e, d)) {
        /* violated for every completion: a counterexample if one exists */
        *failed_here = 1;
        return completion_exists(e, d + 1);
    }
    *failed_here = 0;
    return 0;
}

/* The universal phase by windows, when the pattern has one * variable u and
 * each conjunct on it is an | of relations between u and bound single
 * events (search_conjunct.term).  A conjunct is violated by the values of u
 * for which every term is false; on one location, where u's values are in
 * program order, each term is false on a contiguous range (the complement
 * of the window range pruning would select), so the violating values are
 * the intersection of those ranges: a few binary searches per location
 * instead of a pass over the domain.  The values bound to other variables
 * are not u's to take: a range holding only those is no counterexample. */
static int forall_by_windows(engine *e, uint32_t u)
{
    const search_solver *s = e->s;
    const search_domain *d = s->vars[u].dom;
    for (uint32_t k = s->ready_start[u]; k < s->ready_start[u + 1]; k++) {
        const search_conjunct *c = &s->conj[s->ready_list[k]];
        for (uint32_t g = 0; g < d->n_groups; g++) {
            earl_loc L = d->group_loc[g];
            size_t a = d->group_start[g], b = d->group_start[g + 1];
            for (uint32_t t = 0; t < c->n_terms && a < b; t++) {
                uint32_t w = c->term[t].w;
                e->st.checks++;
                /* u --> w on the positions before cut_before, w --> u from cut_after */
                size_t cut_before = first_at(d, a, b, e->stamp[w][0][L]);
                size_t cut_after = first_after(d, a, b, e->loc[w][0], e->pos[w][0]);
                size_t na = a, nb = b; /* where the term is false */
                switch (c->term[t].rel) {
                case SR_BEFORE:
                    if (c->term[t].u_is_left)
                        na = cut_before; /* u --> w false */
                    else
                        nb = cut_after;  /* w --> u false */
                    break;
                case SR_NOT_BEFORE:
                    if (c->term[t].u_is_left)
                        nb = cut_before; /* u !--> w false: u --> w */
                    else
                        na = cut_after;  /* w !--> u false: w --> u */
                    break;
                default: /* SR_NOT_CONCURRENT false: u || w, between the two */
                    na = cut_before;
                    nb = cut_after;
                    break;
                }
                a = na > a ? na : a;
                b = nb < b ? nb : b;
            }
            for (size_t p = a; p < b; p++) {
                size_t i = d->by_loc[p];
                if (clashes(e, u, i))
                    continue;
                bind(e, u, i);
                e->st.nodes++;
                return 0;
            }
        }
    }
    return 1;
}

/* Does every assignment of the * variables d.. satisfy their conjuncts?
 * The values are tried cyclically from the one that refuted the previous
 * binding (forall_hint): consecutive bindings of the earlier variables are
 * close in time and tend to be refuted by the same value or one near it. */
static int forall_ok(engine *e, uint32_t d)
{
    if (d == e->nv)
        return 1;
    if (d == e->s->first_forall && e->s->forall_windows && !e->no_pruning)
        return forall_by_windows(e, d);
    const search_domain *dom = e->s->vars[d].dom;
    size_t n = dom->n, start = e->forall_hint[d] < n ? e->forall_hint[d] : 0;
    int failed_here;
    for (size_t k = 0; k < n; k++) {
        size_t i = start + k < n ? start + k : start + k - n;
        if (clashes(e, d, i))
            continue;
        if (refutes(e, d, i, &failed_here) || (!failed_here && !forall_ok(e, d + 1))) {
            e->forall_hint[d] = i;
            return 0;
        }
    }
    return 1;
}

/* ---- the search ------------------------------------------------------------------ */

static void record(engine *e)
{
    search_matches *m = e->out;
    if (earl_grow((void **)&m->ev, &m->cap_rows, (m->rows + 1) * m->columns + 1,
                  sizeof(earl_eid))) {
        e->failed = e->stop = 1;
        return;
    }
    earl_eid *row = m->ev + m->rows * m->columns;
    for (uint32_t v = 0; v < e->s->n_returned; v++) {
        uint32_t a = e->s->vars[v].dom->arity;
        memcpy(row, e->ev[v], a * sizeof *row);
        row += a;
    }
    m->rows++;
    if (e->limit && m->rows >= e->limit)
        e->stop = 1;
}

/* Give the upper half of the remaining values at the shallowest depth that
 * has some away as a new task.  The shallowest: the giver then has nothing
 * left above that depth, so everything it still finds comes before the
 * given task in canonical order (its remaining work and the task are
 * consecutive runs).  Only $ variables are split: a ~ variable stops at its
 * first witness, which a split would duplicate. */
static void split(engine *e, uint32_t depth_now)
{
    uint32_t top = depth_now < e->s->n_returned ? depth_now : e->s->n_returned - 1;
    for (uint32_t p = e->base; p <= top && p < e->s->n_returned; p++) {
        if (e->cur[p] + 1 >= e->hi[p])
            continue;
        size_t rest = e->hi[p] - e->cur[p] - 1;
        search_task t;
        t.depth = p;
        memcpy(t.prefix, e->cur, p * sizeof *t.prefix);
        t.lo = e->hi[p] - (rest + 1) / 2;
        t.hi = e->hi[p];
        e->hi[p] = t.lo;
        e->hooks->give(e->hooks->ctx, &t);
        return;
    }
}

static int search_range(engine *e, uint32_t d, size_t lo, size_t hi);

/* Bind value i of variable d and search below; 1 when an existential
 * variable found its witness (stop enumerating d). */
static inline int visit(engine *e, uint32_t d, size_t i, size_t lo, int existential)
{
    const search_solver *s = e->s;
    if (d == 0 && e->opt && e->opt->progress && ((i - lo) & 255) == 0)
        e->opt->progress(e->opt->progress_data, e->opt->phase, i - e->progress_lo,
                         e->progress_total);
    if (clashes(e, d, i))
        return 0;
    bind(e, d, i);
    e->st.nodes++;
    if (e->hooks && --e->until_peek == 0) {
        e->until_peek = e->hooks->peek;
        if (e->hooks->interrupt && e->hooks->interrupt(e->hooks->interrupt_data))
            e->stop = e->interrupted = 1;
        else if (e->hooks->cancel &&
                 atomic_load_explicit(e->hooks->cancel, memory_order_relaxed))
            e->stop = 1;
        else if (e->hooks->want_work(e->hooks->ctx))
            split(e, d);
    }
    if (!conjuncts_ok(e, d))
        return 0;
    size_t nn = d + 1 < e->nv ? s->vars[d + 1].dom->n : 0;
    return search_range(e, d + 1, 0, nn) && existential;
}

/* Search variables d.. over [lo, hi) of variable d's domain; returns 1 when a
 * match was recorded below (an existential variable then stops). */
static int search_range(engine *e, uint32_t d, size_t lo, size_t hi)
{
    const search_solver *s = e->s;
    if (d == s->first_forall) {
        if (!forall_ok(e, d))
            return 0;
        record(e);
        return 1;
    }
    size_t n = hi - lo, count = 0;
    const size_t *list = prune(e, d, &lo, &hi, &count);
    e->st.pruned += n - (list ? count : hi - lo);
    /* e->hi[d] bounds the values still to try: a split lowers it */
    e->hi[d] = hi;
    int existential = d >= s->n_returned;
    if (list) {
        for (size_t k = 0; k < count && !e->stop && list[k] < e->hi[d]; k++)
            if (visit(e, d, list[k], lo, existential))
                return 1;
    } else {
        for (size_t i = lo; i < e->hi[d] && !e->stop; i++)
            if (visit(e, d, i, lo, existential))
                return 1;
    }
    return 0;
}

search_engine *search_engine_new(const search_solver *s)
{
    engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->s = s;
    e->nv = s->n_vars;
    for (uint32_t v = 0; v < s->n_vars; v++)
        for (uint32_t w = 0; w < v; w++)
            if (s->vars[w].dom->arity == s->vars[v].dom->arity)
                e->clash[v][e->n_clash[v]++] = (uint8_t)w;
    return e;
}

void search_engine_free(search_engine *e)
{
    if (!e)
        return;
    for (uint32_t v = 0; v < SEARCH_MAX_VARS; v++)
        free(e->cand[v]);
    free(e);
}

void search_engine_set_pruning(search_engine *e, int on)
{
    e->no_pruning = !on;
}

earl_search_stats search_engine_stats(const search_engine *e)
{
    return e->st;
}

int search_engine_run(search_engine *e, const search_task *t, uint64_t limit,
                      search_matches *out, const search_hooks *hooks,
                      const search_run_options *progress)
{
    const search_solver *s = e->s;
    e->out = out;
    e->limit = limit;
    e->stop = 0;
    e->failed = 0;
    e->interrupted = 0;
    e->hooks = hooks;
    e->until_peek = hooks ? hooks->peek : 0;
    e->opt = progress;
    e->base = t->depth;
    e->progress_lo = t->lo;
    e->progress_total = t->hi - t->lo;
    /* the fixed prefix: bound and checked as the search would have */
    for (uint32_t d = 0; d < t->depth; d++) {
        if (clashes(e, d, t->prefix[d]))
            return 0;
        bind(e, d, t->prefix[d]);
        e->st.nodes++;
        if (!conjuncts_ok(e, d))
            return 0;
    }
    if (t->depth >= s->first_forall) /* nothing to enumerate before the * variables */
        search_range(e, t->depth, 0, 0);
    else
        search_range(e, t->depth, t->lo, t->hi);
    return e->failed ? -1 : e->interrupted ? -2 : 0;
}

int search_task_compare(const search_task *a, const search_task *b)
{
    /* the lower bound of each task's region, as a sequence of value indices;
     * a sequence that is a prefix of the other comes first */
    uint32_t n = a->depth < b->depth ? a->depth : b->depth;
    for (uint32_t k = 0; k < n; k++)
        if (a->prefix[k] != b->prefix[k])
            return a->prefix[k] < b->prefix[k] ? -1 : 1;
    size_t an = a->depth == n ? a->lo : a->prefix[n];
    size_t bn = b->depth == n ? b->lo : b->prefix[n];
    if (an != bn)
        return an < bn ? -1 : 1;
    return (a->depth > b->depth) - (a->depth < b->depth);
}

static int never(void *ctx)
{
    (void)ctx;
    return 0;
}

earl_status search_solve(const search_solver *s, const search_run_options *opt,
                         search_matches *out, int *truncated, earl_search_stats *stats,
                         earl_error *err)
{
    engine *e = search_engine_new(s);
    if (!e)
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory");
    search_engine_set_pruning(e, !opt->no_pruning);
    size_t n0 = s->n_vars ? s->vars[0].dom->n : 0;
    search_task t = {0};
    t.hi = n0;
    if (opt->first_begin || opt->first_end) {
        t.lo = opt->first_begin < n0 ? opt->first_begin : n0;
        t.hi = opt->first_end < n0 ? opt->first_end : n0;
        if (t.hi < t.lo)
            t.hi = t.lo;
    }
    /* one thread: the hooks only look for the caller's stop request */
    search_hooks h = {.peek = SEARCH_PEEK, .want_work = never, .interrupt = opt->interrupt,
                      .interrupt_data = opt->interrupt_data};
    int rc = search_engine_run(e, &t, opt->limit, out, opt->interrupt ? &h : NULL, opt);
    if (opt->progress && rc == 0)
        opt->progress(opt->progress_data, opt->phase, t.hi - t.lo, t.hi - t.lo);
    *truncated = opt->limit && out->rows >= opt->limit;
    *stats = e->st;
    search_engine_free(e);
    if (rc == -1)
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory recording matches");
    if (rc == -2)
        return earl_fail(err, EARL_ERR_INVALID, "pattern: search interrupted");
    return EARL_OK;
}
