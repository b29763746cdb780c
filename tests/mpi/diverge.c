/*
 * diverge.c - an alternative that cannot be forced: the program takes
 * another path on the next run (`earlc verify` tests).  Run with 3 ranks.
 * Usage: diverge MARKER
 *
 * Rank 2 first tells rank 0 (tag 9) how many messages it will send: one
 * when the file MARKER does not exist yet (it then creates it), none after.
 * Rank 1 sends one.  Rank 0 takes that many plus one with
 * MPI_Recv(MPI_ANY_SOURCE).  On the first run rank 2's message comes 0.2 s
 * late, so rank 0 takes rank 1's first and rank 2's second; the alternative
 * (rank 2's first) cannot be forced on a later run, where rank 2 sends
 * nothing: the forced receive waits until the timeout.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, value = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        int k;
        MPI_Recv(&k, 1, MPI_INT, 2, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i <= k; i++)
            MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 2) {
        FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
        int k = f == NULL;
        if (f)
            fclose(f);
        else if (argc > 1 && (f = fopen(argv[1], "w")) != NULL)
            fclose(f);
        MPI_Send(&k, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
        if (k) {
            struct timespec ts = { 0, 200 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
