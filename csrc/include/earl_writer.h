/*
 * earl_writer.h - write OTF2 trace archives (the other direction of earl.h).
 *
 * earl_writer is a thin, checked layer over libotf2's writer.  It exists so
 * that tests, benchmarks and users can produce honest OTF2 archives (the kind
 * Score-P writes) from a few lines of description, and so that the reader can
 * be tested on traces whose every field is known.
 *
 * Model:
 *   - definitions (strings, system tree, location groups, locations, regions,
 *     groups, communicators, thread teams, RMA windows, metrics) may be made at
 *     any time before close; each call returns the OTF2 reference (or, for a
 *     location, a dense writer-local index, earl_loc) that events then use;
 *   - events are streamed straight to libotf2's event writer of the location;
 *     the writer buffers nothing itself and libotf2 flushes full chunks to
 *     disk when the writer's memory budget is used up, so memory stays bounded
 *     however long the trace;
 *   - close writes the global definitions (with the number of events of every
 *     location and the clock properties computed from the events) and only
 *     then moves the archive into place: the archive is built in a sibling
 *     folder DIR.tmp-XXXXXX and renamed to DIR on success.  A failed close,
 *     an abort or a crash never leaves an archive at DIR that looks complete.
 *
 * Communicators follow Score-P's encoding: one COMM_LOCATIONS group of
 * paradigm MPI lists the location of every rank (index = rank in
 * MPI_COMM_WORLD); every communicator's COMM_GROUP lists its members as
 * indices into that group (world ranks).  Thread teams likewise use one
 * COMM_LOCATIONS group per threading paradigm and a COMM_GROUP per team.
 * MPI peers and roots in events are ranks within the communicator, as OTF2
 * stores them.
 *
 * Enumerated fields take libotf2's values (OTF2_RegionRole, OTF2_Paradigm,
 * OTF2_LocationType, ...) as uint8_t so that this header needs no OTF2
 * include.  An earl_writer is used by one thread at a time.
 */
#ifndef EARL_WRITER_H
#define EARL_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earl_writer earl_writer;

/* Flags of earl_writer_open. */
enum {
    /* Replace an existing archive at DIR (only a folder that holds NAME.otf2
     * or is empty is ever replaced, never other data). */
    EARL_WRITER_OVERWRITE = 1u << 0
};

/* Let the writer choose a location's OTF2 id (earl_writer_location). */
#define EARL_WRITER_AUTO_ID UINT64_MAX

/**
 * Create a writer for the archive DIR/NAME.otf2, built in a sibling folder
 * DIR.tmp-XXXXXX until earl_writer_close moves it to DIR; missing parent
 * folders are created.
 *
 * @param dir               the archive folder: it must not exist, or be an
 *                          empty folder, or (with EARL_WRITER_OVERWRITE) hold
 *                          an archive
 * @param name              the anchor's name without .otf2; NULL: "traces"
 * @param timer_resolution  ticks per second; 0: 1e9
 * @param flags             EARL_WRITER_OVERWRITE or 0
 * @param out               receives the writer, which the caller ends with
 *                          earl_writer_close or earl_writer_abort; NULL on
 *                          failure
 * @param err               receives the status and a message naming the folder
 *                          on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_INVALID (a path that is no folder, a folder that
 *         is not empty and holds no archive, or one that holds an archive
 *         without EARL_WRITER_OVERWRITE), EARL_ERR_IO, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_open(const char *dir, const char *name,
                                      uint64_t timer_resolution, unsigned flags,
                                      earl_writer **out, earl_error *err);

/**
 * Write the definitions, finish the archive and move it to DIR.  The writer
 * is freed whatever the outcome; on failure nothing is left at DIR.
 *
 * @param w    a writer (freed by the call)
 * @param err  receives the status and a message on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_INVALID (definitions that cannot make an archive,
 *         such as ranks that are not 0..R-1), EARL_ERR_IO (also after an
 *         earlier I/O failure of the writer), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_close(earl_writer *w, earl_error *err);

/**
 * Discard everything written and free the writer.
 *
 * @param w  a writer, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_writer_abort(earl_writer *w);

/**
 * The archive's creator, recorded at close (default: earlc's name).
 *
 * @param w        a writer
 * @param creator  the text (NULL: "")
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_set_creator(earl_writer *w, const char *creator, earl_error *err);

/**
 * The archive's description, recorded at close (default "").
 *
 * @param w     a writer
 * @param text  the text (NULL: "")
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_set_description(earl_writer *w, const char *text, earl_error *err);

/**
 * The realtime of the global offset, recorded at close (default undefined).
 *
 * @param w            a writer
 * @param realtime_ns  nanoseconds since the epoch
 * @since 0.1.0
 */
