/*
 * search_internal.h - the layout behind the opaque handles of earl_search.h,
 * shared by the files of the pattern search:
 *   search_parse.c    text -> program (the syntax tree below), names checked
 *   search_classes.c  class literals -> the events (or partner pairs) they match
 *   search_compile.c  program + trace -> query: variables with their domains,
 *                     the pattern's constraints in conjunctive form, stamps
 *   search_engine.c   the backtracking search of a query
 * Not part of the public API.
 */
#ifndef EARL_SEARCH_INTERNAL_H
#define EARL_SEARCH_INTERNAL_H

#include <stdint.h>

#include "earl_hb.h"
#include "earl_search.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/parts.h"
#include "base/sorted.h"
#include "base/text.h"

/* ---- the syntax tree of a program ----------------------------------------- */

typedef enum search_node_type {
    SN_AND = 0, /* a & b */
    SN_OR,      /* a | b */
    SN_REL,     /* a REL b with rel */
    SN_LIMITED, /* a -(c)-> b */
    SN_VAR,     /* a declared variable: ref = variable index */
    SN_NAME,    /* a named class or pattern used directly: ref = definition index */
    SN_CLASS    /* a class literal: ref = class index, c = partner class index or -1 */
} search_node_type;

typedef enum search_rel {
    SR_BEFORE = 0,     /* -->  */
    SR_NOT_BEFORE,     /* !--> */
    SR_CONCURRENT,     /* ||   */
    SR_NOT_CONCURRENT  /* !||  */
} search_rel;

/* One node; children are indices into program->nodes (-1: none).  Operand
 * nodes (SN_VAR, SN_NAME, SN_CLASS) are leaves; a parenthesised clause used
 * as an operand is an ordinary SN_AND/SN_OR/SN_REL node. */
typedef struct search_node {
    uint8_t type;       /* search_node_type */
    uint8_t rel;        /* search_rel of SN_REL */
    int32_t a, b, c;
    int32_t ref;
    int line, col;      /* where the node starts in the text */
} search_node;

/* A class literal ["process", "type", "text"]; fields are '*'-globs over the
 * whole field, "" matches anything. */
typedef struct search_class {
    char *field[3];
    int line, col;
} search_class;

/* A named definition: a class (first, second: class literals, second -1
 * unless a partner class) or a pattern (root node). */
typedef struct search_def {
    char *name;
    uint8_t is_pattern;
    int32_t first, second; /* classes */
    int32_t root;          /* patterns */
    uint32_t columns;      /* patterns: events per match (sum of its $ variables' arities) */
    int line, col;
} search_def;

/* A declared variable: its sigil and its type (a definition). */
typedef struct search_var {
    char *name;
    char quant;            /* '$', '~', '*' */
    int32_t def;
    int line, col;
} search_var;

struct earl_search_program {
    search_node *nodes; size_t n_nodes, cap_nodes;
    search_class *classes; size_t n_classes, cap_classes;
    search_def *defs; size_t n_defs, cap_defs;
    search_var *vars; size_t n_vars, cap_vars;
    int32_t *patterns; size_t n_patterns, cap_patterns; /* def indices of patterns */
};

/* Arity of a definition used as a variable type. */
uint32_t search_def_arity(const earl_search_program *p, int32_t def);
/* Does glob (with '*' for any run of characters) match the whole of s? */
int search_glob(const char *glob, const char *s);

/* ---- classes over a trace (search_classes.c) -------------------------------- */

/* The events a class literal matches, ascending; *n their number.  With
 * own_only the events of the locations the trace holds whole (all of them,
 * unless it is a part of a trace: then not the ghosts). */
earl_status search_class_events(const search_class *cls, const earl_trace *trace,
                                const earl_eid32 *enterptr, int own_only, earl_eid **out,
                                size_t *n, earl_error *err);
/* The partner pairs (a, b) with a in first, b in second, ascending by (a, b):
 * rows of 2 in *out, *n pairs. */
earl_status search_partner_pairs(const earl_eid *first, size_t n_first, const earl_eid *second,
                                 size_t n_second, const earl_trace *trace, earl_states *states,
                                 earl_eid **out, size_t *n, earl_error *err);

/* ---- compiled queries (search_compile.c) --------------------------------- */

/* A relation's operand: the values of some variables, taken together as one
 * compound event (Definition 2.5: A --> B iff some a in A precedes some b in
 * B). */
