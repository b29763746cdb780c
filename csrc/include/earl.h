/*
 * earl.h - public API of the earlc C core.
 *
 * The core reads an OTF2 archive into an in-memory trace model: the
 * definitions (strings, regions, system tree, locations, groups,
 * communicators, clock) and every event of every location in one columnar
 * store, ordered totally by (timestamp, location, position on the location).
 * Event ids are positions in that order.
 *
 * Conventions, after libotf2's own API, shared by every public header of
 * this folder (docs/c-api.md states them once, with the lifecycle of every
 * handle):
 *   - one prefix per module: earl_trace_*, earl_defs_*, earl_kind_*, ...;
 *   - handles are opaque (earl_trace); the data they own is exposed through
 *     const views (earl_events, earl_defs) so that callers, the Python
 *     bindings first of all, can read the columns without copying;
 *   - every fallible call returns an earl_status and fills an earl_error
 *     (which may be NULL) with a message that names the file and the problem;
 *   - NULL options are the defaults, those of a zeroed options struct.
 *
 * The other subsystems have headers of their own beside this one
 * (earl_states.h, earl_search.h, ...); memory is earl_mem.h.  Nothing here
 * depends on Python.
 */
#ifndef EARL_H
#define EARL_H

#include <stddef.h>
#include <stdint.h>

#include "earl_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status and errors                                                          */
/* ------------------------------------------------------------------------ */

typedef enum earl_status {
    EARL_OK = 0,
    EARL_ERR_NOT_FOUND,    /* the path does not exist */
    EARL_ERR_NOT_ARCHIVE,  /* the path exists but holds no OTF2 archive */
    EARL_ERR_CORRUPT,      /* a definition or event file cannot be decoded */
    EARL_ERR_MISSING_FILE, /* a file the archive needs is absent */
    EARL_ERR_IO,           /* an operating-system level read/write failure */
    EARL_ERR_NOMEM,        /* out of memory */
    EARL_ERR_INVALID,      /* an invalid argument from the caller */
    EARL_ERR_THREAD        /* reserved: a part whose thread cannot be started runs on the
                              caller, so no function returns it */
} earl_status;

#define EARL_ERROR_MESSAGE_MAX 1024

/* Filled by every fallible call; message is a complete sentence naming the
 * file concerned. */
typedef struct earl_error {
    earl_status code;
    char message[EARL_ERROR_MESSAGE_MAX];
} earl_error;

/**
 * The name of a status, for messages.
 *
 * @param status  any value (one outside earl_status reads "unknown status")
 * @return "ok", "not found", "not an OTF2 archive", ...; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_status_name(earl_status status);

/* ------------------------------------------------------------------------ */
/* Event kinds                                                                */
/* ------------------------------------------------------------------------ */

/* One value per OTF2 event record type that earlc keeps.  The numbering is
 * part of the Python API (trace.events.kind) and of saved results: append new
 * kinds before EARL_KIND_COUNT, never renumber. */
typedef enum earl_kind {
    EARL_ENTER = 0,
    EARL_LEAVE,
    EARL_MPI_SEND,
    EARL_MPI_ISEND,
    EARL_MPI_ISEND_COMPLETE,
    EARL_MPI_IRECV_REQUEST,
    EARL_MPI_IRECV,
    EARL_MPI_RECV,
    EARL_MPI_REQUEST_TEST,
    EARL_MPI_REQUEST_CANCELLED,
    EARL_MPI_COLLECTIVE_BEGIN,
    EARL_MPI_COLLECTIVE_END,
    EARL_OMP_FORK,
    EARL_OMP_JOIN,
    EARL_OMP_ACQUIRE_LOCK,
    EARL_OMP_RELEASE_LOCK,
    EARL_OMP_TASK_CREATE,
    EARL_OMP_TASK_SWITCH,
    EARL_OMP_TASK_COMPLETE,
    EARL_THREAD_FORK,
    EARL_THREAD_JOIN,
    EARL_THREAD_TEAM_BEGIN,
    EARL_THREAD_TEAM_END,
    EARL_THREAD_ACQUIRE_LOCK,
    EARL_THREAD_RELEASE_LOCK,
    EARL_THREAD_TASK_CREATE,
    EARL_THREAD_TASK_SWITCH,
    EARL_THREAD_TASK_COMPLETE,
    EARL_THREAD_CREATE,
    EARL_THREAD_BEGIN,
    EARL_THREAD_WAIT,
    EARL_THREAD_END,
    EARL_PROGRAM_BEGIN,
    EARL_PROGRAM_END,
    EARL_METRIC,
    EARL_RMA_WIN_CREATE,
    EARL_RMA_WIN_DESTROY,
    EARL_RMA_COLLECTIVE_BEGIN,
    EARL_RMA_COLLECTIVE_END,
    EARL_RMA_GROUP_SYNC,
    EARL_RMA_REQUEST_LOCK,
    EARL_RMA_ACQUIRE_LOCK,
    EARL_RMA_TRY_LOCK,
    EARL_RMA_RELEASE_LOCK,
    EARL_RMA_SYNC,
    EARL_RMA_WAIT_CHANGE,
    EARL_RMA_PUT,
    EARL_RMA_GET,
    EARL_RMA_ATOMIC,
    EARL_RMA_OP_COMPLETE_BLOCKING,
    EARL_RMA_OP_COMPLETE_NON_BLOCKING,
    EARL_RMA_OP_TEST,
    EARL_RMA_OP_COMPLETE_REMOTE,
    EARL_KIND_COUNT
} earl_kind;