EARL_API void earl_writer_set_realtime(earl_writer *w, uint64_t realtime_ns);

/**
 * The bytes of event chunks held in memory, all locations together, before
 * libotf2 is made to flush (at least one 1 MiB chunk per location is always
 * allowed).
 *
 * @param w      a writer
 * @param bytes  the budget; 0: the default, 128 MiB
 * @since 0.1.0
 */
EARL_API void earl_writer_set_memory_limit(earl_writer *w, size_t bytes);

/* Archives as some other tools write them, for testing readers only: the
 * archive then says what these say, not what it holds.  omit_clock: no
 * ClockProperties definition (the OTF2 library's own test archives);
 * announce_events: every location announces `announced_events` events
 * instead of its count (APEX writes one wrong count for every location).
 * Zeroed, the archive is written truthfully. */
typedef struct earl_writer_quirks {
    int omit_clock;
    int announce_events;
    uint64_t announced_events;
} earl_writer_quirks;

/**
 * Write the archive as another tool would (see earl_writer_quirks), for
 * testing readers.
 *
 * @param w       a writer
 * @param quirks  what the archive says instead of the truth; NULL: the truth
 *                (a zeroed earl_writer_quirks)
 * @since 0.1.0
 */
EARL_API void earl_writer_set_quirks(earl_writer *w, const earl_writer_quirks *quirks);

/**
 * Where the archive will be.
 *
 * @param w  a writer
 * @return DIR/NAME.otf2, owned by the writer
 * @since 0.1.0
 */
EARL_API const char *earl_writer_anchor_path(const earl_writer *w);

/**
 * Where the archive is built until close.
 *
 * @param w  a writer
 * @return DIR.tmp-XXXXXX, owned by the writer
 * @since 0.1.0
 */
EARL_API const char *earl_writer_tmp_dir(const earl_writer *w);

/**
 * The events written so far.
 *
 * @param w    a writer
 * @param loc  a location, or -1 for all of them
 * @return the count (0 for an undefined location)
 * @since 0.1.0
 */
EARL_API uint64_t earl_writer_event_count(const earl_writer *w, earl_loc loc);

/**
 * The locations defined so far.
 *
 * @param w  a writer
 * @return the count
 * @since 0.1.0
 */
EARL_API uint32_t earl_writer_location_count(const earl_writer *w);

/* ------------------------------------------------------------------------ */
/* Definitions                                                                */
/* ------------------------------------------------------------------------ */

