/*
 * record_coll.c - the recorded collectives and communicator calls.
 *
 * A collective is ENTER, MPI_COLLECTIVE_BEGIN, the call, MPI_COLLECTIVE_END
 * (operation, communicator, root, bytes sent and received by this process),
 * LEAVE, as Score-P records it.  Bytes are counted as Score-P counts them:
 * data a process sends to every member counts once per member (itself
 * included), so an Allreduce or Allgather of one block sends and receives n
 * blocks, a Bcast root sends n blocks and every member receives one, a
 * Reduce or Gather root receives n and every member sends one, a Scatter the
 * reverse.
 *
 * MPI_Comm_dup, _split and _create are recorded as their ENTER/LEAVE and
 * define the new communicator with its members (record_handles.c);
 * MPI_Comm_free forgets the handle.
 */
#include <otf2/OTF2_Events.h>

#include "record_internal.h"

static void coll_enter(record_call call, void *site)
{
    uint64_t t = record_now();
    rec_lock();
    rec_enter(call, t, site);
    rec_collective_begin();
    rec_unlock();
}

static void coll_leave(record_call call, uint8_t op, MPI_Comm comm, int root, uint64_t sent,
                       uint64_t received)
{
    rec_lock();
    rec_collective_end(op, rec_comm(comm), root, sent, received);
    rec_leave(call);
    rec_unlock();
}

static int comm_size(MPI_Comm comm)
{
    int n = 0;
    PMPI_Comm_size(comm, &n);
    return n;
}

static int comm_rank(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r;
}

/* sum(counts[0..n)) elements of type, in bytes */
static uint64_t sum_bytes(const int *counts, int n, MPI_Datatype type)
{
    uint64_t total = 0;
    for (int i = 0; counts && i < n; i++)
        total += rec_bytes(counts[i], type);
    return total;
}