/* Which side table holds an event's payload (see earl_events.payload). */
typedef enum earl_family {
    EARL_FAMILY_NONE = 0, /* no payload beyond region/time (ENTER, LEAVE, ...) */
    EARL_FAMILY_MSG,      /* MPI point-to-point and request records */
    EARL_FAMILY_COLL,     /* MPI_COLLECTIVE_END */
    EARL_FAMILY_SYNC,     /* OpenMP and thread records */
    EARL_FAMILY_PROGRAM,  /* PROGRAM_BEGIN / PROGRAM_END */
    EARL_FAMILY_METRIC,   /* METRIC */
    EARL_FAMILY_RMA       /* RMA_* */
} earl_family;

/**
 * The name of an event kind, as OTF2 names its record without the prefix.
 *
 * @param kind  any value (one outside earl_kind reads "UNKNOWN")
 * @return "ENTER", "MPI_SEND", ...; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_kind_name(earl_kind kind);

/**
 * The side table that holds the payload of events of a kind.
 *
 * @param kind  an event kind
 * @return its family; EARL_FAMILY_NONE for a kind without a side-table row and
 *         for a value outside earl_kind
 * @since 0.1.0
 */
EARL_API earl_family earl_kind_family(earl_kind kind);

/* ------------------------------------------------------------------------ */
/* Basic types                                                                */
/* ------------------------------------------------------------------------ */

typedef int64_t earl_eid;  /* event id: position in the total order; -1: none */
/* An event id stored in 32 bits, where one is kept per event or per row:
 * the per-location index loc_events, the side tables' event columns, the
 * message table's partner, the EARL layer's enterptr.  Half the memory of
 * earl_eid for the largest arrays.  It bounds a trace to EARL_MAX_EVENTS
 * events; opening a larger one fails with EARL_ERR_INVALID. */
typedef uint32_t earl_eid32;
#define EARL_MAX_EVENTS ((size_t)UINT32_MAX)
/* "No event" in an earl_eid32 array that has entries without one
 * (msg.partner, enterptr): ids end at EARL_MAX_EVENTS - 1, so it is never
 * an event. */
#define EARL_EID32_NONE UINT32_MAX
typedef uint64_t earl_time; /* timestamp in ticks of the archive's timer */
typedef int32_t earl_loc;  /* dense location index, 0..n_locations-1; -1: none */

#define EARL_NONE (-1)

/* An earl_eid32 as an earl_eid: EARL_EID32_NONE becomes EARL_NONE. */
static inline earl_eid earl_eid_from32(earl_eid32 e)
{
    return e == EARL_EID32_NONE ? EARL_NONE : (earl_eid)e;
}
#define EARL_UNDEFINED_REF UINT32_MAX /* an undefined OTF2 reference */

/* ------------------------------------------------------------------------ */
/* Definitions                                                                */
/* ------------------------------------------------------------------------ */

/* Definitions are stored in arrays indexed by their OTF2 reference, as the
 * events carry those references.  A slot that the archive never defined has
 * defined == 0.  Strings are owned by the trace; an undefined string reads
 * as "". */

typedef struct earl_string_table {
    uint32_t count;      /* slots, = 1 + largest reference defined */
    const char **text;   /* text[ref], never NULL */
} earl_string_table;

