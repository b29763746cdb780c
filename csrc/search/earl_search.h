/*
 * earl_search.h - public API of the causal pattern search (search_*): the
 * pattern language of Ekpenyong's thesis (after POET: event classes
 * ["process", "type", "text"], partner classes A.B, the operators -->, !-->,
 * ||, !||, &, |, the limited precedence A -(C)-> B, variables $x, ~x, *x and
 * named sub-patterns) and a backtracking search of a trace's happened-before
 * order (earl_hb.h) for the matches of a pattern.
 *
 * Three steps, each with its own handle:
 *   earl_search_parse     text -> earl_search_program: syntax and names are
 *                         checked (line, column and what was expected);
 *                         nothing depends on a trace yet.
 *   earl_search_prepare   program + trace -> earl_search_query: the classes
 *                         are matched against the events (a class that matches
 *                         no event, or a sub-pattern without a match, is a
 *                         warning of the query, not an error: one pattern is
 *                         searched in many traces), the events of all classes
 *                         are stamped once, sub-patterns used as variable types
 *                         are solved; the constraint program of the chosen
 *                         pattern is ready.
 *   earl_search_execute   query -> earl_search_result: the matches, in the
 *                         canonical order (ascending by their event ids,
 *                         column by column), the first `limit` of them, on
 *                         one thread or several (the same answer).
 *
 * docs/patterns.md states the language and its semantics for users.
 * A query can be executed any number of times (a query is read-only while
 * it executes, so several executions may run at once).
 */
#ifndef EARL_SEARCH_H
#define EARL_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"
#include "earl_states.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- programs: parsed pattern texts ------------------------------------------ */

typedef struct earl_search_program earl_search_program;

/* Parse a pattern text.  On failure *out is NULL and err (EARL_ERR_INVALID)
 * reads "line L, column C: expected X, found Y" or names the problem (an
 * unknown name, a variable used before its declaration, a pattern without
 * variables, ...). */
earl_status earl_search_parse(const char *text, earl_search_program **out, earl_error *err);
void earl_search_program_free(earl_search_program *program);

/* The patterns the text defines (named classes excluded), in text order;
 * the last one is searched by default. */
size_t earl_search_pattern_count(const earl_search_program *program);
const char *earl_search_pattern_name(const earl_search_program *program, size_t k);

/* ---- queries: a pattern bound to a trace ------------------------------------- */

typedef struct earl_search_query earl_search_query;

typedef struct earl_search_given earl_search_given;

typedef struct earl_search_prepare_options {
    const char *pattern;       /* the pattern to search; NULL: the last one defined */
    int threads;               /* for the timestamps (earl_hb_options.threads) and the
                                  sub-patterns' searches: 0 one per core */
    earl_progress_fn progress; /* phases "clocks", "subpattern" */
    void *progress_data;
    /* A trace in parts (below): the values of every class and their stamps,
     * gathered from the parts, in place of the trace's (trace and states may
     * then be NULL). */
    const earl_search_given *given;
    /* Leave the sub-patterns used as variable types unsolved: the caller
     * solves each in turn (earl_search_query_pending), for instance on many
     * processes, each searching its block of the tasks. */
    int defer_subpatterns;
} earl_search_prepare_options;

/* Bind program to a trace and its EARL layer (states; the query keeps
 * pointers into both: free the query first).  Errors (EARL_ERR_INVALID):
 * an unknown pattern name, an unknown event kind, each with the line and
 * column of its cause.  A class that matches no event of the trace, or a
 * sub-pattern used as a type that has no match, gives its variables an empty
 * domain (a $ or ~ variable then has no match, a * variable holds
 * vacuously) and a warning of the query (earl_search_query_warning). */
earl_status earl_search_prepare(const earl_search_program *program, const earl_trace *trace,
                                earl_states *states, const earl_search_prepare_options *options,
                                earl_search_query **out, earl_error *err);
