/*
 * search_compile.c - a parsed program bound to a trace: the constraint
 * program that search_engine.c solves (earl_search_prepare), and the
 * execution entry point with its result (earl_search_execute).
 *
 * Preparing a pattern P:
 *   1. a solver per pattern reachable from P (P itself and every pattern
 *      used as a variable type or named directly), children first: its
 *      variables in search order ($ in declaration order, then ~, then *;
 *      a class or pattern named directly is an anonymous ~ variable, the
 *      middle class of A -(C)-> B an anonymous * variable), and its formula
 *      with the operators rewritten to relations between variables:
 *        A -(C)-> B   =  A --> B  &  (A !--> c | c !--> B)   with c universal
 *        (clause) REL X = clause & (the clause's variables together) REL X
 *      The formula's top-level conjuncts are checked as soon as their
 *      variables are bound.
 *   2. the domains: the events (or partner pairs) of every class used, one
 *      domain per distinct class, shared by the variables of that type;
 *   3. one earl_hb over the union of the class domains; every domain event
 *      gets its location, position and stamp row;
 *   4. the sub-patterns are solved, children first, and their matches become
 *      the domains of the variables they type.
 *
 * A trace in parts (earl_search.h, "a trace in parts") takes two runs of
 * step 1: one per part that stops after the domains of the classes, which
 * are the part's values (earl_search_part_values), and one on every part
 * with every part's values and stamps given (options.given) in place of
 * steps 2 and 3; step 4 is then left to the caller (defer_subpatterns).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search_internal.h"

typedef struct compiler {
    const earl_search_program *prog;
    const earl_trace *trace;
    earl_states *states;
    const earl_eid32 *enterptr;
    earl_search_query *q;
    earl_error *err;
    /* memo: per definition its solver and domain (patterns), per class pair
     * its domain */
    search_solver **def_solver;
    search_domain **def_domain;
    search_domain **class_domain; /* indexed first * (n_classes + 1) + second + 1 */
    const earl_search_prepare_options *opt;
} compiler;

static earl_status fill_stamps(earl_search_query *q, search_domain *d, earl_error *err);

static earl_status nomem(compiler *c)
{
    return earl_fail(c->err, EARL_ERR_NOMEM, "pattern: out of memory preparing the search");
}

static void domain_free(search_domain *d)
{
    if (!d)
        return;
    free(d->group_start);
    free(d->group_loc);
    free(d->by_loc);
    free(d->ev);
    free(d->loc);
    free(d->pos);
    free(d->stamp);
    free(d);
}

static void solver_free(search_solver *s)
{
    if (!s)
        return;
    for (uint32_t v = 0; v < s->n_vars; v++)
        free(s->vars[v].name);
    if (s->column_names)
        for (uint32_t j = 0; j < s->columns; j++)
            free(s->column_names[j]);
    free(s->column_names);
    free(s->nodes);
    free(s->conj);
    free(s->ready_start);
    free(s->ready_list);
    free(s);
}

void earl_search_query_free(earl_search_query *q)
{
    if (!q)
        return;
    for (size_t k = 0; k < q->n_subs; k++)
        free(q->subs[k].name);
    free(q->subs);
    for (size_t k = 0; k < q->n_solvers; k++)
        solver_free(q->solvers[k]);
    for (size_t k = 0; k < q->n_domains; k++)
        domain_free(q->domains[k]);
    for (size_t k = 0; k < q->n_warnings; k++)
        free(q->warnings[k]);
    free(q->solvers);
    free(q->domains);
    free(q->warnings);
    earl_hb_free(q->hb);
    free(q);
}

/* A domain the trace gives no value: a warning of the query (the search goes
 * on: a $ or ~ variable over it has no match, a * variable holds vacuously). */
static earl_status query_warn(earl_search_query *q, earl_error *err, const char *fmt, ...)
    EARL_PRINTF(3, 4);
static earl_status query_warn(earl_search_query *q, earl_error *err, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *copy = earl_strdup(buf);
    if (!copy || EARL_GROW(q->warnings, q->cap_warnings, q->n_warnings + 1)) {
        free(copy);
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory preparing the search");
    }
    q->warnings[q->n_warnings++] = copy;
    return EARL_OK;
}

/* The events of an empty domain: an allocation of its own, so that an empty
 * domain is stamped (with nothing) like any other. */
static earl_status empty_events(search_domain *d, earl_error *err)
{
    if (!d->ev && !(d->ev = malloc(sizeof *d->ev)))
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory preparing the search");
    d->n = 0;
    return EARL_OK;
}

static search_domain *new_domain(compiler *c)
{
    search_domain *d = calloc(1, sizeof *d);
    if (!d || EARL_GROW(c->q->domains, c->q->cap_domains, c->q->n_domains + 1)) {
        free(d);
        return NULL;
    }
    c->q->domains[c->q->n_domains++] = d;
    return d;
}

/* ---- domains of classes ------------------------------------------------------- */

/* The values of class (first, second) from options.given (a trace in parts). */
static earl_status given_values(compiler *c, int32_t first, int32_t second, search_domain *d)
{
    const earl_search_given *g = c->opt->given;
    uint32_t arity = second < 0 ? 1 : 2;
    for (size_t k = 0; k < g->n_classes; k++) {
        const earl_search_given_class *gc = &g->classes[k];
        if (gc->first != first || gc->second != second)
            continue;
        if (gc->arity != arity)
            break;
        d->arity = arity;
        d->n = gc->n;
        if (!(d->ev = malloc((gc->n * arity + 1) * sizeof *d->ev)))
            return nomem(c);
        if (gc->n)
            memcpy(d->ev, gc->values, gc->n * arity * sizeof *d->ev);
        return EARL_OK;
    }
    const search_class *k = &c->prog->classes[first];
    return earl_fail(c->err, EARL_ERR_INVALID, "pattern: line %d, column %d: the values of this "
                     "class were not given (of arity %u)", k->line, k->col, (unsigned)arity);
}

