/*
 * earl_rootcause.h - public API of the root-cause subsystem (earl_rc_*): the
 * hot loops of Scalasca's root-cause analysis of wait states (delay costs,
 * their long-term propagation, the critical path) over plain arrays.
 *
 * The caller (the Python properties of properties/rootcause/) finds the
 * synchronisation points and the wait states; this subsystem measures the
 * time between them and replays the costs backwards:
 *
 *   - time chunks: the exclusive time of each location as Scalasca's replay
 *     counts it, one chunk per ENTER/LEAVE (and team join) event, counted
 *     before the event's synchronisation point or after it.  Those of the
 *     events are built once into a compact table (earl_rc_event_chunks:
 *     12 bytes a chunk, with 32-bit slots instead of 64-bit keys and 32-bit
 *     ticks: most of its cost is the first touch of its memory); the caller's
 *     corrections come
 *     as a small table keyed
 *     2 * (location * stride + event) + (0: before the point, 1: after it),
 *     where stride = events + 1;
 *   - synchronisation points sorted by location * stride + event, with the
 *     waiting time at each and the part of its call before its completion;
 *   - call-path maps: per query a list of (cnode, value) ascending by cnode,
 *     in CSR form (earl_rc_map).
 *
 * Every function takes its inputs as named records (one struct per concept:
 * the events' columns, the chunks, the points, the spans between two events,
 * the queries of each search, the batches of the replay) and fills an output
 * struct it owns until its _free function; the Python glue
 * (python/earlc/_ext/rootcause.c) reads each struct field by field from a
 * Python record of the same name and fields (properties/rootcause/records.py).
 * The inputs are borrowed: no function keeps them past its return, except
 * the replay handle (see earl_rc_replay).  The functions are reentrant and
 * keep no state between calls: several may run at once on different
 * threads.
 *
 * Every sum is accumulated in a fixed order (the one of the numpy version
 * these functions replaced, value for value), so the results do not depend
 * on how the work is split and are reproducible to the last bit.
 */
#ifndef EARL_ROOTCAUSE_H
#define EARL_ROOTCAUSE_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an event contributes to the time chunks (Scalasca's replay counts time
 * at ENTER and LEAVE events): indexed by earl_kind. */
typedef enum earl_rc_chunk_role {
    EARL_RC_CHUNK_NONE = 0,    /* no chunk; the time runs on to the next event */
    EARL_RC_CHUNK_ENTER,       /* the time since the previous chunk, charged to the caller
                                * (the parent of the event's cnode), before its point */
    EARL_RC_CHUNK_LEAVE,       /* charged to the event's cnode, after its point */
    EARL_RC_CHUNK_JOIN,        /* a team's join: charged to the event's cnode, before its point */
    EARL_RC_CHUNK_PROGRAM_END  /* charged to the program's cnode, after its point */
} earl_rc_chunk_role;

/* The chunks of the events, location by location: location l's are
 * [offset[l], end[l]) (end NULL: [offset[l], offset[l + 1])), ascending by
 * slot = 2 * event + (0: before its point, 1: after it); between end[l] and
 * offset[l + 1] the table holds nothing (its entries are not to be read: the
 * builder sizes a location's part by its events, not by its chunks).
 * n_locations 0: no chunks of events.
 *
 * A chunk's ticks take 32 bits: the time between two ENTER/LEAVE events of
 * a location is almost always below 2^31 ticks (two seconds at a 1 GHz
 * timer).  Those that are not, are EARL_RC_TICKS_FAR in ticks and kept whole
 * in the far table: far_chunk (ascending chunk indices, counted over the
 * whole table) and far_ticks. */
#define EARL_RC_TICKS_FAR INT32_MIN
typedef struct earl_rc_event_chunks {
    size_t n_locations;
    const uint64_t *offset; /* n_locations + 1 */
    const uint32_t *slot;
    const int32_t *cnode;
    const int32_t *ticks;
    size_t n_far;
    const uint64_t *far_chunk;
    const int64_t *far_ticks;
    const uint64_t *end; /* n_locations, or NULL (see above) */
} earl_rc_event_chunks;

/* What earl_rc_event_chunks_build returns: the arrays of earl_rc_event_chunks
 * it owns (free them with earl_rc_event_chunk_table_free); count is
 * offset[n_locations], the entries of slot, cnode and ticks (those between a
 * location's end and the next one's offset included). */
