/*
 * stop.c - programs that do not end well.  Usage: stop MODE, with MODE
 *   deadlock  ranks 0..2 each wait in MPI_Recv for the next (a cycle);
 *             rank 3 and beyond wait in MPI_Barrier.  Run with a timeout.
 *   abort     rank 0 waits in MPI_Recv, rank 1 calls MPI_Abort after a
 *             message; the others wait in MPI_Barrier.
 *   kill      rank 1 kills itself (SIGKILL) after a message; rank 0 waits
 *             in MPI_Recv for another, the others in MPI_Barrier.
 * Before blocking, each rank exchanges one message so its record holds
 * something before the stop.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, v = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *mode = argc > 1 ? argv[1] : "deadlock";
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(mode, "deadlock")) {
        if (rank < 3 && n >= 3)
            MPI_Recv(&v, 1, MPI_INT, (rank + 1) % 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Barrier(MPI_COMM_WORLD);
    } else {
        if (rank == 1)
            MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            struct timespec ts = { 0, 300 * 1000 * 1000 }; /* let the others block first */
            nanosleep(&ts, NULL);
            if (!strcmp(mode, "abort"))
                MPI_Abort(MPI_COMM_WORLD, 3);
            else
                raise(SIGKILL);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