/* The domain of a class (first, second: class literals); an empty one is an
 * error reported at the literal. */
static earl_status class_domain(compiler *c, int32_t first, int32_t second, const char *what,
                                search_domain **out)
{
    size_t slot = (size_t)first * (c->prog->n_classes + 1) + (size_t)(second + 1);
    if (c->class_domain[slot]) {
        *out = c->class_domain[slot];
        return EARL_OK;
    }
    search_domain *d = new_domain(c);
    if (!d)
        return nomem(c);
    earl_status st;
    earl_eid *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    const search_class *ca = &c->prog->classes[first];
    if (c->opt && c->opt->given) {
        if ((st = given_values(c, first, second, d)) != EARL_OK)
            return st;
    } else if ((st = search_class_events(ca, c->trace, c->enterptr, 1, &a, &na, c->err)) !=
               EARL_OK) {
        return st;
    } else if (second < 0) {
        d->arity = 1;
        d->ev = a;
        d->n = na;
    } else {
        const search_class *cb = &c->prog->classes[second];
        if ((st = search_class_events(cb, c->trace, c->enterptr, 0, &b, &nb, c->err)) != EARL_OK) {
            free(a);
            return st;
        }
        if (na && nb)
            st = search_partner_pairs(a, na, b, nb, c->trace, c->states, &d->ev, &d->n, c->err);
        free(a);
        free(b);
        if (st != EARL_OK)
            return st;
        d->arity = 2;
    }
    if (d->n == 0) {
        const search_class *k = &c->prog->classes[first];
        if ((st = query_warn(c->q, c->err, "pattern: line %d, column %d: the %s [\"%s\", \"%s\", "
                             "\"%s\"]%s matches no %s of this trace", k->line, k->col, what,
                             k->field[0], k->field[1], k->field[2], second >= 0 ? ".[...]" : "",
                             second >= 0 ? "pair of partner events" : "event")) != EARL_OK ||
            (st = empty_events(d, c->err)) != EARL_OK)
            return st;
    }
    c->class_domain[slot] = d;
    *out = d;
    return EARL_OK;
}

/* ---- solvers ------------------------------------------------------------------ */

typedef struct var_map {
    int32_t *of_var;   /* program variable -> solver variable, -1 */
    int32_t *of_node;  /* anonymous operand node -> solver variable, -1 */
} var_map;

static earl_status build_solver(compiler *c, int32_t def, search_solver **out);

/* The domain of a variable typed by definition def (a class or a pattern). */
static earl_status typed_domain(compiler *c, int32_t def, search_domain **out)
{
    const search_def *d = &c->prog->defs[def];
    if (!d->is_pattern) {
        char what[160];
        snprintf(what, sizeof what, "class '%s'", d->name);
        return class_domain(c, d->first, d->second, what, out);
    }
    if (!c->def_domain[def]) {
        search_solver *sub;
        earl_status st = build_solver(c, def, &sub);
        if (st != EARL_OK)
            return st;
        search_domain *dom = new_domain(c);
        earl_search_query *q = c->q;
        if (!dom || EARL_GROW(q->subs, q->cap_subs, q->n_subs + 1))
            return nomem(c);
        dom->arity = sub->columns; /* filled when the sub-pattern is solved */
        c->def_solver[def] = sub;
        c->def_domain[def] = dom;
        /* after its own sub-patterns: children first */
        search_sub *x = &q->subs[q->n_subs];
        *x = (search_sub){sub, dom, earl_strdup(d->name), d->line, d->col};
        if (!x->name)
            return nomem(c);
        q->n_subs++;
    }
    *out = c->def_domain[def];
    return EARL_OK;
}

static earl_status add_var(compiler *c, search_solver *s, const char *name, char quant,
                           search_domain *dom, int line, int col, int32_t *index)
{
    if (s->n_vars >= SEARCH_MAX_VARS)
        return earl_fail(c->err, EARL_ERR_INVALID, "pattern: line %d, column %d: more than %d "
                         "variables in one pattern", line, col, SEARCH_MAX_VARS);
    search_qvar *v = &s->vars[s->n_vars];
    v->name = earl_strdup(name);
    if (!v->name)
        return nomem(c);
    v->quant = quant;
    v->dom = dom;
    *index = (int32_t)s->n_vars++;
    return EARL_OK;
}

/* Collect the variables of a pattern's tree: declared ones (flag in
 * used[]), anonymous ones in node order into anon[] with their quantifier. */
static void collect(const earl_search_program *g, int32_t node, uint8_t *used, int32_t *anon,
                    char *anon_quant, size_t *n_anon, char quant_here)
{
    if (node < 0)
        return;
    const search_node *n = &g->nodes[node];
    switch (n->type) {
    case SN_VAR:
        used[n->ref] = 1;
        break;
    case SN_NAME:
    case SN_CLASS:
        anon[*n_anon] = node;
        anon_quant[(*n_anon)++] = quant_here;
        break;
    case SN_LIMITED:
        collect(g, n->a, used, anon, anon_quant, n_anon, '~');
        collect(g, n->c, used, anon, anon_quant, n_anon, '*');
        collect(g, n->b, used, anon, anon_quant, n_anon, '~');
        break;
    default:
        collect(g, n->a, used, anon, anon_quant, n_anon, '~');
        collect(g, n->b, used, anon, anon_quant, n_anon, '~');
        break;
    }
}

