/*
 * record_handles.c - the MPI handles the recorder follows: pending
 * non-blocking requests (what was posted, until a Wait or Test completes
 * it) and live communicators (the recorder's id of each, and its members
 * written to the defs file once).
 *
 * A request the program frees (MPI_Request_free) is forgotten.
 *
 * Both tables are fixed-size (RECORD_MAX_REQUESTS, RECORD_MAX_COMMS) so the
 * recorder's memory is bounded; what does not fit is counted in the defs
 * file ("lost-request", "lost-comm") and recorded without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_internal.h"

/* ---- requests: open addressing on the handle's bits ------------------------ */

typedef struct request_slot {
    uint64_t key;
    uint8_t used;
    rec_request r;
} request_slot;

static request_slot requests[RECORD_MAX_REQUESTS];
static unsigned n_requests;

static uint64_t handle_key(MPI_Request handle)
{
    uint64_t key = 0;
    memcpy(&key, &handle, sizeof handle < sizeof key ? sizeof handle : sizeof key);
    return key;
}

static size_t home_of(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return key & (RECORD_MAX_REQUESTS - 1);
}

static size_t find_slot(uint64_t key)
{
    size_t j = home_of(key);
    while (requests[j].used && requests[j].key != key)
        j = (j + 1) & (RECORD_MAX_REQUESTS - 1);
    return j;
}

/* Several pending requests may share a handle: MPICH gives every send that
 * completed at once the same pre-completed request.  So a handle is a key
 * that may repeat; a completion takes the first entry of its handle. */
uint32_t rec_request_add(MPI_Request handle, const rec_request *r)
{
    uint64_t key = handle_key(handle);
    /* keep probe chains short: at most three quarters full */
    if (n_requests + 1 > RECORD_MAX_REQUESTS / 4 * 3) {
        if (!rec.lost_requests++)
            record_log_def(rec.log, "lost-request first");
        return 0;
    }
    size_t j = home_of(key);
    while (requests[j].used)
        j = (j + 1) & (RECORD_MAX_REQUESTS - 1);
    n_requests++;
    requests[j].used = 1;
    requests[j].key = key;
    requests[j].r = *r;
    requests[j].r.id = rec.next_request++;
    return requests[j].r.id;
}

int rec_request_find(MPI_Request handle, rec_request *out, int take)
{
    if (!n_requests)
        return 0;
    size_t j = find_slot(handle_key(handle));
    if (!requests[j].used)
        return 0;
    *out = requests[j].r;
    if (!take)
        return 1;
    /* remove, moving later members of the chain back into the hole */
    requests[j].used = 0;
    n_requests--;
    size_t k = (j + 1) & (RECORD_MAX_REQUESTS - 1);
    while (requests[k].used) {
        size_t home = home_of(requests[k].key);
        int between = j <= k ? (home > j && home <= k) : (home > j || home <= k);
        if (!between) {
            requests[j] = requests[k];
            requests[k].used = 0;
            j = k;
        }
        k = (k + 1) & (RECORD_MAX_REQUESTS - 1);
    }
    return 1;
}

/* ---- communicators ---------------------------------------------------------- */

typedef struct comm_slot {
    MPI_Comm handle;
    uint32_t id;
    uint8_t used;
} comm_slot;

enum { COMM_ID_WORLD = 0, COMM_ID_SELF = 1 };

static comm_slot comms[RECORD_MAX_COMMS];
static uint32_t next_comm_id = 2;

/* How many communicators with the same members this process has seen, by a
 * hash of the member list: all members count alike, so (members, seq)
 * names a communicator in every process without communication. */
typedef struct member_count {
    uint64_t hash;
    uint32_t n;
} member_count;
static member_count member_counts[4 * RECORD_MAX_COMMS];
static unsigned n_member_counts;

static uint32_t next_seq(uint64_t hash)
{
    for (unsigned i = 0; i < n_member_counts; i++)
        if (member_counts[i].hash == hash)
            return member_counts[i].n++;
    if (n_member_counts < sizeof member_counts / sizeof *member_counts)
        member_counts[n_member_counts++] = (member_count){ hash, 1 };
    return 0;
}

/* Write "comm ID SEQ SIZE W0 W1 ..." for comm; -1 when it is not an
 * intra-communicator the recorder can describe. */
static int define_comm(MPI_Comm comm, uint32_t id)
{
    int inter = 0, size = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size <= 0)
        return -1;
    MPI_Group group, world;
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int *ranks = malloc(2 * (size_t)size * sizeof *ranks);
    char *line = malloc(16 * (size_t)size + 64);
    if (!ranks || !line) {
        free(ranks);
        free(line);
        PMPI_Group_free(&group);
        PMPI_Group_free(&world);
        return -1;
    }
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    PMPI_Group_translate_ranks(group, size, ranks, world, ranks + size);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    uint64_t hash = 1469598103934665603ULL;
    size_t len = 0;
    for (int i = 0; i < size; i++) {
        hash = (hash ^ (uint64_t)(uint32_t)ranks[size + i]) * 1099511628211ULL;
        len += (size_t)sprintf(line + len, " %d", ranks[size + i]);
    }
    record_log_def(rec.log, "comm %u %u %d%s", id, next_seq(hash), size, line);
    free(ranks);
    free(line);
    return 0;
}

void rec_comms_init(void)
{
    define_comm(MPI_COMM_WORLD, COMM_ID_WORLD);
    record_log_def(rec.log, "comm %u self", COMM_ID_SELF);
}

static uint32_t register_comm(MPI_Comm comm)
{
    for (unsigned i = 0; i < RECORD_MAX_COMMS; i++) {
        if (comms[i].used)
            continue;
        uint32_t id = next_comm_id;
        if (define_comm(comm, id) != 0)
            return RECORD_COMM_UNKNOWN;
        next_comm_id++;
        comms[i] = (comm_slot){ comm, id, 1 };
        return id;
    }
    if (!rec.lost_comms++)
        record_log_def(rec.log, "lost-comm first");
    return RECORD_COMM_UNKNOWN;
}

uint32_t rec_comm(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return COMM_ID_WORLD;
    if (comm == MPI_COMM_SELF)
        return COMM_ID_SELF;
    for (unsigned i = 0; i < RECORD_MAX_COMMS; i++)
        if (comms[i].used && comms[i].handle == comm)
            return comms[i].id;
    return comm == MPI_COMM_NULL ? RECORD_COMM_UNKNOWN : register_comm(comm);
}

void rec_comm_created(MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL)
        rec_comm(comm);
}

void rec_comm_freed(MPI_Comm comm)
{
    for (unsigned i = 0; i < RECORD_MAX_COMMS; i++)
        if (comms[i].used && comms[i].handle == comm)
            comms[i].used = 0;
}