#define SEARCH_MAX_OPERAND 16

/* A formula node of the compiled constraint program: SN_AND, SN_OR or
 * SN_REL; relations name their operands' variables (query variable indices).
 * A node with type SN_VAR stands for "true" (a bare operand in the pattern). */
typedef struct search_cnode {
    uint8_t type, rel;
    int32_t a, b;          /* children of AND/OR */
    uint8_t n_left, n_right;
    uint8_t left[SEARCH_MAX_OPERAND], right[SEARCH_MAX_OPERAND];
} search_cnode;

/* The values a variable can take: n values of `arity` events each.  For
 * every event of every value, its location, its position on the location
 * and its timestamp (a row of the hb stamps), so that a --> b is
 * stamp_b[loc_a] > pos_a && a != b without a call. */
typedef struct search_domain {
    uint32_t arity;
    size_t n;
    earl_eid *ev;               /* n * arity */
    earl_loc *loc;
    uint32_t *pos;
    const uint32_t **stamp;
    int single_location;        /* arity 1, all on one location: program order */
    /* arity 1: the values grouped by location, each group ascending (in
     * program order): group g is by_loc[group_start[g] .. group_start[g+1]),
     * on location group_loc[g]; for range pruning over several locations */
    uint32_t n_groups;
    size_t *group_start;
    earl_loc *group_loc;
    size_t *by_loc;
} search_domain;

/* A top-level conjunct of the pattern: checked as soon as the last of its
 * variables (in search order) is bound. */
#define SEARCH_MAX_TERMS 8

typedef struct search_conjunct {
    int32_t node;               /* formula root */
    uint32_t ready;             /* search depth at which all its variables are bound */
    uint32_t uses_forall;       /* mentions a * variable */
    /* a plain relation between two arity-1 variables x (bound earlier) and y
     * (bound at `ready`): candidates for range pruning and the fast path */
    int8_t simple;
    uint8_t rel;
    uint8_t x, y;
    uint8_t y_is_left;          /* the relation reads y REL x */
    /* checkable by windows in the universal phase: the conjunct is one
     * relation, or an | of relations, each between the pattern's single *
     * variable u (single events) and an earlier single-event variable w, and
     * none of them ||.  Then the values of u that violate it form, on each
     * location, one contiguous range (search_engine.c, forall_by_windows). */
    uint8_t n_terms;            /* 0: not checkable by windows */
    struct {
        uint8_t rel, w, u_is_left;
    } term[SEARCH_MAX_TERMS];
} search_conjunct;

#define SEARCH_MAX_VARS 64

typedef struct search_qvar {
    char *name;                 /* without sigil; anonymous: "1", "2", ... */
    char quant;
    search_domain *dom;         /* shared between variables of one type */
} search_qvar;

/* One solvable pattern: the top one, or a sub-pattern used as a variable
 * type (solved first, its matches become that variable's domain). */
typedef struct search_solver {
    uint32_t n_vars;            /* in search order: $ (declaration order), ~, * */
    search_qvar vars[SEARCH_MAX_VARS];
    uint32_t n_returned;        /* the $ variables, vars[0 .. n_returned) */
    uint32_t first_forall;      /* vars[first_forall ..) are * */
    int forall_windows;         /* one * variable, every conjunct on it checkable by windows */
    search_cnode *nodes; size_t n_nodes, cap_nodes;
    search_conjunct *conj; size_t n_conj, cap_conj;
    /* per depth: conjuncts ready there, as indices into conj (CSR) */
    uint32_t *ready_start;      /* n_vars + 1 */
    uint32_t *ready_list;
    uint32_t columns;           /* events per match */
    char **column_names;
} search_solver;

/* A sub-pattern used as a variable type: solved before the pattern, its
 * matches the values of its domain. */
typedef struct search_sub {
    search_solver *solver;
    search_domain *domain;
    char *name;
    int line, col;
} search_sub;

struct earl_search_query {
    const earl_trace *trace;
    earl_hb *hb;
    search_solver *top;
    /* everything allocated for the query, freed together */
    search_solver **solvers; size_t n_solvers, cap_solvers;
    search_domain **domains; size_t n_domains, cap_domains;
    /* the sub-patterns, children first; subs[pending ..) are not solved yet */
    search_sub *subs; size_t n_subs, cap_subs, pending;
    /* what the trace gives no value for (a class matching no event, a
     * sub-pattern without a match): the search goes on with empty domains,
     * and these messages say so */
    char **warnings; size_t n_warnings, cap_warnings;
};

