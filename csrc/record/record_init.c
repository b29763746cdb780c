/*
 * record_init.c - the start and end of a recording: MPI_Init and
 * MPI_Init_thread open the process's files (when EARLC_RECORD_DIR is set),
 * describe the process, the MPI library and the call names, and read the
 * process's decisions when a schedule forces its wildcard operations
 * (record_schedule.c); MPI_Finalize
 * closes them and marks the record whole; MPI_Abort notes the abort before
 * the library ends the job.  Both ends measure the clock offset to rank 0
 * when the process runs on another machine than rank 0.
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_internal.h"

const char *const rec_call_names[RECORD_CALL_COUNT] = {
#define RECORD_CALL_NAME(name) #name,
    RECORD_CALLS(RECORD_CALL_NAME)
#undef RECORD_CALL_NAME
};

#ifdef MPICH_VERSION
#define BUILT_FOR "MPICH " MPICH_VERSION
#else
#define BUILT_FOR "an unknown MPI library"
#endif

static MPI_Comm clock_comm = MPI_COMM_NULL; /* private: never mixes with the program's messages */
static int clock_remote;                     /* this process is not on rank 0's machine */

/* Measure rank 0's clock minus ours for every process on another machine
 * than rank 0, from the round trip with the smallest delay of a few, and
 * note it in the defs file.  Collective over MPI_COMM_WORLD. */
static void measure_clock_offsets(void)
{
    enum { ROUNDS = 10, TAG = 1 };
    int *remote = NULL;
    if (rec.rank == 0)
        remote = calloc((size_t)rec.size, sizeof *remote);
    PMPI_Gather(&clock_remote, 1, MPI_INT, remote, 1, MPI_INT, 0, clock_comm);
    if (rec.rank == 0) {
        for (int r = 1; r < rec.size; r++)
            for (int k = 0; remote && remote[r] && k < ROUNDS; k++) {
                char ping;
                PMPI_Recv(&ping, 1, MPI_CHAR, r, TAG, clock_comm, MPI_STATUS_IGNORE);
                uint64_t now = record_now();
                PMPI_Send(&now, 1, MPI_UINT64_T, r, TAG, clock_comm);
            }
        free(remote);
        return;
    }
    if (!clock_remote)
        return;
    uint64_t best_delay = UINT64_MAX, when = 0;
    int64_t offset = 0;
    for (int k = 0; k < ROUNDS; k++) {
        char ping = 0;
        uint64_t theirs, t1 = record_now();
        PMPI_Send(&ping, 1, MPI_CHAR, 0, TAG, clock_comm);
        PMPI_Recv(&theirs, 1, MPI_UINT64_T, 0, TAG, clock_comm, MPI_STATUS_IGNORE);
        uint64_t t2 = record_now();
        if (t2 - t1 < best_delay) {
            best_delay = t2 - t1;
            when = t1 + (t2 - t1) / 2;
            offset = (int64_t)(theirs - when);
        }
    }
    record_log_def(rec.log, "clock %llu %lld", (unsigned long long)when, (long long)offset);
}

/* Which machine: rank 0's host name, compared by every process. */
static void find_machine(const char *host)
{
    char root_host[256];
    strncpy(root_host, host, sizeof root_host - 1);
    root_host[sizeof root_host - 1] = 0;
    PMPI_Bcast(root_host, sizeof root_host, MPI_CHAR, 0, clock_comm);
    clock_remote = strcmp(root_host, host) != 0;
}

/* "object START END BIAS PATH" for every executable segment of the program
 * and its shared libraries: `earlc record` turns a call site (an address)
 * into a function and source line with them after the run. */
static int note_object(struct dl_phdr_info *info, size_t size, void *log)
{
    (void)size;
    char exe[4096];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = 0;
        path = exe;
    }
    if (path[0] != '/')
        return 0; /* the vDSO: no file */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
            record_log_def(log, "object %llu %llu %llu %s",
                           (unsigned long long)(info->dlpi_addr + ph->p_vaddr),
                           (unsigned long long)(info->dlpi_addr + ph->p_vaddr + ph->p_memsz),
                           (unsigned long long)info->dlpi_addr, path);
    }
    return 0;
}

