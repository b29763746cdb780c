/*
 * earl_part.h - public API of the part subsystem (earl_part_*): a trace
 * analysed in parts, each part holding whole locations.
 *
 * The largest traces do not fit in one process's memory.  earlc then splits
 * the locations into parts (whole processes with their threads, in
 * contiguous blocks) and gives each part to an MPI process, or analyses the
 * parts one after another.  A part holds every event of its own locations,
 * plus the *ghosts*: the events of other locations that its own events
 * point to, which the EARL layer and the wait-state catalog read:
 *
 *   - the other side of every message of an own location (a send to it, a
 *     receive from it, with the other half of their requests: MPI_ISEND and
 *     MPI_ISEND_COMPLETE, MPI_IRECV_REQUEST and MPI_IRECV);
 *   - the MPI_COLLECTIVE_BEGIN and _END of every member of the collectives
 *     of a communicator that has an own location;
 *   - the MPI_Init, MPI_Init_thread and MPI_Finalize calls of every process;
 *   - for each of those, the ENTER and LEAVE of the call around it, so that
 *     the ghost location's region stack, enterptr and leaves are those of
 *     the whole trace for the ghosts.
 *
 * Each message and each collective then has all its constituents in every
 * part that owns one of them, and the EARL layer matches them exactly as in
 * the whole trace: a receive's send is found among the sends from its
 * source to it, all of which are own events or ghosts.
 *
 * The exchange: each part reads its own locations (earl_reading_read with
 * their mask), exports for every other part the events that part needs
 * (earl_part_export: one packed buffer of earl_ghost records per part),
 * the buffers travel (MPI, or files), and each part adds those it receives
 * (earl_part_add_ghosts) before the order is made (earl_reading_finish).
 * Ghost locations are EARL_HELD_GHOSTS in the trace's definitions.
 *
 * A part may fold its ghosts' message calls before it adds them
 * (earl_part_fold_calls): on a ghost location whose calls do not nest, the
 * LEAVE of each call that holds only message events and is followed by
 * another call stays out, and the EARL layer closes the call at the next
 * ENTER (EARL_HELD_GHOSTS_FOLDED).  Every ENTER and every message event stays,
 * so each event a report names is there, with its enterptr and call path
 * as before; what goes is the LEAVE of a ghost message call, which the
 * built-in wait states read on the location that owns the call only (the
 * leave of a collective call, of MPI_Init and MPI_Finalize, and of a
 * location's last call stay).  About a quarter of the ghosts of a halo
 * exchange.
 *
 * A ghost keeps its position on its location in the whole trace, so that
 * (timestamp, location, position) orders the events of every part as the
 * whole trace orders them: event ids of a part are not those of the whole
 * trace, but their order is, and the whole trace's id of any event follows
 * from counting, in every part, the own events ordered before it.
 *
 * Collectives can travel two ways.  Every member's records to every part
 * of the communicator (earl_part_export without a member list, as the MPI
 * parts do): simple, but each part then holds the collective records of the
 * whole communicator, which on a large communicator outweigh its own events.
 * Or as *representatives*: each part lists its own members instead
 * (earl_coll_member), the lists of all parts are brought together per
 * instance, and earl_part_representatives picks, for each part, the few
 * members of other parts its analysis needs: the instance's first member
 * (it numbers the instance) and the one completing it, the first member of
 * another part than the first's, and the members that decide the built-in
 * collective wait states: the latest begin (of all members, and of those
 * that are not the root), the earliest end, the root, and for scans every
 * member that begins later than all members of lower rank.  Those travel
 * with their call around them (ENTER, BEGIN, END, LEAVE); the first of them
 * carries the count of the members left out (earl_ghost.members), so that
 * the EARL layer completes the instance at the same member as in the whole
 * trace.  Every group maximum and minimum the wait states take over an
 * instance is then the whole instance's (docs/memory.md says which analyses
 * need every member instead).  The root causes need, besides, the member
 * that delays the others everywhere and every member in its part
 * (earl_part_represent with EARL_REPRESENT_DELAYERS).
 *
 * Deterministic: the packed buffers depend only on the trace and the
 * partition.  Not thread-safe on one reading.
 */
