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

/**
 * Parse a pattern text (docs/patterns.md).
 *
 * @param text  the text
 * @param out   receives the program, which the caller frees with
 *              earl_search_program_free; NULL on failure
 * @param err   receives the status and a message on failure (may be NULL):
 *              "line L, column C: expected X, found Y", or the problem (an
 *              unknown name, a variable used before its declaration, a pattern
 *              without variables, ...)
 * @return EARL_OK, EARL_ERR_INVALID, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_search_parse(const char *text, earl_search_program **out,
                                       earl_error *err);

/**
 * Free a parsed program.
 *
 * @param program  a program of earl_search_parse, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_search_program_free(earl_search_program *program);

/**
 * How many patterns the text defines (named classes excluded); the last one
 * is searched by default.
 *
 * @param program  a program (NULL: 0)
 * @return the count
 * @since 0.1.0
 */
EARL_API size_t earl_search_pattern_count(const earl_search_program *program);

/**
 * The name of a pattern the text defines, in text order.
 *
 * @param program  a program
 * @param k        an index below earl_search_pattern_count
 * @return the name, owned by the program; NULL for k out of range
 * @since 0.1.0
 */
EARL_API const char *earl_search_pattern_name(const earl_search_program *program, size_t k);

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

/**
 * Bind a program to a trace and its EARL layer: match the classes against
 * the events, stamp the events of all classes once, solve the sub-patterns
 * used as variable types.  The query keeps pointers into the trace and the
 * states: free the query first.
 *
 * @param program  a parsed program (it may be freed once the query exists)
 * @param trace    an open trace
 * @param states   its EARL layer
 * @param options  the pattern, threads and progress; NULL: the defaults (those
 *                 of a zeroed earl_search_prepare_options: the last pattern,
 *                 one thread per core, no progress)
 * @param out      receives the query, which the caller frees with
 *                 earl_search_query_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_INVALID (no program, trace or states, an unknown
 *         pattern name, an unknown event kind, each with the line and column
 *         of its cause), or EARL_ERR_NOMEM.  A class that matches no event of
 *         the trace, or a sub-pattern used as a type that has no match, is no
 *         error: its variables get an empty domain (a $ or ~ variable then has
 *         no match, a * variable holds vacuously) and the query a warning
 *         (earl_search_query_warning)
 * @since 0.1.0
 */
EARL_API earl_status earl_search_prepare(const earl_search_program *program,
                                         const earl_trace *trace, earl_states *states,
                                         const earl_search_prepare_options *options,
                                         earl_search_query **out, earl_error *err);

/**
 * Free a query (its results stay valid).
 *
 * @param query  a query of earl_search_prepare, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_search_query_free(earl_search_query *query);

/* The variables of the query in search order: the $ variables in their
 * declaration order, then the ~ variables, then the * variables.  Anonymous
 * variables (a class or a pattern named directly in the pattern) are ~
 * variables named "~1", "~2", ... (a class in the middle of a limited
 * precedence A -(C)-> B: "*1", ...). */
/**
 * How many variables the query has (see above for their order and names).
 *
 * @param query  a query (NULL: 0)
 * @return the count
 * @since 0.1.0
 */
EARL_API size_t earl_search_query_variables(const earl_search_query *query);
typedef struct earl_search_variable_info {
    const char *name;   /* without its sigil */
    char quantifier;    /* '$', '~' or '*' */
    uint32_t arity;     /* events per value: 1, 2 for a partner class, or the
                           columns of a sub-pattern */
    size_t domain;      /* values it can take */
    int single_location;/* arity 1 and all values on one location */
} earl_search_variable_info;

/**
 * A variable of the query, in search order.
 *
 * @param query  a query
 * @param k      an index below earl_search_query_variables
 * @param info   receives the variable (zeroed for k out of range); its name is
 *               owned by the query
 * @since 0.1.0
 */
EARL_API void earl_search_query_variable(const earl_search_query *query, size_t k,
                                         earl_search_variable_info *info);

/**
 * How many warnings the prepared query has.
 *
 * @param query  a query (NULL: 0)
 * @return the count
 * @since 0.1.0
 */
EARL_API size_t earl_search_query_warnings(const earl_search_query *query);

/**
 * A warning of the prepared query: "pattern: line L, column C: the class 'S'
 * [...] matches no event of this trace" or the like.
 *
 * @param query  a query
 * @param k      an index below earl_search_query_warnings
 * @return the text, owned by the query; NULL for k out of range
 * @since 0.1.0
 */
EARL_API const char *earl_search_query_warning(const earl_search_query *query, size_t k);

/**
 * The events stamped for the query.
 *
 * @param query  a query (NULL: 0)
 * @param bytes  receives the bytes of their timestamps (may be NULL)
 * @return how many events are stamped
 * @since 0.1.0
 */
EARL_API size_t earl_search_query_stamped(const earl_search_query *query, size_t *bytes);

/**
 * The sub-pattern to solve next, of a query prepared with defer_subpatterns
 * (children first).  Execute it with earl_search_options.subpattern set, and
 * give its whole answer to earl_search_query_solved.
 *
 * @param query    the query
 * @param columns  receives the sub-pattern's columns (may be NULL)
 * @return the sub-pattern's name (owned by the query), or NULL when none is
 *         left
 * @since 0.1.0
 */
EARL_API const char *earl_search_query_pending(const earl_search_query *query,
                                               uint32_t *columns);