static int32_t add_cnode(search_solver *s, uint8_t type)
{
    if (EARL_GROW(s->nodes, s->cap_nodes, s->n_nodes + 1))
        return -1;
    search_cnode *n = &s->nodes[s->n_nodes];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->a = n->b = -1;
    return (int32_t)s->n_nodes++;
}

/* The variables of an operand (all variables of a clause operand). */
static int operand_vars(compiler *c, const var_map *m, int32_t node, uint8_t *vars, uint8_t *n)
{
    const search_node *x = &c->prog->nodes[node];
    int32_t v = -1;
    if (x->type == SN_VAR)
        v = m->of_var[x->ref];
    else if (x->type == SN_NAME || x->type == SN_CLASS)
        v = m->of_node[node];
    if (v >= 0) {
        for (uint8_t k = 0; k < *n; k++)
            if (vars[k] == v)
                return 0;
        if (*n >= SEARCH_MAX_OPERAND) {
            earl_fail(c->err, EARL_ERR_INVALID, "pattern: line %d, column %d: an operand "
                      "groups more than %d variables", x->line, x->col, SEARCH_MAX_OPERAND);
            return -1;
        }
        vars[(*n)++] = (uint8_t)v;
        return 0;
    }
    if (x->a >= 0 && operand_vars(c, m, x->a, vars, n))
        return -1;
    if (x->b >= 0 && operand_vars(c, m, x->b, vars, n))
        return -1;
    if (x->type == SN_LIMITED && operand_vars(c, m, x->c, vars, n))
        return -1;
    return 0;
}

static int is_leaf(const search_node *x)
{
    return x->type == SN_VAR || x->type == SN_NAME || x->type == SN_CLASS;
}

static int32_t compile_formula(compiler *c, search_solver *s, const var_map *m, int32_t node);

static int32_t make_and(search_solver *s, int32_t a, int32_t b)
{
    if (a < 0 || b < 0)
        return -1;
    int32_t n = add_cnode(s, SN_AND);
    if (n >= 0) {
        s->nodes[n].a = a;
        s->nodes[n].b = b;
    }
    return n;
}

/* REL between two operands, with the clause conditions of clause operands. */
static int32_t make_rel(compiler *c, search_solver *s, const var_map *m, uint8_t rel, int32_t left,
                        int32_t right)
{
    int32_t n = add_cnode(s, SN_REL);
    if (n < 0)
        return -1;
    s->nodes[n].rel = rel;
    uint8_t lv[SEARCH_MAX_OPERAND], rv[SEARCH_MAX_OPERAND], nl = 0, nr = 0;
    if (operand_vars(c, m, left, lv, &nl) || operand_vars(c, m, right, rv, &nr))
        return -2;
    memcpy(s->nodes[n].left, lv, nl);
    memcpy(s->nodes[n].right, rv, nr);
    s->nodes[n].n_left = nl;
    s->nodes[n].n_right = nr;
    int32_t out = n;
    if (!is_leaf(&c->prog->nodes[left])) {
        int32_t cl = compile_formula(c, s, m, left);
        if (cl < -1)
            return cl;
        out = make_and(s, cl, out);
    }
    if (out >= 0 && !is_leaf(&c->prog->nodes[right])) {
        int32_t cr = compile_formula(c, s, m, right);
        if (cr < -1)
            return cr;
        out = make_and(s, out, cr);
    }
    return out;
}

/* Returns the cnode, -1 out of memory, -2 error already in c->err. */
static int32_t compile_formula(compiler *c, search_solver *s, const var_map *m, int32_t node)
{
    const search_node *x = &c->prog->nodes[node];
    switch (x->type) {
    case SN_AND:
    case SN_OR: {
        int32_t a = compile_formula(c, s, m, x->a);
        if (a < 0)
            return a;
        int32_t b = compile_formula(c, s, m, x->b);
        if (b < 0)
            return b;
        int32_t n = add_cnode(s, x->type);
        if (n >= 0) {
            s->nodes[n].a = a;
            s->nodes[n].b = b;
        }
        return n;
    }
    case SN_REL:
        return make_rel(c, s, m, x->rel, x->a, x->b);
    case SN_LIMITED: {
        int32_t ab = make_rel(c, s, m, SR_BEFORE, x->a, x->b);
        if (ab < 0)
            return ab;
        int32_t ac = make_rel(c, s, m, SR_NOT_BEFORE, x->a, x->c);
        if (ac < 0)
            return ac;
        int32_t cb = make_rel(c, s, m, SR_NOT_BEFORE, x->c, x->b);
        if (cb < 0)
            return cb;
        int32_t either = add_cnode(s, SN_OR);
        if (either < 0)
            return -1;
        s->nodes[either].a = ac;
        s->nodes[either].b = cb;
        return make_and(s, ab, either);
    }
    default: /* a bare operand: true, its variable is bound all the same */
        return add_cnode(s, SN_VAR);
    }
}

static void node_vars(const search_solver *s, int32_t n, uint64_t *mask)
{
    const search_cnode *x = &s->nodes[n];
    if (x->type == SN_REL) {
        for (int k = 0; k < x->n_left; k++)
            *mask |= 1ull << x->left[k];
        for (int k = 0; k < x->n_right; k++)
            *mask |= 1ull << x->right[k];
    } else if (x->type == SN_AND || x->type == SN_OR) {
        node_vars(s, x->a, mask);
        node_vars(s, x->b, mask);
    }
}

/* Collect the terms of a conjunct checkable by windows (see search_conjunct);
 * 0 when it is not. */
