/*
 * record_p2p.c - the recorded point-to-point calls: blocking and
 * non-blocking sends and receives, Sendrecv, the Wait and Test families and
 * the probes.  Each is an ENTER/LEAVE of its call with the MPI records
 * inside, laid out as Score-P lays them out: a send's record right after
 * the ENTER, a receive's once it has arrived, a non-blocking request's
 * completion inside the Wait or Test that completed it.
 *
 * What Score-P leaves out is kept too: the source and tag a receive or a
 * probe asked for (wildcards as RECORD_ANY), and the position of the
 * request that an *any / *some call completed.
 *
 * A receive or probe that asks for MPI_ANY_SOURCE is a wildcard operation:
 * numbered in its ENTER, and made with the source a schedule chose for it
 * when `earlc verify` runs the program (record_schedule.c).  Its records
 * still say what the program asked for.
 */
#include <stdlib.h>

#include "record_internal.h"

/* A receive's actual size from its status. */
static uint64_t status_bytes(const MPI_Status *status)
{
    int n = 0;
    if (PMPI_Get_count(status, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        return 0;
    return (uint64_t)n;
}

static void enter(record_call call, void *site)
{
    uint64_t t = record_now();
    rec_lock();
    rec_enter(call, t, site);
    rec_unlock();
}

/* Under rec_lock: the ENTER of a call that receives or probes from
 * *source; a wildcard one is numbered, and *source replaced when the
 * schedule forces it. */
static void enter_receiving(record_call call, uint64_t t, void *site, MPI_Comm comm,
                            int *source, rec_wildcard *w)
{
    if (*source == MPI_ANY_SOURCE) {
        rec_wildcard_begin(w, call, comm, source);
        rec_enter_wildcard(call, t, site, w);
    } else {
        rec_enter(call, t, site);
    }
}

static void enter_receive(record_call call, void *site, MPI_Comm comm, int *source,
                          rec_wildcard *w)
{
    uint64_t t = record_now();
    rec_lock();
    enter_receiving(call, t, site, comm, source, w);
    rec_unlock();
}

static void leave(record_call call)
{
    rec_lock();
    rec_leave(call);
    rec_unlock();
}

/* ---- sends ---------------------------------------------------------------------- */

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static int blocking_send(record_call call, send_fn pmpi, void *site, const void *buf, int count,
                         MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!rec_on())
        return pmpi(buf, count, type, dest, tag, comm);
    uint64_t t = record_now();
    rec_lock();
    rec_enter(call, t, site);
    if (dest != MPI_PROC_NULL)
        rec_message(RECORD_SEND, rec_comm(comm), dest, tag, rec_bytes(count, type), 0,
                    RECORD_NONE, RECORD_NONE, -1);
    rec_unlock();
    int rc = pmpi(buf, count, type, dest, tag, comm);
    leave(call);
    return rc;
}

static int nonblocking_send(record_call call, isend_fn pmpi, void *site, const void *buf,
                            int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                            MPI_Request *request)
{
    if (!rec_on())
        return pmpi(buf, count, type, dest, tag, comm, request);
    enter(call, site);
    int rc = pmpi(buf, count, type, dest, tag, comm, request);
    rec_lock();
    if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL) {
        rec_request r = { .comm = rec_comm(comm) };
        uint32_t id = rec_request_add(*request, &r);
        rec_message(RECORD_ISEND, r.comm, dest, tag, rec_bytes(count, type), id, RECORD_NONE,
                    RECORD_NONE, -1);
    }
    rec_leave(call);
    rec_unlock();
    return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{ return blocking_send(RECORD_CALL_MPI_Send, PMPI_Send, CALLER, buf, count, type, dest, tag, comm); }
int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{ return blocking_send(RECORD_CALL_MPI_Ssend, PMPI_Ssend, CALLER, buf, count, type, dest, tag, comm); }
int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{ return blocking_send(RECORD_CALL_MPI_Bsend, PMPI_Bsend, CALLER, buf, count, type, dest, tag, comm); }
int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{ return blocking_send(RECORD_CALL_MPI_Rsend, PMPI_Rsend, CALLER, buf, count, type, dest, tag, comm); }

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{ return nonblocking_send(RECORD_CALL_MPI_Isend, PMPI_Isend, CALLER, buf, count, type, dest, tag, comm, request); }
int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{ return nonblocking_send(RECORD_CALL_MPI_Issend, PMPI_Issend, CALLER, buf, count, type, dest, tag, comm, request); }
int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{ return nonblocking_send(RECORD_CALL_MPI_Ibsend, PMPI_Ibsend, CALLER, buf, count, type, dest, tag, comm, request); }
int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{ return nonblocking_send(RECORD_CALL_MPI_Irsend, PMPI_Irsend, CALLER, buf, count, type, dest, tag, comm, request); }

/* ---- receives ------------------------------------------------------------------- */

/* The RECV record of a blocking receive that returned status. */
static void record_recv(MPI_Comm comm, int source, int tag, const MPI_Status *status)
{
    if (source == MPI_PROC_NULL || status->MPI_SOURCE == MPI_PROC_NULL)
        return;
    rec_message(RECORD_RECV, rec_comm(comm), status->MPI_SOURCE, status->MPI_TAG,
                status_bytes(status), 0, rec_requested_source(source), rec_requested_tag(tag), -1);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    int asked = source;
    rec_wildcard w;
    enter_receive(RECORD_CALL_MPI_Recv, CALLER, comm, &source, &w);
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
    rec_lock();
    if (rc == MPI_SUCCESS)
        record_recv(comm, asked, tag, status);
    rec_leave(RECORD_CALL_MPI_Recv);
    rec_unlock();
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    if (!rec_on())
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    int asked = source;
    rec_wildcard w;
    enter_receive(RECORD_CALL_MPI_Irecv, CALLER, comm, &source, &w);
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    rec_lock();
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL) {
        rec_request r = { .comm = rec_comm(comm), .is_recv = 1 };
        uint32_t id = rec_request_add(*request, &r);
        if (id)
            rec_request_record(RECORD_IRECV_REQUEST, id, rec_requested_source(asked),
                               rec_requested_tag(tag), -1);
    }
    rec_leave(RECORD_CALL_MPI_Irecv);
    rec_unlock();
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    uint64_t t = record_now();
    int asked = source;
    rec_wildcard w;
    rec_lock();
    enter_receiving(RECORD_CALL_MPI_Sendrecv, t, CALLER, comm, &source, &w);
    if (dest != MPI_PROC_NULL)
        rec_message(RECORD_SEND, rec_comm(comm), dest, sendtag, rec_bytes(sendcount, sendtype),
                    0, RECORD_NONE, RECORD_NONE, -1);
    rec_unlock();
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, status);
    rec_lock();
    if (rc == MPI_SUCCESS)
        record_recv(comm, asked, recvtag, status);
    rec_leave(RECORD_CALL_MPI_Sendrecv);
    rec_unlock();
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                     status);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    uint64_t t = record_now();
    int asked = source;
    rec_wildcard w;
    rec_lock();
    enter_receiving(RECORD_CALL_MPI_Sendrecv_replace, t, CALLER, comm, &source, &w);
    if (dest != MPI_PROC_NULL)
        rec_message(RECORD_SEND, rec_comm(comm), dest, sendtag, rec_bytes(count, type), 0,
                    RECORD_NONE, RECORD_NONE, -1);
    rec_unlock();
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    rec_lock();
    if (rc == MPI_SUCCESS)
        record_recv(comm, asked, recvtag, status);
    rec_leave(RECORD_CALL_MPI_Sendrecv_replace);
    rec_unlock();
    return rc;
}

