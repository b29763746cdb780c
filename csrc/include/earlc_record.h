/*
 * earlc_record.h - the MPI recorder behind `earlc record`: its one public
 * header.
 *
 * libearlc_record.so is preloaded (LD_PRELOAD) into every process of an MPI
 * program.  It defines the MPI functions it records; each wrapper notes the
 * call and calls the library's PMPI_ twin (the MPI profiling interface), so
 * no relinking is needed.  It does nothing unless EARLC_RECORD_DIR names a
 * folder: then every rank writes two files there,
 *
 *   rank-R.events  fixed-size binary records (record_event), appended to a
 *                  shared memory mapping of the file: what a process wrote
 *                  is in the kernel's page cache at once, so it survives the
 *                  process being killed, hanging until ended, or aborting;
 *   rank-R.defs    text lines (record_log_def), each written with one
 *                  write(2): the rank, the MPI library, the call names, the
 *                  communicators with their members, clock offsets and how
 *                  the process ended.
 *
 * `earlc record` turns these files into an OTF2 archive once the command
 * has ended (python/earlc/record_files.py, with earlc's OTF2 writer); the layout
 * below is what it reads, and docs/record.md describes both.
 *
 * Memory per process is bounded whatever the run's length: one mapped
 * window of RECORD_WINDOW_BYTES of the events file, three quarters of
 * RECORD_MAX_REQUESTS pending requests (at most about 100 bytes each, with
 * their index) and RECORD_MAX_COMMS live communicators: about 2 MB; under a
 * schedule (`earlc verify`, record_schedule.c), 16 bytes more per decision
 * of the process.
 */
#ifndef EARLC_RECORD_H
#define EARLC_RECORD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* The events file                                                            */
/* ------------------------------------------------------------------------ */

/* What a record is.  0 marks the end of the written part: the file grows
 * in zeroed windows and a record's type is stored last. */
typedef enum record_type {
    RECORD_END = 0,
    RECORD_ENTER,             /* comm = the call (enum record_call); peer and tag:
                                 the low and high 32 bits of the call site, the
                                 return address into the calling code; of a
                                 wildcard operation (record_schedule.c): request
                                 = its number + 1, bytes = the source a schedule
                                 forced it to + 1 (0: not forced) */
    RECORD_LEAVE,             /* comm = the call */
    RECORD_SEND,              /* comm, peer = destination, tag, bytes */
    RECORD_ISEND,             /* the same and request */
    RECORD_ISEND_COMPLETE,    /* request (index in RECORD_EXTRA) */
    RECORD_IRECV_REQUEST,     /* request (requested source and tag in RECORD_EXTRA) */
    RECORD_IRECV,             /* comm, peer = actual source, tag, bytes, request (index) */
    RECORD_RECV,              /* comm, peer, tag, bytes (requested source and tag) */
    RECORD_REQUEST_TEST,      /* request */
    RECORD_REQUEST_CANCELLED, /* request (index) */
    RECORD_COLLECTIVE_BEGIN,  /* - */
    RECORD_COLLECTIVE_END,    /* comm, peer = root or RECORD_NONE, bytes = sent
                                 (received and operation in RECORD_EXTRA) */
    RECORD_PROBE,             /* comm, peer and tag as found (RECORD_NONE when
                                 Iprobe found nothing; requested source and tag) */
    RECORD_EXTRA,             /* the fields of the next record that most records
                                 lack: see record_extra */
    RECORD_TYPE_COUNT
} record_type;

/* requested_source / requested_tag: MPI_ANY_SOURCE / MPI_ANY_TAG, whatever
 * the library's constants; RECORD_NONE: not applicable. */
#define RECORD_ANY (-1)
#define RECORD_NONE (-2)

/* One record: 32 bytes, so that a recorded call (ENTER, its MPI record,
 * LEAVE) writes 96 bytes: the cost of recording is mostly the fresh page
 * cache pages the records fill.  Times are CLOCK_MONOTONIC nanoseconds of
 * the machine; ranks and peers are ranks in the record's communicator
 * (comm: the process's communicator id, rank-R.defs).  The type shares the
 * last 64-bit word with the size, so that one 8-byte store publishes
 * both. */
typedef struct record_event {
    uint64_t time;
    uint32_t comm;            /* communicator id; ENTER/LEAVE: the call */
    int32_t peer;
    int32_t tag;
    uint32_t request;         /* the process's request id (1, 2, ...), 0: none */
    uint64_t bytes_type;      /* bytes << 8 | type */
} record_event;

#define RECORD_TYPE_OF(word) ((record_type)((word) & 0xff))
#define RECORD_BYTES_OF(word) ((word) >> 8)

/* RECORD_EXTRA, laid over record_event, holds for the record after it: */
typedef struct record_extra {
    int32_t requested_source; /* receives and probes, else RECORD_NONE */
    int32_t requested_tag;
    int32_t index;            /* completion in an *any / *some call: position in
                                 the request array, else -1 */
    int32_t op;               /* COLLECTIVE_END: OTF2_CollectiveOp value */
    uint32_t unused[2];
    uint64_t bytes2_type;     /* COLLECTIVE_END: bytes received << 8 | RECORD_EXTRA */
} record_extra;