/**
 * A string definition; equal texts share one reference.
 *
 * @param w     a writer
 * @param text  the text (NULL: "")
 * @param ref   receives its reference
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_string(earl_writer *w, const char *text, uint32_t *ref,
                                        earl_error *err);

/**
 * A system tree node.
 *
 * @param w           a writer
 * @param name        its name (NULL: "")
 * @param class_name  its class, such as "node" (NULL: "")
 * @param parent      its parent node, or EARL_UNDEFINED_REF for a root
 * @param ref         receives its reference
 * @param err         receives the status and a message on failure (may be
 *                    NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_system_node(earl_writer *w, const char *name,
                                             const char *class_name, uint32_t parent,
                                             uint32_t *ref, earl_error *err);

/**
 * A location group under a system tree node.
 *
 * @param w            a writer
 * @param name         its name (NULL: "")
 * @param type         an OTF2_LocationGroupType
 * @param system_node  its system tree node
 * @param creator      the location group that created it, or
 *                     EARL_UNDEFINED_REF
 * @param rank         >= 0: the MPI process of that rank in MPI_COMM_WORLD
 *                     (ranks must be unique and, by close, 0..R-1); -1: none
 * @param ref          receives its reference
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_location_group(earl_writer *w, const char *name, uint8_t type,
                                                uint32_t system_node, uint32_t creator,
                                                int32_t rank, uint32_t *ref, earl_error *err);
/**
 * A PROCESS location group without a creator (earl_writer_location_group).
 *
 * @param w            a writer
 * @param name         its name (NULL: "")
 * @param system_node  its system tree node
 * @param rank         its rank in MPI_COMM_WORLD, or -1
 * @param ref          receives its reference
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_process(earl_writer *w, const char *name, uint32_t system_node,
                                         int32_t rank, uint32_t *ref, earl_error *err);

/**
 * A location in a location group.  The first CPU thread of a process is the
 * location of its rank.
 *
 * @param w      a writer
 * @param group  its location group
 * @param name   its name (NULL: "")
 * @param type   an OTF2_LocationType: CPU thread, accelerator stream, ...
 * @param id     its OTF2 id, or EARL_WRITER_AUTO_ID for Score-P's scheme (k <<
 *               32 | rank for the k-th location of the process of that rank; k
 *               << 32 | (1 << 31 | group) in a group without a rank)
 * @param loc    receives the dense index that events take (0, 1, ... in
 *               definition order)
 * @param err    receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined group, an id already taken),
 *         EARL_ERR_IO (libotf2 could not create its event writer), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_location(earl_writer *w, uint32_t group, const char *name,
                                          uint8_t type, uint64_t id, earl_loc *loc,
                                          earl_error *err);

typedef struct earl_writer_region_def {
    const char *name;           /* required */
    const char *canonical_name; /* NULL: name */
    const char *description;    /* NULL: "" */
    const char *source_file;    /* NULL: "" */
    uint8_t role;               /* OTF2_RegionRole */
    uint8_t paradigm;           /* OTF2_Paradigm */
    uint32_t flags;             /* OTF2_RegionFlag */
    uint32_t begin_line, end_line;
} earl_writer_region_def;

/**
 * A region.
 *
 * @param w    a writer
 * @param def  its name (required) and attributes
 * @param ref  receives its reference
 * @param err  receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_region(earl_writer *w, const earl_writer_region_def *def,
                                        uint32_t *ref, earl_error *err);

/**
 * A group written as given, e.g. the group of an RMA_GROUP_SYNC.  Groups of
 * communicators and teams are made by the calls below, not with this.
 *
 * @param w          a writer
 * @param name       its name (NULL: "")
 * @param type       an OTF2_GroupType
 * @param paradigm   an OTF2_Paradigm
 * @param flags      OTF2_GroupFlag bits
 * @param n_members  how many members
 * @param members    the members: location ids or ranks, as the type says
 * @param ref        receives its reference
 * @param err        receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_group(earl_writer *w, const char *name, uint8_t type,
                                       uint8_t paradigm, uint32_t flags, uint32_t n_members,
                                       const uint64_t *members, uint32_t *ref, earl_error *err);

/**
 * MPI_COMM_WORLD over every process with a rank defined so far (define the
 * processes first).
 *
 * @param w     a writer
 * @param name  its name; NULL: "MPI_COMM_WORLD"
 * @param ref   receives its reference
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_comm_world(earl_writer *w, const char *name, uint32_t *ref,
                                            earl_error *err);
/**
 * A sub-communicator.
 *
 * @param w            a writer
 * @param name         its name (NULL: "")
 * @param parent       the communicator it was derived from, or
 *                     EARL_UNDEFINED_REF
 * @param n            its size
 * @param world_ranks  rank i of it is world rank world_ranks[i]
 * @param ref          receives its reference
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_comm(earl_writer *w, const char *name, uint32_t parent,
                                      uint32_t n, const uint32_t *world_ranks,
                                      uint32_t *ref, earl_error *err);
/**
 * MPI_COMM_SELF (a COMM_SELF group; rank 0 is the caller).
 *
 * @param w     a writer
 * @param name  its name (NULL: "")
 * @param ref   receives its reference
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_comm_self(earl_writer *w, const char *name, uint32_t *ref,
                                           earl_error *err);
/**
 * A thread team (or thread contingent).
 *
 * @param w         a writer
 * @param name      its name (NULL: "")
 * @param paradigm  OTF2_PARADIGM_OPENMP, OTF2_PARADIGM_PTHREAD, ...
 * @param parent    the enclosing team, or EARL_UNDEFINED_REF
 * @param n         its threads
 * @param threads   thread i of the team is location threads[i]
 * @param ref       receives its reference
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_thread_team(earl_writer *w, const char *name, uint8_t paradigm,
                                             uint32_t parent, uint32_t n, const earl_loc *threads,
                                             uint32_t *ref, earl_error *err);

/**
 * An RMA window over a communicator (remote ranks are ranks in it).
 *
 * @param w     a writer
 * @param name  its name (NULL: "")
 * @param comm  the communicator
 * @param ref   receives its reference
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_rma_win(earl_writer *w, const char *name, uint32_t comm,
                                         uint32_t *ref, earl_error *err);

typedef struct earl_writer_metric_member_def {
    const char *name;        /* required */
    const char *description; /* NULL: "" */
    const char *unit;        /* NULL: "#" */
    uint8_t metric_type;     /* OTF2_MetricType */
    uint8_t mode;            /* OTF2_MetricMode */
    uint8_t value_type;      /* OTF2_TYPE_INT64, OTF2_TYPE_UINT64 or OTF2_TYPE_DOUBLE */
    uint8_t base;            /* OTF2_Base */
    int64_t exponent;
} earl_writer_metric_member_def;