/* ---- completion ----------------------------------------------------------------- */

void rec_complete(MPI_Request handle, const MPI_Status *status, int index)
{
    rec_request r;
    if (handle == MPI_REQUEST_NULL || !rec_request_find(handle, &r, 1))
        return;
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled)
        rec_request_record(RECORD_REQUEST_CANCELLED, r.id, RECORD_NONE, RECORD_NONE, index);
    else if (r.is_recv)
        rec_message(RECORD_IRECV, r.comm, status->MPI_SOURCE, status->MPI_TAG,
                    status_bytes(status), r.id, RECORD_NONE, RECORD_NONE, index);
    else
        rec_request_record(RECORD_ISEND_COMPLETE, r.id, RECORD_NONE, RECORD_NONE, index);
}

/* A REQUEST_TEST record for each followed request still pending. */
static void record_tests(int n, const MPI_Request *handles)
{
    rec_request r;
    for (int i = 0; i < n; i++)
        if (handles[i] != MPI_REQUEST_NULL && rec_request_find(handles[i], &r, 0))
            rec_request_record(RECORD_REQUEST_TEST, r.id, RECORD_NONE, RECORD_NONE, -1);
}

/* The request handles as they were before a multi-request call (MPI nulls
 * completed ones) and statuses to use when the program ignores them: on the
 * stack for small arrays, else on the heap for the call's duration. */