typedef struct earl_region {
    uint8_t defined;
    uint8_t role;          /* OTF2_RegionRole */
    uint8_t paradigm;      /* OTF2_Paradigm */
    uint32_t flags;        /* OTF2_RegionFlag */
    uint32_t name;         /* string refs */
    uint32_t canonical_name;
    uint32_t description;
    uint32_t source_file;
    uint32_t begin_line;
    uint32_t end_line;
} earl_region;

typedef struct earl_system_node {
    uint8_t defined;
    uint32_t name;         /* string ref */
    uint32_t class_name;   /* string ref */
    uint32_t parent;       /* system tree ref or EARL_UNDEFINED_REF */
} earl_system_node;

typedef struct earl_location_group {
    uint8_t defined;
    uint8_t type;          /* OTF2_LocationGroupType */
    uint32_t name;
    uint32_t system_parent;
    uint32_t creator;      /* creating location group or EARL_UNDEFINED_REF */
    int32_t rank;          /* MPI rank in MPI_COMM_WORLD, -1 if not an MPI process */
} earl_location_group;

/* Locations are dense (earl_loc) because every event names one: ordered by
 * location group (in definition order), then by OTF2 location id. */
typedef struct earl_location {
    uint64_t id;             /* OTF2 location reference */
    uint32_t name;           /* string ref */
    uint8_t type;            /* OTF2_LocationType */
    uint32_t group;          /* location group ref */
    uint64_t declared_events;/* number of events the definition announces */
    uint64_t events;         /* events earlc read and kept */
    uint64_t other_records;  /* records read but not kept (counted per type) */
    int32_t thread;          /* index among the CPU threads of its group */
    /* The location's record ends early (its process hung and was ended, was
     * killed, or aborted): the recorder marks it with the location property
     * EARL_PROPERTY_INCOMPLETE, whose string says why.  0 / undefined ref. */
    uint8_t incomplete;
    uint32_t incomplete_reason; /* string ref, EARL_UNDEFINED_REF when complete */
    /* What of the location's events the trace holds (earl_held): all of them,
     * unless the trace is a part of a larger one (earl_reading_read with a
     * location mask, csrc/part/earl_part.h). */
    uint8_t held;
} earl_location;

/* What a trace holds of a location's events.  A trace opened whole holds
 * all; a part of a trace (earlc's distributed and out-of-core analyses)
 * holds all events of its own locations, and of the others only the
 * ghosts: the events its own ones point to (the partners of their
 * messages, the members of their collectives), which another part holds
 * whole. */
typedef enum earl_held {
    EARL_HELD_ALL = 0,
    EARL_HELD_NONE,
    EARL_HELD_GHOSTS,
    /* Ghosts whose message calls were folded (earl_part_fold_calls): the
     * LEAVE of a call holding only message events and followed by another
     * call is left out, and the EARL layer closes the call at the next
     * ENTER of the location instead.  Such a call has no LEAVE. */
    EARL_HELD_GHOSTS_FOLDED
} earl_held;

typedef struct earl_group {
    uint8_t defined;
    uint8_t type;            /* OTF2_GroupType */
    uint8_t paradigm;        /* OTF2_Paradigm */
    uint32_t flags;
    uint32_t name;
    uint32_t n_members;
    const uint64_t *members; /* as in the archive: location ids or ranks */
} earl_group;

/* A communicator with its members resolved: member_locations[r] is the
 * location of rank r in this communicator (-1 when it cannot be resolved). */
typedef struct earl_comm {
    uint8_t defined;
    uint8_t is_inter;        /* an OTF2 InterComm; peers are not resolved */
    uint8_t paradigm;        /* paradigm of its group */
    uint32_t name;
    uint32_t group;          /* group ref (group A for an inter-communicator) */
    uint32_t parent;         /* comm ref or EARL_UNDEFINED_REF */
    uint32_t flags;
    uint32_t size;
    const earl_loc *member_locations;
    uint8_t is_self;         /* a COMM_SELF group: rank 0 is the caller */
} earl_comm;

typedef struct earl_clock {
    uint64_t resolution;     /* ticks per second */
    /* (an archive without ClockProperties gets EARL_FALLBACK_RESOLUTION, its
     * first event as global_offset and its events' span as length, and an
     * EARL_WARN_CLOCK_PROPERTIES_MISSING warning) */
    uint64_t global_offset;  /* timestamp of the start of the trace */
    uint64_t length;         /* ticks covered by the trace */
    uint64_t realtime;       /* OTF2 realtime timestamp (ns since epoch) or 0 */
} earl_clock;