static int window_terms(const search_solver *s, int32_t n, uint32_t u, search_conjunct *k)
{
    const search_cnode *x = &s->nodes[n];
    if (x->type == SN_OR)
        return window_terms(s, x->a, u, k) && window_terms(s, x->b, u, k);
    if (x->type != SN_REL || x->rel == SR_CONCURRENT || x->n_left != 1 || x->n_right != 1 ||
        k->n_terms >= SEARCH_MAX_TERMS)
        return 0;
    uint8_t l = x->left[0], r = x->right[0];
    if ((l == u) == (r == u))
        return 0;
    uint8_t w = l == u ? r : l;
    if (w >= s->first_forall || s->vars[w].dom->arity != 1)
        return 0;
    k->term[k->n_terms].rel = x->rel;
    k->term[k->n_terms].w = w;
    k->term[k->n_terms].u_is_left = l == u;
    k->n_terms++;
    return 1;
}

static int add_conjuncts(search_solver *s, int32_t n)
{
    if (s->nodes[n].type == SN_AND)
        return add_conjuncts(s, s->nodes[n].a) || add_conjuncts(s, s->nodes[n].b);
    if (EARL_GROW(s->conj, s->cap_conj, s->n_conj + 1))
        return -1;
    search_conjunct *k = &s->conj[s->n_conj++];
    memset(k, 0, sizeof *k);
    k->node = n;
    uint64_t mask = 0;
    node_vars(s, n, &mask);
    for (uint32_t v = 0; v < s->n_vars; v++)
        if (mask >> v & 1) {
            k->ready = v;
            if (s->vars[v].quant == '*')
                k->uses_forall = 1;
        }
    const search_cnode *x = &s->nodes[n];
    if (x->type == SN_REL && x->n_left == 1 && x->n_right == 1 && x->left[0] != x->right[0] &&
        s->vars[x->left[0]].dom->arity == 1 && s->vars[x->right[0]].dom->arity == 1) {
        k->simple = 1;
        k->rel = x->rel;
        k->y_is_left = x->left[0] > x->right[0];
        k->y = k->y_is_left ? x->left[0] : x->right[0];
        k->x = k->y_is_left ? x->right[0] : x->left[0];
    }
    uint32_t u = s->first_forall;
    if (k->uses_forall && s->n_vars == u + 1 && s->vars[u].dom->arity == 1 &&
        !window_terms(s, n, u, k))
        k->n_terms = 0;
    return 0;
}

static earl_status build_solver(compiler *c, int32_t def, search_solver **out)
{
    const earl_search_program *g = c->prog;
    search_solver *s = calloc(1, sizeof *s);
    var_map m = {calloc(g->n_vars + 1, sizeof(int32_t)), calloc(g->n_nodes + 1, sizeof(int32_t))};
    uint8_t *used = calloc(g->n_vars + 1, 1);
    int32_t *anon = calloc(g->n_nodes + 1, sizeof *anon);
    char *anon_quant = calloc(g->n_nodes + 1, 1);
    earl_status st = EARL_OK;
    if (!s || !m.of_var || !m.of_node || !used || !anon || !anon_quant) {
        st = nomem(c);
        goto done;
    }
    for (size_t k = 0; k <= g->n_vars; k++)
        m.of_var[k] = -1;
    for (size_t k = 0; k <= g->n_nodes; k++)
        m.of_node[k] = -1;
    size_t n_anon = 0;
    int32_t root = g->defs[def].root;
    collect(g, root, used, anon, anon_quant, &n_anon, '~');
    /* search order: $ declared, ~ declared, ~ anonymous, * declared, * anonymous */
    static const char order[3] = {'$', '~', '*'};
    int anon_count = 0;
    for (int phase = 0; phase < 3; phase++) {
        char q = order[phase];
        if (phase == 2)
            s->first_forall = s->n_vars;
        for (size_t v = 0; v < g->n_vars; v++) {
            if (!used[v] || g->vars[v].quant != q)
                continue;
            search_domain *dom;
            if ((st = typed_domain(c, g->vars[v].def, &dom)))
                goto done;
            if ((st = add_var(c, s, g->vars[v].name, q, dom, g->vars[v].line, g->vars[v].col,
                              &m.of_var[v])))
                goto done;
        }
        if (phase == 0)
            s->n_returned = s->n_vars;
        for (size_t k = 0; k < n_anon && phase > 0; k++) {
            if (anon_quant[k] != q)
                continue;
            const search_node *x = &g->nodes[anon[k]];
            search_domain *dom;
            if (x->type == SN_NAME)
                st = typed_domain(c, x->ref, &dom);
            else
                st = class_domain(c, x->ref, x->c, "class", &dom);
            if (st)
                goto done;
            char name[24];
            snprintf(name, sizeof name, "%d", ++anon_count);
            if ((st = add_var(c, s, name, q, dom, x->line, x->col, &m.of_node[anon[k]])))
                goto done;
        }
    }
    int32_t f = compile_formula(c, s, &m, root);
    if (f < 0) {
        st = f == -1 ? nomem(c) : c->err->code;
        goto done;
    }
    if (add_conjuncts(s, f)) {
        st = nomem(c);
        goto done;
    }
    s->forall_windows = s->n_vars == s->first_forall + 1 &&
                        s->vars[s->first_forall].dom->arity == 1;
    for (size_t k = 0; k < s->n_conj; k++)
        if (s->conj[k].uses_forall && s->conj[k].n_terms == 0)
            s->forall_windows = 0;
    /* conjuncts per ready depth (CSR) */
    s->ready_start = calloc(s->n_vars + 2, sizeof *s->ready_start);
    s->ready_list = calloc(s->n_conj + 1, sizeof *s->ready_list);
    if (!s->ready_start || !s->ready_list) {
        st = nomem(c);
        goto done;
    }
    for (size_t k = 0; k < s->n_conj; k++)
        s->ready_start[s->conj[k].ready + 1]++;
    for (uint32_t v = 0; v < s->n_vars; v++)
        s->ready_start[v + 1] += s->ready_start[v];
    {
        uint32_t *fill = calloc(s->n_vars + 1, sizeof *fill);
        if (!fill) {
            st = nomem(c);
            goto done;
        }
        for (size_t k = 0; k < s->n_conj; k++) {
            uint32_t r = s->conj[k].ready;
            s->ready_list[s->ready_start[r] + fill[r]++] = (uint32_t)k;
        }
        free(fill);
    }
    /* columns */
    for (uint32_t v = 0; v < s->n_returned; v++)
        s->columns += s->vars[v].dom->arity;
    s->column_names = calloc(s->columns + 1, sizeof(char *));
    if (!s->column_names) {
        st = nomem(c);
        goto done;
    }
    {
        uint32_t j = 0;
        for (uint32_t v = 0; v < s->n_returned; v++) {
            const search_qvar *qv = &s->vars[v];
            int32_t pv = -1;
            for (size_t k = 0; k < g->n_vars; k++)
                if (m.of_var[k] == (int32_t)v)
                    pv = (int32_t)k;
            const search_def *d = &g->defs[g->vars[pv].def];
            for (uint32_t a = 0; a < qv->dom->arity; a++) {
                char buf[512];
                if (d->is_pattern)
                    snprintf(buf, sizeof buf, "%s.%s", qv->name,
                             c->def_solver[g->vars[pv].def]->column_names[a]);
                else
                    snprintf(buf, sizeof buf, a ? "%s.partner" : "%s", qv->name);
                if (!(s->column_names[j++] = earl_strdup(buf))) {
                    st = nomem(c);
                    goto done;
                }
            }
        }
    }
done:
    free(m.of_var);
    free(m.of_node);
    free(used);
    free(anon);
    free(anon_quant);
    /* post-order: a sub-pattern is listed before every pattern that uses it */
    if (st == EARL_OK && EARL_GROW(c->q->solvers, c->q->cap_solvers, c->q->n_solvers + 1))
        st = nomem(c);
    if (st != EARL_OK) {
        solver_free(s);
        s = NULL;
    } else {
        c->q->solvers[c->q->n_solvers++] = s;
    }
    *out = s;
    return st;
}

