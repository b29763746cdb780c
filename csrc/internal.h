/*
 * internal.h - the layout of the trace model behind the opaque earl_trace,
 * shared by the files that build it: defs.c (definitions), reader.c (events
 * of one location), order.c (the total order), warnings.c and trace.c (the
 * orchestration).  The archive's files (paths, the anchor, the framing of
 * event files) are archive.h's, below all of these.  Not part of the public
 * API.
 */
#ifndef EARL_INTERNAL_H
#define EARL_INTERNAL_H

#include <otf2/otf2.h>

#include "archive.h"
#include "earl.h"
#include "base/colset.h"
#include "base/compiler.h"
#include "base/details.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/mem.h"
#include "base/otf2_errors.h"
#include "base/parts.h"
#include "base/sorted.h"
#include "base/text.h"

/* ---- definitions --------------------------------------------------------- */

/* Storage behind the public earl_defs view.  Arrays indexed by OTF2 ref grow
 * to the largest ref seen; caps track their capacity. */
typedef struct defs_store {
    earl_defs view;            /* the public view, filled by defs_finish */

    char **strings; size_t n_strings, cap_strings;
    earl_region *regions; size_t n_regions, cap_regions;
    earl_system_node *nodes; size_t n_nodes, cap_nodes;
    earl_location_group *lgroups; size_t n_lgroups, cap_lgroups;
    earl_location *locations; size_t n_locations, cap_locations;
    earl_group *groups; size_t n_groups, cap_groups;
    earl_comm *comms; size_t n_comms, cap_comms;
    earl_metric_member *mmembers; size_t n_mmembers, cap_mmembers;
    earl_metric_class *mclasses; size_t n_mclasses, cap_mclasses;
    uint32_t *paradigm_names; size_t n_paradigms, cap_paradigms;

    /* definition order of location groups, for the dense location order */
    uint32_t *lgroup_order; size_t n_lgroup_order, cap_lgroup_order;
    /* (OTF2 location id, dense index) sorted by id, for lookups */
    uint64_t *loc_ids_sorted; earl_loc *loc_index_sorted;

    /* OTF2 refs + 1 of the attributes `earlc record` writes (0: absent) */
    uint32_t attr_requested_source, attr_requested_tag;
    /* string-valued location properties, by OTF2 location id until
     * defs_finish turns them into view.location_properties */
    struct property_mark { uint64_t id; uint32_t name, value; } *props;
    size_t n_props, cap_props;
    earl_location_property *location_properties;

    uint32_t n_defs_read;
    char *creator;
    int failed;                /* out of memory inside a callback */
    /* no ClockProperties (or a zero resolution): view.clock holds the
     * fallback, 1 ns a tick, and trace.c sets its offset and length from the
     * events (a clock_properties_missing warning) */
    int clock_missing;
} defs_store;

/* Does the trace name the attributes of what a receive asked for (the
 * message table's requested_source / requested_tag columns)? */
static inline int defs_have_requested(const defs_store *store)
{
    return store->attr_requested_source || store->attr_requested_tag;
}

/* Read the global definitions of an open reader into store. */
earl_status defs_read(defs_store *store, OTF2_Reader *reader, const char *anchor,
                      earl_error *err);
void defs_free(defs_store *store);

/* ---- side tables ---------------------------------------------------------- */

/* Column sets of the side tables, for the generic colset helpers. */
/* with_requested: the requested_source / requested_tag columns too (only
 * traces whose definitions name those attributes have them). */
void msg_table_columns(earl_msg_table *t, int with_requested, earl_colset *s);
void coll_table_columns(earl_coll_table *t, earl_colset *s);
void sync_table_columns(earl_sync_table *t, earl_colset *s);
void program_table_columns(earl_program_table *t, earl_colset *s);
void metric_table_columns(earl_metric_table *t, earl_colset *s); /* rows only */
void rma_table_columns(earl_rma_table *t, earl_colset *s);

