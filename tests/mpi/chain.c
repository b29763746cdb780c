/*
 * chain.c - a chain of ROUNDS wildcard receives whose failure needs two of
 * them to take the late message (`earlc verify` tests).  Run with 3 ranks.
 * Usage: chain ROUNDS [DELAY [sendrecv]]
 *
 * In round k, ranks 1 and 2 each send rank 0 a message with tag k, rank 2
 * DELAY seconds late (default 0.1).  Rank 0 takes the first with
 * MPI_Recv(MPI_ANY_SOURCE, k) (with "sendrecv": MPI_Sendrecv sending nothing,
 * to MPI_PROC_NULL) and the other with MPI_Recv from its sender.
 * After the last round it calls MPI_Abort (error code 2) when rank 2's
 * message came first in two rounds or more.  A plain run takes rank 1's
 * every time; of the 2^ROUNDS match orders, those with two or more rounds
 * flipped abort: with 2 rounds 1 of 4, with 3 rounds 4 of 8 (3 with exactly
 * two flips).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    double delay = argc > 2 ? atof(argv[2]) : 0.1;
    int sendrecv = argc > 3 && !strcmp(argv[3], "sendrecv");
    int value = rank;
    if (rank == 0) {
        int late = 0;
        MPI_Status st;
        for (int k = 0; k < rounds; k++) {
            if (sendrecv)
                MPI_Sendrecv(&late, 1, MPI_INT, MPI_PROC_NULL, 0, &value, 1, MPI_INT,
                             MPI_ANY_SOURCE, k, MPI_COMM_WORLD, &st);
            else
                MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, k, MPI_COMM_WORLD, &st);
            MPI_Recv(&value, 1, MPI_INT, 3 - st.MPI_SOURCE, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            late += st.MPI_SOURCE == 2;
        }
        if (late >= 2) {
            fprintf(stderr, "chain: rank 2 first in %d rounds\n", late);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        printf("late %d\n", late);
    } else if (rank <= 2) {
        for (int k = 0; k < rounds; k++) {
            if (rank == 2) {
                struct timespec ts = { (time_t)delay, (long)((delay - (time_t)delay) * 1e9) };
                nanosleep(&ts, NULL);
            }
            MPI_Send(&value, 1, MPI_INT, 0, k, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
