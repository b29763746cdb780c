/*
 * late_sender.c - a deliberate late sender: rank 1 sleeps SECONDS before
 * each of ITERATIONS sends while rank 0 already waits in MPI_Recv, so the
 * Late Sender severity is about ITERATIONS x SECONDS.
 * Usage: late_sender SECONDS ITERATIONS
 */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double seconds = argc > 1 ? atof(argv[1]) : 0.2;
    int iterations = argc > 2 ? atoi(argv[2]) : 2;
    int rank, value = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < iterations; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
            nanosleep(&ts, NULL);
            MPI_Send(&value, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&value, 1, MPI_INT, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