/* ---- stamps ------------------------------------------------------------------- */

/* The values of an arity-1 domain grouped by location (a counting sort:
 * ascending inside each group, as the values are). */
static earl_status group_by_location(earl_search_query *q, search_domain *d, earl_error *err)
{
    uint32_t n_locs = earl_hb_width(q->hb);
    size_t *count = calloc((size_t)n_locs + 1, sizeof *count);
    d->by_loc = malloc((d->n ? d->n : 1) * sizeof *d->by_loc);
    if (!count || !d->by_loc) {
        free(count);
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory preparing the search");
    }
    for (size_t k = 0; k < d->n; k++)
        count[d->loc[k] + 1]++;
    uint32_t groups = 0;
    for (uint32_t l = 0; l < n_locs; l++)
        groups += count[l + 1] > 0;
    d->n_groups = groups;
    d->group_start = malloc(((size_t)groups + 1) * sizeof *d->group_start);
    d->group_loc = malloc(((size_t)groups + 1) * sizeof *d->group_loc);
    if (!d->group_start || !d->group_loc) {
        free(count);
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory preparing the search");
    }
    uint32_t g = 0;
    for (uint32_t l = 0; l < n_locs; l++) {
        if (count[l + 1]) {
            d->group_start[g] = count[l];
            d->group_loc[g++] = (earl_loc)l;
        }
        count[l + 1] += count[l];
    }
    d->group_start[groups] = d->n;
    for (size_t k = 0; k < d->n; k++)
        d->by_loc[count[d->loc[k]]++] = k;
    free(count);
    return EARL_OK;
}

/* The index of stamped event e, searched from index *from on (galloping: the
 * values of a domain mostly ascend, so the next one is usually a few stamped
 * events further) and from the start when e lies before it; *from is left at
 * the answer.  -1 when e is not stamped. */