int MPI_Barrier(MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Barrier(comm);
    coll_enter(RECORD_CALL_MPI_Barrier, CALLER);
    int rc = PMPI_Barrier(comm);
    coll_leave(RECORD_CALL_MPI_Barrier, OTF2_COLLECTIVE_OP_BARRIER, comm, RECORD_NONE, 0, 0);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Bcast(buf, count, type, root, comm);
    coll_enter(RECORD_CALL_MPI_Bcast, CALLER);
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    uint64_t b = rec_bytes(count, type);
    int is_root = comm_rank(comm) == root;
    coll_leave(RECORD_CALL_MPI_Bcast, OTF2_COLLECTIVE_OP_BCAST, comm, root,
               is_root ? b * (uint64_t)comm_size(comm) : 0, b);
    return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    coll_enter(RECORD_CALL_MPI_Reduce, CALLER);
    int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    uint64_t b = rec_bytes(count, type);
    int is_root = comm_rank(comm) == root;
    coll_leave(RECORD_CALL_MPI_Reduce, OTF2_COLLECTIVE_OP_REDUCE, comm, root, b,
               is_root ? b * (uint64_t)comm_size(comm) : 0);
    return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    coll_enter(RECORD_CALL_MPI_Allreduce, CALLER);
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    uint64_t b = rec_bytes(count, type) * (uint64_t)comm_size(comm);
    coll_leave(RECORD_CALL_MPI_Allreduce, OTF2_COLLECTIVE_OP_ALLREDUCE, comm, RECORD_NONE, b, b);
    return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    coll_enter(RECORD_CALL_MPI_Gather, CALLER);
    int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int is_root = comm_rank(comm) == root;
    uint64_t block = is_root ? rec_bytes(recvcount, recvtype) : 0;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? block : rec_bytes(sendcount, sendtype);
    coll_leave(RECORD_CALL_MPI_Gather, OTF2_COLLECTIVE_OP_GATHER, comm, root, sent,
               block * (uint64_t)comm_size(comm));
    return rc;
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
    coll_enter(RECORD_CALL_MPI_Gatherv, CALLER);
    int rc = PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm);
    int rank = comm_rank(comm), is_root = rank == root;
    uint64_t received = is_root ? sum_bytes(recvcounts, comm_size(comm), recvtype) : 0;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? rec_bytes(recvcounts[rank], recvtype)
                                            : rec_bytes(sendcount, sendtype);
    coll_leave(RECORD_CALL_MPI_Gatherv, OTF2_COLLECTIVE_OP_GATHERV, comm, root, sent, received);
    return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    coll_enter(RECORD_CALL_MPI_Scatter, CALLER);
    int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int is_root = comm_rank(comm) == root;
    uint64_t sent = is_root ? rec_bytes(sendcount, sendtype) * (uint64_t)comm_size(comm) : 0;
    uint64_t received = recvbuf == MPI_IN_PLACE ? rec_bytes(sendcount, sendtype)
                                                : rec_bytes(recvcount, recvtype);
    coll_leave(RECORD_CALL_MPI_Scatter, OTF2_COLLECTIVE_OP_SCATTER, comm, root, sent, received);
    return rc;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                             root, comm);
    coll_enter(RECORD_CALL_MPI_Scatterv, CALLER);
    int rc = PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm);
    int rank = comm_rank(comm), is_root = rank == root;
    uint64_t sent = is_root ? sum_bytes(sendcounts, comm_size(comm), sendtype) : 0;
    uint64_t received = recvbuf == MPI_IN_PLACE ? rec_bytes(sendcounts[rank], sendtype)
                                                : rec_bytes(recvcount, recvtype);
    coll_leave(RECORD_CALL_MPI_Scatterv, OTF2_COLLECTIVE_OP_SCATTERV, comm, root, sent, received);
    return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    coll_enter(RECORD_CALL_MPI_Allgather, CALLER);
    int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    uint64_t n = (uint64_t)comm_size(comm), block = rec_bytes(recvcount, recvtype);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? block : rec_bytes(sendcount, sendtype);
    coll_leave(RECORD_CALL_MPI_Allgather, OTF2_COLLECTIVE_OP_ALLGATHER, comm, RECORD_NONE,
               sent * n, block * n);
    return rc;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    coll_enter(RECORD_CALL_MPI_Allgatherv, CALLER);
    int rc = PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             comm);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? rec_bytes(recvcounts[comm_rank(comm)], recvtype)
                                            : rec_bytes(sendcount, sendtype);
    coll_leave(RECORD_CALL_MPI_Allgatherv, OTF2_COLLECTIVE_OP_ALLGATHERV, comm, RECORD_NONE,
               sent * (uint64_t)comm_size(comm), sum_bytes(recvcounts, comm_size(comm), recvtype));
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    coll_enter(RECORD_CALL_MPI_Alltoall, CALLER);
    int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    uint64_t n = (uint64_t)comm_size(comm);
    uint64_t received = rec_bytes(recvcount, recvtype) * n;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? received : rec_bytes(sendcount, sendtype) * n;
    coll_leave(RECORD_CALL_MPI_Alltoall, OTF2_COLLECTIVE_OP_ALLTOALL, comm, RECORD_NONE, sent,
               received);
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    coll_enter(RECORD_CALL_MPI_Alltoallv, CALLER);
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm);
    int n = comm_size(comm);
    uint64_t received = sum_bytes(recvcounts, n, recvtype);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? received : sum_bytes(sendcounts, n, sendtype);
    coll_leave(RECORD_CALL_MPI_Alltoallv, OTF2_COLLECTIVE_OP_ALLTOALLV, comm, RECORD_NONE, sent,
               received);
    return rc;
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
    coll_enter(RECORD_CALL_MPI_Reduce_scatter, CALLER);
    int rc = PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
    coll_leave(RECORD_CALL_MPI_Reduce_scatter, OTF2_COLLECTIVE_OP_REDUCE_SCATTER, comm,
               RECORD_NONE, sum_bytes(recvcounts, comm_size(comm), type),
               rec_bytes(recvcounts[comm_rank(comm)], type));
    return rc;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    coll_enter(RECORD_CALL_MPI_Reduce_scatter_block, CALLER);
    int rc = PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    uint64_t b = rec_bytes(recvcount, type);
    coll_leave(RECORD_CALL_MPI_Reduce_scatter_block, OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
               comm, RECORD_NONE, b * (uint64_t)comm_size(comm), b);
    return rc;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
    coll_enter(RECORD_CALL_MPI_Scan, CALLER);
    int rc = PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
    uint64_t b = rec_bytes(count, type);
    coll_leave(RECORD_CALL_MPI_Scan, OTF2_COLLECTIVE_OP_SCAN, comm, RECORD_NONE, b, b);
    return rc;
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    if (!rec_on())
        return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
    coll_enter(RECORD_CALL_MPI_Exscan, CALLER);
    int rc = PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
    uint64_t b = rec_bytes(count, type);
    coll_leave(RECORD_CALL_MPI_Exscan, OTF2_COLLECTIVE_OP_EXSCAN, comm, RECORD_NONE, b, b);
    return rc;
}

/* ---- communicators -------------------------------------------------------------- */

static void plain_enter(record_call call, void *site)
{
    uint64_t t = record_now();
    rec_lock();
    rec_enter(call, t, site);
    rec_unlock();
}

/* LEAVE of a creating call, after defining what it created. */
static void created(record_call call, int rc, MPI_Comm comm)
{
    rec_lock();
    if (rc == MPI_SUCCESS)
        rec_comm_created(comm);
    rec_leave(call);
    rec_unlock();
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    if (!rec_on())
        return PMPI_Comm_dup(comm, newcomm);
    plain_enter(RECORD_CALL_MPI_Comm_dup, CALLER);
    int rc = PMPI_Comm_dup(comm, newcomm);
    created(RECORD_CALL_MPI_Comm_dup, rc, *newcomm);
    return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    if (!rec_on())
        return PMPI_Comm_split(comm, color, key, newcomm);
    plain_enter(RECORD_CALL_MPI_Comm_split, CALLER);
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    created(RECORD_CALL_MPI_Comm_split, rc, *newcomm);
    return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    if (!rec_on())
        return PMPI_Comm_create(comm, group, newcomm);
    plain_enter(RECORD_CALL_MPI_Comm_create, CALLER);
    int rc = PMPI_Comm_create(comm, group, newcomm);
    created(RECORD_CALL_MPI_Comm_create, rc, *newcomm);
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    if (!rec_on())
        return PMPI_Comm_free(comm);
    plain_enter(RECORD_CALL_MPI_Comm_free, CALLER);
    rec_lock();
    rec_comm_freed(*comm);
    rec_unlock();
    int rc = PMPI_Comm_free(comm);
    rec_lock();
    rec_leave(RECORD_CALL_MPI_Comm_free);
    rec_unlock();
    return rc;
}