/* Ticks per second assumed when the definitions give none: nanoseconds. */
#define EARL_FALLBACK_RESOLUTION UINT64_C(1000000000)

typedef struct earl_metric_member {
    uint8_t defined;
    uint8_t value_type;      /* OTF2_Type */
    uint8_t metric_type, mode, base;
    int64_t exponent;
    uint32_t name, description, unit;
} earl_metric_member;

/* A metric class or instance: the members its METRIC records carry. */
typedef struct earl_metric_class {
    uint8_t defined;
    uint8_t n_members;
    const uint32_t *members;
} earl_metric_class;

/* A location property with a string value (OTF2 LocationProperty), e.g.
 * EARL_PROPERTY_INCOMPLETE or EARL_PROPERTY_CALL_SITES. */
typedef struct earl_location_property {
    earl_loc location;
    uint32_t name;           /* string refs */
    uint32_t value;
} earl_location_property;

typedef struct earl_defs {
    earl_string_table strings;
    uint32_t n_regions;            const earl_region *regions;
    uint32_t n_system_nodes;       const earl_system_node *system_nodes;
    uint32_t n_location_groups;    const earl_location_group *location_groups;
    uint32_t n_locations;          const earl_location *locations;
    uint32_t n_groups;             const earl_group *groups;
    uint32_t n_comms;              const earl_comm *comms;
    uint32_t n_metric_members;     const earl_metric_member *metric_members;
    uint32_t n_metric_classes;     const earl_metric_class *metric_classes;
    uint32_t n_paradigms;          const uint32_t *paradigm_names; /* string ref per OTF2_Paradigm */
    uint32_t n_location_properties; const earl_location_property *location_properties;
    earl_clock clock;
    const char *creator;           /* e.g. "Score-P 7.1" */
    uint8_t version[3];            /* OTF2 version of the archive */
    uint32_t n_defs_read;          /* global definition records read */
} earl_defs;

/**
 * The dense index of a location (O(log locations)).
 *
 * @param defs         the definitions of a trace (earl_trace_defs)
 * @param location_id  an OTF2 location id
 * @return its earl_loc, or -1 when the archive does not define it
 * @since 0.1.0
 */
EARL_API earl_loc earl_defs_location_index(const earl_defs *defs, uint64_t location_id);

/**
 * The name of a region, for messages.
 *
 * @param defs    the definitions of a trace (earl_trace_defs)
 * @param region  a region ref
 * @return its name, owned by the definitions; "?" when the archive does not
 *         define the region or its name
 * @since 0.1.0
 */
EARL_API const char *earl_defs_region_name(const earl_defs *defs, uint32_t region);

/* ------------------------------------------------------------------------ */
/* Events: the columnar store                                                 */
/* ------------------------------------------------------------------------ */

/* Point-to-point payload.  For completions, tests and cancels the request
 * start's fields are copied in, so every row describes its whole message. */
typedef struct earl_msg_table {
    size_t count;
    earl_eid32 *event;   /* the event the row belongs to (32 bits, as loc_events) */
    earl_loc *peer;      /* global location of the partner, -1 unresolved */
    uint32_t *peer_rank; /* partner's rank within comm as recorded */
    uint32_t *comm;      /* communicator ref */
    uint32_t *tag;
    uint64_t *bytes;
    uint64_t *request;   /* request id, 0 for blocking calls */
    /* The other half of a non-blocking request (MPI_ISEND <->
     * MPI_ISEND_COMPLETE, MPI_IRECV_REQUEST <-> MPI_IRECV; a test or cancel
     * -> its request's start), EARL_EID32_NONE for none.  32 bits, as the
     * event column; read it with earl_msg_partner. */
    earl_eid32 *partner;
    /* What a receive asked for (MPI_RECV, MPI_IRECV_REQUEST, copied to the
     * MPI_IRECV completion): the source as a rank in comm and the tag, or
     * EARL_REQUESTED_ANY for MPI_ANY_SOURCE / MPI_ANY_TAG, or
     * EARL_REQUESTED_UNKNOWN when the trace does not say (every other row).
     * A trace without the EARL_ATTR_REQUESTED_* attributes, such as
     * Score-P's, says it for no row: both columns are NULL then.  Read them
     * with earl_msg_requested_source / earl_msg_requested_tag. */
    int32_t *requested_source;
    int32_t *requested_tag;
} earl_msg_table;

#define EARL_REQUESTED_ANY (-1)
#define EARL_REQUESTED_UNKNOWN (-2)