static int64_t stamped_index(const earl_hb *hb, earl_eid e, size_t *from)
{
    size_t n = earl_hb_count(hb), lo = *from < n ? *from : 0, step = 1, hi;
    if (n == 0)
        return -1;
    if (earl_hb_event(hb, lo) > e)
        lo = 0;
    /* earl_hb_event(lo) <= e or lo == 0: widen [lo, hi) until it holds e */
    for (hi = lo + 1; hi < n && earl_hb_event(hb, hi) <= e; step *= 2) {
        lo = hi;
        hi = n - hi > step ? hi + step : n;
    }
    while (lo < hi) { /* the first index in [lo, hi) whose event is >= e */
        size_t mid = lo + (hi - lo) / 2;
        if (earl_hb_event(hb, mid) < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= n || earl_hb_event(hb, lo) != e)
        return -1;
    *from = lo;
    return (int64_t)lo;
}

static earl_status fill_stamps(earl_search_query *q, search_domain *d, earl_error *err)
{
    size_t m = d->n * d->arity;
    d->loc = malloc((m ? m : 1) * sizeof *d->loc);
    d->pos = malloc((m ? m : 1) * sizeof *d->pos);
    d->stamp = malloc((m ? m : 1) * sizeof *d->stamp);
    if (!d->loc || !d->pos || !d->stamp)
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory preparing the search");
    earl_loc first_loc = EARL_NONE;
    d->single_location = d->arity == 1;
    size_t at = 0;
    for (size_t k = 0; k < m; k++) {
        int64_t i = stamped_index(q->hb, d->ev[k], &at);
        if (i < 0)
            return earl_fail(err, EARL_ERR_INVALID, "pattern: internal error: event %lld "
                             "has no timestamp", (long long)d->ev[k]);
        d->loc[k] = earl_hb_location(q->hb, (size_t)i);
        d->pos[k] = earl_hb_position(q->hb, (size_t)i);
        d->stamp[k] = earl_hb_stamp(q->hb, (size_t)i);
        if (k == 0)
            first_loc = d->loc[k];
        else if (d->loc[k] != first_loc)
            d->single_location = 0;
    }
    return d->arity == 1 ? group_by_location(q, d, err) : EARL_OK;
}

static earl_status stamp_domains(compiler *c);

static earl_status build_stamps(compiler *c)
{
    earl_search_query *q = c->q;
    size_t total = 0;
    for (size_t k = 0; k < q->n_domains; k++)
        if (q->domains[k]->ev)
            total += q->domains[k]->n * q->domains[k]->arity;
    earl_eid *all = malloc((total ? total : 1) * sizeof *all);
    if (!all)
        return nomem(c);
    size_t n = 0;
    for (size_t k = 0; k < q->n_domains; k++)
        if (q->domains[k]->ev) {
            memcpy(all + n, q->domains[k]->ev, q->domains[k]->n * q->domains[k]->arity * sizeof *all);
            n += q->domains[k]->n * q->domains[k]->arity;
        }
    int sorted = 1; /* one class domain, or several in a row: sorted already */
    for (size_t k = 1; k < n && sorted; k++)
        sorted = all[k - 1] <= all[k];
    if (!sorted)
        qsort(all, n, sizeof *all, earl_cmp_i64);
    size_t u = 0;
    for (size_t k = 0; k < n; k++)
        if (!u || all[u - 1] != all[k])
            all[u++] = all[k];
    earl_hb_options ho = {.threads = c->opt ? c->opt->threads : 0,
                          .progress = c->opt ? c->opt->progress : NULL,
                          .progress_data = c->opt ? c->opt->progress_data : NULL};
    earl_status st = earl_hb_build(c->trace, c->states, all, u, &ho, &q->hb, c->err);
    free(all);
    if (st != EARL_OK)
        return st;
    return stamp_domains(c);
}

/* Every class domain gets the stamps of its events (sub-patterns' domains
 * get theirs when they are solved). */
static earl_status stamp_domains(compiler *c)
{
    earl_status st;
    for (size_t k = 0; k < c->q->n_domains; k++)
        if (c->q->domains[k]->ev && (st = fill_stamps(c->q, c->q->domains[k], c->err)) != EARL_OK)
            return st;
    return EARL_OK;
}

/* Sub-pattern k is solved: its n matches (rows of its columns, taken) are
 * the values of its domain. */
static earl_status solve_sub(earl_search_query *q, size_t k, earl_eid *rows, size_t n,
                             earl_error *err)
{
    search_sub *x = &q->subs[k];
    search_domain *dom = x->domain;
    free(dom->ev);
    dom->ev = rows;
    dom->n = n;
    earl_status st;
    if (n == 0 &&
        ((st = query_warn(q, err, "pattern: line %d, column %d: the pattern '%s', used as a "
                          "variable type, has no match in this trace", x->line, x->col,
                          x->name)) != EARL_OK ||
         (st = empty_events(dom, err)) != EARL_OK))
        return st;
    return fill_stamps(q, dom, err);
}

/* ---- prepare ------------------------------------------------------------------ */

struct earl_search_values {
    size_t n;
    earl_search_given_class *classes; /* values owned */
};

/* The definition of the pattern to search, or -1 with err. */
static int32_t pattern_def(const earl_search_program *prog, const char *name, earl_error *err)
{
    if (!name)
        return prog->patterns[prog->n_patterns - 1];
    for (size_t k = 0; k < prog->n_patterns; k++)
        if (strcmp(prog->defs[prog->patterns[k]].name, name) == 0)
            return prog->patterns[k];
    char names[400] = "";
    for (size_t k = 0; k < prog->n_patterns; k++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                 prog->defs[prog->patterns[k]].name);
    }
    earl_fail(err, EARL_ERR_INVALID, "pattern: no pattern named '%s' (the text defines: %s)", name,
              names);
    return -1;
}

/* The class domains the compiler made (a part's values), taken from them. */
static earl_status take_values(compiler *c, earl_search_values **out)
{
    size_t slots = (c->prog->n_classes + 1) * (c->prog->n_classes + 1), n = 0;
    earl_search_values *v = calloc(1, sizeof *v);
    if (!v || !(v->classes = calloc(slots + 1, sizeof *v->classes))) {
        free(v);
        return nomem(c);
    }
    for (size_t slot = 0; slot < slots; slot++) {
        search_domain *d = c->class_domain[slot];
        if (!d)
            continue;
        v->classes[n++] = (earl_search_given_class){
            (int32_t)(slot / (c->prog->n_classes + 1)),
            (int32_t)(slot % (c->prog->n_classes + 1)) - 1, d->arity, d->n, d->ev};
        d->ev = NULL;
    }
    v->n = n;
    *out = v;
    return EARL_OK;
}