#define N_FAMILIES 7 /* earl_family values */

/* All side tables of a store, addressable by family. */
typedef struct side_tables {
    earl_msg_table msg;
    earl_coll_table coll;
    earl_sync_table sync;
    earl_program_table program;
    earl_metric_table metric;
    earl_rma_table rma;
    size_t cap[N_FAMILIES];
    size_t cap_values;         /* capacity of metric.values / value_types */
    /* msg has the requested_source / requested_tag columns: the trace's
     * definitions name EARL_ATTR_REQUESTED_SOURCE or _TAG.  Without them
     * every row would say EARL_REQUESTED_UNKNOWN, so the columns stay NULL
     * (8 bytes per message row less). */
    int msg_requested;
} side_tables;

void side_tables_columns(side_tables *t, earl_family family, earl_colset *s);
/* The columns of a reading buffer's table: all but the event column (the
 * event is the row's owner, which the buffer's payload column names; the
 * merge writes the trace's event column). */
void side_tables_row_columns(side_tables *t, earl_family family, earl_colset *s);
size_t *side_tables_count(side_tables *t, earl_family family);
void side_tables_free(side_tables *t);
/* The same, never keeping the blocks (a reading buffer's tables, given back
 * with earl_mem_discard while the merge copied them). */
void side_tables_free_unkept(side_tables *t);

/* ---- warnings ------------------------------------------------------------- */

/* Warnings collected by one reader (one location) or for the whole trace. */
typedef struct warning_list {
    uint64_t counts[EARL_WARNING_CODE_COUNT];
    earl_warning *items; size_t n, cap;
} warning_list;

/* Count a warning and keep its detail while fewer than
 * EARL_WARNING_DETAIL_MAX of its code are kept. */
void warning_add(warning_list *w, earl_warning_code code, earl_loc loc,
                 uint64_t position, const char *fmt, ...) EARL_PRINTF(5, 6);
void warning_list_free(warning_list *w);

/* ---- events of one location, as read --------------------------------------- */

/* Record types that earlc reads but does not keep, counted per type. */
typedef enum other_record {
    OTHER_BUFFER_FLUSH, OTHER_MEASUREMENT_ON_OFF, OTHER_PARAMETER_STRING,
    OTHER_PARAMETER_INT, OTHER_PARAMETER_UNSIGNED_INT, OTHER_CALLING_CONTEXT_ENTER,
    OTHER_CALLING_CONTEXT_LEAVE, OTHER_CALLING_CONTEXT_SAMPLE, OTHER_IO,
    OTHER_NONBLOCKING_COLLECTIVE_REQUEST, OTHER_NONBLOCKING_COLLECTIVE_COMPLETE,
    OTHER_COMM_CREATE, OTHER_COMM_DESTROY, OTHER_UNKNOWN,
    OTHER_RECORD_COUNT
} other_record;

extern const char *const other_record_names[OTHER_RECORD_COUNT];

/* Reading threads write their own location's buffer on every event, so
 * buffers start on a cache line of their own (allocate arrays of them with
 * loc_events_alloc): two threads writing neighbours in one line would make
 * the line bounce between cores. */
#define EARL_CACHE_LINE 64

/* The core columns of all reading buffers: one block per column, sized by
 * the event counts the definitions announce, location after location.  One
 * block each rather than one per location: the merge gives back the pages
 * it has consumed of many small locations as well as of a few large ones,
 * and a later open reuses the kept columns of an earlier trace, which have
 * the same sizes. */
typedef struct reading_columns {
    earl_time *time;
    uint8_t *kind;
    uint32_t *payload;
    size_t slots;
} reading_columns;

/* What every reading thread shares: the archive, its definitions and how to
 * read them. */
typedef struct read_plan {
    const char *anchor;
    const defs_store *defs;
    const uint64_t *file_bytes; /* event file size by dense location */
    /* a location whose event file is cut short keeps its complete records
     * (an event_file_cut_short warning) instead of failing the open */
    int salvage;
    void (*on_progress)(void *, uint64_t);
    void *progress_data;
} read_plan;