/* The other half of the request of message row `row`, -1 for none. */
static inline earl_eid earl_msg_partner(const earl_msg_table *m, size_t row)
{
    return earl_eid_from32(m->partner[row]);
}

/* What the receive of message row `row` asked for (see earl_msg_table). */
static inline int32_t earl_msg_requested_source(const earl_msg_table *m, size_t row)
{
    return m->requested_source ? m->requested_source[row] : EARL_REQUESTED_UNKNOWN;
}
static inline int32_t earl_msg_requested_tag(const earl_msg_table *m, size_t row)
{
    return m->requested_tag ? m->requested_tag[row] : EARL_REQUESTED_UNKNOWN;
}

/* OTF2 attribute names that carry what Score-P leaves out (written by
 * `earlc record`, docs/record.md).  INT32 values; EARL_REQUESTED_ANY for the
 * wildcards.  The requested source and tag ride on MPI_RECV and
 * MPI_IRECV_REQUEST records (and on the ENTER of MPI_Probe / MPI_Iprobe);
 * the request index on the completion records (MPI_ISEND_COMPLETE,
 * MPI_IRECV, MPI_REQUEST_CANCELLED) inside MPI_Waitany, MPI_Waitsome,
 * MPI_Testany and MPI_Testsome: the position of the completed request in the
 * array the program passed. */
#define EARL_ATTR_REQUESTED_SOURCE "earlc::requested_source"
#define EARL_ATTR_REQUESTED_TAG "earlc::requested_tag"
#define EARL_ATTR_REQUEST_INDEX "earlc::request_index"
/* Location property (STRING) marking a location whose record ends early. */
#define EARL_PROPERTY_INCOMPLETE "earlc::incomplete"
/* Location property (STRING): where in the program each call still open at
 * the end of an incomplete location was made, innermost last, "; "
 * between calls: "MPI_Recv from main (prog.c:31)". */
#define EARL_PROPERTY_CALL_SITES "earlc::call_sites"

typedef struct earl_coll_table {
    size_t count;
    earl_eid32 *event;
    uint8_t *op;         /* OTF2_CollectiveOp */
    uint32_t *comm;
    uint32_t *root_rank; /* EARL_UNDEFINED_REF for rootless operations */
    earl_loc *root;      /* location of the root, -1 when none */
    uint64_t *sent;
    uint64_t *received;
    /* a part of a trace (csrc/part/earl_part.h): per row, for a ghost
     * location's row, earl_ghost.seq and .members; members 0 for an own
     * location's row, which the EARL layer counts itself.  NULL when no
     * ghost row carries them (a whole trace). */
    uint32_t *part_seq;
    uint32_t *part_members;
} earl_coll_table;

/* Threading records.  Meaning of the generic columns per kind:
 *   *_FORK:          count = requested threads
 *   *_ACQUIRE/RELEASE_LOCK: id = lock id, count = acquisition order
 *   OMP_TASK_*:      id = task id
 *   THREAD_TASK_*:   comm = team, id = creating thread, count = generation
 *   THREAD_TEAM_*:   comm = team
 *   THREAD_CREATE/BEGIN/WAIT/END: comm = contingent, id = sequence count
 * model is the OTF2 paradigm (OpenMP for the OMP_* kinds). */
typedef struct earl_sync_table {
    size_t count;
    earl_eid32 *event;
    uint8_t *model;
    uint32_t *comm;
    uint64_t *id;
    uint32_t *count_;
} earl_sync_table;

typedef struct earl_program_table {
    size_t count;
    earl_eid32 *event;
    uint32_t *name;      /* PROGRAM_BEGIN: program name string ref */
    int64_t *exit_status;/* PROGRAM_END */
} earl_program_table;

/* METRIC: values[first .. first + n) with their OTF2_Type in value_types;
 * the raw 64 bits of OTF2_MetricValue (int64, uint64 or double). */
typedef struct earl_metric_table {
    size_t count;
    earl_eid32 *event;
    uint32_t *metric;    /* metric class or instance ref */
    uint32_t *first;
    uint8_t *n;
    size_t n_values;
    uint64_t *values;
    uint8_t *value_types;
} earl_metric_table;

typedef struct earl_rma_table {
    size_t count;
    earl_eid32 *event;
    uint32_t *win;
    uint32_t *remote;    /* target rank within the window, or group/root */
    uint64_t *bytes;
    uint64_t *matching;  /* matching id, or lock id for lock records */
} earl_rma_table;