#define RECORD_WINDOW_BYTES ((size_t)1 << 20)
#define RECORD_MAX_REQUESTS 16384
#define RECORD_MAX_COMMS 512
#define RECORD_COMM_UNKNOWN UINT32_MAX /* a communicator the table had no room for */

/* ------------------------------------------------------------------------ */
/* The calls recorded, as ENTER/LEAVE regions                                 */
/* ------------------------------------------------------------------------ */

#define RECORD_CALLS(X)                                                          \
    X(MPI_Init) X(MPI_Init_thread) X(MPI_Finalize) X(MPI_Abort)                  \
    X(MPI_Send) X(MPI_Ssend) X(MPI_Bsend) X(MPI_Rsend)                           \
    X(MPI_Isend) X(MPI_Issend) X(MPI_Ibsend) X(MPI_Irsend)                       \
    X(MPI_Recv) X(MPI_Irecv) X(MPI_Sendrecv) X(MPI_Sendrecv_replace)             \
    X(MPI_Wait) X(MPI_Waitall) X(MPI_Waitany) X(MPI_Waitsome)                    \
    X(MPI_Test) X(MPI_Testall) X(MPI_Testany) X(MPI_Testsome)                    \
    X(MPI_Probe) X(MPI_Iprobe)                                                   \
    X(MPI_Barrier) X(MPI_Bcast) X(MPI_Reduce) X(MPI_Allreduce)                   \
    X(MPI_Gather) X(MPI_Gatherv) X(MPI_Scatter) X(MPI_Scatterv)                  \
    X(MPI_Allgather) X(MPI_Allgatherv) X(MPI_Alltoall) X(MPI_Alltoallv)          \
    X(MPI_Reduce_scatter) X(MPI_Reduce_scatter_block) X(MPI_Scan) X(MPI_Exscan)  \
    X(MPI_Comm_dup) X(MPI_Comm_split) X(MPI_Comm_create) X(MPI_Comm_free)

typedef enum record_call {
#define RECORD_CALL_ENUM(name) RECORD_CALL_##name,
    RECORD_CALLS(RECORD_CALL_ENUM)
#undef RECORD_CALL_ENUM
    RECORD_CALL_COUNT
} record_call;

/* ------------------------------------------------------------------------ */
/* The defs file: one line per fact, "KEYWORD fields..."                      */
/* ------------------------------------------------------------------------ */
/*
 *   earlc-record 1
 *   rank R SIZE PID HOST
 *   library TEXT                 MPI_Get_library_version, first line
 *   built-for TEXT               the library the recorder was compiled with
 *   thread-level LEVEL           provided by MPI_Init_thread
 *   call ID NAME                 one per record_call
 *   object START END BIAS PATH   an executable segment of the program or a
 *                                library loaded at MPI_Init (call sites)
 *   comm ID SEQ SIZE W0 W1 ...   a communicator: the world ranks of its
 *                                members; SEQ counts the communicators with
 *                                the same members this process made before
 *                                (so all members agree on it).  ID 0 is
 *                                MPI_COMM_WORLD, 1 MPI_COMM_SELF.
 *   clock TIME OFFSET            rank 0's clock minus this process's at
 *                                TIME (MPI_Init and MPI_Finalize; only
 *                                measured when the process is on another
 *                                machine than rank 0)
 *   lost-request first / lost-comm first   the first time the bounded tables
 *                                had no room for a request / communicator
 *   lost-request N / lost-comm N how many, written by MPI_Finalize
 *   schedule N                   EARLC_RECORD_SCHEDULE was read: N decisions
 *                                for this process (record_schedule.c)
 *   schedule-error TEXT          it could not be read
 *   schedule-miss INDEX WHAT     the decision for wildcard operation INDEX
 *                                was not applied: "call NAME" (the operation
 *                                is another call) or "source S of SIZE"
 *   abort TIME CODE              MPI_Abort was called
 *   exit TIME STATUS             the process exited (exit(3), a return from
 *                                main) without MPI_Finalize
 *   finalized TIME               MPI_Finalize returned: the record is whole
 */

/* ------------------------------------------------------------------------ */
/* The log of one process (record_log.c)                                      */
/* ------------------------------------------------------------------------ */

typedef enum record_status {
    RECORD_OK = 0,
    RECORD_ERR_IO,      /* a file could not be created, grown or mapped */
    RECORD_ERR_INVALID  /* a bad argument */
} record_status;

typedef struct record_log record_log;

/* Create DIR/rank-R.events and DIR/rank-R.defs.  On failure *out is NULL
 * and message says why (a complete sentence). */
record_status record_log_open(const char *dir, int rank, record_log **out, char *message,
                              size_t message_size);
/* The next record slot, zeroed; fill it and publish it with
 * record_log_commit.  NULL when the log could not grow (then nothing more
 * is recorded). */
record_event *record_log_next(record_log *log);
/* Store bytes and type last: a reader sees the record whole or not at all. */
void record_log_commit(record_event *slot, record_type type, uint64_t bytes);
/* Append one line to the defs file (printf format; a newline is added). */
void record_log_def(record_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Trim the events file to what was written and release the mapping. */
void record_log_close(record_log *log);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t record_now(void);

#ifdef __cplusplus
}
#endif
#endif /* EARLC_RECORD_H */