void earl_search_query_free(earl_search_query *query);

/* The variables of the query in search order: the $ variables in their
 * declaration order, then the ~ variables, then the * variables.  Anonymous
 * variables (a class or a pattern named directly in the pattern) are ~
 * variables named "~1", "~2", ... (a class in the middle of a limited
 * precedence A -(C)-> B: "*1", ...). */
size_t earl_search_query_variables(const earl_search_query *query);
typedef struct earl_search_variable_info {
    const char *name;   /* without its sigil */
    char quantifier;    /* '$', '~' or '*' */
    uint32_t arity;     /* events per value: 1, 2 for a partner class, or the
                           columns of a sub-pattern */
    size_t domain;      /* values it can take */
    int single_location;/* arity 1 and all values on one location */
} earl_search_variable_info;
void earl_search_query_variable(const earl_search_query *query, size_t k,
                                earl_search_variable_info *info);
/* The warnings of a prepared query, each "pattern: line L, column C: the
 * class 'S' [...] matches no event of this trace" or the like (owned by the
 * query). */
size_t earl_search_query_warnings(const earl_search_query *query);
const char *earl_search_query_warning(const earl_search_query *query, size_t k);
/* Events stamped for the query and the bytes of their timestamps. */
size_t earl_search_query_stamped(const earl_search_query *query, size_t *bytes);

/* A query prepared with defer_subpatterns: the sub-pattern to solve next
 * (children first) and its columns, NULL when none is left.  Execute it with
 * earl_search_options.subpattern, then give its whole answer (n_rows x its
 * columns event ids, canonical order) to earl_search_query_solved. */
const char *earl_search_query_pending(const earl_search_query *query, uint32_t *columns);
earl_status earl_search_query_solved(earl_search_query *query, const earl_eid *rows,
                                     size_t n_rows, earl_error *err);

/* ---- a trace in parts ------------------------------------------------------------ */

/*
 * A trace analysed in parts (csrc/part/earl_part.h) is searched by every
 * part together (docs/patterns.md, "In parts"):
 *   1. each part lists the values it holds of every class the pattern (and
 *      its sub-patterns) use: earl_search_part_values.  A class's values are
 *      its events on own locations; a partner class's are its pairs (a, b)
 *      whose a is own (b may be a ghost);
 *   2. the events of all values are stamped (earl_hb_part_*) and gathered on
 *      every part with their ids in the whole trace, as are the values;
 *   3. every part prepares the same query from them (options.given), with
 *      its sub-patterns deferred;
 *   4. each sub-pattern and then the pattern is searched by all parts, each
 *      its block of the task list (earl_search_options.block, blocks,
 *      tasks: the static split between machines of seed 002), and the
 *      blocks' matches, concatenated in block order, are the answer.
 * Memory per part: the gathered values and the stamps of their events
 * (4 bytes x locations each), as for the whole trace.
 */

/* One class of a pattern: first, second (a partner class; -1 otherwise) name
 * the class literals of the program; its n values are rows of `arity` event
 * ids (1, or 2 for a partner class), ascending. */
typedef struct earl_search_given_class {
    int32_t first, second;
    uint32_t arity;
    size_t n;
    const earl_eid *values;
} earl_search_given_class;

/* The values of every class and the stamps of their events, under one
 * numbering of the events (the whole trace's ids).  The query takes the
 * stamps (earl_hb_from_stamps); the values are copied. */
struct earl_search_given {
    size_t n_classes;
    const earl_search_given_class *classes;
    struct earl_hb *stamps;
};

/* The values part `trace` holds of the classes of `pattern` (NULL: the last
 * one) and of the sub-patterns it uses, in part event ids. */
typedef struct earl_search_values earl_search_values;
earl_status earl_search_part_values(const earl_search_program *program, const char *pattern,
                                    const earl_trace *trace, earl_states *states,
                                    earl_search_values **out, earl_error *err);