/* The events in total order.  Core columns, one entry per event:
 *   time[i]      timestamp in ticks (clamped to be monotone per location;
 *                every clamp is a counted warning)
 *   location[i]  dense location index
 *   kind[i]      earl_kind
 *   payload[i]   what the kind refers to, read through the typed view that
 *                fits the kind (an event has a region or a row, never both):
 *     region[i]  ENTER and LEAVE: the region ref (EARL_UNDEFINED_REF when
 *                the record names none)
 *     ref[i]     every other kind: the row in the side table of the kind's
 *                family, -1 if none (EARL_UNDEFINED_REF as int32)
 *   region and ref point to payload: region[i] of another kind is a row, and
 *   ref[i] of an ENTER or LEAVE a region; earl_event_region and earl_event_row
 *   give the value of either for any kind.
 * Per location: the event ids of location l are
 *   loc_events[loc_start[l] .. loc_start[l+1]) in their recorded order
 *   (earl_eid32: at most EARL_MAX_EVENTS events in a trace). */
typedef struct earl_events {
    size_t count;
    const earl_time *time;
    const earl_loc *location;
    const uint8_t *kind;
    const uint32_t *payload;
    const uint32_t *region;       /* payload, for ENTER and LEAVE */
    const int32_t *ref;           /* payload, for the other kinds */
    const size_t *loc_start;      /* n_locations + 1 entries */
    const earl_eid32 *loc_events;
    earl_msg_table msg;
    earl_coll_table coll;
    earl_sync_table sync;
    earl_program_table program;
    earl_metric_table metric;
    earl_rma_table rma;
    uint64_t kind_counts[EARL_KIND_COUNT];
} earl_events;

/* Does an event of this kind refer to a region (earl_events.region) rather
 * than to a side-table row (earl_events.ref)? */
static inline int earl_kind_has_region(uint8_t kind)
{
    return kind == EARL_ENTER || kind == EARL_LEAVE;
}

/* Region ref of event i: its own for an ENTER or LEAVE, EARL_UNDEFINED_REF
 * for every other kind. */
static inline uint32_t earl_event_region(const earl_events *ev, size_t i)
{
    return earl_kind_has_region(ev->kind[i]) ? ev->region[i] : EARL_UNDEFINED_REF;
}

/* Side-table row of event i (in its family's table), -1 for an ENTER, a
 * LEAVE, and every kind without a row. */
static inline int32_t earl_event_row(const earl_events *ev, size_t i)
{
    return earl_kind_has_region(ev->kind[i]) ? EARL_NONE : ev->ref[i];
}

/* ------------------------------------------------------------------------ */
/* Warnings: inconsistencies that do not stop the reading                     */
/* ------------------------------------------------------------------------ */

typedef enum earl_warning_code {
    EARL_WARN_LEAVE_WITHOUT_ENTER = 0, /* a LEAVE with an empty region stack */
    EARL_WARN_LEAVE_MISMATCH,     /* a LEAVE of another region than the open one */
    EARL_WARN_REGION_NOT_LEFT,    /* a region still open at the end of the location */
    EARL_WARN_TIME_BACKWARDS,     /* a timestamp smaller than its predecessor's */
    EARL_WARN_REQUEST_NOT_COMPLETED, /* a request started but never completed */
    EARL_WARN_REQUEST_UNKNOWN,    /* a completion/test/cancel of an unknown request */
    EARL_WARN_PEER_UNRESOLVED,    /* a rank that the communicator cannot map */
    EARL_WARN_UNDEFINED_REFERENCE,/* an event names an undefined region/comm */
    EARL_WARN_OTHER_RECORD,       /* a record type earlc does not keep */
    EARL_WARN_LOCATION_INCOMPLETE,/* the location's record ends early (EARL_PROPERTY_INCOMPLETE) */
    EARL_WARN_EVENT_COUNT_MISMATCH, /* a location holds another number of records than its
                                     * definition announces; all it holds are read */
    EARL_WARN_CLOCK_PROPERTIES_MISSING, /* no timer resolution: EARL_FALLBACK_RESOLUTION, the
                                         * first event as the start (location -1) */
    EARL_WARN_EVENT_FILE_CUT_SHORT, /* earl_open_options.salvage kept the complete records of
                                     * an event file that ends inside a record */
    EARL_WARNING_CODE_COUNT
} earl_warning_code;

/* One detailed warning.  position is the 0-based position of the event on its
 * location; event the event id in the total order (-1 if not an event). */
