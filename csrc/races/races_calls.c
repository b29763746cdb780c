/*
 * races_calls.c - which regions are the MPI calls the race analysis cares
 * about, by region name (OTF2 records no more than the name and a role):
 * synchronous sends, whose completion orders the sender after the receive;
 * the completions and probes that choose among several messages or requests
 * (other sources of nondeterminism); the calls that create and free
 * communicators (a resource leak when they do not balance).
 */
#include <stdlib.h>
#include <string.h>

#include "races_internal.h"

static const struct {
    const char *name;
    races_call call;
} CALLS[] = {
    {"MPI_Ssend", RACES_CALL_SSEND},
    {"MPI_Issend", RACES_CALL_SSEND},
    {"MPI_Waitany", RACES_CALL_WAITANY},
    {"MPI_Waitsome", RACES_CALL_WAITSOME},
    {"MPI_Testany", RACES_CALL_TESTANY},
    {"MPI_Testsome", RACES_CALL_TESTSOME},
    {"MPI_Probe", RACES_CALL_PROBE},
    {"MPI_Iprobe", RACES_CALL_PROBE},
    {"MPI_Mprobe", RACES_CALL_PROBE},
    {"MPI_Improbe", RACES_CALL_PROBE},
    {"MPI_Comm_dup", RACES_CALL_COMM_CREATE},
    {"MPI_Comm_dup_with_info", RACES_CALL_COMM_CREATE},
    {"MPI_Comm_idup", RACES_CALL_COMM_CREATE},
    {"MPI_Comm_split", RACES_CALL_COMM_CREATE},
    {"MPI_Comm_split_type", RACES_CALL_COMM_CREATE},
    {"MPI_Comm_create", RACES_CALL_COMM_CREATE},
    {"MPI_Comm_create_group", RACES_CALL_COMM_CREATE},
    {"MPI_Intercomm_create", RACES_CALL_COMM_CREATE},
    {"MPI_Intercomm_merge", RACES_CALL_COMM_CREATE},
    {"MPI_Cart_create", RACES_CALL_COMM_CREATE},
    {"MPI_Cart_sub", RACES_CALL_COMM_CREATE},
    {"MPI_Graph_create", RACES_CALL_COMM_CREATE},
    {"MPI_Dist_graph_create", RACES_CALL_COMM_CREATE},
    {"MPI_Dist_graph_create_adjacent", RACES_CALL_COMM_CREATE},
    {"MPI_Comm_free", RACES_CALL_COMM_FREE},
    {"MPI_Comm_disconnect", RACES_CALL_COMM_FREE},
};

uint8_t *races_classify_regions(const earl_trace *trace)
{
    const earl_defs *d = earl_trace_defs(trace);
    uint8_t *out = calloc(d->n_regions ? d->n_regions : 1, 1);
    if (!out)
        return NULL;
    for (uint32_t r = 0; r < d->n_regions; r++) {
        if (!d->regions[r].defined)
            continue;
        const char *name = earl_trace_string(trace, d->regions[r].name);
        if (strncmp(name, "MPI_", 4) != 0)
            continue;
        for (size_t k = 0; k < sizeof CALLS / sizeof CALLS[0]; k++)
            if (strcmp(name, CALLS[k].name) == 0) {
                out[r] = (uint8_t)CALLS[k].call;
                break;
            }
    }
    return out;
}