typedef struct earl_rc_event_chunk_table {
    size_t n_locations;
    size_t count;
    uint64_t *offset;
    uint32_t *slot;
    int32_t *cnode;
    int32_t *ticks;
    size_t n_far;
    uint64_t *far_chunk;
    int64_t *far_ticks;
    uint64_t *end; /* n_locations (at least one entry) */
} earl_rc_event_chunk_table;

/* What the chunks of the events are built from: the per-event columns in
 * the trace's total order (in which each location's events keep their
 * recorded order), the call tree's parents, and what each kind of event
 * contributes. */
typedef struct earl_rc_event_columns {
    size_t n_locations;      /* every location is below it */
    size_t n_events;
    const int32_t *location; /* per event */
    const uint8_t *kind;     /* per event: its earl_kind */
    const uint64_t *time;    /* per event */
    const int32_t *cnode;    /* per event: its call path, -1 outside every region */
    size_t n_cnodes;
    const int32_t *parent;   /* per cnode: its caller, -1 at a root */
    const uint8_t *role;     /* 256 entries: the earl_rc_chunk_role of each kind */
    int64_t program_cnode;   /* charged at EARL_RC_CHUNK_PROGRAM_END */
} earl_rc_event_columns;

/**
 * Build the time chunks of the events.  A location's first event with a
 * role only starts its time, and an event charged to no cnode (-1) gives no
 * chunk.
 *
 * @param events  the events' columns, the call tree's parents and the roles
 * @param threads threads to pass the events on, 0 for one per core: ranges
 *                of the total order, joined so that the table does not
 *                depend on it
 * @param out     receives the table; free it with
 *                earl_rc_event_chunk_table_free
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a location or a cnode out of range, 2^31
 *         events or more: their slots would not fit), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_event_chunks_build(const earl_rc_event_columns *events,
                                                int threads, earl_rc_event_chunk_table *out,
                                                earl_error *err);
/**
 * Free the arrays of a chunk table and empty it.
 *
 * @param table  a table of earl_rc_event_chunks_build, or NULL (nothing
 *               happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_event_chunk_table_free(earl_rc_event_chunk_table *table);

/* Chunks given as a table, ascending by key (see above). */
typedef struct earl_rc_chunk_table {
    size_t count;
    const int64_t *key;
    const int64_t *cnode;
    const int64_t *ticks;
} earl_rc_chunk_table;

/* The time chunks of every location: those of the events, and those of the
 * table (the caller's corrections, such as thread management).  A chunk whose
 * cnode is not in 0..n_cnodes-1 makes the function summing it fail with
 * EARL_ERR_INVALID, and so do offsets that are not ascending, a stride below
 * 1 and a negative n_cnodes. */
typedef struct earl_rc_chunks {
    int64_t stride;   /* events + 1: a location's multiplier in the table's keys */
    int64_t n_cnodes; /* every chunk's cnode is below it */
    earl_rc_event_chunks events;
    earl_rc_chunk_table table;
} earl_rc_chunks;

/* Stretches of time, each on one location: after event start[q]'s point (-1:
 * from the location's start) up to event end[q]'s point. */
typedef struct earl_rc_spans {
    size_t count;
    const int64_t *location; /* not negative */
    const int64_t *start;
    const int64_t *end;
} earl_rc_spans;

/* Synchronisation points, ascending by key = location * stride + event. */
typedef struct earl_rc_points {
    size_t count;
    const int64_t *key;
    const int64_t *row;   /* the point's row in the caller's table */
    const int64_t *cnode; /* -1: outside every region */
    const double *wait;   /* waiting time at the point */
    const double *cut;    /* its call's time before its completion */
} earl_rc_points;

/* A call-path map per query: entries [offset[q], offset[q + 1]) of cnode and
 * value, ascending by cnode.  Maps filled by this API own their arrays: free
 * them with earl_rc_map_free. */
typedef struct earl_rc_map {
    size_t queries;
    int64_t *offset; /* queries + 1 */
    int64_t *cnode; /* cnode and value: earl_mem blocks (earl_rc_map_free) */
    double *value;
} earl_rc_map;

