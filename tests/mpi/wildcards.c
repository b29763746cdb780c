/*
 * wildcards.c - receives that ask for MPI_ANY_SOURCE and MPI_ANY_TAG, with
 * MPI_Recv, MPI_Irecv and MPI_Probe, and a Waitany / Waitsome / Testany
 * loop over requests from every other rank.  Rank 0 prints what it asked
 * for and what arrived, and which request each completion call completed:
 *
 *   recv ASKED_SOURCE ASKED_TAG SOURCE TAG     (-1: the wildcard)
 *   any CALL INDEX SOURCE TAG                  (CALL: waitany, waitsome, testany)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int wild(int v, int wildcard) { return v == wildcard ? -1 : v; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, v = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Status st;
    if (rank != 0) {
        MPI_Send(&rank, 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);   /* any source, any tag */
        MPI_Barrier(MPI_COMM_WORLD); /* rank 0 has taken these before any other is sent */
        MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);            /* any source, tag 7 */
        MPI_Send(&rank, 1, MPI_INT, 0, 200 + rank, MPI_COMM_WORLD);   /* Irecv from me, any tag */
        MPI_Send(&rank, 1, MPI_INT, 0, 300, MPI_COMM_WORLD);          /* probe: any source */
        for (int round = 0; round < 3; round++)                       /* the completion loops */
            MPI_Send(&rank, 1, MPI_INT, 0, 400 + round, MPI_COMM_WORLD);
    } else {
        int asks[2][2] = { { MPI_ANY_SOURCE, MPI_ANY_TAG }, { MPI_ANY_SOURCE, 7 } };
        for (int k = 0; k < 2; k++) {
            if (k == 1)
                MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 1; i < n; i++) {
                MPI_Recv(&v, 1, MPI_INT, asks[k][0], asks[k][1], MPI_COMM_WORLD, &st);
                printf("recv %d %d %d %d\n", wild(asks[k][0], MPI_ANY_SOURCE),
                       wild(asks[k][1], MPI_ANY_TAG), st.MPI_SOURCE, st.MPI_TAG);
            }
        }
        for (int i = 1; i < n; i++) {
            MPI_Request req;
            MPI_Irecv(&v, 1, MPI_INT, i, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, &st);
            printf("recv %d %d %d %d\n", i, -1, st.MPI_SOURCE, st.MPI_TAG);
        }
        for (int i = 1; i < n; i++) {
            MPI_Probe(MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, &st);
            MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 300, MPI_COMM_WORLD, &st);
            printf("recv %d %d %d %d\n", st.MPI_SOURCE, 300, st.MPI_SOURCE, st.MPI_TAG);
        }
        int *vals = malloc((size_t)n * sizeof *vals), *idx = malloc((size_t)n * sizeof *idx);
        MPI_Request *reqs = malloc((size_t)n * sizeof *reqs);
        MPI_Status *sts = malloc((size_t)n * sizeof *sts);
        const char *names[3] = { "waitany", "waitsome", "testany" };
        for (int round = 0; round < 3; round++) {
            /* request i-1 waits for rank n-i: the last rank's is at index 0 */
            for (int i = 1; i < n; i++)
                MPI_Irecv(&vals[i], 1, MPI_INT, n - i, 400 + round, MPI_COMM_WORLD, &reqs[i - 1]);
            int left = n - 1;
            while (left > 0) {
                int index, flag = 1, count = 1;
                if (round == 0)
                    MPI_Waitany(n - 1, reqs, &index, &st);
                else if (round == 1) {
                    MPI_Waitsome(n - 1, reqs, &count, idx, sts);
                } else {
                    MPI_Testany(n - 1, reqs, &index, &flag, &st);
                }
                if (!flag)
                    continue;
                for (int k = 0; k < count; k++) {
                    int at = round == 1 ? idx[k] : index;
                    MPI_Status *s = round == 1 ? &sts[k] : &st;
                    printf("any %s %d %d %d\n", names[round], at, s->MPI_SOURCE, s->MPI_TAG);
                }
                left -= count;
            }
        }
        free(vals); free(idx); free(reqs); free(sts);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