/* Solve the sub-patterns left, children first, on this process. */
static earl_status solve_subs(earl_search_query *q, const earl_search_prepare_options *opt,
                              earl_error *err)
{
    for (; q->pending < q->n_subs; q->pending++) {
        const search_solver *s = q->subs[q->pending].solver;
        search_matches mt = {.columns = s->columns};
        int truncated;
        earl_search_stats stats;
        search_run_options ro = {.progress = opt ? opt->progress : NULL,
                                 .progress_data = opt ? opt->progress_data : NULL,
                                 .phase = "subpattern"};
        int threads = earl_threads_or_cores(opt ? opt->threads : 0);
        earl_status st = threads == 1 ? search_solve(s, &ro, &mt, &truncated, &stats, err)
                                      : search_solve_parallel(s, &ro, threads, 1, &mt, &truncated,
                                                              &stats, NULL, err);
        if (st != EARL_OK || (st = solve_sub(q, q->pending, mt.ev, mt.rows, err)) != EARL_OK)
            return st;
    }
    return EARL_OK;
}

/* Steps 1 to 4 of the module (values: step 1 of a part only). */
static earl_status prepare(const earl_search_program *prog, const earl_trace *trace,
                           earl_states *states, const earl_search_prepare_options *opt,
                           earl_search_values **values, earl_search_query **out, earl_error *err)
{
    earl_error scratch; /* the compiler reads back the error it failed with */
    if (!err)
        err = &scratch;
    *out = NULL;
    int given = opt && opt->given;
    if (!prog || (!given && (!trace || !states)))
        return earl_fail(err, EARL_ERR_INVALID, "pattern: no program, trace or states");
    if (given && !opt->given->stamps)
        return earl_fail(err, EARL_ERR_INVALID, "pattern: values given without their stamps");
    int32_t def = pattern_def(prog, opt ? opt->pattern : NULL, err);
    if (def < 0)
        return EARL_ERR_INVALID;
    compiler c = {.prog = prog, .trace = trace, .states = states, .err = err, .opt = opt};
    c.enterptr = states ? earl_states_get_view(states)->enterptr : NULL;
    c.q = calloc(1, sizeof *c.q);
    c.def_solver = calloc(prog->n_defs + 1, sizeof *c.def_solver);
    c.def_domain = calloc(prog->n_defs + 1, sizeof *c.def_domain);
    c.class_domain = calloc((prog->n_classes + 1) * (prog->n_classes + 1), sizeof *c.class_domain);
    earl_status st = EARL_OK;
    if (!c.q || !c.def_solver || !c.def_domain || !c.class_domain) {
        st = nomem(&c);
        goto done;
    }
    c.q->trace = trace;
    if ((st = build_solver(&c, def, &c.q->top)) != EARL_OK)
        goto done;
    if (values) {
        st = take_values(&c, values);
        goto done;
    }
    if (given) {
        c.q->hb = opt->given->stamps;
        st = stamp_domains(&c);
    } else {
        st = build_stamps(&c);
    }
    if (st == EARL_OK && !(opt && opt->defer_subpatterns))
        st = solve_subs(c.q, opt, err);
done:
    free(c.def_solver);
    free(c.def_domain);
    free(c.class_domain);
    if (st != EARL_OK || values) {
        if (c.q && given && c.q->hb == opt->given->stamps)
            c.q->hb = NULL; /* the caller's on failure */
        earl_search_query_free(c.q);
        return st;
    }
    *out = c.q;
    return EARL_OK;
}

earl_status earl_search_prepare(const earl_search_program *prog, const earl_trace *trace,
                                earl_states *states, const earl_search_prepare_options *opt,
                                earl_search_query **out, earl_error *err)
{
    earl_error local;
    return prepare(prog, trace, states, opt, NULL, out, err ? err : &local);
}

earl_status earl_search_part_values(const earl_search_program *program, const char *pattern,
                                    const earl_trace *trace, earl_states *states,
                                    earl_search_values **out, earl_error *err)
{
    earl_error local;
    earl_search_prepare_options o = {.pattern = pattern};
    earl_search_query *q;
    *out = NULL;
    return prepare(program, trace, states, &o, out, &q, err ? err : &local);
}

size_t earl_search_values_count(const earl_search_values *v)
{
    return v ? v->n : 0;
}

earl_search_given_class earl_search_values_class(const earl_search_values *v, size_t k)
{
    earl_search_given_class none = {-1, -1, 0, 0, NULL};
    return v && k < v->n ? v->classes[k] : none;
}

void earl_search_values_free(earl_search_values *v)
{
    if (!v)
        return;
    for (size_t k = 0; k < v->n; k++)
        free((earl_eid *)v->classes[k].values);
    free(v->classes);
    free(v);
}

const char *earl_search_query_pending(const earl_search_query *q, uint32_t *columns)
{
    int left = q && q->pending < q->n_subs;
    if (columns)
        *columns = left ? q->subs[q->pending].solver->columns : 0;
    return left ? q->subs[q->pending].name : NULL;
}

earl_status earl_search_query_solved(earl_search_query *q, const earl_eid *rows, size_t n_rows,
                                     earl_error *err)
{
    if (!q || q->pending >= q->n_subs)
        return earl_fail(err, EARL_ERR_INVALID, "pattern: no sub-pattern is left to solve");
    uint32_t columns = q->subs[q->pending].solver->columns;
    earl_eid *copy = malloc((n_rows * columns + 1) * sizeof *copy);
    if (!copy)
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory for a sub-pattern's matches");
    if (n_rows && columns)
        memcpy(copy, rows, n_rows * columns * sizeof *copy);
    earl_status st = solve_sub(q, q->pending, copy, n_rows, err);
    if (st == EARL_OK)
        q->pending++;
    return st;
}

size_t earl_search_query_warnings(const earl_search_query *q)
{
    return q ? q->n_warnings : 0;
}