/**
 * A metric member.
 *
 * @param w    a writer
 * @param def  its name (required) and attributes
 * @param ref  receives its reference
 * @param err  receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_metric_member(earl_writer *w,
                                               const earl_writer_metric_member_def *def,
                                               uint32_t *ref, earl_error *err);
/**
 * A metric class.
 *
 * @param w              a writer
 * @param n              its members
 * @param members        the metric members
 * @param occurrence     an OTF2_MetricOccurrence
 * @param recorder_kind  an OTF2_RecorderKind
 * @param ref            receives its reference
 * @param err            receives the status and a message on failure (may be
 *                       NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_metric_class(earl_writer *w, uint32_t n, const uint32_t *members,
                                              uint8_t occurrence, uint8_t recorder_kind,
                                              uint32_t *ref, earl_error *err);

/**
 * An OTF2 attribute that events may carry (earl_writer_record.attributes),
 * e.g. the EARL_ATTR_* attributes of earl.h.
 *
 * @param w            a writer
 * @param name         its name (required)
 * @param description  its description (NULL: "")
 * @param type         OTF2_TYPE_INT32, _UINT32, _INT64 or _UINT64
 * @param ref          receives its reference
 * @param err          receives the status and a message on failure (may be
 *                     NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_attribute(earl_writer *w, const char *name,
                                           const char *description, uint8_t type, uint32_t *ref,
                                           earl_error *err);

/**
 * A clock offset of a location (an OTF2 ClockOffset, in its local
 * definitions).  Readers correct the location's timestamps by the offsets
 * interpolated linearly between them, held constant outside (libotf2 does so
 * for earl_trace_open, for a location with at least two).  Give a location's
 * offsets in increasing time.
 *
 * @param w       a writer
 * @param loc     the location
 * @param time    a time in the location's own ticks
 * @param offset  at that time the global clock read the location's time +
 *                offset
 * @param stddev  the standard deviation of the offset's measurement
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_clock_offset(earl_writer *w, earl_loc loc, uint64_t time,
                                              int64_t offset, double stddev, earl_error *err);

/**
 * A location property with a string value, e.g. EARL_PROPERTY_INCOMPLETE.
 *
 * @param w      a writer
 * @param loc    the location
 * @param name   the property's name (required)
 * @param value  its value (NULL: "")
 * @param err    receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (an undefined reference, a value out of
 *         range: nothing is defined and the writer stays usable), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_location_property(earl_writer *w, earl_loc loc, const char *name,
                                                   const char *value, earl_error *err);

/* ------------------------------------------------------------------------ */
/* Events                                                                     */
/* ------------------------------------------------------------------------ */

