/*
 * record_emit.c - the recording process's state and the records it emits:
 * every wrapper describes its call through these few functions, which fill
 * one record_event each in the process's log (record_log.c).
 */
#include "record_internal.h"

recorder rec = { .mutex = PTHREAD_MUTEX_INITIALIZER, .next_request = 1 };

void rec_lock(void)
{
    if (rec.locked)
        pthread_mutex_lock(&rec.mutex);
}

void rec_unlock(void)
{
    if (rec.locked)
        pthread_mutex_unlock(&rec.mutex);
}

/* A zeroed slot stamped with time, or NULL when the log could not grow. */
static inline record_event *slot_at(uint64_t time)
{
    record_event *e = record_log_next(rec.log);
    if (e)
        e->time = time;
    return e;
}

/* A RECORD_EXTRA before the record that needs one of its fields. */
static void extra(int requested_source, int requested_tag, int index, int op, uint64_t bytes2)
{
    record_extra *x = (record_extra *)record_log_next(rec.log);
    if (!x)
        return;
    x->requested_source = requested_source;
    x->requested_tag = requested_tag;
    x->index = index;
    x->op = op;
    __atomic_store_n(&x->bytes2_type, bytes2 << 8 | RECORD_EXTRA, __ATOMIC_RELEASE);
}

/* An ENTER; op and forced: the wildcard operation's number + 1 and its
 * forced source + 1 (0: not a wildcard operation, not forced). */
static void enter_record(record_call call, uint64_t time, void *site, uint32_t op, uint64_t forced)
{
    record_event *e = slot_at(time);
    if (!e)
        return;
    e->comm = (uint32_t)call;
    uint64_t address = (uint64_t)(uintptr_t)site;
    e->peer = (int32_t)(uint32_t)address;
    e->tag = (int32_t)(uint32_t)(address >> 32);
    e->request = op;
    record_log_commit(e, RECORD_ENTER, forced);
}

void rec_enter(record_call call, uint64_t time, void *site)
{
    enter_record(call, time, site, 0, 0);
}

void rec_enter_wildcard(record_call call, uint64_t time, void *site, const rec_wildcard *w)
{
    enter_record(call, time, site, (uint32_t)(w->index + 1),
                 w->forced >= 0 ? (uint64_t)w->forced + 1 : 0);
}

void rec_leave(record_call call)
{
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->comm = (uint32_t)call;
    record_log_commit(e, RECORD_LEAVE, 0);
}

void rec_message(record_type type, uint32_t comm, int peer, int tag, uint64_t bytes,
                 uint32_t request, int requested_source, int requested_tag, int index)
{
    if (requested_source != RECORD_NONE || requested_tag != RECORD_NONE || index >= 0)
        extra(requested_source, requested_tag, index, 0, 0);
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->comm = comm;
    e->peer = peer;
    e->tag = tag;
    e->request = request;
    record_log_commit(e, type, bytes);
}

void rec_request_record(record_type type, uint32_t request, int requested_source,
                        int requested_tag, int index)
{
    if (requested_source != RECORD_NONE || requested_tag != RECORD_NONE || index >= 0)
        extra(requested_source, requested_tag, index, 0, 0);
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->request = request;
    record_log_commit(e, type, 0);
}

void rec_collective_begin(void)
{
    record_event *e = slot_at(record_now());
    if (e)
        record_log_commit(e, RECORD_COLLECTIVE_BEGIN, 0);
}

void rec_collective_end(uint8_t op, uint32_t comm, int root, uint64_t sent, uint64_t received)
{
    extra(RECORD_NONE, RECORD_NONE, -1, op, received);
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->comm = comm;
    e->peer = root;
    record_log_commit(e, RECORD_COLLECTIVE_END, sent);
}

void rec_probe(uint32_t comm, int requested_source, int requested_tag, int found_source,
               int found_tag)
{
    extra(requested_source, requested_tag, -1, 0, 0);
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->comm = comm;
    e->peer = found_source;
    e->tag = found_tag;
    record_log_commit(e, RECORD_PROBE, 0);
}

int rec_requested_source(int source)
{
    return source == MPI_ANY_SOURCE ? RECORD_ANY : source;
}

int rec_requested_tag(int tag)
{
    return tag == MPI_ANY_TAG ? RECORD_ANY : tag;
}

uint64_t rec_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}