const char *earl_search_query_warning(const earl_search_query *q, size_t k)
{
    return q && k < q->n_warnings ? q->warnings[k] : NULL;
}

size_t earl_search_query_variables(const earl_search_query *q)
{
    return q ? q->top->n_vars : 0;
}

void earl_search_query_variable(const earl_search_query *q, size_t k,
                                earl_search_variable_info *info)
{
    memset(info, 0, sizeof *info);
    if (!q || k >= q->top->n_vars)
        return;
    const search_qvar *v = &q->top->vars[k];
    info->name = v->name;
    info->quantifier = v->quant;
    info->arity = v->dom->arity;
    info->domain = v->dom->n;
    info->single_location = v->dom->single_location;
}

size_t earl_search_query_stamped(const earl_search_query *q, size_t *bytes)
{
    if (bytes)
        *bytes = q && q->hb ? earl_hb_bytes(q->hb) : 0;
    return q && q->hb ? earl_hb_count(q->hb) : 0;
}

/* ---- execute ------------------------------------------------------------------ */

void earl_search_result_free(earl_search_result *r)
{
    if (!r)
        return;
    if (r->column_names)
        for (size_t j = 0; j < r->columns; j++)
            free(r->column_names[j]);
    free(r->column_names);
    free(r->events);
    free(r->threads);
    free(r);
}

earl_status earl_search_execute(const earl_search_query *q, const earl_search_options *opt,
                                earl_search_result **out, earl_error *err)
{
    *out = NULL;
    if (!q)
        return earl_fail(err, EARL_ERR_INVALID, "pattern: no query");
    const search_solver *s = q->top;
    if (opt && opt->subpattern) {
        if (q->pending >= q->n_subs)
            return earl_fail(err, EARL_ERR_INVALID, "pattern: no sub-pattern is left to solve");
        s = q->subs[q->pending].solver;
    } else if (q->pending < q->n_subs) {
        return earl_fail(err, EARL_ERR_INVALID, "pattern: the sub-pattern '%s' is not solved yet",
                         q->subs[q->pending].name);
    }
    if (opt && opt->blocks > 0 && (opt->block < 0 || opt->block >= opt->blocks))
        return earl_fail(err, EARL_ERR_INVALID, "pattern: block %d of %d", opt->block, opt->blocks);
    earl_search_result *r = calloc(1, sizeof *r);
    if (!r)
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory");
    r->columns = s->columns;
    r->column_names = calloc(s->columns + 1, sizeof(char *));
    if (!r->column_names) {
        earl_search_result_free(r);
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory");
    }
    for (uint32_t j = 0; j < s->columns; j++)
        if (!(r->column_names[j] = earl_strdup(s->column_names[j]))) {
            earl_search_result_free(r);
            return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory");
        }
    search_matches mt = {.columns = s->columns};
    search_run_options ro = {.limit = opt ? opt->limit : 0,
                             .no_pruning = opt ? opt->no_pruning : 0,
                             .interrupt = opt ? opt->interrupt : NULL,
                             .interrupt_data = opt ? opt->interrupt_data : NULL,
                             .first_begin = opt ? opt->first_begin : 0,
                             .first_end = opt ? opt->first_end : 0,
                             .progress = opt ? opt->progress : NULL,
                             .progress_data = opt ? opt->progress_data : NULL, .phase = "search",
                             .tasks = opt ? opt->tasks : 0, .block = opt ? opt->block : 0,
                             .blocks = opt ? opt->blocks : 0};
    int threads = earl_threads_or_cores(opt ? opt->threads : 0);
    r->n_threads = (size_t)threads;
    r->threads = calloc((size_t)threads, sizeof *r->threads);
    if (!r->threads) {
        earl_search_result_free(r);
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory");
    }
    double t0 = earl_now_seconds();
    earl_status st;
    if (threads == 1 && !ro.tasks && ro.blocks <= 1) {
        st = search_solve(s, &ro, &mt, &r->truncated, &r->stats, err);
        r->stats.tasks = 1;
        r->threads[0].nodes = r->stats.nodes;
        r->threads[0].checks = r->stats.checks;
        r->threads[0].tasks = 1;
    } else {
        st = search_solve_parallel(s, &ro, threads, opt ? opt->teams : 1, &mt, &r->truncated,
                                   &r->stats, r->threads, err);
    }
    r->stats.seconds = earl_now_seconds() - t0;
    if (st != EARL_OK) {
        free(mt.ev);
        earl_search_result_free(r);
        return st;
    }
    r->events = mt.ev;
    r->rows = mt.rows;
    *out = r;
    return EARL_OK;
}

size_t earl_search_result_rows(const earl_search_result *r) { return r ? r->rows : 0; }
size_t earl_search_result_columns(const earl_search_result *r) { return r ? r->columns : 0; }
const char *earl_search_result_column(const earl_search_result *r, size_t j)
{
    return r && j < r->columns ? r->column_names[j] : NULL;
}
const earl_eid *earl_search_result_events(const earl_search_result *r)
{
    return r ? r->events : NULL;
}
int earl_search_result_truncated(const earl_search_result *r) { return r ? r->truncated : 0; }
earl_search_stats earl_search_result_stats(const earl_search_result *r)
{
    earl_search_stats z = {0};
    return r ? r->stats : z;
}

size_t earl_search_result_threads(const earl_search_result *r)
{
    return r ? r->n_threads : 0;
}

earl_search_thread_stats earl_search_result_thread(const earl_search_result *r, size_t k)
{
    earl_search_thread_stats z = {0};
    return r && k < r->n_threads ? r->threads[k] : z;
}
