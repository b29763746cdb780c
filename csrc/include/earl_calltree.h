/*
 * earl_calltree.h - the call tree of a trace and the plain metrics on it.
 *
 * A call path (cnode) is a region together with the call path of the region
 * instance enclosing it, as in Scalasca's CUBE reports.  earl_calltree_build
 * derives, in one forward pass over the ordered events and the enterptr
 * pointers of the EARL layer (earl_states.h; passed as a plain array so that
 * the call tree depends on nothing else of it):
 *   - the cnodes (parent, region), numbered in order of first entry;
 *   - the cnode of every event: for an ENTER the call path it opens, for any
 *     other event the call path of its innermost enclosing region instance
 *     (-1 outside every region);
 *   - per (cnode, location): exclusive time in ticks (the time during which
 *     the cnode is the innermost open call path of the location, among the
 *     region instances the location entered itself) and visits (ENTERs),
 *     exact integers.
 * Worker threads inherit the master's stack at a fork (enterptr does that),
 * so their call paths hang below the master's parallel region.
 */
#ifndef EARL_CALLTREE_H
#define EARL_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earl_calltree earl_calltree;

typedef struct earl_calltree_view {
    size_t n_cnodes;
    const int32_t *parent;       /* parent cnode, -1 for a root */
    const uint32_t *region;      /* region ref */
    size_t n_events;
    const int32_t *event_cnode;  /* per event, -1 outside every region */
    /* plain metrics, one row per (cnode, location) that has any: grouped by
     * location in ascending order, within a location in order of first use */
    size_t n_rows;
    const int32_t *row_cnode;
    const earl_loc *row_location;
    const uint64_t *row_time;    /* exclusive ticks */
    const uint64_t *row_visits;
    const uint64_t *row_idle;    /* ticks a worker thread spent with only its
                                    master's inherited frames open (idle), charged
                                    to the master's call path */
} earl_calltree_view;

/**
 * Build the call tree of a trace and its plain metrics.  The processes are
 * walked in parts on threads and their call paths merged in the order of
 * their first ENTER, so the tree is numbered as one forward pass numbers it.
 *
 * @param trace     an open trace
 * @param enterptr  one entry per event of trace: the EARL layer's enterptr
 *                  (earl_states_view.enterptr, EARL_EID32_NONE for none)
 * @param threads   threads, 0 for one per core; the tree does not depend on it
 * @param out       receives the call tree, which the caller frees with
 *                  earl_calltree_free; NULL on failure
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_calltree_build(const earl_trace *trace, const earl_eid32 *enterptr,
                                         int threads, earl_calltree **out, earl_error *err);

/**
 * The call tree built in stretches, while something else walks the same
 * events (the EARL layer's pass, earl_states_options.calltree): each stretch
 * is walked while its events are still in the cache.  The result is the one
 * earl_calltree_build gives.  Not thread-safe: one thread calls the
 * functions of one walk, in order.
 */
typedef struct earl_calltree_walk earl_calltree_walk;

/**
 * Start a walk over the events of trace in the total order.
 *
 * @param trace     an open trace
 * @param enterptr  the EARL layer's enterptr; the walk of events [from, to)
 *                  reads the entries of those events and of earlier ones only
 * @param out       receives the walk, ended by earl_calltree_walk_end
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_calltree_walk_begin(const earl_trace *trace, const earl_eid32 *enterptr,
                                              earl_calltree_walk **out, earl_error *err);

/**
 * Walk events [from, to) of the total order; the stretches of one walk follow
 * each other from 0 to the trace's event count, and enterptr holds its final
 * value for every event before `to`.
 *
 * @param walk  a walk of earl_calltree_walk_begin
 * @param from  the first event of the stretch: where the previous one ended
 * @param to    the end of the stretch (at most the trace's event count)
 * @since 0.1.0
 */
EARL_API void earl_calltree_walk_events(earl_calltree_walk *walk, size_t from, size_t to);

/**
 * End a walk (every event walked) and free it.
 *
 * @param walk  a walk of earl_calltree_walk_begin, or NULL (nothing happens)
 * @param out   receives the call tree (freed with earl_calltree_free); NULL:
 *              the walk is abandoned and nothing is built
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM when the walk ran out of memory
 * @since 0.1.0
 */
EARL_API earl_status earl_calltree_walk_end(earl_calltree_walk *walk, earl_calltree **out,
                                            earl_error *err);

/**
 * Free a call tree and its view.
 *
 * @param tree  a call tree of earl_calltree_build, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_calltree_free(earl_calltree *tree);

/**
 * The cnodes, the cnode of every event and the metric rows.
 *
 * @param tree  a call tree
 * @return a view owned by the tree, valid until earl_calltree_free
 * @since 0.1.0
 */
EARL_API const earl_calltree_view *earl_calltree_get_view(const earl_calltree *tree);

/**
 * The innermost call path a location itself has open just after an event
 * (after a LEAVE: the enclosing one); frames inherited from a master thread
 * do not count.
 *
 * @param tree      the call tree of trace
 * @param trace     the trace it was built from
 * @param enterptr  the enterptr it was built from
 * @param i         an event of trace
 * @return the cnode, or -1 when the location has none open
 * @since 0.1.0
 */
EARL_API int32_t earl_calltree_current(const earl_calltree *tree, const earl_trace *trace,
                                       const earl_eid32 *enterptr, earl_eid i);

#ifdef __cplusplus
}
#endif
#endif