size_t earl_search_values_count(const earl_search_values *values);
earl_search_given_class earl_search_values_class(const earl_search_values *values, size_t k);
void earl_search_values_free(earl_search_values *values);

/* ---- execution ----------------------------------------------------------------- */

typedef struct earl_search_options {
    uint64_t limit;            /* 0: all matches; K: the first K in canonical order */
    earl_progress_fn progress; /* phase "search": values of the first variable done */
    void *progress_data;
    /* Search only the values [first_begin, first_end) of the first variable
     * (in search order; 0, 0: all of them).  The matches of consecutive
     * ranges are consecutive runs of the canonical order: a range is a task
     * that can be searched on its own. */
    size_t first_begin, first_end;
    /* Searching threads: 0 one per core, 1 the caller alone.  The matches and
     * their order do not depend on it. */
    int threads;
    /* Teams of threads (0 or 1: one team of all): the tasks are split
     * statically between teams, work moves between threads of one team. */
    int teams;
    /* Try every value of every variable instead of the ranges that range
     * pruning selects (same matches; for benchmarks and tests). */
    int no_pruning;
    /* Polled every few thousand nodes by the searching threads (may be
     * NULL): a nonzero return stops the search, which then fails with
     * EARL_ERR_INVALID "search interrupted".  Called concurrently when
     * several threads search. */
    int (*interrupt)(void *data);
    void *interrupt_data;
    /* The search split between processes (a trace in parts): `tasks` initial
     * tasks are made (0: 8 per thread), split into `blocks` contiguous blocks
     * as between teams, and this execution searches block `block` of them
     * (0, 0, 0: all).  The matches of consecutive blocks are consecutive
     * runs of the canonical order; with a limit K each block keeps its
     * first K. */
    size_t tasks;
    int block, blocks;
    /* Execute the pending sub-pattern (earl_search_query_pending) instead of
     * the pattern. */
    int subpattern;
} earl_search_options;

typedef struct earl_search_stats {
    uint64_t nodes;            /* variable bindings tried (search tree nodes) */
    uint64_t checks;           /* relations evaluated (a --> b, a || b, ...) */
    uint64_t pruned;           /* values skipped by range pruning, never bound */
    double seconds;            /* wall time of the execution */
    uint64_t tasks;            /* tasks made before the search (1 on one thread) */
    uint64_t stolen;           /* tasks split off busy threads for idle ones */
} earl_search_stats;

/* The work of one searching thread. */
typedef struct earl_search_thread_stats {
    uint64_t nodes, checks;
    uint64_t tasks;            /* tasks it ran */
    double idle_seconds;       /* time it waited for work */
    double cpu_seconds;        /* processor time it used */
    int team;
} earl_search_thread_stats;

typedef struct earl_search_result earl_search_result;

earl_status earl_search_execute(const earl_search_query *query, const earl_search_options *options,
                                earl_search_result **out, earl_error *err);
void earl_search_result_free(earl_search_result *result);

/* The matches: rows x columns event ids, row-major, rows in canonical order.
 * One column per event of a $ variable: "a" for a primitive class, "m" and
 * "m.partner" for a partner class, "ce.<column>" for each column of a
 * sub-pattern variable ce. */
size_t earl_search_result_rows(const earl_search_result *result);
size_t earl_search_result_columns(const earl_search_result *result);
const char *earl_search_result_column(const earl_search_result *result, size_t j);
const earl_eid *earl_search_result_events(const earl_search_result *result);
/* 1 when the search stopped at the limit (more matches may exist). */
int earl_search_result_truncated(const earl_search_result *result);
earl_search_stats earl_search_result_stats(const earl_search_result *result);
/* The threads that searched and the work of each. */
size_t earl_search_result_threads(const earl_search_result *result);
earl_search_thread_stats earl_search_result_thread(const earl_search_result *result, size_t k);

#ifdef __cplusplus
}
#endif
#endif /* EARL_SEARCH_H */
