/*
 * benign.c - a benign race: the master adds the workers' results in
 * whatever order they arrive, and every order completes (`earlc verify`
 * tests).  Usage: benign [MODE [DELAY]]
 *
 * The master finds each result with MPI_Probe(MPI_ANY_SOURCE) (MODE
 * "iprobe": polling with MPI_Iprobe) and takes it with MPI_Recv from the
 * source the probe found.  It prints "sum S"; in MODE "order" it also
 * prints, for each result, the worker it came from, so that the output
 * differs between orders.  The last worker sends DELAY
 * seconds late (default 0.1).  With n ranks there are (n-1)! match orders.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int order = argc > 1 && !strcmp(argv[1], "order");
    int poll = argc > 1 && !strcmp(argv[1], "iprobe");
    double delay = argc > 2 ? atof(argv[2]) : 0.1;
    if (rank == 0) {
        int sum = 0, value;
        MPI_Status st;
        for (int i = 1; i < n; i++) {
            int found = 0;
            if (poll)
                while (!found)
                    MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &found, &st);
            else
                MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
            MPI_Recv(&value, 1, MPI_INT, st.MPI_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (order)
                printf("from %d\n", st.MPI_SOURCE);
            sum += value;
        }
        printf("sum %d\n", sum);
    } else {
        int value = 10 * rank;
        if (rank == n - 1) {
            struct timespec ts = { (time_t)delay, (long)((delay - (time_t)delay) * 1e9) };
            nanosleep(&ts, NULL);
        }
        MPI_Send(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