/* The payload of one event.  Which fields a kind uses (unused ones ignored):
 *
 *   ENTER, LEAVE                  ref = region
 *   MPI_SEND, MPI_RECV            ref = comm, peer = partner rank in comm, tag, bytes
 *   MPI_ISEND, MPI_IRECV          same, and id = request id
 *   MPI_ISEND_COMPLETE, MPI_IRECV_REQUEST, MPI_REQUEST_TEST,
 *   MPI_REQUEST_CANCELLED         id = request id
 *   MPI_COLLECTIVE_BEGIN          -
 *   MPI_COLLECTIVE_END            op = OTF2_CollectiveOp, ref = comm,
 *                                 peer = root rank in comm or EARL_UNDEFINED_REF,
 *                                 bytes = sent, bytes2 = received
 *   OMP_FORK                      count = requested threads
 *   OMP_JOIN                      -
 *   OMP_ACQUIRE_LOCK, OMP_RELEASE_LOCK  id = lock id (32 bit), count = acquisition order
 *   OMP_TASK_CREATE/SWITCH/COMPLETE     id = task id
 *   THREAD_FORK                   model = OTF2_Paradigm, count = requested threads
 *   THREAD_JOIN                   model
 *   THREAD_TEAM_BEGIN/END         ref = team
 *   THREAD_ACQUIRE/RELEASE_LOCK   model, id = lock id (32 bit), count = acquisition order
 *   THREAD_TASK_CREATE/SWITCH/COMPLETE  ref = team, peer = creating thread, count = generation
 *   THREAD_CREATE/BEGIN/WAIT/END  ref = contingent (a thread team), id = sequence count
 *   PROGRAM_BEGIN                 ref = program name (string), n_args, args (string refs)
 *   PROGRAM_END                   exit_status
 *   METRIC                        ref = metric class, n_values, values (raw 64 bits of
 *                                 int64/uint64/double, typed by the class's members)
 *   RMA_WIN_CREATE/DESTROY, RMA_WAIT_CHANGE  ref = window
 *   RMA_COLLECTIVE_BEGIN          -
 *   RMA_COLLECTIVE_END            op = OTF2_CollectiveOp, sync_level = OTF2_RmaSyncLevel,
 *                                 ref = window, peer = root or EARL_UNDEFINED_REF,
 *                                 bytes = sent, bytes2 = received
 *   RMA_GROUP_SYNC                sync_level, ref = window, peer = group ref
 *   RMA_REQUEST_LOCK, RMA_ACQUIRE_LOCK, RMA_TRY_LOCK
 *                                 ref = window, peer = remote rank, id = lock id,
 *                                 op = OTF2_LockType
 *   RMA_RELEASE_LOCK              ref = window, peer = remote, id = lock id
 *   RMA_SYNC                      ref = window, peer = remote, op = OTF2_RmaSyncType
 *   RMA_PUT, RMA_GET              ref = window, peer = remote, bytes, id = matching id
 *   RMA_ATOMIC                    ref = window, peer = remote, op = OTF2_RmaAtomicType,
 *                                 bytes = sent, bytes2 = received, id = matching id
 *   RMA_OP_COMPLETE_BLOCKING, RMA_OP_COMPLETE_NON_BLOCKING, RMA_OP_TEST,
 *   RMA_OP_COMPLETE_REMOTE        ref = window, id = matching id
 *
 * RMA remotes are checked against the window's communicator unless
 * EARL_UNDEFINED_REF.
 *
 * Any event may carry n_attributes OTF2 attributes (earl_writer_attribute):
 * value is the attribute's integer, converted to its type (an INT32 value of
 * -1 is passed as (uint64_t)(int64_t)-1). */
typedef struct earl_writer_attr_value {
    uint32_t attribute;
    uint64_t value;
} earl_writer_attr_value;

typedef struct earl_writer_record {
    uint32_t ref;
    uint32_t peer;
    uint32_t tag;
    uint32_t count;
    uint64_t bytes;
    uint64_t bytes2;
    uint64_t id;
    uint8_t op;
    uint8_t sync_level;
    uint8_t model;
    int64_t exit_status;
    uint32_t n_values;
    const uint64_t *values;
    uint32_t n_args;
    const uint32_t *args;
    uint32_t n_attributes;
    const earl_writer_attr_value *attributes;
} earl_writer_record;

/**
 * Write one event of any kind.
 *
 * @param w     a writer
 * @param kind  its kind
 * @param loc   its location
 * @param t     its time in ticks, not before the location's previous event
 * @param rec   its payload, the fields its kind uses (see above); NULL: a
 *              zeroed record
 * @param err   receives the status and a message on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_INVALID (an undefined location or reference, a
 *         peer outside the communicator, a time before the location's previous
 *         event: nothing is written and the writer stays usable); EARL_ERR_IO
 *         (the writer can then only be closed, which fails, or aborted);
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_event(earl_writer *w, earl_kind kind, earl_loc loc, earl_time t,
                                       const earl_writer_record *rec, earl_error *err);

/* Typed shorthands for the frequent kinds: each writes one event through
 * earl_writer_event. */

