/*
 * record_log.c - the two files one process of a recorded MPI program writes
 * (earlc_record.h): the events file, appended through a shared mapping of a
 * window of the file, and the defs file, appended one line per write(2).
 *
 * Why a mapping: a store into a MAP_SHARED page is in the kernel's page
 * cache as soon as it is made, so the records survive the process dying in
 * any way (SIGKILL included), with no flush on the recording path.  The
 * file grows by whole windows (ftruncate fills them with zeros); when a
 * window is full the next one is mapped, so memory stays one window however
 * long the run.  A record's type is stored last: a reader stops at the
 * first record whose type is 0, which is either the end or a record the
 * process was killed in the middle of writing.
 */
#include "earlc_record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct record_log {
    int events_fd, defs_fd;
    char *window;         /* mapped part of the events file */
    off_t window_offset;  /* its offset in the file */
    size_t used;          /* bytes of the window holding records */
    int broken;           /* growing or mapping failed: record nothing more */
};

uint64_t record_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Map the window that starts at offset, growing the file to cover it. */
static int map_window(record_log *log, off_t offset)
{
    if (ftruncate(log->events_fd, offset + (off_t)RECORD_WINDOW_BYTES) != 0)
        return -1;
    void *w = mmap(NULL, RECORD_WINDOW_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
                   log->events_fd, offset);
    if (w == MAP_FAILED)
        return -1;
    log->window = w;
    log->window_offset = offset;
    log->used = 0;
    return 0;
}

record_status record_log_open(const char *dir, int rank, record_log **out, char *message,
                              size_t message_size)
{
    *out = NULL;
    if (!dir || rank < 0) {
        snprintf(message, message_size, "no output folder or rank");
        return RECORD_ERR_INVALID;
    }
    record_log *log = calloc(1, sizeof *log);
    if (!log) {
        snprintf(message, message_size, "out of memory");
        return RECORD_ERR_IO;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.events", dir, rank);
    log->events_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log->events_fd < 0 || map_window(log, 0) != 0) {
        snprintf(message, message_size, "cannot create %s: %s", path, strerror(errno));
        if (log->events_fd >= 0)
            close(log->events_fd);
        free(log);
        return RECORD_ERR_IO;
    }
    snprintf(path, sizeof path, "%s/rank-%d.defs", dir, rank);
    log->defs_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (log->defs_fd < 0) {
        snprintf(message, message_size, "cannot create %s: %s", path, strerror(errno));
        munmap(log->window, RECORD_WINDOW_BYTES);
        close(log->events_fd);
        free(log);
        return RECORD_ERR_IO;
    }
    *out = log;
    return RECORD_OK;
}

record_event *record_log_next(record_log *log)
{
    if (__builtin_expect(log->used + sizeof(record_event) > RECORD_WINDOW_BYTES, 0)) {
        if (log->broken)
            return NULL;
        off_t next = log->window_offset + (off_t)RECORD_WINDOW_BYTES;
        munmap(log->window, RECORD_WINDOW_BYTES);
        log->window = NULL;
        if (map_window(log, next) != 0) {
            log->broken = 1;
            log->used = RECORD_WINDOW_BYTES; /* stay full */
            return NULL;
        }
    }
    record_event *slot = (record_event *)(log->window + log->used);
    log->used += sizeof(record_event);
    return slot; /* zero: the file grew with zeros and slots are used once */
}

void record_log_commit(record_event *slot, record_type type, uint64_t bytes)
{
    __atomic_store_n(&slot->bytes_type, bytes << 8 | (uint64_t)type, __ATOMIC_RELEASE);
}

void record_log_def(record_log *log, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* one write of the whole line: O_APPEND keeps lines whole */
    ssize_t done = write(log->defs_fd, line, (size_t)n);
    (void)done;
}

void record_log_close(record_log *log)
{
    if (!log)
        return;
    off_t end = log->window_offset + (off_t)log->used;
    if (log->window)
        munmap(log->window, RECORD_WINDOW_BYTES);
    if (!log->broken && ftruncate(log->events_fd, end) != 0)
        log->broken = 1;
    close(log->events_fd);
    close(log->defs_fd);
    free(log);
}