enum { SCRATCH_STACK = 32 };
typedef struct scratch {
    MPI_Request *handles;
    MPI_Status *statuses;
    MPI_Request handle_buf[SCRATCH_STACK];
    MPI_Status status_buf[SCRATCH_STACK];
} scratch;

static int scratch_take(scratch *s, int n, const MPI_Request *requests, MPI_Status *statuses)
{
    size_t count = n > 0 ? (size_t)n : 1;
    s->handles = count <= SCRATCH_STACK ? s->handle_buf : malloc(count * sizeof *s->handles);
    s->statuses = statuses != MPI_STATUSES_IGNORE ? statuses
                  : count <= SCRATCH_STACK        ? s->status_buf
                                                  : malloc(count * sizeof *s->statuses);
    if (!s->handles || !s->statuses)
        return -1;
    for (int i = 0; i < n; i++)
        s->handles[i] = requests[i];
    return 0;
}

static void scratch_release(scratch *s, MPI_Status *statuses)
{
    if (s->handles != s->handle_buf)
        free(s->handles);
    if (s->statuses != s->status_buf && s->statuses != statuses)
        free(s->statuses);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Wait(request, status);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    MPI_Request handle = *request;
    enter(RECORD_CALL_MPI_Wait, CALLER);
    int rc = PMPI_Wait(request, status);
    rec_lock();
    if (rc == MPI_SUCCESS)
        rec_complete(handle, status, -1);
    rec_leave(RECORD_CALL_MPI_Wait);
    rec_unlock();
    return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Test(request, flag, status);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    MPI_Request handle = *request;
    enter(RECORD_CALL_MPI_Test, CALLER);
    int rc = PMPI_Test(request, flag, status);
    rec_lock();
    if (rc == MPI_SUCCESS && *flag)
        rec_complete(handle, status, -1);
    else if (rc == MPI_SUCCESS)
        record_tests(1, &handle);
    rec_leave(RECORD_CALL_MPI_Test);
    rec_unlock();
    return rc;
}

/* Waitall and Testall: every request completed, or (Testall) none. */
static int all_call(record_call call, void *site, int n, MPI_Request *requests, int *flag,
                    MPI_Status *statuses)
{
    scratch s;
    if (scratch_take(&s, n, requests, statuses) != 0) {
        scratch_release(&s, statuses);
        return flag ? PMPI_Testall(n, requests, flag, statuses) : PMPI_Waitall(n, requests, statuses);
    }
    enter(call, site);
    int done = 1;
    int rc = flag ? PMPI_Testall(n, requests, flag, s.statuses)
                  : PMPI_Waitall(n, requests, s.statuses);
    if (flag)
        done = *flag;
    rec_lock();
    if (rc == MPI_SUCCESS && done)
        for (int i = 0; i < n; i++)
            rec_complete(s.handles[i], &s.statuses[i], -1);
    else if (rc == MPI_SUCCESS)
        record_tests(n, s.handles);
    rec_leave(call);
    rec_unlock();
    scratch_release(&s, statuses);
    return rc;
}

int MPI_Waitall(int n, MPI_Request requests[], MPI_Status statuses[])
{
    if (!rec_on())
        return PMPI_Waitall(n, requests, statuses);
    return all_call(RECORD_CALL_MPI_Waitall, CALLER, n, requests, NULL, statuses);
}

int MPI_Testall(int n, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    if (!rec_on())
        return PMPI_Testall(n, requests, flag, statuses);
    return all_call(RECORD_CALL_MPI_Testall, CALLER, n, requests, flag, statuses);
}

/* Waitany and Testany: at most one completed, at *index. */
static int any_call(record_call call, void *site, int n, MPI_Request *requests, int *index,
                    int *flag, MPI_Status *status)
{
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    scratch s;
    if (scratch_take(&s, n, requests, MPI_STATUSES_IGNORE) != 0) {
        scratch_release(&s, MPI_STATUSES_IGNORE);
        return flag ? PMPI_Testany(n, requests, index, flag, status)
                    : PMPI_Waitany(n, requests, index, status);
    }
    enter(call, site);
    int rc = flag ? PMPI_Testany(n, requests, index, flag, status)
                  : PMPI_Waitany(n, requests, index, status);
    int done = flag ? *flag : 1;
    rec_lock();
    if (rc == MPI_SUCCESS && done && *index != MPI_UNDEFINED && *index >= 0 && *index < n)
        rec_complete(s.handles[*index], status, *index);
    else if (rc == MPI_SUCCESS && !done)
        record_tests(n, s.handles);
    rec_leave(call);
    rec_unlock();
    scratch_release(&s, MPI_STATUSES_IGNORE);
    return rc;
}