typedef struct earl_warning {
    earl_warning_code code;
    earl_loc location;
    uint64_t position;
    earl_eid event;
    char detail[96];
} earl_warning;

/* At most this many warnings are kept in detail per code; all are counted. */
#define EARL_WARNING_DETAIL_MAX 100

typedef struct earl_warnings {
    uint64_t counts[EARL_WARNING_CODE_COUNT];
    size_t n_details;
    const earl_warning *details;
    /* records not kept, by OTF2 record type name */
    size_t n_other_types;
    const char *const *other_type_names;
    const uint64_t *other_type_counts;
} earl_warnings;

/**
 * The name of a warning code, as the reports show it.
 *
 * @param code  any value (one outside earl_warning_code reads "unknown")
 * @return "leave_without_enter", "time_backwards", ...; a static string
 * @since 0.1.0
 */
EARL_API const char *earl_warning_code_name(earl_warning_code code);

/* ------------------------------------------------------------------------ */
/* The trace                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct earl_trace earl_trace;

/* Progress of long work: done out of total units in the named phase. May be
 * called from any reading thread, never concurrently. */
typedef void (*earl_progress_fn)(void *user_data, const char *phase,
                                 uint64_t done, uint64_t total);

typedef struct earl_open_options {
    int threads;             /* reading threads; 0: one per core */
    earl_progress_fn progress;
    void *progress_data;
    /* Nonzero: an event file cut short (a crashed run, a full disk) keeps
     * every record that lies whole before its end, with an
     * EARL_WARN_EVENT_FILE_CUT_SHORT warning saying how much was lost; an
     * empty one keeps none.  0 (the default): such a file fails the open
     * with EARL_ERR_CORRUPT.  A file damaged inside fails either way. */
    int salvage;
    /* The locations to read, one byte per dense location index (non-zero:
     * read); NULL reads all.  The others are defined but hold no events
     * (earl_location.held == EARL_HELD_NONE). */
    const uint8_t *locations;
} earl_open_options;

/**
 * Open an archive: read its definitions and every event of every location
 * into the columnar store, in the total order.  The locations are read by
 * options->threads threads, each with a libotf2 reader of its own; the trace
 * does not depend on their number.
 *
 * @param path     the anchor file (NAME.otf2), or the folder that holds it:
 *                 its traces.otf2, else its only *.otf2 file
 * @param options  reading threads, progress, salvage, the locations to read;
 *                 NULL: the defaults (those of a zeroed earl_open_options: one
 *                 thread per core, no progress, no salvage, every location)
 * @param out      receives the trace, which the caller closes with
 *                 earl_trace_close; NULL on failure
 * @param err      receives the status and a message naming the file and the
 *                 problem on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_NOT_FOUND (no such path), EARL_ERR_NOT_ARCHIVE,
 *         EARL_ERR_MISSING_FILE (a definition or event file), EARL_ERR_CORRUPT
 *         (a file that cannot be decoded, or is cut short without
 *         options->salvage), EARL_ERR_IO, EARL_ERR_NOMEM, or EARL_ERR_INVALID
 *         (no path or no out, more than EARL_MAX_EVENTS events)
 * @since 0.1.0
 */
EARL_API earl_status earl_trace_open(const char *path, const earl_open_options *options,
                                     earl_trace **out, earl_error *err);

/**
 * Close a trace and free everything it holds (the views it gave out
 * included).  The handles built on it (earl_states, earl_hb, ...) must be
 * freed first.
 *
 * @param trace  a trace of earl_trace_open, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_trace_close(earl_trace *trace);

/* The stages of earl_trace_open, for a caller that must act between them
 * (the analysis of a trace in parts, earl_part.h, plans its parts from the
 * definitions, then adds other parts' ghost events before the order is
 * made):
 *
 *   earl_reading_open    find the anchor, read the global definitions;
 *   earl_reading_read    read the events of the locations in the mask (NULL:
 *                        all) into per-location buffers, check their counts;
 *   earl_reading_finish  merge the buffers into the total order: the trace.
 *                        It consumes the reading, also on failure.
 *
 * earl_reading_free drops a reading at any stage.  Not thread-safe on one
 * reading. */
typedef struct earl_reading earl_reading;

/**
 * The first stage of earl_trace_open: find the anchor and read the global
 * definitions.
 *
 * @param path     as for earl_trace_open
 * @param options  as for earl_trace_open (its locations member is not used:
 *                 earl_reading_read takes the mask); NULL: the defaults
 * @param out      receives the reading, which earl_reading_finish consumes or
 *                 earl_reading_free drops; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return as earl_trace_open for the anchor and the definitions
 * @since 0.1.0
 */
