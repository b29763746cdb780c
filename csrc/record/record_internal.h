/*
 * record_internal.h - what the recorder's files share: the state of the
 * recording process (record_emit.c), the request and communicator tables
 * (record_handles.c) and the helpers the MPI wrappers (record_init.c,
 * record_p2p.c, record_coll.c) record through.  Not part of the public
 * header: the wrappers' public face is MPI itself.
 */
#ifndef EARLC_RECORD_INTERNAL_H
#define EARLC_RECORD_INTERNAL_H

/* The recorder is compiled with hidden visibility: what it exports is MPI's
 * own functions, which its wrappers define, and nothing else.  Their
 * declarations in mpi.h take default visibility, which their definitions
 * then keep; every other function of the recorder stays inside it. */
#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop
#include <pthread.h>

#include "earlc_record.h"
#include "base/hashmap.h"

/* The recording process.  log is NULL until MPI_Init has opened the files,
 * and stays NULL when EARLC_RECORD_DIR is unset or the files could not be
 * made: then every wrapper only calls its PMPI_ twin. */
typedef struct recorder {
    record_log *log;
    int rank, size;
    int locked;               /* MPI_THREAD_MULTIPLE: serialize the recording */
    pthread_mutex_t mutex;
    uint32_t next_request;    /* request ids 1, 2, ... */
    uint64_t lost_comms, lost_requests;
} recorder;

extern recorder rec;

/* "MPI_Init", ...: the name of each record_call (record_init.c). */
extern const char *const rec_call_names[RECORD_CALL_COUNT];

static inline int rec_on(void) { return rec.log != NULL; }

/* In an exported MPI function: where in the program it was called from. */
#define CALLER __builtin_return_address(0)

void rec_lock(void);
void rec_unlock(void);

/* ---- emitting records (record_emit.c); call between rec_lock/unlock --------- */

/* site: the return address into the program's code that made the call
 * (CALLER in the exported wrapper), for the call site of a stopped process. */
void rec_enter(record_call call, uint64_t time, void *site);
/* The ENTER of a wildcard operation: its number and forced source too. */
struct rec_wildcard;
void rec_enter_wildcard(record_call call, uint64_t time, void *site, const struct rec_wildcard *w);
void rec_leave(record_call call);
/* A SEND/ISEND/RECV/IRECV record: peer and tag as given, bytes. */
void rec_message(record_type type, uint32_t comm, int peer, int tag, uint64_t bytes,
                 uint32_t request, int requested_source, int requested_tag, int index);
/* A record with only a request id (ISEND_COMPLETE, IRECV_REQUEST,
 * REQUEST_TEST, REQUEST_CANCELLED), with requested source/tag and index. */
void rec_request_record(record_type type, uint32_t request, int requested_source,
                        int requested_tag, int index);
void rec_collective_begin(void);
void rec_collective_end(uint8_t op, uint32_t comm, int root, uint64_t sent, uint64_t received);
void rec_probe(uint32_t comm, int requested_source, int requested_tag, int found_source,
               int found_tag);
/* MPI_ANY_SOURCE / MPI_ANY_TAG as RECORD_ANY; anything else as is. */
int rec_requested_source(int source);
int rec_requested_tag(int tag);
/* count elements of type, in bytes */
uint64_t rec_bytes(int count, MPI_Datatype type);

/* ---- requests and communicators (record_handles.c) ---------------------------- */

/* A non-blocking point-to-point request the recorder follows until it
 * completes: what its completion record needs (a receive's peer, tag and
 * size come from the status). */
typedef struct rec_request {
    uint32_t id;
    uint32_t comm;
    uint8_t is_recv;
} rec_request;

/* Follow handle; returns its id (0 when the table is full: counted lost). */
uint32_t rec_request_add(MPI_Request handle, const rec_request *r);
/* The request of handle, or NULL; take removes it. */
int rec_request_find(MPI_Request handle, rec_request *out, int take);

/* The recorder's id of a communicator, registering it (and writing its
 * definition) on first sight. */
uint32_t rec_comm(MPI_Comm comm);
/* After a creating call: register the new communicator (MPI_COMM_NULL is
 * ignored). */
void rec_comm_created(MPI_Comm comm);
/* Before MPI_Comm_free: forget the handle (MPI may reuse it). */
void rec_comm_freed(MPI_Comm comm);
/* World and self, at MPI_Init. */
void rec_comms_init(void);

/* ---- wildcard operations and the schedule (record_schedule.c) ----------------- */

/* A wildcard operation being made: its number in this process and the
 * source the schedule forced it to (-1: none, it asks for any source). */
typedef struct rec_wildcard {
    uint64_t index;
    int forced;
} rec_wildcard;

/* At MPI_Init: read this process's decisions from EARLC_RECORD_SCHEDULE. */
void rec_schedule_init(void);
/* Number a wildcard operation of call on comm and, when the schedule has a
 * decision for it that fits, replace *source (MPI_ANY_SOURCE) by its
 * source.  Under rec_lock, before the PMPI_ call. */
void rec_wildcard_begin(rec_wildcard *w, record_call call, MPI_Comm comm, int *source);
/* An MPI_Iprobe found a message: its number is taken (other operations take
 * theirs in rec_wildcard_begin). */
void rec_wildcard_found(const rec_wildcard *w);

/* ---- completion records, shared by every Wait and Test (record_p2p.c) -------- */

/* Record the completion of the request that was handle (before the call),
 * with the status MPI returned; index: position in the request array of the
 * *any / *some calls, -1 otherwise. */
void rec_complete(MPI_Request handle, const MPI_Status *status, int index);

#endif
