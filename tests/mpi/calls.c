/*
 * calls.c - every recorded point-to-point call, probe, completion call,
 * collective and communicator call once or more, on any number of ranks
 * (2, 3, 4).  Each rank prints what it did, one line per message or
 * collective, so that tests/python/test_record.py can compare the trace
 * with the program's own account:
 *
 *   msg RANK send|recv MEMBERS PEER TAG BYTES      (MEMBERS: world ranks of the comm)
 *   coll RANK OP MEMBERS ROOT                      (ROOT -1: none)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int world_rank;

static void members(MPI_Comm comm, char *out, size_t size)
{
    MPI_Group g, w;
    int n;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_size(g, &n);
    int *in = malloc(2 * (size_t)n * sizeof *in);
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, n, in, w, in + n);
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, size - len, i ? ",%d" : "%d", in[n + i]);
    free(in);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
}

static void say_msg(const char *dir, MPI_Comm comm, int peer, int tag, int bytes)
{
    char m[256];
    members(comm, m, sizeof m);
    printf("msg %d %s %s %d %d %d\n", world_rank, dir, m, peer, tag, bytes);
}

static void say_coll(const char *op, MPI_Comm comm, int root)
{
    char m[256];
    members(comm, m, sizeof m);
    printf("coll %d %s %s %d\n", world_rank, op, m, root);
}

/* A ring exchange on comm with one kind of send, received by MPI_Recv. */
static void ring(MPI_Comm comm, int kind, int tag)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    if (n < 2)
        return;
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    double out[4] = { r, r, r, r }, in[4];
    int count = 1 + kind % 4;
    MPI_Request req;
    MPI_Status st;
    switch (kind) {
    case 0: /* Send, small enough to be buffered eagerly */
        if (r % 2 == 0) {
            MPI_Send(out, count, MPI_DOUBLE, next, tag, comm);
            MPI_Recv(in, 4, MPI_DOUBLE, prev, tag, comm, &st);
        } else {
            MPI_Recv(in, 4, MPI_DOUBLE, prev, tag, comm, &st);
            MPI_Send(out, count, MPI_DOUBLE, next, tag, comm);
        }
        break;
    case 1: /* Ssend, ordered to avoid a deadlock */
        if (r % 2 == 0) {
            MPI_Ssend(out, count, MPI_DOUBLE, next, tag, comm);
            MPI_Recv(in, 4, MPI_DOUBLE, prev, tag, comm, &st);
        } else {
            MPI_Recv(in, 4, MPI_DOUBLE, prev, tag, comm, &st);
            MPI_Ssend(out, count, MPI_DOUBLE, next, tag, comm);
        }
        break;
    case 2: /* Isend + Irecv + Waitall */
    {
        MPI_Request two[2];
        MPI_Irecv(in, 4, MPI_DOUBLE, prev, tag, comm, &two[0]);
        MPI_Isend(out, count, MPI_DOUBLE, next, tag, comm, &two[1]);
        MPI_Status statuses[2];
        MPI_Waitall(2, two, statuses);
        break;
    }
    case 3: /* Issend + Probe + Recv + Wait */
        MPI_Issend(out, count, MPI_DOUBLE, next, tag, comm, &req);
        MPI_Probe(prev, tag, comm, &st);
        MPI_Recv(in, 4, MPI_DOUBLE, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    }
    say_msg("send", comm, next, tag, count * 8);
    say_msg("recv", comm, prev, tag, count * 8);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm world = MPI_COMM_WORLD;

    for (int kind = 0; kind < 4; kind++)
        ring(world, kind, 10 + kind);

    /* Sendrecv and Sendrecv_replace around the ring */
    int r = world_rank, next = (r + 1) % n, prev = (r + n - 1) % n;
    int a = r, b = -1;
    MPI_Sendrecv(&a, 1, MPI_INT, next, 20, &b, 1, MPI_INT, prev, 20, world, MPI_STATUS_IGNORE);
    say_msg("send", world, next, 20, 4);
    say_msg("recv", world, prev, 20, 4);
    long long c[2] = { r, r };
    MPI_Sendrecv_replace(c, 2, MPI_LONG_LONG, next, 21, prev, 21, world, MPI_STATUS_IGNORE);
    say_msg("send", world, next, 21, 16);
    say_msg("recv", world, prev, 21, 16);

    /* two sends that complete at once: MPICH gives both the same pre-completed
     * request, yet each has its own completion */
    MPI_Request four[4];
    MPI_Status four_st[4];
    int s1 = r, s2 = r, r1, r2;
    MPI_Irecv(&r1, 1, MPI_INT, prev, 22, world, &four[0]);
    MPI_Irecv(&r2, 1, MPI_INT, prev, 23, world, &four[1]);
    MPI_Isend(&s1, 1, MPI_INT, next, 22, world, &four[2]);
    MPI_Isend(&s2, 1, MPI_INT, next, 23, world, &four[3]);
    MPI_Waitall(4, four, four_st);
    for (int t = 22; t <= 23; t++) {
        say_msg("send", world, next, t, 4);
        say_msg("recv", world, prev, t, 4);
    }

    /* Bsend with an attached buffer, Rsend after the receive is posted
     * (a barrier orders them), Test until done, Iprobe until found */
    int bufsize = 1024 + MPI_BSEND_OVERHEAD;
    void *bsend_buf = malloc((size_t)bufsize);
    MPI_Buffer_attach(bsend_buf, bufsize);
    MPI_Request req;
    int x = r, y = -1, flag = 0;
    MPI_Irecv(&y, 1, MPI_INT, prev, 30, world, &req);
    MPI_Barrier(world);
    say_coll("BARRIER", world, -1);
    MPI_Bsend(&x, 1, MPI_INT, next, 30, world);
    say_msg("send", world, next, 30, 4);
    while (!flag)
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    say_msg("recv", world, prev, 30, 4);
    MPI_Irecv(&y, 1, MPI_INT, prev, 31, world, &req);
    MPI_Barrier(world);
    say_coll("BARRIER", world, -1);
    MPI_Rsend(&x, 1, MPI_INT, next, 31, world);
    say_msg("send", world, next, 31, 4);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    say_msg("recv", world, prev, 31, 4);
    MPI_Request two[2];
    MPI_Status statuses2[2];
    MPI_Ibsend(&x, 1, MPI_INT, next, 32, world, &two[0]);
    flag = 0;
    while (!flag)
        MPI_Iprobe(prev, 32, world, &flag, MPI_STATUS_IGNORE);
    MPI_Irecv(&y, 1, MPI_INT, prev, 32, world, &two[1]);
    flag = 0;
    while (!flag)
        MPI_Testall(2, two, &flag, statuses2);
    say_msg("send", world, next, 32, 4);
    say_msg("recv", world, prev, 32, 4);
    MPI_Buffer_detach(&bsend_buf, &bufsize);
    free(bsend_buf);

    /* collectives on world */
    int v = r, sum = 0, *all = malloc((size_t)n * 4 * sizeof *all), *counts = malloc((size_t)n * sizeof *counts),
        *displs = malloc((size_t)n * sizeof *displs);
    for (int i = 0; i < n; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    int root = n - 1;
    MPI_Bcast(&v, 1, MPI_INT, root, world);                 say_coll("BCAST", world, root);
    MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, world);    say_coll("REDUCE", world, 0);
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, world);    say_coll("ALLREDUCE", world, -1);
    MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, root, world); say_coll("GATHER", world, root);
    MPI_Gatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, 0, world); say_coll("GATHERV", world, 0);
    MPI_Scatter(all, 1, MPI_INT, &v, 1, MPI_INT, 0, world); say_coll("SCATTER", world, 0);
    MPI_Scatterv(all, counts, displs, MPI_INT, &v, 1, MPI_INT, root, world); say_coll("SCATTERV", world, root);
    MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, world);  say_coll("ALLGATHER", world, -1);
    MPI_Allgatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, world); say_coll("ALLGATHERV", world, -1);
    MPI_Alltoall(all, 1, MPI_INT, all + n, 1, MPI_INT, world); say_coll("ALLTOALL", world, -1);
    MPI_Alltoallv(all, counts, displs, MPI_INT, all + n, counts, displs, MPI_INT, world); say_coll("ALLTOALLV", world, -1);
    MPI_Reduce_scatter(all, &v, counts, MPI_INT, MPI_SUM, world); say_coll("REDUCE_SCATTER", world, -1);
    MPI_Reduce_scatter_block(all, &v, 1, MPI_INT, MPI_SUM, world); say_coll("REDUCE_SCATTER_BLOCK", world, -1);
    MPI_Scan(&v, &sum, 1, MPI_INT, MPI_SUM, world);         say_coll("SCAN", world, -1);
    MPI_Exscan(&v, &sum, 1, MPI_INT, MPI_SUM, world);       say_coll("EXSCAN", world, -1);

    /* communicators: split by parity (reversed order), dup, create from
     * the first half; messages and collectives on each */
    MPI_Comm split, dup, half;
    MPI_Comm_split(world, r % 2, -r, &split);
    ring(split, 2, 40);
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, split);   say_coll("ALLREDUCE", split, -1);
    MPI_Comm_dup(world, &dup);
    ring(dup, 0, 41);
    MPI_Barrier(dup);                                       say_coll("BARRIER", dup, -1);
    MPI_Group wg, hg;
    MPI_Comm_group(world, &wg);
    int lo[1][3] = { { 0, (n + 1) / 2 - 1, 1 } };
    MPI_Group_range_incl(wg, 1, lo, &hg);
    MPI_Comm_create(world, hg, &half);
    if (half != MPI_COMM_NULL) {
        ring(half, 3, 42);
        int hr;
        MPI_Comm_rank(half, &hr);
        MPI_Bcast(&v, 1, MPI_INT, 0, half);                 say_coll("BCAST", half, 0);
        MPI_Comm_free(&half);
    }
    MPI_Group_free(&hg);
    MPI_Group_free(&wg);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    free(all);
    free(counts);
    free(displs);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