/**
 * Free the arrays of a call-path map this API filled, and empty it.
 *
 * @param map  a map, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_map_free(earl_rc_map *map);

/**
 * Raw exclusive time per call path of each span: every call path with a
 * chunk there, with its exact tick sum as a double (zero and negative sums
 * included).
 *
 * @param chunks  the time chunks
 * @param spans   the stretches of time
 * @param out     receives one query per span; free it with earl_rc_map_free
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a chunk's cnode out of range, offsets not
 *         ascending, a negative location, a stride below 1), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_chunk_sums(const earl_rc_chunks *chunks, const earl_rc_spans *spans,
                                        earl_rc_map *out, earl_error *err);

/* Synchronisation intervals (Scalasca's pruned time maps): per span, from a
 * synchronisation point of its location (start; -1: the location's start) to
 * another (end), the time per call path without the waiting time at the
 * points strictly in between (charged to their call paths; call paths left
 * without positive time vanish), and without the part of the start point's
 * call before its completion.  The points' keys use the chunks' stride.
 * EARL_ERR_INVALID as earl_rc_chunk_sums, and for a point's cnode of
 * n_cnodes or more. */
typedef struct earl_rc_intervals {
    earl_rc_map time;        /* positive values only */
    double *wait_sum;        /* per span: the waiting time at the points in between */
    int64_t *between_offset; /* spans + 1 */
    int64_t *between_row;    /* the rows of those points with waiting time > 0, in event order */
} earl_rc_intervals;

/**
 * Synchronisation intervals (see earl_rc_intervals).
 *
 * @param chunks  the time chunks
 * @param points  the synchronisation points (keys with the chunks' stride)
 * @param spans   per interval, its location and the points it runs between
 * @param threads threads to answer the intervals on, 0 for one per core: the
 *                intervals, taken location by location, are cut into parts
 *                joined in order, so the result does not depend on it
 * @param out     receives the intervals; free them with earl_rc_intervals_free
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (as earl_rc_chunk_sums, and a point's
 *         cnode of n_cnodes or more), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_interval_times(const earl_rc_chunks *chunks,
                                            const earl_rc_points *points,
                                            const earl_rc_spans *spans, int threads,
                                            earl_rc_intervals *out, earl_error *err);
/**
 * Free the arrays of intervals and empty them.
 *
 * @param intervals  intervals of earl_rc_interval_times, or NULL (nothing
 *                   happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_intervals_free(earl_rc_intervals *intervals);

/* Pairs of queries of call-path maps: for each pair k, the late side's
 * query late_query[k] against the early side's early_query[k], restricted to
 * the call paths of within's query within_query[k] (within NULL: no
 * restriction, within_query unread). */
typedef struct earl_rc_excess_pairs {
    size_t count;
    const earl_rc_map *late;
    const int64_t *late_query;
    const earl_rc_map *early;
    const int64_t *early_query;
    const earl_rc_map *within;
    const int64_t *within_query;
} earl_rc_excess_pairs;

/**
 * The excess of the late side over the early side, per pair: the entries of
 * the late query whose cnode is also in the within query, minus the early
 * query's value of that cnode (0 when absent), the positive differences
 * only.
 *
 * @param pairs  the pairs of queries
 * @param out    receives one query per pair; free it with earl_rc_map_free
 * @param sum    receives, per pair, the total of its query (the caller's array
 *               of pairs->count entries)
 * @param err    receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a query index out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_excess(const earl_rc_excess_pairs *pairs, earl_rc_map *out,
                                    double *sum, earl_error *err);

/* The synchronisation points two locations share: those where they meet one
 * by one (pair_key = (location * n_locations + partner) * stride + event,
 * ascending), and the group points of sets of locations (per group: its
 * members, rows of member_offset/member_location, and its points, rows of
 * key_offset/group_key as location * stride + event ascending). */
typedef struct earl_rc_pair_points {
    int64_t stride;     /* events + 1 */
    size_t n_locations; /* every location is below it; the multiplier of pair_key */
    size_t n_pairs;
    const int64_t *pair_key;
    size_t n_groups;
    const int64_t *member_offset; /* n_groups + 1 */
    const int64_t *member_location;
    const int64_t *key_offset;    /* n_groups + 1 */
    const int64_t *group_key;
} earl_rc_pair_points;

/* Where two locations last met: per query, location[q] with partner[q]
 * before event before[q] (strictly). */
typedef struct earl_rc_meeting_queries {
    size_t count;
    const int64_t *location;
    const int64_t *partner;
    const int64_t *before;
} earl_rc_meeting_queries;

