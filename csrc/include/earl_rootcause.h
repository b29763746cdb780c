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
 * [offset[l], offset[l + 1]), ascending by slot = 2 * event + (0: before its
 * point, 1: after it).  n_locations 0: no chunks of events.
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
} earl_rc_event_chunks;

/* What earl_rc_event_chunks_build returns: the arrays of earl_rc_event_chunks
 * it owns (free them with earl_rc_event_chunk_table_free). */
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
} earl_rc_event_chunk_table;

/**
 * Build the time chunks of the events.  A location's first event with a
 * role only starts its time, and an event charged to no cnode (-1) gives no
 * chunk.
 *
 * @param n_locations    the locations (every location is below it)
 * @param n_events       the events, in the trace's total order, in which each
 *                       location's events keep their recorded order
 * @param location       per event, its location
 * @param kind           per event, its earl_kind
 * @param time           per event, its time in ticks
 * @param event_cnode    per event, its call path (-1 outside every region)
 * @param parent         per cnode, its parent (-1 for a root)
 * @param n_cnodes       the cnodes
 * @param role           per kind, what an event contributes
 *                       (earl_rc_chunk_role)
 * @param program_cnode  the cnode charged at EARL_RC_CHUNK_PROGRAM_END
 * @param out            receives the table; free it with
 *                       earl_rc_event_chunk_table_free
 * @param err            receives the status and a message on failure (may be
 *                       NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a location or a cnode out of range, 2^31
 *         events or more: their slots would not fit), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_event_chunks_build(size_t n_locations, size_t n_events,
                                                const int32_t *location, const uint8_t *kind,
                                                const uint64_t *time, const int32_t *event_cnode,
                                                const int32_t *parent, size_t n_cnodes,
                                                const uint8_t role[256], int64_t program_cnode,
                                                earl_rc_event_chunk_table *out, earl_error *err);
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
 * EARL_ERR_INVALID, and so do offsets that are not ascending. */
