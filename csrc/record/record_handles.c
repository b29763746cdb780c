/*
 * record_handles.c - the MPI handles the recorder follows: pending
 * non-blocking requests (what was posted, until a Wait or Test completes
 * it) and live communicators (the recorder's id of each, and its members
 * written to the defs file once).
 *
 * A request the program frees (MPI_Request_free) is forgotten.
 *
 * Both tables are bounded (RECORD_MAX_REQUESTS, RECORD_MAX_COMMS) so the
 * recorder's memory is bounded; what does not fit is counted in the defs
 * file ("lost-request", "lost-comm") and recorded without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_internal.h"

/* ---- requests --------------------------------------------------------------- */

/* At most this many requests are followed at once. */
#define MAX_PENDING (RECORD_MAX_REQUESTS / 4 * 3)

/* The pending requests: the core's hash map (base/hashmap.h) takes a
 * handle's bits to the request's place in a fixed pool, which holds what its
 * completion record needs; freed places are reused first. */
static earl_map pending_index;
static rec_request pending[MAX_PENDING];
static uint32_t free_places[MAX_PENDING];
static unsigned n_free, n_places;

static uint64_t handle_key(MPI_Request handle)
{
    uint64_t key = 0;
    memcpy(&key, &handle, sizeof handle < sizeof key ? sizeof handle : sizeof key);
    return key;
}

/* Several pending requests may share a handle: MPICH gives every send that
 * completed at once the same pre-completed request.  So a handle is a key
 * that may repeat; a completion takes the first entry of its handle (the
 * map keeps a key's entries in the order they came). */
uint32_t rec_request_add(MPI_Request handle, const rec_request *r)
{
    uint32_t place = UINT32_MAX;
    if (n_free)
        place = free_places[--n_free];
    else if (n_places < MAX_PENDING)
        place = n_places++;
    if (place != UINT32_MAX && earl_map_add(&pending_index, handle_key(handle), 0, place) != 0) {
        free_places[n_free++] = place; /* out of memory */
        place = UINT32_MAX;
    }
    if (place == UINT32_MAX) {
        if (!rec.lost_requests++)
            record_log_def(rec.log, "lost-request first");
        return 0;
    }
    pending[place] = *r;
    pending[place].id = rec.next_request++;
    return pending[place].id;
}

int rec_request_find(MPI_Request handle, rec_request *out, int take)
{
    uint64_t key = handle_key(handle);
    int64_t place;
    if (take) {
        if (!earl_map_take(&pending_index, key, 0, &place))
            return 0;
        free_places[n_free++] = (uint32_t)place;
    } else {
        const int64_t *at = earl_map_find(&pending_index, key, 0);
        if (!at)
            return 0;
        place = *at;
    }
    *out = pending[place];
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