#ifndef EARL_PART_H
#define EARL_PART_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One ghost event as it travels between parts: 80 bytes, no pointers, in
 * the byte order of the machine (parts run on machines of one kind). */
typedef struct earl_ghost {
    uint64_t time;
    uint64_t position;     /* on its location, in the whole trace */
    int64_t partner;       /* position of the other half of its request, or -1 */
    uint64_t bytes;        /* message: bytes; collective end: sent */
    uint64_t request;      /* message: request id; collective end: received */
    int32_t location;      /* dense location index */
    uint32_t ref;          /* ENTER/LEAVE: region; message, collective end: communicator */
    int32_t peer;          /* message: peer location; collective end: root location */
    uint32_t peer_rank;    /* message: peer rank; collective end: root rank */
    uint32_t tag;          /* message: tag; collective end: operation */
    int32_t requested_source;
    int32_t requested_tag;
    /* collective end: its number among its location's collective ends on its
     * communicator, which is its instance's (the EARL layer counts them so
     * on a location it reads whole), and the members of the instance it
     * stands for: 1, more for a representative that carries the count of
     * the members left out; 0 for the other kinds */
    uint32_t seq;
    uint32_t members;
    uint8_t kind;          /* earl_kind */
    /* reserved[0]: EARL_GHOST_FOLDED on the records of a location that
     * earl_part_fold_calls folded (set by the part that adds them; 0 as
     * records travel); the rest 0 */
    uint8_t reserved[3];
} earl_ghost;

/* earl_ghost.reserved[0]: the record's location had its calls folded. */
#define EARL_GHOST_FOLDED 1

/* Packed ghosts for each part: records [offset[p], offset[p + 1]) go to
 * part p, sorted by (location, position).  Free with earl_ghosts_free. */
typedef struct earl_ghosts {
    size_t n_parts;
    size_t *offset;        /* n_parts + 1 */
    earl_ghost *records;
} earl_ghosts;

/**
 * Free the buffers of packed ghosts and empty them.
 *
 * @param ghosts  ghosts of earl_part_export, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_ghosts_free(earl_ghosts *ghosts);

/* An own member of a collective instance whose communicator has members in
 * other parts, as earl_part_representatives needs it: 112 bytes, no
 * pointers.  Its events are the MPI_COLLECTIVE_END, the latest
 * MPI_COLLECTIVE_BEGIN before it inside the same call, and the ENTER and
 * LEAVE of the call around it (the region open at the END). */
#define EARL_PART_NO_EVENT UINT64_MAX
enum { EARL_MEMBER_ENTER, EARL_MEMBER_BEGIN, EARL_MEMBER_END, EARL_MEMBER_LEAVE };
typedef struct earl_coll_member {
    uint64_t time[4];      /* by EARL_MEMBER_*; 0 where missing */
    uint64_t position[4];  /* on the location; EARL_PART_NO_EVENT where missing */
    uint64_t sent, received;
    uint32_t comm;
    uint32_t seq;          /* as earl_ghost.seq: the instance is (comm, seq) */
    int32_t location;
    uint32_t region;       /* of the call (EARL_UNDEFINED_REF: none open) */
    int32_t root;          /* as recorded in the END */
    uint32_t root_rank;
    uint32_t rank;         /* in the communicator: scans only, else UINT32_MAX */
    uint8_t op;            /* OTF2_CollectiveOp */
    uint8_t reserved[3];
} earl_coll_member;