/**
 * The whole answer of the pending sub-pattern: its matches become the values
 * of the variables of its type.
 *
 * @param query   the query
 * @param rows    n_rows x its columns event ids, in canonical order
 * @param n_rows  how many matches
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (no sub-pattern is pending), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_search_query_solved(earl_search_query *query, const earl_eid *rows,
                                              size_t n_rows, earl_error *err);

/* ---- a trace in parts ------------------------------------------------------------ */

/*
 * A trace analysed in parts (earl_part.h) is searched by every part together
 * (docs/patterns.md, "In parts"):
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
 *      tasks: the static split between teams, here between machines), and
 *      the blocks' matches, concatenated in block order, are the answer.
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

/* The values a part holds of each class of a pattern. */
typedef struct earl_search_values earl_search_values;

/**
 * The values a part of a trace holds of the classes of a pattern and of the
 * sub-patterns it uses (step 1).
 *
 * @param program  a parsed program
 * @param pattern  the pattern's name; NULL: the last one defined
 * @param trace    a part of a trace
 * @param states   its EARL layer
 * @param out      receives the values, in the part's event ids; free with
 *                 earl_search_values_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an unknown pattern, a pattern the trace
 *         cannot answer), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_search_part_values(const earl_search_program *program,
                                             const char *pattern, const earl_trace *trace,
                                             earl_states *states, earl_search_values **out,
                                             earl_error *err);

/**
 * How many classes the values hold.
 *
 * @param values  values of earl_search_part_values
 * @return the classes
 * @since 0.1.0
 */
EARL_API size_t earl_search_values_count(const earl_search_values *values);

/**
 * One class's values.
 *
 * @param values  values of earl_search_part_values
 * @param k       the class, below earl_search_values_count
 * @return the class (its values owned by `values`); first -1 and no values
 *         for k out of range
 * @since 0.1.0
 */
EARL_API earl_search_given_class earl_search_values_class(const earl_search_values *values,
                                                          size_t k);

/**
 * Free the values.
 *
 * @param values  values of earl_search_part_values, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_search_values_free(earl_search_values *values);

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
    double merge_seconds;      /* wall time, within `seconds`, of concatenating the
                                  tasks' matches in canonical order (0 on one thread) */
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

/**
 * Search: the matches of the query's pattern in the canonical order, the
 * first options->limit of them, on options->threads threads (the same
 * matches in the same order for any number of threads and teams).  A query
 * may be executed any number of times, by several threads at once.
 *
 * @param query    a query
 * @param options  limit, range, threads, teams, progress, interrupt; NULL: the
 *                 defaults (those of a zeroed earl_search_options: every
 *                 match, one thread per core in one team)
 * @param out      receives the result, which the caller frees with
 *                 earl_search_result_free; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_NOMEM, or EARL_ERR_INVALID (the search was
 *         interrupted, "search interrupted")
 * @since 0.1.0
 */
EARL_API earl_status earl_search_execute(const earl_search_query *query,
                                         const earl_search_options *options,
                                         earl_search_result **out, earl_error *err);

/**
 * Free a search result.
 *
 * @param result  a result of earl_search_execute, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_search_result_free(earl_search_result *result);

/* The matches: rows x columns event ids, row-major, rows in canonical order.
 * One column per event of a $ variable: "a" for a primitive class, "m" and
 * "m.partner" for a partner class, "ce.<column>" for each column of a
 * sub-pattern variable ce. */

/**
 * How many matches the result holds.
 *
 * @param result  a result (NULL: 0)
 * @return the rows
 * @since 0.1.0
 */
EARL_API size_t earl_search_result_rows(const earl_search_result *result);

/**
 * How many event ids a match has.
 *
 * @param result  a result (NULL: 0)
 * @return the columns
 * @since 0.1.0
 */
EARL_API size_t earl_search_result_columns(const earl_search_result *result);

/**
 * The name of a column.
 *
 * @param result  a result
 * @param j       a column below earl_search_result_columns
 * @return "a", "m.partner", "ce.sc", ..., owned by the result; NULL for j out
 *         of range
 * @since 0.1.0
 */
EARL_API const char *earl_search_result_column(const earl_search_result *result, size_t j);

/**
 * The matches' event ids, rows x columns, row-major.
 *
 * @param result  a result
 * @return the array, owned by the result (NULL for a NULL result)
 * @since 0.1.0
 */
EARL_API const earl_eid *earl_search_result_events(const earl_search_result *result);

/**
 * Whether the search stopped at its limit.
 *
 * @param result  a result
 * @return 1 when it did (more matches may exist), else 0
 * @since 0.1.0
 */
EARL_API int earl_search_result_truncated(const earl_search_result *result);

/**
 * The work of the search: nodes, checks, pruned values, tasks, wall time.
 *
 * @param result  a result
 * @return the statistics (zeros for a NULL result)
 * @since 0.1.0
 */
EARL_API earl_search_stats earl_search_result_stats(const earl_search_result *result);

/**
 * How many threads searched.
 *
 * @param result  a result (NULL: 0)
 * @return the threads
 * @since 0.1.0
 */
EARL_API size_t earl_search_result_threads(const earl_search_result *result);

/**
 * The work of one searching thread.
 *
 * @param result  a result
 * @param k       a thread below earl_search_result_threads
 * @return its statistics (zeros for k out of range)
 * @since 0.1.0
 */
EARL_API earl_search_thread_stats earl_search_result_thread(const earl_search_result *result,
                                                            size_t k);

#ifdef __cplusplus
}
#endif
#endif /* EARL_SEARCH_H */