int MPI_Waitany(int n, MPI_Request requests[], int *index, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Waitany(n, requests, index, status);
    return any_call(RECORD_CALL_MPI_Waitany, CALLER, n, requests, index, NULL, status);
}

int MPI_Testany(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Testany(n, requests, index, flag, status);
    return any_call(RECORD_CALL_MPI_Testany, CALLER, n, requests, index, flag, status);
}

/* Waitsome and Testsome: *outcount completed, at indices[]. */
static int some_call(record_call call, void *site, int n, MPI_Request *requests, int *outcount,
                     int *indices, MPI_Status *statuses, int test)
{
    scratch s;
    if (scratch_take(&s, n, requests, statuses) != 0) {
        scratch_release(&s, statuses);
        return test ? PMPI_Testsome(n, requests, outcount, indices, statuses)
                    : PMPI_Waitsome(n, requests, outcount, indices, statuses);
    }
    enter(call, site);
    int rc = test ? PMPI_Testsome(n, requests, outcount, indices, s.statuses)
                  : PMPI_Waitsome(n, requests, outcount, indices, s.statuses);
    rec_lock();
    if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
        for (int k = 0; k < *outcount; k++)
            if (indices[k] >= 0 && indices[k] < n)
                rec_complete(s.handles[indices[k]], &s.statuses[k], indices[k]);
    if (rc == MPI_SUCCESS && test && *outcount == 0)
        record_tests(n, s.handles);
    rec_leave(call);
    rec_unlock();
    scratch_release(&s, statuses);
    return rc;
}

int MPI_Waitsome(int n, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (!rec_on())
        return PMPI_Waitsome(n, requests, outcount, indices, statuses);
    return some_call(RECORD_CALL_MPI_Waitsome, CALLER, n, requests, outcount, indices, statuses, 0);
}

int MPI_Testsome(int n, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (!rec_on())
        return PMPI_Testsome(n, requests, outcount, indices, statuses);
    return some_call(RECORD_CALL_MPI_Testsome, CALLER, n, requests, outcount, indices, statuses, 1);
}

/* Not recorded: the recorder only forgets the request, which no Wait or Test
 * will complete, so that its slot is free again. */
int MPI_Request_free(MPI_Request *request)
{
    if (rec_on()) {
        rec_request r;
        rec_lock();
        rec_request_find(*request, &r, 1);
        rec_unlock();
    }
    return PMPI_Request_free(request);
}

/* ---- probes --------------------------------------------------------------------- */

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Probe(source, tag, comm, status);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    int asked = source;
    rec_wildcard w;
    enter_receive(RECORD_CALL_MPI_Probe, CALLER, comm, &source, &w);
    int rc = PMPI_Probe(source, tag, comm, status);
    rec_lock();
    if (rc == MPI_SUCCESS)
        rec_probe(rec_comm(comm), rec_requested_source(asked), rec_requested_tag(tag),
                  status->MPI_SOURCE, status->MPI_TAG);
    rec_leave(RECORD_CALL_MPI_Probe);
    rec_unlock();
    return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (!rec_on())
        return PMPI_Iprobe(source, tag, comm, flag, status);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE)
        status = &own;
    int asked = source;
    rec_wildcard w;
    enter_receive(RECORD_CALL_MPI_Iprobe, CALLER, comm, &source, &w);
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    rec_lock();
    if (rc == MPI_SUCCESS && *flag && asked == MPI_ANY_SOURCE)
        rec_wildcard_found(&w);
    if (rc == MPI_SUCCESS)
        rec_probe(rec_comm(comm), rec_requested_source(asked), rec_requested_tag(tag),
                  *flag ? status->MPI_SOURCE : RECORD_NONE, *flag ? status->MPI_TAG : RECORD_NONE);
    rec_leave(RECORD_CALL_MPI_Iprobe);
    rec_unlock();
    return rc;
}
