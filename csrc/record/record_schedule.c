/*
 * record_schedule.c - wildcard operations numbered, and forced to a chosen
 * source (`earlc verify`, docs/verify.md).
 *
 * A wildcard operation is a receive or a probe that asks for
 * MPI_ANY_SOURCE: MPI_Recv, MPI_Irecv, MPI_Sendrecv(_replace), MPI_Probe,
 * and MPI_Iprobe when it finds a message (one that finds nothing is a poll,
 * not a decision).  Each process numbers its own 0, 1, 2, ... in the order
 * it makes them, as DAMPI numbers the nondeterministic events of a process:
 * that number names the operation across runs of the same program, however
 * the messages arrive.  The ENTER record of a wildcard operation carries its
 * number, and the source it was forced to (earlc_record.h).
 *
 * A schedule is what `earlc verify` wants a run to do: for some wildcard
 * operations, the source to take.  EARLC_RECORD_SCHEDULE names a text file
 * with one decision per line (the first line "earlc-schedule 1"):
 *
 *   RANK INDEX SOURCE CALL    e.g.  "0 3 2 MPI_Recv"
 *
 * SOURCE is a rank in the operation's communicator; CALL is the call the
 * operation was in the run the decision comes from.  Every process keeps
 * its own decisions, sorted by INDEX (the file lists them so), and walks
 * them with a cursor as its operations are numbered: no search on the
 * recording path.  The operation is then made with SOURCE in place of
 * MPI_ANY_SOURCE; its tag, MPI_ANY_TAG included, stays as the program asked.
 * A decision that does not fit (another call at that number, a source
 * outside the communicator) is not applied: the operation stays a wildcard
 * and the defs file says why ("schedule-miss INDEX WHAT"), for `earlc
 * verify` to report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_internal.h"

/* One decision of this process. */
typedef struct decision {
    uint64_t index;     /* the wildcard operation's number */
    int source;         /* the rank to take it from, in its communicator */
    record_call call;   /* the call it must be */
} decision;

static decision *decisions;     /* this process's, by index; NULL: none */
static size_t n_decisions, cursor;
static uint64_t next_index;     /* the number of the next wildcard operation */

static int call_of(const char *name, record_call *out)
{
    for (int i = 0; i < RECORD_CALL_COUNT; i++)
        if (!strcmp(rec_call_names[i], name)) {
            *out = (record_call)i;
            return 1;
        }
    return 0;
}

/* Append one decision, growing the array by doubling. */
static int keep(size_t *capacity, const decision *d)
{
    if (n_decisions == *capacity) {
        size_t more = *capacity ? *capacity * 2 : 16;
        decision *grown = realloc(decisions, more * sizeof *grown);
        if (!grown)
            return 0;
        decisions = grown;
        *capacity = more;
    }
    decisions[n_decisions++] = *d;
    return 1;
}

void rec_schedule_init(void)
{
    const char *path = getenv("EARLC_RECORD_SCHEDULE");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "r");
    char line[256];
    if (!f || !fgets(line, sizeof line, f) || strncmp(line, "earlc-schedule 1", 16) != 0) {
        record_log_def(rec.log, "schedule-error %s is not a schedule file", path);
        if (f)
            fclose(f);
        return;
    }
    size_t capacity = 0;
    unsigned long long lineno = 1, last = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        int rank, source;
        unsigned long long index;
        char name[64];
        decision d;
        if (sscanf(line, "%d %llu %d %63s", &rank, &index, &source, name) != 4
            || !call_of(name, &d.call)) {
            record_log_def(rec.log, "schedule-error line %llu of %s", lineno, path);
            break;
        }
        if (rank != rec.rank)
            continue;
        if (n_decisions && index <= last) {
            record_log_def(rec.log, "schedule-error line %llu of %s: not after index %llu",
                           lineno, path, last);
            break;
        }
        d.index = last = index;
        d.source = source;
        if (!keep(&capacity, &d)) {
            record_log_def(rec.log, "schedule-error no memory for the decisions");
            break;
        }
    }
    fclose(f);
    record_log_def(rec.log, "schedule %zu", n_decisions);
}

/* The size of the group a source of comm is a rank of. */
static int sources_of(MPI_Comm comm)
{
    int inter = 0, size = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &size);
    else
        PMPI_Comm_size(comm, &size);
    return size;
}

/* The decision for operation number index, or NULL.  Numbers only grow, so
 * the cursor moves past the decisions of smaller ones for good. */
static const decision *decision_for(uint64_t index)
{
    while (cursor < n_decisions && decisions[cursor].index < index)
        cursor++;
    return cursor < n_decisions && decisions[cursor].index == index ? &decisions[cursor] : NULL;
}

void rec_wildcard_begin(rec_wildcard *w, record_call call, MPI_Comm comm, int *source)
{
    w->index = next_index;
    w->forced = -1;
    if (call != RECORD_CALL_MPI_Iprobe)
        next_index++; /* numbered even when it never returns (a hang) */
    const decision *d = decision_for(w->index);
    if (!d)
        return;
    if (d->call != call) {
        record_log_def(rec.log, "schedule-miss %llu call %s", (unsigned long long)w->index,
                       rec_call_names[call]);
        cursor++; /* said once, not at every poll */
        return;
    }
    int size = sources_of(comm);
    if (d->source < 0 || d->source >= size) {
        record_log_def(rec.log, "schedule-miss %llu source %d of %d", (unsigned long long)w->index,
                       d->source, size);
        cursor++;
        return;
    }
    w->forced = d->source;
    *source = d->source;
}

void rec_wildcard_found(const rec_wildcard *w)
{
    next_index = w->index + 1;
}
