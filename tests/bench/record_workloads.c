/*
 * record_workloads.c - the two workloads of record_bench.py, timed by the
 * program itself around the communication loop only (MPI_Init and the
 * recorder's start-up are not in it):
 *
 *   pingpong ITERATIONS   ranks 0 and 1 exchange a 8-byte message back and
 *                         forth: MPI_Send + MPI_Recv per rank per iteration
 *   self ITERATIONS       each rank sends itself a message: MPI_Isend,
 *                         MPI_Recv, MPI_Wait; no waiting for a partner, so
 *                         the loop's time is the calls' own cost
 *   wild ITERATIONS       the same with MPI_Recv(MPI_ANY_SOURCE): a wildcard
 *                         receive, which `earlc verify` may force
 *                         (verify_bench.py)
 *   halo ITERATIONS       a 1-D periodic halo exchange of 64 doubles with
 *                         both neighbours: 2 MPI_Irecv, 2 MPI_Isend and one
 *                         MPI_Waitall per rank per iteration
 *
 * Rank 0 prints "seconds CALLS peak_rss_kb": the loop's time, the MPI calls
 * it made in the loop, and its peak resident set (VmHWM).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *kind = argc > 1 ? argv[1] : "pingpong";
    long iterations = argc > 2 ? atol(argv[2]) : 100000;
    long calls = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (!strcmp(kind, "pingpong")) {
        double x = 0;
        for (long i = 0; i < iterations && rank < 2; i++) {
            if (rank == 0) {
                MPI_Send(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            }
            calls += 2;
        }
    } else if (!strcmp(kind, "self") || !strcmp(kind, "wild")) {
        double x = 0, y;
        MPI_Request r;
        int from = !strcmp(kind, "wild") ? MPI_ANY_SOURCE : rank;
        for (long i = 0; i < iterations; i++) {
            MPI_Isend(&x, 1, MPI_DOUBLE, rank, 3, MPI_COMM_WORLD, &r);
            MPI_Recv(&y, 1, MPI_DOUBLE, from, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            calls += 3;
        }
    } else {
        double out[2][64] = { { 0 } }, in[2][64];
        int left = (rank + n - 1) % n, right = (rank + 1) % n;
        MPI_Request r[4];
        MPI_Status st[4];
        for (long i = 0; i < iterations; i++) {
            MPI_Irecv(in[0], 64, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(in[1], 64, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &r[1]);
            MPI_Isend(out[0], 64, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &r[2]);
            MPI_Isend(out[1], 64, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &r[3]);
            MPI_Waitall(4, r, st);
            calls += 5;
        }
    }
    t = MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.9f %ld %ld\n", t, calls, peak_rss_kb());
    MPI_Finalize();
    return 0;
}