/**
 * Per query, the last synchronisation point of a location with its partner
 * before an event (strictly); a group point counts when both are members.
 *
 * @param points   the points the locations share
 * @param queries  the locations, partners and events
 * @param out      receives, per query, the point's event or -1 when none (the
 *                 caller's array of queries->count entries)
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a location out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_previous_points(const earl_rc_pair_points *points,
                                             const earl_rc_meeting_queries *queries, int64_t *out,
                                             earl_error *err);

/* Who meets whom at the synchronisation points: the points (point_key,
 * location * stride + event ascending), the partner locations a point
 * synchronises with one by one, as pairs (the point's key, the partner) in any
 * order, and per point the set it synchronises with as a group (everybody in
 * a communicator), if any.  Location sets are rows of one CSR table
 * (set_offset, set_location). */
typedef struct earl_rc_meetings {
    int64_t stride;                /* events + 1 */
    size_t n_points;
    const int64_t *point_key;
    const int64_t *point_set;      /* per point: its group's set, or -1 */
    size_t n_partners;
    const int64_t *partner_key;    /* the key of the point the pair belongs to */
    const int64_t *partner_location;
    size_t n_sets;
    const int64_t *set_offset;     /* n_sets + 1 */
    const int64_t *set_location;
    size_t n_locations;            /* every location is below this */
} earl_rc_meetings;

/* Where the delayer of each collective wait state last met its
 * communicator (Scalasca's previous group synchronisation point): walking
 * back from the delayer's point over its earlier points, the first one where
 * it meets every member it has not met yet at once (or where the last of them
 * is met), -1 when none is; and each member met on the way, alone or with
 * others but not all, with the point where it was met (earl_rc_group_starts
 * lists them per instance, members in the order they are met). */
typedef struct earl_rc_group_starts {
    int64_t *start;        /* per instance: the event, or -1 */
    size_t n_met;
    int64_t *met_instance; /* n_met triples (instance, location, event) */
    int64_t *met_location;
    int64_t *met_event;
} earl_rc_group_starts;

/* The collective wait state instances whose group interval is looked for:
 * per instance its delayer's location and point (event), and the set of
 * its communicator's members (a row of the meetings' sets). */
typedef struct earl_rc_group_queries {
    size_t count;
    const int64_t *delayer_location;
    const int64_t *delayer_event;
    const int64_t *member_set;
} earl_rc_group_queries;

/**
 * Where the delayer of each collective wait state last met its
 * communicator (see earl_rc_group_starts).
 *
 * @param meetings   who meets whom at the synchronisation points
 * @param instances  the collective wait state instances
 * @param out        receives the starts; free them with
 *                   earl_rc_group_starts_free
 * @param err        receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a set or a location out of range, a
 *         partner pair of no point), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_find_group_starts(const earl_rc_meetings *meetings,
                                               const earl_rc_group_queries *instances,
                                               earl_rc_group_starts *out, earl_error *err);
/**
 * Free the arrays of group starts and empty them.
 *
 * @param starts  starts of earl_rc_find_group_starts, or NULL (nothing
 *                happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_group_starts_free(earl_rc_group_starts *starts);

/* The critical path's walk back in time (Scalasca's critical-path pass):
 * from its start (an event of a location, or the location's end), each step
 * goes back to the location's latest wait state (wait_key, location * stride
 * + event ascending; the path continues at wait_partner, the event waited
 * for) or OpenMP point (omp_key; it continues at each of its omp_next
 * events) before the current event, whichever is later; a location with
 * neither ends the path at its init_event, or where init_event is -1 at the
 * location's start when ends_at_start is set (a stretch from -1), else with
 * no stretch.  Pending ends are taken latest event first, so that paths
 * merging at a fork are walked once.  location gives every event's
 * location. */
typedef struct earl_rc_path_graph {
    int64_t stride;
    size_t n_events;
    const int32_t *location;     /* per event */
    size_t n_locations;
    const int64_t *init_event;   /* per location */
    int ends_at_start;
    size_t n_waits;
    const int64_t *wait_key;
    const int64_t *wait_partner;
    size_t n_omp;
    const int64_t *omp_key;
    const int64_t *omp_next_offset; /* n_omp + 1 */
    const int64_t *omp_next_event;
} earl_rc_path_graph;

/* The stretches of the path, in the order they are walked: location, the
 * event it starts after and the event it ends at (the fields of
 * earl_rc_spans, owned). */
typedef struct earl_rc_stretches {
    size_t count;
    int64_t *location;
    int64_t *start;
    int64_t *end;
} earl_rc_stretches;