typedef struct earl_rc_chunks {
    earl_rc_event_chunks events;
    earl_rc_chunk_table table;
} earl_rc_chunks;

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
 * Raw exclusive time per call path of each query: every call path with a
 * chunk on the query's location between its two events, with its exact
 * tick sum as a double (zero and negative sums included).
 *
 * @param chunks    the time chunks
 * @param stride    events + 1 (the keys' multiplier)
 * @param n_cnodes  the cnodes
 * @param loc       per query, its location
 * @param lo        per query, the event after whose point it starts
 *                  (exclusive; -1: the location's start)
 * @param hi        per query, the event before whose point it ends
 * @param queries   how many
 * @param out       receives one map per query; free it with earl_rc_map_free
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a chunk's cnode out of 0..n_cnodes-1,
 *         offsets not ascending, a negative location, a stride below 1), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_chunk_sums(const earl_rc_chunks *chunks, int64_t stride,
                                        int64_t n_cnodes, const int64_t *loc, const int64_t *lo,
                                        const int64_t *hi, size_t queries, earl_rc_map *out,
                                        earl_error *err);

/* Synchronisation intervals (Scalasca's pruned time maps): per query q, the
 * time per call path of location loc[q] between its synchronisation points
 * prev[q] (-1: the location's start) and at[q], without the waiting time at
 * the points strictly in between (charged to their call paths; call paths
 * left without positive time vanish), and without the part of prev's call
 * before its completion.  EARL_ERR_INVALID as earl_rc_chunk_sums, and for a
 * point's cnode of n_cnodes or more. */
typedef struct earl_rc_intervals {
    earl_rc_map time;        /* positive values only */
    double *wait_sum;        /* per query: the waiting time at the points in between */
    int64_t *between_offset; /* queries + 1 */
    int64_t *between_row;    /* the rows of those points with waiting time > 0, in event order */
} earl_rc_intervals;

/**
 * Synchronisation intervals (see earl_rc_intervals).
 *
 * @param chunks    the time chunks
 * @param points    the synchronisation points
 * @param stride    events + 1 (the keys' multiplier)
 * @param n_cnodes  the cnodes
 * @param loc       per query, its location
 * @param prev      per query, the point it starts after (-1: the location's
 *                  start)
 * @param at        per query, the point it ends at
 * @param queries   how many
 * @param out       receives the intervals; free them with
 *                  earl_rc_intervals_free
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (as earl_rc_chunk_sums, and a point's
 *         cnode of n_cnodes or more), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_interval_times(const earl_rc_chunks *chunks,
                                            const earl_rc_points *points, int64_t stride,
                                            int64_t n_cnodes, const int64_t *loc,
                                            const int64_t *prev, const int64_t *at, size_t queries,
                                            earl_rc_intervals *out, earl_error *err);
/**
 * Free the arrays of intervals and empty them.
 *
 * @param intervals  intervals of earl_rc_interval_times, or NULL (nothing
 *                   happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_intervals_free(earl_rc_intervals *intervals);

/**
 * The excess of a late side's map over an early side's: for each pair k, the
 * entries of late's query late_q[k] whose cnode is also in within's query
 * within_q[k], minus early's value of that cnode in query early_q[k] (0 when
 * absent), the positive differences only.
 *
 * @param late      the late sides' maps
 * @param late_q    per pair, a query of late
 * @param early     the early sides' maps
 * @param early_q   per pair, a query of early
 * @param within    the maps that restrict the cnodes, or NULL (no restriction)
 * @param within_q  per pair, a query of within (unused without within)
 * @param pairs     how many pairs
 * @param out       receives one query per pair; free it with earl_rc_map_free
 * @param sum       receives, per pair, the total of its query (the caller's
 *                  array of pairs entries)
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a query index out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_excess(const earl_rc_map *late, const int64_t *late_q,
                                    const earl_rc_map *early, const int64_t *early_q,
                                    const earl_rc_map *within, const int64_t *within_q,
                                    size_t pairs, earl_rc_map *out, double *sum, earl_error *err);

/* The synchronisation points two locations share: those where they meet one
 * by one (pair_key = (location * n_locations + partner) * stride + event,
 * ascending), and the group points of sets of locations (per group: its
 * members, rows of member_offset/member_location, and its points, rows of
 * key_offset/group_key as location * stride + event ascending). */
typedef struct earl_rc_pair_points {
    size_t n_locations; /* every location is below it; the multiplier of pair_key */
    size_t n_pairs;
    const int64_t *pair_key;
    size_t n_groups;
    const int64_t *member_offset; /* n_groups + 1 */
    const int64_t *member_location;
    const int64_t *key_offset;    /* n_groups + 1 */
    const int64_t *group_key;
} earl_rc_pair_points;

/**
 * Per query, the last synchronisation point of a location with a partner
 * before an event (strictly); a group point counts when both are members.
 *
 * @param points   the shared points
 * @param stride   events + 1 (the keys' multiplier)
 * @param queries  how many
 * @param loc      per query, the location
 * @param partner  per query, the partner location
 * @param at       per query, the event
 * @param out      receives, per query, the point's event or -1 when none
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a location out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_previous_points(const earl_rc_pair_points *points, int64_t stride,
                                             size_t queries, const int64_t *loc,
                                             const int64_t *partner, const int64_t *at,
                                             int64_t *out, earl_error *err);

/* Who meets whom at the synchronisation points: the points (point_key,
 * location * stride + event ascending), the partner locations a point
 * synchronises with one by one, as pairs (the point's key, the partner) in any
 * order, and per point the set it synchronises with as a group (everybody in
 * a communicator), if any.  Location sets are rows of one CSR table
 * (set_offset, set_location). */
typedef struct earl_rc_meetings {
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

/**
 * Where the delayer of each collective wait state last met its communicator
 * (see earl_rc_group_starts).
 *
 * @param meetings          who meets whom at the synchronisation points
 * @param stride            events + 1 (the keys' multiplier)
 * @param instances         how many collective instances
 * @param delayer_location  per instance, the delaying location
 * @param delayer_event     per instance, the delayer's event
 * @param member_set        per instance, the set of its communicator
 * @param out               receives the starts; free them with
 *                          earl_rc_group_starts_free
 * @param err               receives the status and a message on failure (may
 *                          be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a set or a location out of range, a
 *         partner pair of no point), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_find_group_starts(const earl_rc_meetings *meetings, int64_t stride,
                                               size_t instances, const int64_t *delayer_location,
                                               const int64_t *delayer_event,
                                               const int64_t *member_set, earl_rc_group_starts *out,
                                               earl_error *err);
/**
 * Free the arrays of group starts and empty them.
 *
 * @param starts  starts of earl_rc_find_group_starts, or NULL (nothing
 *                happens)
 * @since 0.1.0
 */
EARL_API void earl_rc_group_starts_free(earl_rc_group_starts *starts);

/* The critical path's walk back in time (Scalasca's critical-path pass):
 * from location start_location at event start_event, each step goes back to
 * the location's latest wait state (wait_key, location * stride + event
 * ascending; the path continues at wait_partner, the event waited for) or
 * OpenMP point (omp_key; it continues at each of its omp_next events) before
 * the current event, whichever is later; a location with neither ends at its
 * init_event (-1: the path ends there).  Pending ends are taken latest event
 * first, so that paths merging at a fork are walked once.  location gives
 * every event's location. */
typedef struct earl_rc_path_graph {
    int64_t stride;
    size_t n_events;
    const int32_t *location;     /* per event */
    size_t n_locations;
    const int64_t *init_event;   /* per location */
    size_t n_waits;
    const int64_t *wait_key;
    const int64_t *wait_partner;
    size_t n_omp;
    const int64_t *omp_key;
    const int64_t *omp_next_offset; /* n_omp + 1 */
    const int64_t *omp_next_event;
} earl_rc_path_graph;

/* The stretches of the path, in the order they are walked: location, the
 * event it starts after and the event it ends at. */
typedef struct earl_rc_stretches {
    size_t count;
    int64_t *location;
    int64_t *from;
    int64_t *to;
} earl_rc_stretches;

/**
 * Walk the critical path back in time (see earl_rc_path_graph).
 *
 * @param graph        the wait states, OpenMP points and locations' starts
 * @param start_event  the event the path ends at (the trace's last)
 * @param out          receives the stretches; free them with
 *                     earl_rc_stretches_free
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (the start event or a location out of
 *         range), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_critical_walk(const earl_rc_path_graph *graph, int64_t start_event,
                                           earl_rc_stretches *out, earl_error *err);
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
 * 0..n_points-1 of the caller's table).  The replay takes the wait states
 * latest first (by their waiting event; a collective instance by its latest
 * member's event, before the point-to-point wait states of that event), so
 * that the cost arriving at each is complete when it is passed on:
 *
 *   - a point-to-point wait state of kind K with its delays (call paths of
 *     the late side), their scale (waiting time / denominator), the
 *     denominator (delays + waiting time of the late side in between) and
 *     the late side's points in between: per source s, the cost arrived at
 *     its waiting point over the denominator scales its delays into the
 *     long-term severity of s, and (plus its own scale when s == K) the
 *     waiting time at each point in between into their costs;
 *   - a collective instance of kind K with its members (the delayer first,
 *     its delays the time of its group interval): per source s, the inputs
 *     the caller's rules name (the cost arrived at each member, the members'
 *     own waiting time) scale each member's delays (costs only) into the
 *     severity of s on the delayer, and their sum the waiting time at the
 *     delayer's points in between into their costs; members the delayer met
 *     one by one since the group point join the sum only after the point
 *     where they were met (Scalasca's scale map).
 *
 * The handle keeps pointers to the arrays it is given (and to the arrays of
 * the maps, not the map structs): they must stay valid and unchanged until
 * earl_rc_replay_free. */
typedef struct earl_rc_replay earl_rc_replay;

/* Inputs of a collective's kind for a source (earl_rc_replay_set_input). */
enum { EARL_RC_INPUT_COST = 1, EARL_RC_INPUT_WAIT = 2 };

/**
 * A long-term replay over synchronisation points; every collective kind
 * takes by default the arriving cost for every source, and the members' own
 * waiting time for the source of its own kind.  Fill it with the add_* and
 * set_input calls, then run it.
 *
 * @param n_sources    the sources (kinds of wait states), 1 to 255
 * @param n_points     the synchronisation points
 * @param point_event  per point, its event
 * @param point_wait   per point, its waiting time
 * @param out          receives the replay, which the caller frees with
 *                     earl_rc_replay_free; NULL on failure
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (sources out of 1..255), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_new(size_t n_sources, size_t n_points,
                                        const int64_t *point_event, const double *point_wait,
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

/**
 * Point-to-point wait states of one kind.
 *
 * @param replay            a replay
 * @param source            their kind
 * @param n                 how many
 * @param event             per wait state, its waiting event
 * @param row               per wait state, its point row (-1: no point, no
 *                          cost arrives)
 * @param delayer_location  per wait state, the delaying location
 * @param scale             per wait state, waiting time / denominator
 * @param denominator       per wait state, delays + waiting time of the late
 *                          side in between
 * @param delays            query k: the delays of wait state k
 * @param between_offset    n + 1 offsets into between_row
 * @param between_row       the point rows in between, per wait state
 * @param err               receives the status and a message on failure (may
 *                          be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a source, row or query out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_add_waits(earl_rc_replay *replay, size_t source, size_t n,
                                              const int64_t *event, const int64_t *row,
                                              const int64_t *delayer_location, const double *scale,
                                              const double *denominator, const earl_rc_map *delays,
                                              const int64_t *between_offset,
                                              const int64_t *between_row, earl_error *err);

/* Collective instances: per instance its kind (a source), the delaying
 * location, its members [member_offset[k], member_offset[k + 1]) (the
 * delayer first) and the delayer's point rows in between, in event order.
 * Per member: its event and point row (-1: none), its waiting time, its
 * delays (query member_delay_query[m] of delays) with their sum, the waiting time of the
 * delayer in between that it shares its scale with (prop), and the event
 * where the delayer met it alone (-1: at the group point). */
typedef struct earl_rc_collectives {
    size_t n;
    const int64_t *kind;
    const int64_t *delayer_location;
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
 * @param collectives  the instances and their members
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a kind, row or query out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_add_collectives(earl_rc_replay *replay,
                                                    const earl_rc_collectives *collectives,
                                                    earl_error *err);

/**
 * Costs known before the replay (they depend on nothing later), added in
 * order.
 *
 * @param replay  a replay
 * @param source  their source
 * @param n       how many
 * @param row     per cost, its point row
 * @param value   per cost, its value
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a source or row out of range), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_rc_replay_add_costs(earl_rc_replay *replay, size_t source, size_t n,
                                              const int64_t *row, const double *value,
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

#ifdef __cplusplus
}
#endif

#endif
