/*
 * gen_large.c - write a large, honest MPI trace with earl_writer.
 *
 *   gen_large DIR N_EVENTS [RANKS]
 *
 * RANKS processes of one thread each (default 16) run iterations of: a user
 * function "compute" of rank-dependent length inside "iteration", a ring
 * exchange (MPI_Send to the right, MPI_Recv from the left, the receive ending
 * after the matching send began), every 5th iteration an MPI_Allreduce over
 * MPI_COMM_WORLD that ends on every rank after the last rank entered it, and
 * every 7th iteration an MPI_Isend / MPI_Irecv / MPI_Waitall exchange with
 * request ids.  It stops after about N_EVENTS events and prints the number of
 * events written and the rate (events per second, close included).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <otf2/otf2.h>

#include "earl_writer.h"
#include "bench.h"

static earl_error err;

#define TRY(call)                                                      \
    do {                                                               \
        if ((call) != EARL_OK) {                                       \
            fprintf(stderr, "gen_large: %s\n", err.message);           \
            exit(1);                                                   \
        }                                                              \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t jitter(uint64_t range) /* xorshift64 */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return range ? rng % range : 0;
}

static uint32_t region(earl_writer *w, const char *name, uint8_t role, uint8_t paradigm)
{
    earl_writer_region_def d = { .name = name, .role = role, .paradigm = paradigm };
    uint32_t ref;
    TRY(earl_writer_region(w, &d, &ref, &err));
    return ref;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s DIR N_EVENTS [RANKS]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    uint64_t target = strtoull(argv[2], NULL, 10);
    uint32_t ranks = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 16;
    if (ranks < 2) {
        fprintf(stderr, "gen_large: at least 2 ranks\n");
        return 2;
    }

    double t0 = bench_now();
    earl_writer *w;
    TRY(earl_writer_open(dir, "traces", 1000000000u, EARL_WRITER_OVERWRITE, &w, &err));
    uint32_t machine, node, ref, world;
    TRY(earl_writer_system_node(w, "Linux", "machine", EARL_UNDEFINED_REF, &machine, &err));
    TRY(earl_writer_system_node(w, "node0", "node", machine, &node, &err));
    earl_loc *loc = malloc(ranks * sizeof *loc);
    earl_time *t = malloc(ranks * sizeof *t);
    earl_time *sent_at = malloc(ranks * sizeof *sent_at);
    if (!loc || !t || !sent_at)
        return 1;
    for (uint32_t r = 0; r < ranks; r++) {
        char name[32];
        snprintf(name, sizeof name, "MPI Rank %u", r);
        TRY(earl_writer_process(w, name, node, (int32_t)r, &ref, &err));
        TRY(earl_writer_location(w, ref, "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                                 EARL_WRITER_AUTO_ID, &loc[r], &err));
        t[r] = 1000 + jitter(100);
    }
    TRY(earl_writer_comm_world(w, NULL, &world, &err));
    uint32_t r_main = region(w, "main", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER);
    uint32_t r_iter = region(w, "iteration", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER);
    uint32_t r_comp = region(w, "compute", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER);
    uint32_t r_send = region(w, "MPI_Send", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI);
    uint32_t r_recv = region(w, "MPI_Recv", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI);
    uint32_t r_isend = region(w, "MPI_Isend", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI);
    uint32_t r_irecv = region(w, "MPI_Irecv", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI);
    uint32_t r_wait = region(w, "MPI_Waitall", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI);
    uint32_t r_allr = region(w, "MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI);
    uint32_t prog;
    TRY(earl_writer_string(w, "./ring", &prog, &err));

    earl_writer_record pb = { .ref = prog };
    for (uint32_t r = 0; r < ranks; r++) {
        TRY(earl_writer_event(w, EARL_PROGRAM_BEGIN, loc[r], t[r]++, &pb, &err));
        TRY(earl_writer_enter(w, loc[r], t[r]++, r_main, &err));
    }
    const uint64_t latency = 800, per_byte_ns = 1; /* 1 GB/s */
    const uint64_t bytes = 4096;
    uint64_t request = 1;
    /* Events per rank of the closing part: LEAVE main, PROGRAM_END. */
    uint64_t written = 2 * (uint64_t)ranks;
    for (uint64_t it = 0; written + 2 * (uint64_t)ranks < target; it++) {
        /* compute */
        for (uint32_t r = 0; r < ranks; r++) {
            TRY(earl_writer_enter(w, loc[r], t[r], r_iter, &err));
            TRY(earl_writer_enter(w, loc[r], t[r] + 10, r_comp, &err));
            t[r] += 10 + 20000 + 50 * r + jitter(3000);
            TRY(earl_writer_leave(w, loc[r], t[r], r_comp, &err));
        }
        written += 3 * (uint64_t)ranks;
        /* ring: eager send to the right, then receive from the left */
        for (uint32_t r = 0; r < ranks; r++) {
            uint32_t right = (r + 1) % ranks;
            TRY(earl_writer_enter(w, loc[r], t[r] += 5, r_send, &err));
            sent_at[r] = t[r] += 20;
            TRY(earl_writer_mpi_send(w, loc[r], t[r], right, world, 1, bytes, &err));
            TRY(earl_writer_leave(w, loc[r], t[r] += 300, r_send, &err));
        }
        for (uint32_t r = 0; r < ranks; r++) {
            uint32_t left = (r + ranks - 1) % ranks;
            TRY(earl_writer_enter(w, loc[r], t[r] += 5, r_recv, &err));
            earl_time arrival = sent_at[left] + latency + bytes * per_byte_ns;
            t[r] = (arrival > t[r] ? arrival : t[r]) + 30;
            TRY(earl_writer_mpi_recv(w, loc[r], t[r], left, world, 1, bytes, &err));
            TRY(earl_writer_leave(w, loc[r], t[r] += 20, r_recv, &err));
        }
        written += 6 * (uint64_t)ranks;
        if (it % 5 == 4) { /* MPI_Allreduce over MPI_COMM_WORLD */
            earl_time last_in = 0;
            for (uint32_t r = 0; r < ranks; r++) {
                TRY(earl_writer_enter(w, loc[r], t[r] += 5, r_allr, &err));
                TRY(earl_writer_mpi_collective_begin(w, loc[r], t[r] += 10, &err));
                if (t[r] > last_in)
                    last_in = t[r];
            }
            for (uint32_t r = 0; r < ranks; r++) {
                t[r] = last_in + 2000 + jitter(200);
                TRY(earl_writer_mpi_collective_end(w, loc[r], t[r], OTF2_COLLECTIVE_OP_ALLREDUCE,
                                                   world, EARL_UNDEFINED_REF, 8, 8 * ranks, &err));
                TRY(earl_writer_leave(w, loc[r], t[r] += 10, r_allr, &err));
            }
            written += 4 * (uint64_t)ranks;
        }
        if (it % 7 == 6) { /* MPI_Isend right / MPI_Irecv left / MPI_Waitall */
            uint64_t base = request;
            for (uint32_t r = 0; r < ranks; r++) {
                uint32_t right = (r + 1) % ranks, left = (r + ranks - 1) % ranks;
                uint64_t sreq = base + 2 * r, rreq = base + 2 * r + 1;
                TRY(earl_writer_enter(w, loc[r], t[r] += 5, r_isend, &err));
                sent_at[r] = t[r] += 10;
                TRY(earl_writer_mpi_isend(w, loc[r], t[r], right, world, 2, bytes, sreq, &err));
                TRY(earl_writer_leave(w, loc[r], t[r] += 50, r_isend, &err));
                TRY(earl_writer_enter(w, loc[r], t[r] += 5, r_irecv, &err));
                TRY(earl_writer_mpi_irecv_request(w, loc[r], t[r] += 10, rreq, &err));
                TRY(earl_writer_leave(w, loc[r], t[r] += 50, r_irecv, &err));
                (void)left;
            }
            for (uint32_t r = 0; r < ranks; r++) {
                uint32_t left = (r + ranks - 1) % ranks;
                uint64_t sreq = base + 2 * r, rreq = base + 2 * r + 1;
                TRY(earl_writer_enter(w, loc[r], t[r] += 5, r_wait, &err));
                TRY(earl_writer_mpi_isend_complete(w, loc[r], t[r] += 10, sreq, &err));
                earl_time arrival = sent_at[left] + latency + bytes * per_byte_ns;
                t[r] = (arrival > t[r] ? arrival : t[r]) + 20;
                TRY(earl_writer_mpi_irecv(w, loc[r], t[r], left, world, 2, bytes, rreq, &err));
                TRY(earl_writer_leave(w, loc[r], t[r] += 10, r_wait, &err));
            }
            request += 2 * (uint64_t)ranks;
            written += 10 * (uint64_t)ranks;
        }
        for (uint32_t r = 0; r < ranks; r++)
            TRY(earl_writer_leave(w, loc[r], t[r] += 5, r_iter, &err));
        written += ranks;
    }
    earl_writer_record pe = { .exit_status = 0 };
    for (uint32_t r = 0; r < ranks; r++) {
        TRY(earl_writer_leave(w, loc[r], t[r] += 5, r_main, &err));
        TRY(earl_writer_event(w, EARL_PROGRAM_END, loc[r], t[r] += 5, &pe, &err));
    }
    written += 2 * (uint64_t)ranks;
    uint64_t n = earl_writer_event_count(w, -1);
    if (n != written) {
        fprintf(stderr, "gen_large: counted %llu events, the writer %llu\n",
                (unsigned long long)written, (unsigned long long)n);
        return 1;
    }
    double t_events = bench_now();
    TRY(earl_writer_close(w, &err));
    double t1 = bench_now();
    printf("gen_large: %llu events on %u ranks written to %s/traces.otf2\n",
           (unsigned long long)n, ranks, dir);
    printf("gen_large: %.3f s (close %.3f s), %.2f million events/s\n", t1 - t0, t1 - t_events,
           (double)n / (t1 - t0) / 1e6);
    free(loc);
    free(t);
    free(sent_at);
    return 0;
}