/**
 * The ghosts that every other part needs of this part's own locations (the
 * locations earl_reading_read read).
 *
 * @param reading    a reading whose own locations were read
 * @param part_of    per dense location, its part (0..n_parts-1; -1: none, no
 *                   ghosts go there)
 * @param n_parts    the parts
 * @param self       this part, whose own records stay empty
 * @param members    NULL to send every collective member's records to every
 *                   part of its communicator; else the collectives are left
 *                   out of the ghosts, and *members (free() it) receives the
 *                   own members of the instances of communicators with members
 *                   in other parts, sorted by (comm, seq, time of the END,
 *                   location, position of the END), for
 *                   earl_part_representatives
 * @param n_members  receives the number of *members (with members only)
 * @param out        receives the packed ghosts per part; free them with
 *                   earl_ghosts_free
 * @param err        receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a read location not in part self), or
 *         EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_part_export(earl_reading *reading, const int32_t *part_of,
                                      size_t n_parts, int32_t self,
                                      earl_coll_member **members, size_t *n_members,
                                      earl_ghosts *out, earl_error *err);

/* Ghosts for each part packed narrow (earl_ghosts_pack's format): the
 * records [count[p], count[p + 1]) go to part p, sorted by (location,
 * position), packed as one run in bytes [offset[p], offset[p + 1]).  Free
 * with earl_packed_ghosts_free. */
typedef struct earl_packed_ghosts {
    size_t n_parts;
    size_t *count;         /* n_parts + 1 */
    size_t *offset;        /* n_parts + 1 */
    uint8_t *bytes;
} earl_packed_ghosts;

/**
 * Free the buffers of packed ghosts and empty them.
 *
 * @param ghosts  ghosts of earl_part_export_packed, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_packed_ghosts_free(earl_packed_ghosts *ghosts);

/**
 * earl_part_export, with each part's records packed narrow as they are made
 * (earl_ghosts_pack's format, one run per part) instead of 80 bytes each:
 * what the analysis in turn writes to its scratch folder, without the wide
 * records ever held (they were the largest part of the export's memory and
 * of its time).  Unpacked (earl_ghosts_unpack), each part's run gives the
 * records earl_part_export gives it, bit for bit.
 * Deterministic, as earl_part_export.
 *
 * @param reading    a reading whose own locations were read
 * @param part_of    as for earl_part_export
 * @param n_parts    the parts
 * @param self       this part, whose own run stays empty
 * @param members    as for earl_part_export
 * @param n_members  as for earl_part_export
 * @param out        receives the packed ghosts per part; free them with
 *                   earl_packed_ghosts_free
 * @param err        receives the status and a message on failure (may be NULL)
 * @return as earl_part_export
 * @since 0.1.0
 */
EARL_API earl_status earl_part_export_packed(earl_reading *reading, const int32_t *part_of,
                                             size_t n_parts, int32_t self,
                                             earl_coll_member **members, size_t *n_members,
                                             earl_packed_ghosts *out, earl_error *err);

/**
 * The collective ghosts each part needs (see the top of this file), from the
 * members of whole instances.
 *
 * @param defs     the definitions (the communicators' sizes)
 * @param members  n members: every member of each of its instances, from every
 *                 part, sorted as earl_part_export lists them
 * @param n        how many
 * @param part_of  per dense location, its part
 * @param n_parts  the parts
 * @param out      receives, for part p, the records [offset[p], offset[p + 1]),
 *                 sorted by (location, position): the representatives of the
 *                 instances p has a member of, those of other parts; free them
 *                 with earl_ghosts_free
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (unsorted members, a member's location in
 *         no part), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_part_representatives(const earl_defs *defs,
                                               const earl_coll_member *members, size_t n,
                                               const int32_t *part_of, size_t n_parts,
                                               earl_ghosts *out, earl_error *err);

/* What earl_part_represent chooses besides the built-in wait states'
 * representatives: EARL_REPRESENT_DELAYERS, what the root causes need (the
 * member that delays the others in every part, and every member in that
 * member's part; part_representatives.c says why that suffices). */
#define EARL_REPRESENT_DELAYERS 1u

/**
 * earl_part_representatives with more members chosen for the analyses the
 * flags name (EARL_REPRESENT_*; 0: the same choice).
 *
 * @param defs     as for earl_part_representatives
 * @param members  as for earl_part_representatives
 * @param n        as for earl_part_representatives
 * @param part_of  as for earl_part_representatives
 * @param n_parts  as for earl_part_representatives
 * @param flags    EARL_REPRESENT_DELAYERS or 0
 * @param out      as for earl_part_representatives
 * @param err      as for earl_part_representatives
 * @return the statuses of earl_part_representatives, and EARL_ERR_INVALID
 *         for unknown flags
 * @since 0.1.0
 */