/* The records location l is expected to hold, to reserve for: what its
 * definition announces, within what its event file can hold (a record
 * takes two bytes at least) and within reason, since counts may be wrong. */
size_t reading_slots(const read_plan *plan, size_t l);

/* Blocks of reading_columns for the plan's locations (first_slot[l]: where
 * location l's slots start); 0, or -1 when they cannot be had (out of
 * memory: the buffers then grow on their own). */
int reading_columns_alloc(reading_columns *c, const read_plan *plan, size_t *first_slot);
void reading_columns_free(reading_columns *c);

typedef struct loc_events {
    _Alignas(EARL_CACHE_LINE) earl_loc loc;
    const defs_store *defs;
    size_t n, cap;             /* events kept */
    /* the core columns are slots of shared (from first_slot on, cap of them)
     * until they outgrow them, then blocks of their own (shared NULL) */
    const reading_columns *shared;
    size_t first_slot;
    earl_time *time;
    uint8_t *kind;
    /* one column for both: the region ref of ENTER/LEAVE, the local row in
     * the side table for kinds with a payload family, EARL_UNDEFINED_REF
     * otherwise; order.c turns local rows into the trace's rows */
    uint32_t *payload;
    side_tables tables;        /* without event columns (side_tables_row_columns) */

    earl_time last_time;
    uint32_t *stack; size_t depth, cap_stack;   /* open regions */
    earl_map requests;         /* pending requests: id -> position of the start */
    uint64_t other[OTHER_RECORD_COUNT];
    warning_list warnings;
    int nomem;
    int salvaged;              /* its event file was cut short (read_plan.salvage) */
} loc_events;

/* Read all events of the given locations through reader (whose event files
 * are open), one loc_events each. */
earl_status read_locations(OTF2_Reader *reader, const read_plan *plan, loc_events *bufs,
                           size_t n, earl_error *err);
/* Place b's core columns in its slots of shared (cap: how many). */
void loc_events_use_shared(loc_events *b, const reading_columns *shared, size_t first_slot,
                           size_t cap);
void loc_events_free(loc_events *b);
/* A zeroed array of n buffers, cache-line aligned; free() it. */
loc_events *loc_events_alloc(size_t n);

/* ---- the trace ------------------------------------------------------------ */

struct earl_trace {
    char *anchor;
    defs_store defs;
    earl_events view;          /* public view of the columns below */
    earl_time *time;
    earl_loc *location;
    uint8_t *kind;
    uint32_t *payload;         /* earl_events.payload (and its region, ref) */
    size_t *loc_start;
    earl_eid32 *loc_events;
    side_tables tables;
    warning_list warnings;
    /* other record counts by type */
    const char *other_names[OTHER_RECORD_COUNT];
    uint64_t other_counts[OTHER_RECORD_COUNT];
    earl_warnings warnings_view;
};

/* Free the event store of tr (core columns, earl_mem blocks, and side
 * tables) that order_events built. */
void trace_store_free(earl_trace *tr);

/* The per-location buffers of a reading (earl_reading_read), for adding
 * ghost events to them (csrc/part/). */
loc_events *reading_buffers(earl_reading *reading, const defs_store **defs, size_t *n_locs);
/* A ghost collective end added at `index` of location loc's buffer carries
 * (seq, members) (earl_ghost): the finish puts them in the trace's
 * collective table (earl_coll_table.part_seq, .part_members).  -1 when out
 * of memory. */
int reading_note_ghost_coll(earl_reading *reading, earl_loc loc, size_t index, uint32_t seq,
                            uint32_t members);

/* Merge the per-location buffers into the trace's total order, in n_threads
 * slices of the time axis merged concurrently (the result does not depend on
 * n_threads). */
earl_status order_events(earl_trace *trace, loc_events *bufs, size_t n_locs, int n_threads,
                         earl_error *err);

#endif