EARL_API earl_status earl_reading_open(const char *path, const earl_open_options *options,
                                       earl_reading **out, earl_error *err);

/**
 * The definitions a reading has read.
 *
 * @param reading  a reading of earl_reading_open
 * @return a view owned by the reading (then by its trace)
 * @since 0.1.0
 */
EARL_API const earl_defs *earl_reading_defs(const earl_reading *reading);

/**
 * The anchor file of a reading.
 *
 * @param reading  a reading of earl_reading_open
 * @return the path, owned by the reading
 * @since 0.1.0
 */
EARL_API const char *earl_reading_path(const earl_reading *reading);

/**
 * The second stage: read the events of some locations into per-location
 * buffers and check their counts.  The locations not read are defined but
 * hold no events (earl_location.held == EARL_HELD_NONE).
 *
 * @param reading    a reading of earl_reading_open, its events not read yet
 * @param locations  one byte per dense location index (non-zero: read); NULL:
 *                   all
 * @param err        receives the status and a message on failure (may be NULL)
 * @return as earl_trace_open for the events; EARL_ERR_INVALID for no reading
 *         or one whose events were read already
 * @since 0.1.0
 */
EARL_API earl_status earl_reading_read(earl_reading *reading, const uint8_t *locations,
                                       earl_error *err);

/**
 * After the read: the timestamps of a location as read, in its order.  Parts
 * analysed one after another spill them (the whole trace's event ids are
 * counts of them).
 *
 * @param reading  a reading whose events were read, not finished yet
 * @param l        a dense location index
 * @param n        receives the number of timestamps (0 for a location not read,
 *                 or before the read)
 * @return the timestamps, owned by the reading, valid until it is finished or
 *         freed; NULL for a location not read, or before the read
 * @since 0.1.0
 */
EARL_API const earl_time *earl_reading_times(const earl_reading *reading, size_t l, size_t *n);

/**
 * The last stage: merge the buffers into the total order.  It consumes the
 * reading, also on failure.
 *
 * @param reading  a reading whose events were read
 * @param out      receives the trace, which the caller closes with
 *                 earl_trace_close; NULL on failure
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_NOMEM, or EARL_ERR_INVALID (no out, events not
 *         read, more than EARL_MAX_EVENTS events)
 * @since 0.1.0
 */
EARL_API earl_status earl_reading_finish(earl_reading *reading, earl_trace **out,
                                         earl_error *err);

/**
 * Drop a reading at any stage.
 *
 * @param reading  a reading, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_reading_free(earl_reading *reading);

/**
 * The anchor file the trace was read from.
 *
 * @param trace  an open trace
 * @return the path, owned by the trace
 * @since 0.1.0
 */
EARL_API const char *earl_trace_path(const earl_trace *trace);

/**
 * The definitions of a trace.
 *
 * @param trace  an open trace
 * @return a view owned by the trace, valid until earl_trace_close
 * @since 0.1.0
 */
EARL_API const earl_defs *earl_trace_defs(const earl_trace *trace);

/**
 * The events of a trace: the core columns in the total order and the side
 * tables.
 *
 * @param trace  an open trace
 * @return a view owned by the trace, valid until earl_trace_close
 * @since 0.1.0
 */
EARL_API const earl_events *earl_trace_events(const earl_trace *trace);

/**
 * The warnings of the reading: counts per code, the first details of each.
 *
 * @param trace  an open trace
 * @return a view owned by the trace, valid until earl_trace_close
 * @since 0.1.0
 */
EARL_API const earl_warnings *earl_trace_warnings(const earl_trace *trace);

/**
 * Heap bytes the event store holds: core columns and side tables.
 *
 * @param trace       an open trace
 * @param core_bytes  receives the bytes of the core columns alone (may be
 *                    NULL)
 * @return the bytes of the whole store
 * @since 0.1.0
 */
EARL_API size_t earl_trace_event_bytes(const earl_trace *trace, size_t *core_bytes);

/**
 * The text of a string definition.
 *
 * @param trace  an open trace
 * @param ref    an OTF2 string reference
 * @return the text, owned by the trace; "" for an undefined reference
 * @since 0.1.0
 */
EARL_API const char *earl_trace_string(const earl_trace *trace, uint32_t ref);

#ifdef __cplusplus
}
#endif
#endif /* EARL_H */