EARL_API earl_status earl_part_represent(const earl_defs *defs, const earl_coll_member *members,
                                         size_t n, const int32_t *part_of, size_t n_parts,
                                         unsigned flags, earl_ghosts *out, earl_error *err);

/**
 * Add ghost records received from other parts to a reading whose own
 * locations were read and not yet ordered.
 *
 * @param reading  the reading
 * @param records  n records; each location's in one call, ascending by
 *                 position, of no own location
 * @param n        how many
 * @param err      receives the status and a message naming the record on
 *                 failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (records out of order, of an own, unknown
 *         or repeated location, of an unknown kind), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_part_add_ghosts(earl_reading *reading, const earl_ghost *records,
                                          size_t n, earl_error *err);

/**
 * Fold the message calls of ghost records, in place, before they are added
 * (earl_part_add_ghosts): on each location whose records do not nest (every
 * event inside a call, no call inside another, every call left), drop the
 * LEAVE of each call that holds message events only and is followed by an
 * ENTER, and mark the location's records EARL_GHOST_FOLDED.  The EARL layer
 * then closes such a call at the location's next ENTER: enterptr and the
 * call paths of every event that stays are those of the unfolded records.
 * A location that nests, or drops no LEAVE, is left as it was.  Only for an
 * analysis that does not read the LEAVE of a ghost message call (the
 * built-in wait states without the root causes: earlc folds a part whose
 * collectives travel as representatives).
 *
 * @param records  n records grouped by location, ascending by position
 *                 (as earl_part_add_ghosts takes them)
 * @param n        how many
 * @return how many records stay (the first ones, in their order)
 * @since 0.1.0
 */
EARL_API size_t earl_part_fold_calls(earl_ghost *records, size_t n);

/**
 * Pack ghost records narrow, for a file (the analysis in turn writes each
 * part's ghosts to a scratch folder and reads them back once): each record
 * as its kind, a mask of the fields that differ from their defaults, and
 * those fields as variable-length integers, the position and time as
 * differences to the previous record's (part_pack.c).  About 9 bytes a
 * record on the generated programs instead of 80; earl_ghosts_unpack gives
 * them back bit for bit.
 * Deterministic; no state: threads may pack different runs at once.
 *
 * @param records  n records (any content; sorted by location and position
 *                 they pack narrowest)
 * @param n        how many
 * @param out      receives the packed bytes (free() them)
 * @param bytes    receives their length
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_ghosts_pack(const earl_ghost *records, size_t n, uint8_t **out,
                                      size_t *bytes, earl_error *err);

/**
 * The n records of one earl_ghosts_pack result.
 *
 * @param packed  the packed bytes
 * @param bytes   their length
 * @param out     receives the n records
 * @param n       how many were packed
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_INVALID when the bytes end inside a record,
 *         are left over after n, or hold a field no packing writes
 * @since 0.1.0
 */
EARL_API earl_status earl_ghosts_unpack(const uint8_t *packed, size_t bytes, earl_ghost *out,
                                        size_t n, earl_error *err);

/**
 * Merge runs of ghost records, each sorted by (location, position), into one
 * run sorted so, each event (location, position) once: of several records of
 * one event, the one of the earliest run stays (the representatives of
 * collectives go first: their record carries the count of the members left
 * out).  Linear in the records, times the runs (part_merge.c).
 *
 * @param runs     n_runs runs of records
 * @param lengths  the records of each run
 * @param n_runs   how many runs
 * @param at       n_runs slots of scratch (the runs' heads)
 * @param out      receives the merged records: room for every record of the runs
 * @param n_out    receives how many
 * @param err      receives the status and a message on failure (may be NULL)
 * @return EARL_OK, or EARL_ERR_INVALID when a run is not sorted
 * @since 0.1.0
 */