/* At the process's exit (exit(3) or a return from main): a process that
 * leaves without MPI_Finalize says with which status, so that a run whose
 * launcher then kills the other processes can tell who ended it. */
static void note_exit(int status, void *unused)
{
    (void)unused;
    if (rec_on())
        record_log_def(rec.log, "exit %llu %d", (unsigned long long)record_now(), status);
}

/* After PMPI_Init: open the files and describe the process. */
static void start(record_call call, uint64_t t_enter, void *site, int thread_level)
{
    const char *dir = getenv("EARLC_RECORD_DIR");
    if (!dir || !*dir)
        return;
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    PMPI_Get_library_version(library, &len);
    library[strcspn(library, "\n")] = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rec.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &rec.size);
    char message[512];
    record_log *log;
    if (record_log_open(dir, rec.rank, &log, message, sizeof message) != RECORD_OK) {
        fprintf(stderr, "earlc record: rank %d records nothing: %s\n", rec.rank, message);
        return;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    record_log_def(log, "earlc-record 1");
    record_log_def(log, "rank %d %d %ld %s", rec.rank, rec.size, (long)getpid(), host);
    record_log_def(log, "library %s", library);
    record_log_def(log, "built-for %s", BUILT_FOR);
    if (!strstr(library, "MPICH")) {
        /* another library's handles mean other things: record nothing */
        record_log_def(log, "library-mismatch");
        record_log_close(log);
        return;
    }
    record_log_def(log, "thread-level %d", thread_level);
    for (int i = 0; i < RECORD_CALL_COUNT; i++)
        record_log_def(log, "call %d %s", i, rec_call_names[i]);
    dl_iterate_phdr(note_object, log);
    rec.locked = thread_level == MPI_THREAD_MULTIPLE;
    rec.log = log;
    rec_comms_init();
    rec_schedule_init();
    on_exit(note_exit, NULL);
    PMPI_Comm_dup(MPI_COMM_WORLD, &clock_comm);
    find_machine(host);
    measure_clock_offsets();
    rec_enter(call, t_enter, site);
    rec_leave(call);
}

int MPI_Init(int *argc, char ***argv)
{
    uint64_t t = record_now();
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        start(RECORD_CALL_MPI_Init, t, CALLER, MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    uint64_t t = record_now();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        start(RECORD_CALL_MPI_Init_thread, t, CALLER, *provided);
    return rc;
}

int MPI_Finalize(void)
{
    if (!rec_on())
        return PMPI_Finalize();
    rec_lock();
    rec_enter(RECORD_CALL_MPI_Finalize, record_now(), CALLER);
    rec_unlock();
    measure_clock_offsets();
    PMPI_Comm_free(&clock_comm);
    int rc = PMPI_Finalize();
    rec_lock();
    rec_leave(RECORD_CALL_MPI_Finalize);
    if (rec.lost_requests)
        record_log_def(rec.log, "lost-request %llu", (unsigned long long)rec.lost_requests);
    if (rec.lost_comms)
        record_log_def(rec.log, "lost-comm %llu", (unsigned long long)rec.lost_comms);
    record_log_def(rec.log, "finalized %llu", (unsigned long long)record_now());
    record_log *log = rec.log;
    rec.log = NULL;
    record_log_close(log);
    rec_unlock();
    return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (rec_on()) {
        uint64_t t = record_now();
        rec_lock();
        rec_enter(RECORD_CALL_MPI_Abort, t, CALLER);
        record_log_def(rec.log, "abort %llu %d", (unsigned long long)t, errorcode);
        rec_unlock();
        /* no LEAVE: the library ends the job; the open region says where */
    }
    return PMPI_Abort(comm, errorcode);
}
