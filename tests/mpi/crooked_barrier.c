/*
 * crooked_barrier.c - Vo's crooked barrier: a program that aborts in one
 * match order only, an order no plain run shows (`earlc verify` tests).
 * Run with 3 ranks.  Usage: crooked_barrier [abort|signal|exit]
 *
 * Rank 1 posts MPI_Irecv(MPI_ANY_SOURCE) into x, enters a barrier, then
 * takes a second message with MPI_Recv(MPI_ANY_SOURCE) into y and waits for
 * the first.  Rank 0 sends 22 before the barrier, rank 2 sends 33 after it.
 * MPI lets the pending MPI_Irecv take rank 2's message, posted after the
 * barrier; then x is 33 and rank 1 calls MPI_Abort (error code 3), or
 * kills itself with SIGSEGV (signal), or exits with status 3 without
 * MPI_Finalize (exit).  A plain run takes rank 0's message (it was sent long before) and completes:
 * 2 match orders, 1 aborts.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        int x = 0, y = 0;
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (x == 33) {
            const char *how = argc > 1 ? argv[1] : "abort";
            fprintf(stderr, "crooked_barrier: x is 33\n");
            if (!strcmp(how, "signal"))
                raise(SIGSEGV);
            else if (!strcmp(how, "exit"))
                exit(3);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        printf("x %d y %d\n", x, y);
    } else {
        int value = rank == 0 ? 22 : 33;
        MPI_Request r;
        if (rank == 0)
            MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 2)
            MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
        if (rank <= 2)
            MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