struct earl_search_result {
    size_t rows, columns;
    earl_eid *events;
    char **column_names;        /* borrowed from the query's solver: copied */
    int truncated;
    earl_search_stats stats;
    size_t n_threads;
    earl_search_thread_stats *threads;
};

/* Run solver s (search_engine.c): matches into a growable row array. */
typedef struct search_matches {
    earl_eid *ev; size_t rows, cap_rows;
    uint32_t columns;
} search_matches;

typedef struct search_run_options {
    uint64_t limit;
    int no_pruning;                /* try every value (benchmarks, tests) */
    int (*interrupt)(void *data);  /* earl_search_options.interrupt */
    void *interrupt_data;
    size_t first_begin, first_end; /* values of the first variable (0, 0: all) */
    earl_progress_fn progress;
    void *progress_data;
    const char *phase;
    size_t tasks;                  /* earl_search_options.tasks, block, blocks */
    int block, blocks;
} search_run_options;

/* A task: a subtree of the search, the variables 0 .. depth-1 fixed to the
 * value indices prefix[], variable `depth` enumerating [lo, hi).  Tasks over
 * disjoint regions yield disjoint, consecutive runs of the canonical order;
 * search_task_compare orders them as their matches are ordered. */
typedef struct search_task {
    uint32_t depth;
    size_t prefix[SEARCH_MAX_VARS];
    size_t lo, hi;
} search_task;
int search_task_compare(const search_task *a, const search_task *b);

/* Work sharing while a task runs (search_parallel.c): every `peek` nodes the
 * engine stops if *cancel is set, and when want_work says a thread is idle
 * it splits off part of its remaining work as a new task for give. */
typedef struct search_hooks {
    uint32_t peek;
    int (*want_work)(void *ctx);
    void (*give)(void *ctx, const search_task *t);
    const _Atomic int *cancel;
    void *ctx;
    int (*interrupt)(void *data); /* the caller's stop request (may be NULL) */
    void *interrupt_data;
} search_hooks;

/* Nodes between two looks at the hooks.  A look is one relaxed atomic load;
 * looking often keeps idle team-mates supplied when threads outnumber cores
 * (nodes per thread max/mean with 64 threads on 2 cores: 1.11-1.28 at 2048,
 * 1.13 at 256), at no cost measurable on one thread. */
#define SEARCH_PEEK 256

/* One searching thread's state: reused from task to task. */
typedef struct search_engine search_engine;
search_engine *search_engine_new(const search_solver *s);
void search_engine_free(search_engine *e);
/* Run task t, appending its matches (at most limit when limit > 0) to out;
 * 0, -1 when out of memory, -2 when hooks->interrupt stopped it.  progress
 * (may be NULL) reports the values of the first variable when the task
 * enumerates it. */
int search_engine_run(search_engine *e, const search_task *t, uint64_t limit,
                      search_matches *out, const search_hooks *hooks,
                      const search_run_options *progress);
earl_search_stats search_engine_stats(const search_engine *e);
void search_engine_set_pruning(search_engine *e, int on);

/* Grouped task generation over the first n_fixable variables (domain
 * sizes sizes[], the first restricted to [lo, hi)): about `wanted` disjoint
 * tasks covering the tree, in canonical order, into *out (free()).  Returns
 * their number, (size_t)-1 when out of memory. */
size_t search_make_tasks(const size_t *sizes, uint32_t n_fixable, size_t lo, size_t hi,
                         size_t wanted, search_task **out);
/* The parallel search (search_parallel.c): the same matches as search_solve;
 * per_thread (may be NULL) receives `threads` entries. */
earl_status search_solve_parallel(const search_solver *s, const search_run_options *opt,
                                  int threads, int teams, search_matches *out, int *truncated,
                                  earl_search_stats *stats, earl_search_thread_stats *per_thread,
                                  earl_error *err);

/* Sequential search of the whole tree (or of the first variable's range). */
earl_status search_solve(const search_solver *s, const search_run_options *opt,
                         search_matches *out, int *truncated, earl_search_stats *stats,
                         earl_error *err);

#endif
