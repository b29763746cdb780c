/*
 * kinds.c - the names of event kinds, payload families, statuses and warning
 * codes: the vocabulary that every layer prints and that the Python package
 * exposes.  One table per enum, indexed by the enum value.
 */
#include "earl.h"

static const struct {
    const char *name;
    earl_family family;
} kind_table[EARL_KIND_COUNT] = {
    [EARL_ENTER] = {"ENTER", EARL_FAMILY_NONE},
    [EARL_LEAVE] = {"LEAVE", EARL_FAMILY_NONE},
    [EARL_MPI_SEND] = {"MPI_SEND", EARL_FAMILY_MSG},
    [EARL_MPI_ISEND] = {"MPI_ISEND", EARL_FAMILY_MSG},
    [EARL_MPI_ISEND_COMPLETE] = {"MPI_ISEND_COMPLETE", EARL_FAMILY_MSG},
    [EARL_MPI_IRECV_REQUEST] = {"MPI_IRECV_REQUEST", EARL_FAMILY_MSG},
    [EARL_MPI_IRECV] = {"MPI_IRECV", EARL_FAMILY_MSG},
    [EARL_MPI_RECV] = {"MPI_RECV", EARL_FAMILY_MSG},
    [EARL_MPI_REQUEST_TEST] = {"MPI_REQUEST_TEST", EARL_FAMILY_MSG},
    [EARL_MPI_REQUEST_CANCELLED] = {"MPI_REQUEST_CANCELLED", EARL_FAMILY_MSG},
    [EARL_MPI_COLLECTIVE_BEGIN] = {"MPI_COLLECTIVE_BEGIN", EARL_FAMILY_NONE},
    [EARL_MPI_COLLECTIVE_END] = {"MPI_COLLECTIVE_END", EARL_FAMILY_COLL},
    [EARL_OMP_FORK] = {"OMP_FORK", EARL_FAMILY_SYNC},
    [EARL_OMP_JOIN] = {"OMP_JOIN", EARL_FAMILY_SYNC},
    [EARL_OMP_ACQUIRE_LOCK] = {"OMP_ACQUIRE_LOCK", EARL_FAMILY_SYNC},
    [EARL_OMP_RELEASE_LOCK] = {"OMP_RELEASE_LOCK", EARL_FAMILY_SYNC},
    [EARL_OMP_TASK_CREATE] = {"OMP_TASK_CREATE", EARL_FAMILY_SYNC},
    [EARL_OMP_TASK_SWITCH] = {"OMP_TASK_SWITCH", EARL_FAMILY_SYNC},
    [EARL_OMP_TASK_COMPLETE] = {"OMP_TASK_COMPLETE", EARL_FAMILY_SYNC},
    [EARL_THREAD_FORK] = {"THREAD_FORK", EARL_FAMILY_SYNC},
    [EARL_THREAD_JOIN] = {"THREAD_JOIN", EARL_FAMILY_SYNC},
    [EARL_THREAD_TEAM_BEGIN] = {"THREAD_TEAM_BEGIN", EARL_FAMILY_SYNC},
    [EARL_THREAD_TEAM_END] = {"THREAD_TEAM_END", EARL_FAMILY_SYNC},
    [EARL_THREAD_ACQUIRE_LOCK] = {"THREAD_ACQUIRE_LOCK", EARL_FAMILY_SYNC},
    [EARL_THREAD_RELEASE_LOCK] = {"THREAD_RELEASE_LOCK", EARL_FAMILY_SYNC},
    [EARL_THREAD_TASK_CREATE] = {"THREAD_TASK_CREATE", EARL_FAMILY_SYNC},
    [EARL_THREAD_TASK_SWITCH] = {"THREAD_TASK_SWITCH", EARL_FAMILY_SYNC},
    [EARL_THREAD_TASK_COMPLETE] = {"THREAD_TASK_COMPLETE", EARL_FAMILY_SYNC},
    [EARL_THREAD_CREATE] = {"THREAD_CREATE", EARL_FAMILY_SYNC},
    [EARL_THREAD_BEGIN] = {"THREAD_BEGIN", EARL_FAMILY_SYNC},
    [EARL_THREAD_WAIT] = {"THREAD_WAIT", EARL_FAMILY_SYNC},
    [EARL_THREAD_END] = {"THREAD_END", EARL_FAMILY_SYNC},
    [EARL_PROGRAM_BEGIN] = {"PROGRAM_BEGIN", EARL_FAMILY_PROGRAM},
    [EARL_PROGRAM_END] = {"PROGRAM_END", EARL_FAMILY_PROGRAM},
    [EARL_METRIC] = {"METRIC", EARL_FAMILY_METRIC},
    [EARL_RMA_WIN_CREATE] = {"RMA_WIN_CREATE", EARL_FAMILY_RMA},
    [EARL_RMA_WIN_DESTROY] = {"RMA_WIN_DESTROY", EARL_FAMILY_RMA},
    [EARL_RMA_COLLECTIVE_BEGIN] = {"RMA_COLLECTIVE_BEGIN", EARL_FAMILY_RMA},
    [EARL_RMA_COLLECTIVE_END] = {"RMA_COLLECTIVE_END", EARL_FAMILY_RMA},
    [EARL_RMA_GROUP_SYNC] = {"RMA_GROUP_SYNC", EARL_FAMILY_RMA},
    [EARL_RMA_REQUEST_LOCK] = {"RMA_REQUEST_LOCK", EARL_FAMILY_RMA},
    [EARL_RMA_ACQUIRE_LOCK] = {"RMA_ACQUIRE_LOCK", EARL_FAMILY_RMA},
    [EARL_RMA_TRY_LOCK] = {"RMA_TRY_LOCK", EARL_FAMILY_RMA},
    [EARL_RMA_RELEASE_LOCK] = {"RMA_RELEASE_LOCK", EARL_FAMILY_RMA},
    [EARL_RMA_SYNC] = {"RMA_SYNC", EARL_FAMILY_RMA},
    [EARL_RMA_WAIT_CHANGE] = {"RMA_WAIT_CHANGE", EARL_FAMILY_RMA},
    [EARL_RMA_PUT] = {"RMA_PUT", EARL_FAMILY_RMA},
    [EARL_RMA_GET] = {"RMA_GET", EARL_FAMILY_RMA},
    [EARL_RMA_ATOMIC] = {"RMA_ATOMIC", EARL_FAMILY_RMA},
    [EARL_RMA_OP_COMPLETE_BLOCKING] = {"RMA_OP_COMPLETE_BLOCKING", EARL_FAMILY_RMA},
    [EARL_RMA_OP_COMPLETE_NON_BLOCKING] = {"RMA_OP_COMPLETE_NON_BLOCKING", EARL_FAMILY_RMA},
    [EARL_RMA_OP_TEST] = {"RMA_OP_TEST", EARL_FAMILY_RMA},
    [EARL_RMA_OP_COMPLETE_REMOTE] = {"RMA_OP_COMPLETE_REMOTE", EARL_FAMILY_RMA},
};