EARL_API earl_status earl_ghosts_merge(const earl_ghost *const *runs, const size_t *lengths,
                                       size_t n_runs, size_t *at, earl_ghost *out,
                                       size_t *n_out, earl_error *err);

/* One run of ghost records packed narrow (earl_ghosts_pack's format), as a
 * part receives it: its bytes, the records they hold, and for a run of one
 * location's representatives, that location. */
typedef struct earl_packed_run {
    const uint8_t *bytes;
    size_t size;
    size_t n;
    int32_t location;  /* representatives: every record's location; else unused */
} earl_packed_run;

/* earl_part_add_packed's flags: fold the message calls of every location
 * (earl_part_fold_calls) before it is added. */
#define EARL_ADD_FOLD 1u

/* What earl_part_add_packed added: per ghost location, in the order added,
 * the positions (in the whole trace) of the records it kept, records
 * [offset[i], offset[i + 1]) of position for location[i].  Free with
 * earl_added_ghosts_free. */
typedef struct earl_added_ghosts {
    size_t n_locations;
    int32_t *location;
    size_t *offset;     /* n_locations + 1 */
    uint64_t *position;
    size_t received;    /* records received: merged, before any folding */
    /* on a failure of packed bytes (EARL_ERR_INVALID): the run that is cut
     * short or damaged, the ghost runs first, then the representatives';
     * SIZE_MAX for any other outcome */
    size_t damaged;
} earl_added_ghosts;

/**
 * Free what earl_part_add_packed gave and empty it.
 *
 * @param added  the result of earl_part_add_packed, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_added_ghosts_free(earl_added_ghosts *added);

/**
 * Add a part's ghosts as the analysis in turn reads them back from its
 * scratch folder: packed runs from the other parts, and the representatives
 * of its collectives packed location by location.  Location by location,
 * each run is unpacked (earl_ghosts_unpack), merged with the location's
 * representatives (earl_ghosts_merge, the representatives first), folded
 * with EARL_ADD_FOLD (earl_part_fold_calls) and added
 * (earl_part_add_ghosts); the locations that only representatives hold come
 * last, ascending.  The same trace as those four calls made one after
 * another (part_take.c), holding one location's records wide at a time.
 *
 * @param reading   a reading whose own locations were read, not yet ordered
 * @param ghosts    n_ghosts runs, each sorted by (location, position), each
 *                  location in one run only
 * @param n_ghosts  how many
 * @param reps      n_reps runs of one location each (earl_packed_run.location),
 *                  ascending by location, a location's runs in the order
 *                  they merge (each sorted by position)
 * @param n_reps    how many
 * @param flags     EARL_ADD_FOLD or 0
 * @param out       receives the ghost locations and positions added; free
 *                  with earl_added_ghosts_free (also after a failure)
 * @param err       receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (damaged packed bytes: out->damaged says
 *         which run; representatives out of order; what earl_part_add_ghosts
 *         refuses), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_part_add_packed(earl_reading *reading,
                                          const earl_packed_run *ghosts, size_t n_ghosts,
                                          const earl_packed_run *reps, size_t n_reps,
                                          unsigned flags, earl_added_ghosts *out,
                                          earl_error *err);

/* What a part sends the others in one round of a replay in parts (the
 * happened-before clocks of earl_hb.h, the matches-before clocks of
 * earl_races.h): records [offset[q], offset[q + 1]) go to part q, each
 * record_bytes long, a uint64 ticket (the receiver's number for what it
 * waits for) and a clock, in the machine's byte order (parts run on machines
 * of one kind). */
typedef struct earl_outbox {
    size_t n_parts;
    size_t *offset;      /* n_parts + 1 */
    size_t record_bytes;
    uint8_t *records;
} earl_outbox;

/**
 * Free the records of an outbox and empty it.
 *
 * @param outbox  an outbox of earl_hb_part_take or earl_races_part_take, or
 *                NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_outbox_free(earl_outbox *outbox);

#ifdef __cplusplus
}
#endif

#endif