/**
 * Walk the critical path back in time (see earl_rc_path_graph).
 *
 * @param graph           the wait states, OpenMP points and locations' starts
 * @param start_location  the location the path ends on
 * @param start_event     the event it ends at, or -1: the location's end (its
 *                        first stretch then ends at `stride - 1`, after every
 *                        event)
 * @param out             receives the stretches; free them with
 *                        earl_rc_stretches_free
 * @param err             receives the status and a message on failure (may be
 *                        NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a start, a wait state's partner or an
 *         OpenMP successor out of range), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_critical_walk(const earl_rc_path_graph *graph, int64_t start_location,
                                           int64_t start_event, earl_rc_stretches *out,
                                           earl_error *err);
/**
 * Free the arrays of stretches and empty them.
 *
 * @param stretches  stretches of earl_rc_critical_walk, or NULL (nothing
 *                   happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_stretches_free(earl_rc_stretches *stretches);

/* ---- long-term delay costs (Scalasca's backward replay) --------------------
 *
 * The waiting time a wait state propagates to later ones is a cost that flows
 * back to the wait states in its late side's interval, and from there to the
 * delays that caused them.  Costs are tracked per source (the kind of wait
 * state they stem from, 0..n_sources-1) and per synchronisation point (rows
 * 0..n_points-1 of the caller's table):
 *
 *   - a point-to-point wait state of kind K with its delays (call paths of
 *     the late side), their scale (waiting time / denominator), the
 *     denominator (delays + waiting time of the late side in between) and
 *     the late side's points in between: per source s, the cost arrived at
 *     its waiting point over the denominator scales its delays into the
 *     long-term severity of s, and (plus its own scale when s == K) the
 *     waiting time at each point in between into their costs;
 *   - a collective instance of kind K with its members (the delayer's
 *     delays are the time of its group interval): per source s, the inputs
 *     the caller's rules name (the cost arrived at each member, the members'
 *     own waiting time) scale each member's delays (costs only) into the
 *     severity of s on the delayer, and their sum the waiting time at the
 *     delayer's points in between into their costs; members the delayer met
 *     one by one since the group point join the sum only after the point
 *     where they were met (Scalasca's scale map).
 *
 * The order is Scalasca's parallel backward replay, in which every location
 * walks its own events backwards and takes each wait state it delayed at its
 * own synchronisation point (the late side's event), after the wait states
 * of its later points; a wait state reads the cost at the waiting side's
 * point when that side has walked past it, that is once every wait state
 * that location delayed at a later point has passed its cost on.  The run
 * takes, among the wait states whose inputs are complete, the one at the
 * latest event first (a collective before a point-to-point wait state at one
 * event, else in the order given): the order matters where a waiting point
 * comes before the late side's point in time (a Late Receiver whose send
 * completes before the receive is posted), which a plain latest-first order
 * by waiting event would take too late.  A trace whose dependencies form a
 * cycle (clock condition violations) has no such order: the run then takes
 * the latest waiting wait state anyway and counts it
 * (earl_rc_replay_out_of_order).
 *
 * The handle keeps pointers to the arrays it is given (and to the arrays of
 * the maps, not the map structs): they must stay valid and unchanged until
 * earl_rc_replay_free. */
typedef struct earl_rc_replay earl_rc_replay;

/* Inputs of a collective's kind for a source (earl_rc_replay_set_input). */
enum { EARL_RC_INPUT_COST = 1, EARL_RC_INPUT_WAIT = 2 };

/* The synchronisation points of a replay, per row: its event, location and
 * waiting time. */
typedef struct earl_rc_replay_points {
    size_t count;
    const int64_t *event;
    const int64_t *location; /* not negative */
    const double *wait;
} earl_rc_replay_points;