/**
 * ENTER of a region.
 *
 * @param w       a writer
 * @param loc     the location
 * @param t       the time in ticks
 * @param region  the region
 * @param err     receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_enter(earl_writer *w, earl_loc loc, earl_time t, uint32_t region,
                                       earl_error *err);

/**
 * LEAVE of a region.
 *
 * @param w       a writer
 * @param loc     the location
 * @param t       the time in ticks
 * @param region  the region
 * @param err     receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_leave(earl_writer *w, earl_loc loc, earl_time t, uint32_t region,
                                       earl_error *err);

/**
 * MPI_SEND.
 *
 * @param w      a writer
 * @param loc    the location
 * @param t      the time in ticks
 * @param dest   the receiver's rank in comm
 * @param comm   the communicator
 * @param tag    the tag
 * @param bytes  the message's size
 * @param err    receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_send(earl_writer *w, earl_loc loc, earl_time t, uint32_t dest,
                                          uint32_t comm, uint32_t tag, uint64_t bytes,
                                          earl_error *err);

/**
 * MPI_RECV.
 *
 * @param w       a writer
 * @param loc     the location
 * @param t       the time in ticks
 * @param source  the sender's rank in comm
 * @param comm    the communicator
 * @param tag     the tag
 * @param bytes   the message's size
 * @param err     receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_recv(earl_writer *w, earl_loc loc, earl_time t,
                                          uint32_t source, uint32_t comm, uint32_t tag,
                                          uint64_t bytes, earl_error *err);

/**
 * MPI_ISEND.
 *
 * @param w        a writer
 * @param loc      the location
 * @param t        the time in ticks
 * @param dest     the receiver's rank in comm
 * @param comm     the communicator
 * @param tag      the tag
 * @param bytes    the message's size
 * @param request  the request id
 * @param err      receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_isend(earl_writer *w, earl_loc loc, earl_time t, uint32_t dest,
                                           uint32_t comm, uint32_t tag, uint64_t bytes,
                                           uint64_t request, earl_error *err);

/**
 * MPI_ISEND_COMPLETE.
 *
 * @param w        a writer
 * @param loc      the location
 * @param t        the time in ticks
 * @param request  the request id of the MPI_ISEND
 * @param err      receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_isend_complete(earl_writer *w, earl_loc loc, earl_time t,
                                                    uint64_t request, earl_error *err);

/**
 * MPI_IRECV_REQUEST.
 *
 * @param w        a writer
 * @param loc      the location
 * @param t        the time in ticks
 * @param request  the request id
 * @param err      receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_irecv_request(earl_writer *w, earl_loc loc, earl_time t,
                                                   uint64_t request, earl_error *err);

/**
 * MPI_IRECV (the completion of a receive request).
 *
 * @param w        a writer
 * @param loc      the location
 * @param t        the time in ticks
 * @param source   the sender's rank in comm
 * @param comm     the communicator
 * @param tag      the tag
 * @param bytes    the message's size
 * @param request  the request id of the MPI_IRECV_REQUEST
 * @param err      receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_irecv(earl_writer *w, earl_loc loc, earl_time t,
                                           uint32_t source, uint32_t comm, uint32_t tag,
                                           uint64_t bytes, uint64_t request, earl_error *err);

/**
 * MPI_COLLECTIVE_BEGIN.
 *
 * @param w    a writer
 * @param loc  the location
 * @param t    the time in ticks
 * @param err  receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_collective_begin(earl_writer *w, earl_loc loc, earl_time t,
                                                      earl_error *err);

/**
 * MPI_COLLECTIVE_END.
 *
 * @param w         a writer
 * @param loc       the location
 * @param t         the time in ticks
 * @param op        an OTF2_CollectiveOp
 * @param comm      the communicator
 * @param root      the root's rank in comm, or EARL_UNDEFINED_REF
 * @param sent      the bytes sent
 * @param received  the bytes received
 * @param err       receives the status and a message on failure (may be NULL)
 * @return as earl_writer_event
 * @since 0.1.0
 */
EARL_API earl_status earl_writer_mpi_collective_end(earl_writer *w, earl_loc loc, earl_time t,
                                                    uint8_t op, uint32_t comm, uint32_t root,
                                                    uint64_t sent, uint64_t received,
                                                    earl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EARL_WRITER_H */
