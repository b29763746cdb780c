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

/* A zeroed slot with the fields every record has, or NULL when the log
 * could not grow. */
static inline record_event *slot_at(uint64_t time)
{
    record_event *e = record_log_next(rec.log);
    if (e) {
        e->time = time;
        e->requested_source = e->requested_tag = RECORD_NONE;
        e->peer = e->tag = RECORD_NONE;
        e->index = -1;
    }
    return e;
}

void rec_enter(record_call call, uint64_t time, void *call_site)
{
    record_event *e = slot_at(time);
    if (!e)
        return;
    e->call = (uint16_t)call;
    e->call_site = (uint64_t)(uintptr_t)call_site;
    record_log_commit(e, RECORD_ENTER);
}

void rec_leave(record_call call)
{
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->call = (uint16_t)call;
    record_log_commit(e, RECORD_LEAVE);
}

void rec_message(record_type type, uint32_t comm, int peer, int tag, uint64_t bytes,
                 uint32_t request, int requested_source, int requested_tag, int index)
{
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->comm = comm;
    e->peer = peer;
    e->tag = tag;
    e->bytes = bytes;
    e->request = request;
    e->requested_source = requested_source;
    e->requested_tag = requested_tag;
    e->index = index;
    record_log_commit(e, type);
}

void rec_request_record(record_type type, uint32_t request, int requested_source,
                        int requested_tag, int index)
{
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->request = request;
    e->requested_source = requested_source;
    e->requested_tag = requested_tag;
    e->index = index;
    record_log_commit(e, type);
}

void rec_collective_begin(void)
{
    record_event *e = slot_at(record_now());
    if (e)
        record_log_commit(e, RECORD_COLLECTIVE_BEGIN);
}

void rec_collective_end(uint8_t op, uint32_t comm, int root, uint64_t sent, uint64_t received)
{
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->op = op;
    e->comm = comm;
    e->peer = root;
    e->bytes = sent;
    e->bytes2 = received;
    record_log_commit(e, RECORD_COLLECTIVE_END);
}

void rec_probe(uint32_t comm, int requested_source, int requested_tag, int found_source,
               int found_tag)
{
    record_event *e = slot_at(record_now());
    if (!e)
        return;
    e->comm = comm;
    e->requested_source = requested_source;
    e->requested_tag = requested_tag;
    e->peer = found_source;
    e->tag = found_tag;
    record_log_commit(e, RECORD_PROBE);
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