/**
 * A long-term replay over synchronisation points; every collective kind
 * takes by default the arriving cost for every source, and the members' own
 * waiting time for the source of its own kind.  Fill it with the add_* and
 * set_input calls, then run it.
 *
 * @param n_sources  the sources (kinds of wait states), 1 to 255
 * @param points     the synchronisation points (kept until
 *                   earl_rc_replay_free)
 * @param out        receives the replay, which the caller frees with
 *                   earl_rc_replay_free; NULL on failure
 * @param err        receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a negative location, sources out of
 *         1..255), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_new(size_t n_sources, const earl_rc_replay_points *points,
                                        earl_rc_replay **out, earl_error *err);
/**
 * Free a replay (not the arrays it was given).
 *
 * @param replay  a replay of earl_rc_replay_new, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_replay_free(earl_rc_replay *replay);

/**
 * What collectives of a kind take as input for a source.
 *
 * @param replay  a replay
 * @param kind    a collective kind (a source)
 * @param source  a source
 * @param inputs  EARL_RC_INPUT_COST, EARL_RC_INPUT_WAIT, both or none
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_INVALID (a kind or source out of range)
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_set_input(earl_rc_replay *replay, size_t kind, size_t source,
                                              unsigned inputs, earl_error *err);

/* Point-to-point wait states of kind `source`: per wait state k its waiting
 * event and point row (-1: no point, no cost arrives), the delaying
 * location and its point there (the event where the replay takes the wait
 * state), scale and denominator, its delays (query k of delays) and the
 * point rows in between ([between_offset[k], between_offset[k + 1]) of
 * between_row). */
typedef struct earl_rc_waits {
    size_t source;
    size_t count;
    const int64_t *event;
    const int64_t *row;
    const int64_t *delayer_location;
    const int64_t *delayer_event;
    const double *scale;
    const double *denominator;
    const earl_rc_map *delays;     /* count queries */
    const int64_t *between_offset; /* count + 1 */
    const int64_t *between_row;
} earl_rc_waits;

/**
 * Point-to-point wait states of one kind (see earl_rc_waits).
 *
 * @param replay  a replay
 * @param waits   the wait states (kept until earl_rc_replay_free)
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a source, row or query out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_add_waits(earl_rc_replay *replay, const earl_rc_waits *waits,
                                              earl_error *err);

/* Collective instances: per instance its kind (a source), the delaying
 * location and its point there (its event in the collective), its members
 * [member_offset[k], member_offset[k + 1]) and the delayer's point rows in
 * between, in event order.
 * Per member: its event and point row (-1: none), its waiting time, its
 * delays (query member_delay_query[m] of delays) with their sum, the waiting time of the
 * delayer in between that it shares its scale with (prop), and the event
 * where the delayer met it alone (-1: at the group point). */
typedef struct earl_rc_collectives {
    size_t count;
    const int64_t *kind;
    const int64_t *delayer_location;
    const int64_t *delayer_event;
    const int64_t *member_offset;
    const int64_t *between_offset;
    const int64_t *between_row;
    size_t n_members;
    const int64_t *member_event;
    const int64_t *member_row;
    const double *member_wait;
    const double *member_delay_sum;
    const double *member_prop;
    const int64_t *member_met;
    const int64_t *member_delay_query;
    const earl_rc_map *delays;
} earl_rc_collectives;

/**
 * Collective instances (see earl_rc_collectives).
 *
 * @param replay       a replay
 * @param collectives  the instances and their members (kept until
 *                     earl_rc_replay_free)
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a kind, row or query out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_add_collectives(earl_rc_replay *replay,
                                                    const earl_rc_collectives *collectives,
                                                    earl_error *err);

/* Costs known before the replay (they depend on nothing later): value[i] on
 * point row row[i] of source `source`, added in order. */
typedef struct earl_rc_costs {
    size_t source;
    size_t count;
    const int64_t *row;
    const double *value;
} earl_rc_costs;

/**
 * Costs known before the replay (see earl_rc_costs).
 *
 * @param replay  a replay
 * @param costs   the costs, added in order
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a source or row out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_add_costs(earl_rc_replay *replay, const earl_rc_costs *costs,
                                              earl_error *err);

/* The long-term severities, per source: out[s] gets parallel arrays of
 * (location, cnode, value) in first-touch order (free with
 * earl_rc_severity_free). */
typedef struct earl_rc_severity {
    size_t count;
    int64_t *location;
    int64_t *cnode;
    double *value;
} earl_rc_severity;

/**
 * Run the replay: the long-term severities per source.
 *
 * @param replay  a filled replay
 * @param out     n_sources severities, the caller's array; each receives
 *                parallel arrays of (location, cnode, value) in first-touch
 *                order: free each with earl_rc_severity_free
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_run(earl_rc_replay *replay, earl_rc_severity *out,
                                        earl_error *err);
/**
 * Free the arrays of severities and empty them.
 *
 * @param severity  severities of earl_rc_replay_run, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_severity_free(earl_rc_severity *severity);

/**
 * How many wait states the last run took before the costs they read were
 * complete (a cycle of dependencies; see above).
 *
 * @param replay  a replay that ran
 * @return the count: 0 on a consistent trace
 * @since 0.1.0
 */