const char *earl_kind_name(earl_kind kind)
{
    return (unsigned)kind < EARL_KIND_COUNT ? kind_table[kind].name : "UNKNOWN";
}

earl_family earl_kind_family(earl_kind kind)
{
    return (unsigned)kind < EARL_KIND_COUNT ? kind_table[kind].family : EARL_FAMILY_NONE;
}

const char *earl_status_name(earl_status status)
{
    switch (status) {
    case EARL_OK: return "ok";
    case EARL_ERR_NOT_FOUND: return "not found";
    case EARL_ERR_NOT_ARCHIVE: return "not an OTF2 archive";
    case EARL_ERR_CORRUPT: return "corrupt";
    case EARL_ERR_MISSING_FILE: return "missing file";
    case EARL_ERR_IO: return "input/output error";
    case EARL_ERR_NOMEM: return "out of memory";
    case EARL_ERR_INVALID: return "invalid argument";
    case EARL_ERR_THREAD: return "thread error";
    }
    return "unknown status";
}

static const char *const warning_names[EARL_WARNING_CODE_COUNT] = {
    [EARL_WARN_LEAVE_WITHOUT_ENTER] = "leave_without_enter",
    [EARL_WARN_LEAVE_MISMATCH] = "leave_mismatch",
    [EARL_WARN_REGION_NOT_LEFT] = "region_not_left",
    [EARL_WARN_TIME_BACKWARDS] = "time_backwards",
    [EARL_WARN_REQUEST_NOT_COMPLETED] = "request_not_completed",
    [EARL_WARN_REQUEST_UNKNOWN] = "request_unknown",
    [EARL_WARN_PEER_UNRESOLVED] = "peer_unresolved",
    [EARL_WARN_UNDEFINED_REFERENCE] = "undefined_reference",
    [EARL_WARN_OTHER_RECORD] = "other_record",
    [EARL_WARN_LOCATION_INCOMPLETE] = "location_incomplete",
    [EARL_WARN_EVENT_COUNT_MISMATCH] = "event_count_mismatch",
    [EARL_WARN_CLOCK_PROPERTIES_MISSING] = "clock_properties_missing",
    [EARL_WARN_EVENT_FILE_CUT_SHORT] = "event_file_cut_short",
};

const char *earl_warning_code_name(earl_warning_code code)
{
    return (unsigned)code < EARL_WARNING_CODE_COUNT ? warning_names[code] : "unknown";
}
