/*
 * master_worker.c - a master and its workers with a protocol bug that only
 * one order of arrival shows (`earlc verify` tests, docs/verify.md).
 * Usage: master_worker [DELAY]
 *
 * Every worker sends the master one result (tag 1), then waits for the
 * master's "stop" (tag 4).  The master takes the results with
 * MPI_Recv(MPI_ANY_SOURCE).  When the first result comes from the last
 * worker, the master first waits for a "ready" message (tag 3) from rank 1,
 * which no worker ever sends: every rank then waits in MPI_Recv, a
 * deadlock.  Otherwise it takes the other results, sends every worker
 * "stop" and prints the sum.  The last worker sends DELAY seconds late
 * (default 0.2), so a plain run takes another worker's result first and
 * completes.  With 3 ranks there are 2 match orders: rank 1's result
 * first (completes), rank 2's first (deadlock).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { RESULT = 1, READY = 3, STOP = 4 };

static void pause_for(double seconds)
{
    struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    double delay = argc > 1 ? atof(argv[1]) : 0.2;
    if (rank == 0) {
        int sum = 0, value, ready;
        MPI_Status st;
        for (int i = 1; i < n; i++) {
            MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, RESULT, MPI_COMM_WORLD, &st);
            if (i == 1 && st.MPI_SOURCE == n - 1 && n > 2)
                MPI_Recv(&ready, 1, MPI_INT, 1, READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum += value;
        }
        for (int w = 1; w < n; w++)
            MPI_Send(&sum, 1, MPI_INT, w, STOP, MPI_COMM_WORLD);
        printf("sum %d\n", sum);
    } else {
        int value = 10 * rank, stop;
        if (rank == n - 1)
            pause_for(delay);
        MPI_Send(&value, 1, MPI_INT, 0, RESULT, MPI_COMM_WORLD);
        MPI_Recv(&stop, 1, MPI_INT, 0, STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