EARL_API size_t earl_rc_replay_out_of_order(const earl_rc_replay *replay);

/* ---- the long-term replay in parts ------------------------------------------
 *
 * A trace analysed in parts (earl_part.h) replays its long-term costs in
 * parts too.  Each part's replay holds the wait states its own locations
 * delayed and every point they touch: their own points, and the waiting
 * points of other parts' locations they read (*remote* points).  A point's
 * cost is complete once every wait state that adds to it (those whose late
 * side's interval holds it) has passed its cost on; a wait state passes its
 * cost on once the costs it reads are complete: its own part's as they
 * complete, remote ones as they arrive (earl_rc_replay_receive).  The caller
 * runs rounds: advance, send the completed costs other parts read
 * (earl_rc_replay_completed, for the rows it watches), receive theirs, until
 * nothing remains; then earl_rc_replay_finish gives this part's severities.
 *
 * The results are earl_rc_replay_run's on the whole trace to the bit (every
 * sum is made in its order: rc_parts.c), provided that run takes no wait
 * state out of order.  It takes none when no wait state reads a point p of a
 * location that delayed another wait state at an event strictly between p
 * and the reader's own point (then the latest head is always ready); the
 * caller checks this over the parts before it starts, and otherwise replays
 * the parts' inputs together on one process (earl_rc_replay_run).
 *
 * The replay's points of locations not held here are remote; batches and
 * costs are given before earl_rc_replay_start and not after. */

/**
 * Begin the replay in parts.
 *
 * @param replay  a replay holding this part's batches and costs
 * @param held    held[l] is set for the locations whose wait states and
 *                points this part holds (l < n_held)
 * @param n_held  the length of held
 * @param watch   the rows of held points whose completed costs other parts
 *                read (earl_rc_replay_completed gives them)
 * @param n_watch the length of watch
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a watched row out of range, a wait state
 *         of a location not held, a second start), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_start(earl_rc_replay *replay, const uint8_t *held,
                                          size_t n_held, const int64_t *watch, size_t n_watch,
                                          earl_error *err);

/**
 * Pass on the cost of every wait state whose reads are complete, and of those
 * whose reads complete in turn.
 *
 * @param replay  a started replay
 * @param taken   receives how many wait states passed their cost on
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (not started), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_advance(earl_rc_replay *replay, size_t *taken, earl_error *err);

/* The watched points completed since the last call: their indices in the
 * watch list and their costs, cost[k * n_sources + s] for source s. */
typedef struct earl_rc_completed {
    size_t count;
    int64_t *watch;
    double *cost;
} earl_rc_completed;

/**
 * The watched points whose costs became complete since the last call.
 *
 * @param replay  a started replay
 * @param out     receives their indices in the watch list and their costs
 *                (free with earl_rc_completed_free)
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (not started), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_completed(earl_rc_replay *replay, earl_rc_completed *out,
                                              earl_error *err);

/**
 * Free the arrays of completed costs and empty them.
 *
 * @param completed  completed costs of earl_rc_replay_completed, or NULL
 *                   (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_completed_free(earl_rc_completed *completed);

/**
 * Take the complete costs of remote points, as another part's
 * earl_rc_replay_completed gave them.
 *
 * @param replay  a started replay
 * @param n       how many points
 * @param row     their rows in this replay's points
 * @param cost    their costs, cost[k * n_sources + s] for source s
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (not started; a row out of range, held
 *         here, or received before), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_receive(earl_rc_replay *replay, size_t n, const int64_t *row,
                                            const double *cost, earl_error *err);

/**
 * How many of this part's wait states have not passed their cost on.
 *
 * @param replay  a started replay
 * @return the count: 0 once the replay in parts can finish
 * @since 0.1.0
 */
EARL_API size_t earl_rc_replay_remaining(const earl_rc_replay *replay);

/**
 * This part's long-term severities (as earl_rc_replay_run gives them on the
 * whole trace, for this part's locations).
 *
 * @param replay  a started replay whose wait states all passed their cost on
 * @param out     n_sources severities, the caller's array (free each with
 *                earl_rc_severity_free)
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (wait states left), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_finish(earl_rc_replay *replay, earl_rc_severity *out,
                                           earl_error *err);

#ifdef __cplusplus
}
#endif

#endif
