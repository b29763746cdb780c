/*
 * reader.c - reading the events of one location into columns.
 *
 * libotf2 decodes a location's event file and calls one callback per record;
 * each callback appends the event to the location's loc_events buffer (core
 * columns plus a row in the side table of its family).  While appending, the
 * reader checks what can be checked within one location and turns problems
 * into counted warnings: region nesting, monotone time (clamped), request
 * pairing (MPI_ISEND with MPI_ISEND_COMPLETE, MPI_IRECV_REQUEST with
 * MPI_IRECV, by request id), and the translation of MPI peers from ranks in
 * the record's communicator to global locations.
 *
 * A location's buffer is private to the thread reading it, so trace.c can
 * read locations in parallel; order.c merges the buffers afterwards.
 *
 * An event file that libotf2 fails to decode is an error, unless the open
 * salvages (read_plan.salvage) and the file's framing shows a cut: then the
 * location is read again, exactly up to its last whole record (see salvage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *const other_record_names[OTHER_RECORD_COUNT] = {
    [OTHER_BUFFER_FLUSH] = "BUFFER_FLUSH",
    [OTHER_MEASUREMENT_ON_OFF] = "MEASUREMENT_ON_OFF",
    [OTHER_PARAMETER_STRING] = "PARAMETER_STRING",
    [OTHER_PARAMETER_INT] = "PARAMETER_INT",
    [OTHER_PARAMETER_UNSIGNED_INT] = "PARAMETER_UNSIGNED_INT",
    [OTHER_CALLING_CONTEXT_ENTER] = "CALLING_CONTEXT_ENTER",
    [OTHER_CALLING_CONTEXT_LEAVE] = "CALLING_CONTEXT_LEAVE",
    [OTHER_CALLING_CONTEXT_SAMPLE] = "CALLING_CONTEXT_SAMPLE",
    [OTHER_IO] = "IO_*",
    [OTHER_NONBLOCKING_COLLECTIVE_REQUEST] = "NON_BLOCKING_COLLECTIVE_REQUEST",
    [OTHER_NONBLOCKING_COLLECTIVE_COMPLETE] = "NON_BLOCKING_COLLECTIVE_COMPLETE",
    [OTHER_COMM_CREATE] = "COMM_CREATE",
    [OTHER_COMM_DESTROY] = "COMM_DESTROY",
    [OTHER_UNKNOWN] = "UNKNOWN",
};

/* ---- appending ------------------------------------------------------------- */

#define UD(b) loc_events *b = (loc_events *)user_data

/* Make the core columns of b hold need events.  Columns in shared slots
 * move to blocks of their own first: the slots after them are the next
 * location's. */
static int reserve_core(loc_events *b, size_t need)
{
    earl_colset s = {3, {{(void **)&b->time, sizeof *b->time}, {(void **)&b->kind, 1},
                         {(void **)&b->payload, sizeof *b->payload}}};
    if (b->shared) {
        loc_events slots = *b;
        size_t cap = 0;
        b->time = NULL; b->kind = NULL; b->payload = NULL;
        if (earl_colset_reserve_scratch(&s, &cap, need) != 0) {
            earl_mem_free_unkept(b->time); earl_mem_free_unkept(b->kind);
            earl_mem_free_unkept(b->payload);
            b->time = slots.time; b->kind = slots.kind; b->payload = slots.payload;
            b->nomem = 1;
            return -1;
        }
        memcpy(b->time, slots.time, b->n * sizeof *b->time);
        memcpy(b->kind, slots.kind, b->n * sizeof *b->kind);
        memcpy(b->payload, slots.payload, b->n * sizeof *b->payload);
        b->cap = cap;
        b->shared = NULL;
        b->first_slot = 0;
        return 0;
    }
    if (earl_colset_reserve_scratch(&s, &b->cap, need) != 0) {
        b->nomem = 1;
        return -1;
    }
    return 0;
}

size_t reading_slots(const read_plan *plan, size_t l)
{
    if (plan->defs->locations[l].held != EARL_HELD_ALL)
        return 0; /* not read (a part's ghosts come apart, csrc/part/) */
    uint64_t n = plan->defs->locations[l].declared_events;
    if (plan->file_bytes && n > plan->file_bytes[l] / 2)
        n = plan->file_bytes[l] / 2;
    return n < (1u << 26) ? (size_t)n : (1u << 26);
}

int reading_columns_alloc(reading_columns *c, const read_plan *plan, size_t *first_slot)
{
    memset(c, 0, sizeof *c);
    size_t slots = 0;
    for (size_t l = 0; l < plan->defs->n_locations; l++) {
        first_slot[l] = slots;
        slots += reading_slots(plan, l);
    }
    if (!slots)
        return 0;
    /* short-lived: a miss gives kept blocks back first (earl_mem_alloc_scratch) */
    c->time = earl_mem_alloc_scratch(slots * sizeof *c->time);
    c->kind = earl_mem_alloc_scratch(slots * sizeof *c->kind);
    c->payload = earl_mem_alloc_scratch(slots * sizeof *c->payload);
    c->slots = slots;
    if (!c->time || !c->kind || !c->payload) {
        reading_columns_free(c);
        return -1;
    }
    return 0;
}

void reading_columns_free(reading_columns *c)
{
    /* not kept: the merge gave their pages back as it consumed them */
    earl_mem_free_unkept(c->time); earl_mem_free_unkept(c->kind);
    earl_mem_free_unkept(c->payload);
    memset(c, 0, sizeof *c);
}

void loc_events_use_shared(loc_events *b, const reading_columns *shared, size_t first_slot,
                           size_t cap)
{
    if (!cap)
        return; /* nothing announced: the columns grow on their own */
    b->shared = shared;
    b->first_slot = first_slot;
    b->time = shared->time + first_slot;
    b->kind = shared->kind + first_slot;
    b->payload = shared->payload + first_slot;
    b->cap = cap;
}

/* Append an event; returns its local index or -1 when out of memory. */
static inline int64_t append(loc_events *b, OTF2_TimeStamp t, earl_kind kind, uint32_t region)
{
    if (EARL_UNLIKELY(b->n == b->cap) && reserve_core(b, b->n + 1) != 0)
        return -1;
    if (EARL_UNLIKELY(t < b->last_time)) {
        warning_add(&b->warnings, EARL_WARN_TIME_BACKWARDS, b->loc, b->n,
                    "timestamp %llu after %llu; clamped", (unsigned long long)t,
                    (unsigned long long)b->last_time);
        t = b->last_time;
    }
    b->last_time = t;
    size_t i = b->n++;
    b->time[i] = t;
    b->kind[i] = (uint8_t)kind;
    b->payload[i] = region;
    return (int64_t)i;
}

/* Append a side-table row for event i; returns the row or -1. */
static int64_t add_row(loc_events *b, int64_t i, earl_family family)
{
    if (i < 0)
        return -1;
    size_t *count = side_tables_count(&b->tables, family);
    if (EARL_UNLIKELY(*count == b->tables.cap[family])) {
        earl_colset s;
        side_tables_row_columns(&b->tables, family, &s);
        if (earl_colset_reserve_scratch(&s, &b->tables.cap[family], *count + 1) != 0) {
            b->nomem = 1;
            return -1;
        }
    }
    size_t row = (*count)++;
    b->payload[i] = (uint32_t)row;
    return (int64_t)row;
}

/* ---- regions ---------------------------------------------------------------- */

static int region_defined(const loc_events *b, uint32_t region)
{
    return region < b->defs->n_regions && b->defs->regions[region].defined;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                  void *user_data, OTF2_AttributeList *attributes,
                                  OTF2_RegionRef region)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    int64_t i = append(b, t, EARL_ENTER, region);
    if (i < 0)
        return OTF2_CALLBACK_INTERRUPT;
    if (EARL_UNLIKELY(!region_defined(b, region)))
        warning_add(&b->warnings, EARL_WARN_UNDEFINED_REFERENCE, b->loc, (uint64_t)i,
                    "ENTER of undefined region %u", region);
    if (EARL_UNLIKELY(b->depth == b->cap_stack) &&
        EARL_GROW(b->stack, b->cap_stack, b->depth + 1) != 0) {
        b->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    b->stack[b->depth++] = region;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                  void *user_data, OTF2_AttributeList *attributes,
                                  OTF2_RegionRef region)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    int64_t i = append(b, t, EARL_LEAVE, region);
    if (i < 0)
        return OTF2_CALLBACK_INTERRUPT;
    if (EARL_UNLIKELY(b->depth == 0)) {
        warning_add(&b->warnings, EARL_WARN_LEAVE_WITHOUT_ENTER, b->loc, (uint64_t)i,
                    "LEAVE of region '%s' (%u) with no region open",
                    earl_defs_region_name(&b->defs->view, region), region);
        return OTF2_CALLBACK_SUCCESS;
    }
    uint32_t open = b->stack[--b->depth];
    if (EARL_UNLIKELY(open != region))
        warning_add(&b->warnings, EARL_WARN_LEAVE_MISMATCH, b->loc, (uint64_t)i,
                    "LEAVE of region '%s' (%u) while region '%s' (%u) is open",
                    earl_defs_region_name(&b->defs->view, region), region,
                    earl_defs_region_name(&b->defs->view, open), open);
    return OTF2_CALLBACK_SUCCESS;
}

/* ---- MPI point-to-point ------------------------------------------------------ */

/* The location of rank `rank` in communicator comm, or -1 with a warning. */
static earl_loc peer_location(loc_events *b, int64_t i, OTF2_CommRef comm, uint32_t rank)
{
    const earl_defs *d = &b->defs->view;
    if (comm >= d->n_comms || !d->comms[comm].defined) {
        warning_add(&b->warnings, EARL_WARN_UNDEFINED_REFERENCE, b->loc, (uint64_t)i,
                    "%s names undefined communicator %u", earl_kind_name(b->kind[i]), comm);
        return EARL_NONE;
    }
    const earl_comm *c = &d->comms[comm];
    if (c->is_self && rank == 0)
        return b->loc;
    if (rank < c->size && !c->is_inter && c->member_locations[rank] >= 0)
        return c->member_locations[rank];
    warning_add(&b->warnings, EARL_WARN_PEER_UNRESOLVED, b->loc, (uint64_t)i,
                "%s: rank %u not resolvable in communicator %u (size %u)",
                earl_kind_name(b->kind[i]), rank, comm, c->size);
    return EARL_NONE;
}

/* What the receive of message row r asked for, in the columns the table
 * has only when the trace names the attributes (side_tables.msg_requested). */
static void set_requested(earl_msg_table *m, int64_t r, int32_t source, int32_t tag)
{
    if (m->requested_source) {
        m->requested_source[r] = source;
        m->requested_tag[r] = tag;
    }
}

static OTF2_CallbackCode message(loc_events *b, OTF2_TimeStamp t, earl_kind kind,
                                 uint32_t rank, OTF2_CommRef comm, uint32_t tag,
                                 uint64_t bytes, uint64_t request)
{
    int64_t i = append(b, t, kind, EARL_UNDEFINED_REF);
    int64_t r = add_row(b, i, EARL_FAMILY_MSG);
    if (r < 0)
        return OTF2_CALLBACK_INTERRUPT;
    earl_msg_table *m = &b->tables.msg;
    m->peer[r] = peer_location(b, i, comm, rank);
    m->peer_rank[r] = rank;
    m->comm[r] = comm;
    m->tag[r] = tag;
    m->bytes[r] = bytes;
    m->request[r] = request;
    m->partner[r] = EARL_EID32_NONE;
    set_requested(m, r, EARL_REQUESTED_UNKNOWN, EARL_REQUESTED_UNKNOWN);
    return OTF2_CALLBACK_SUCCESS;
}

/* The INT32 attribute ref1 - 1 of a record, or EARL_REQUESTED_UNKNOWN. */
static int32_t int32_attribute(OTF2_AttributeList *attributes, uint32_t ref1)
{
    int32_t value;
    if (!ref1 || !attributes ||
        OTF2_AttributeList_GetInt32(attributes, ref1 - 1, &value) != OTF2_SUCCESS)
        return EARL_REQUESTED_UNKNOWN;
    return value;
}

/* What the receive of the last event asked for, from the attributes that
 * `earlc record` adds (Score-P's traces have none). */
static void requested_from(loc_events *b, OTF2_AttributeList *attributes)
{
    if (!attributes || !OTF2_AttributeList_GetNumberOfElements(attributes))
        return;
    int64_t r = b->payload[b->n - 1];
    set_requested(&b->tables.msg, r, int32_attribute(attributes, b->defs->attr_requested_source),
                  int32_attribute(attributes, b->defs->attr_requested_tag));
}

static OTF2_CallbackCode on_send(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                 void *user_data, OTF2_AttributeList *attributes,
                                 uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                                 uint64_t bytes)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    return message(b, t, EARL_MPI_SEND, receiver, comm, tag, bytes, 0);
}

static OTF2_CallbackCode on_recv(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                 void *user_data, OTF2_AttributeList *attributes,
                                 uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                                 uint64_t bytes)
{
    (void)location; (void)pos;
    UD(b);
    if (message(b, t, EARL_MPI_RECV, sender, comm, tag, bytes, 0) != OTF2_CALLBACK_SUCCESS)
        return OTF2_CALLBACK_INTERRUPT;
    requested_from(b, attributes);
    return OTF2_CALLBACK_SUCCESS;
}

/* The start of a non-blocking request: remember it until it completes. */
static OTF2_CallbackCode request_start(loc_events *b, int64_t i, uint64_t request)
{
    int added;
    int64_t *start = earl_map_slot(&b->requests, request, 0, i, &added);
    if (!start) {
        b->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    int64_t old = added ? -1 : *start;
    *start = i;
    if (old >= 0)
        warning_add(&b->warnings, EARL_WARN_REQUEST_NOT_COMPLETED, b->loc, (uint64_t)old,
                    "request %llu started again before it completed",
                    (unsigned long long)request);
    return OTF2_CALLBACK_SUCCESS;
}

/* Append an event whose record carries only a request id; its message
 * fields come from the other half of the request.  Returns its index, or -1
 * when out of memory. */
static int64_t append_request_record(loc_events *b, OTF2_TimeStamp t, earl_kind kind,
                                     uint64_t request)
{
    int64_t i = append(b, t, kind, EARL_UNDEFINED_REF);
    int64_t r = add_row(b, i, EARL_FAMILY_MSG);
    if (r < 0)
        return -1;
    earl_msg_table *m = &b->tables.msg;
    m->peer[r] = EARL_NONE; m->peer_rank[r] = EARL_UNDEFINED_REF;
    m->comm[r] = EARL_UNDEFINED_REF; m->tag[r] = 0; m->bytes[r] = 0;
    m->request[r] = request; m->partner[r] = EARL_EID32_NONE;
    set_requested(m, r, EARL_REQUESTED_UNKNOWN, EARL_REQUESTED_UNKNOWN);
    return i;
}

static OTF2_CallbackCode on_isend(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                  void *user_data, OTF2_AttributeList *attributes,
                                  uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    if (message(b, t, EARL_MPI_ISEND, receiver, comm, tag, bytes, request) != 0)
        return OTF2_CALLBACK_INTERRUPT;
    return request_start(b, (int64_t)b->n - 1, request);
}

static OTF2_CallbackCode on_irecv_request(OTF2_LocationRef location, OTF2_TimeStamp t,
                                          uint64_t pos, void *user_data,
                                          OTF2_AttributeList *attributes, uint64_t request)
{
    (void)location; (void)pos;
    UD(b);
    /* peer, comm, tag and size are known when the receive completes */
    int64_t i = append_request_record(b, t, EARL_MPI_IRECV_REQUEST, request);
    if (i < 0)
        return OTF2_CALLBACK_INTERRUPT;
    requested_from(b, attributes);
    return request_start(b, i, request);
}

/* Copy the message fields of row `from` into row `to`. */
static void copy_message(earl_msg_table *m, int64_t to, int64_t from)
{
    m->peer[to] = m->peer[from];
    m->peer_rank[to] = m->peer_rank[from];
    m->comm[to] = m->comm[from];
    m->tag[to] = m->tag[from];
    m->bytes[to] = m->bytes[from];
}

/* Link event i (a completion, test or cancel of `request`) with the
 * request's start.  take: the request ends here, so both get partners.  The
 * side that knows the message (peer, comm, tag, size) fills in the other:
 * the start for sends and tests, the completion (MPI_IRECV) for receives. */
static void link_request(loc_events *b, int64_t i, uint64_t request, int take,
                         int completion_knows_message)
{
    int64_t start = -1;
    if (take) {
        earl_map_take(&b->requests, request, 0, &start);
    } else {
        const int64_t *at = earl_map_find(&b->requests, request, 0);
        start = at ? *at : -1;
    }
    if (start < 0) {
        warning_add(&b->warnings, EARL_WARN_REQUEST_UNKNOWN, b->loc, (uint64_t)i,
                    "%s of request %llu that was never started", earl_kind_name(b->kind[i]),
                    (unsigned long long)request);
        return;
    }
    earl_msg_table *m = &b->tables.msg;
    int64_t r = b->payload[i], sr = b->payload[start];
    /* positions on this location, turned into event ids by order.c; one
     * that does not fit 32 bits belongs to a trace of more than
     * EARL_MAX_EVENTS events, which order.c refuses before reading them */
    m->partner[r] = (earl_eid32)start;
    if (take)
        m->partner[sr] = (earl_eid32)i;
    if (completion_knows_message)
        copy_message(m, sr, r);
    else
        copy_message(m, r, sr);
    /* what was asked for is known where the request started */
    if (m->requested_source)
        set_requested(m, r, m->requested_source[sr], m->requested_tag[sr]);
}

/* A completion, test or cancel that carries nothing but its request id. */
static OTF2_CallbackCode request_event(loc_events *b, OTF2_TimeStamp t, earl_kind kind,
                                       uint64_t request, int take)
{
    int64_t i = append_request_record(b, t, kind, request);
    if (i < 0)
        return OTF2_CALLBACK_INTERRUPT;
    link_request(b, i, request, take, 0);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_isend_complete(OTF2_LocationRef location, OTF2_TimeStamp t,
                                           uint64_t pos, void *user_data,
                                           OTF2_AttributeList *attributes, uint64_t request)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    return request_event(b, t, EARL_MPI_ISEND_COMPLETE, request, 1);
}

static OTF2_CallbackCode on_irecv(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                  void *user_data, OTF2_AttributeList *attributes,
                                  uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    if (message(b, t, EARL_MPI_IRECV, sender, comm, tag, bytes, request) != 0)
        return OTF2_CALLBACK_INTERRUPT;
    link_request(b, (int64_t)b->n - 1, request, 1, 1);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_request_test(OTF2_LocationRef location, OTF2_TimeStamp t,
                                         uint64_t pos, void *user_data,
                                         OTF2_AttributeList *attributes, uint64_t request)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    return request_event(b, t, EARL_MPI_REQUEST_TEST, request, 0);
}

static OTF2_CallbackCode on_request_cancelled(OTF2_LocationRef location, OTF2_TimeStamp t,
                                              uint64_t pos, void *user_data,
                                              OTF2_AttributeList *attributes,
                                              uint64_t request)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    return request_event(b, t, EARL_MPI_REQUEST_CANCELLED, request, 1);
}

/* ---- MPI collectives --------------------------------------------------------- */

static OTF2_CallbackCode on_coll_begin(OTF2_LocationRef location, OTF2_TimeStamp t,
                                       uint64_t pos, void *user_data,
                                       OTF2_AttributeList *attributes)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    return append(b, t, EARL_MPI_COLLECTIVE_BEGIN, EARL_UNDEFINED_REF) < 0
               ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_coll_end(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                     void *user_data, OTF2_AttributeList *attributes,
                                     OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                                     uint64_t sent, uint64_t received)
{
    (void)location; (void)pos; (void)attributes;
    UD(b);
    int64_t i = append(b, t, EARL_MPI_COLLECTIVE_END, EARL_UNDEFINED_REF);
    int64_t r = add_row(b, i, EARL_FAMILY_COLL);
    if (r < 0)
        return OTF2_CALLBACK_INTERRUPT;
    earl_coll_table *c = &b->tables.coll;
    c->op[r] = op;
    c->comm[r] = comm;
    c->root_rank[r] = root;
    c->root[r] = root == OTF2_UNDEFINED_UINT32 ? EARL_NONE : peer_location(b, i, comm, root);
    c->sent[r] = sent;
    c->received[r] = received;
    return OTF2_CALLBACK_SUCCESS;
}

/* ---- threading ------------------------------------------------------------------ */

static OTF2_CallbackCode sync_event(loc_events *b, OTF2_TimeStamp t, earl_kind kind,
                                    uint8_t model, uint32_t comm, uint64_t id, uint32_t count)
{
    int64_t i = append(b, t, kind, EARL_UNDEFINED_REF);
    int64_t r = add_row(b, i, EARL_FAMILY_SYNC);
    if (r < 0)
        return OTF2_CALLBACK_INTERRUPT;
    earl_sync_table *s = &b->tables.sync;
    s->model[r] = model; s->comm[r] = comm; s->id[r] = id; s->count_[r] = count;
    return OTF2_CALLBACK_SUCCESS;
}

#define EVT_ARGS OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos, void *user_data, \
                 OTF2_AttributeList *attributes
#define EVT_UNUSED (void)location; (void)pos; (void)attributes; UD(b)
#define NO_REF EARL_UNDEFINED_REF

static OTF2_CallbackCode on_omp_fork(EVT_ARGS, uint32_t threads)
{ EVT_UNUSED; return sync_event(b, t, EARL_OMP_FORK, OTF2_PARADIGM_OPENMP, NO_REF, 0, threads); }
static OTF2_CallbackCode on_omp_join(EVT_ARGS)
{ EVT_UNUSED; return sync_event(b, t, EARL_OMP_JOIN, OTF2_PARADIGM_OPENMP, NO_REF, 0, 0); }
static OTF2_CallbackCode on_omp_acquire(EVT_ARGS, uint32_t lock, uint32_t order)
{ EVT_UNUSED; return sync_event(b, t, EARL_OMP_ACQUIRE_LOCK, OTF2_PARADIGM_OPENMP, NO_REF, lock, order); }
static OTF2_CallbackCode on_omp_release(EVT_ARGS, uint32_t lock, uint32_t order)
{ EVT_UNUSED; return sync_event(b, t, EARL_OMP_RELEASE_LOCK, OTF2_PARADIGM_OPENMP, NO_REF, lock, order); }
static OTF2_CallbackCode on_omp_task_create(EVT_ARGS, uint64_t task)
{ EVT_UNUSED; return sync_event(b, t, EARL_OMP_TASK_CREATE, OTF2_PARADIGM_OPENMP, NO_REF, task, 0); }
static OTF2_CallbackCode on_omp_task_switch(EVT_ARGS, uint64_t task)
{ EVT_UNUSED; return sync_event(b, t, EARL_OMP_TASK_SWITCH, OTF2_PARADIGM_OPENMP, NO_REF, task, 0); }
static OTF2_CallbackCode on_omp_task_complete(EVT_ARGS, uint64_t task)
{ EVT_UNUSED; return sync_event(b, t, EARL_OMP_TASK_COMPLETE, OTF2_PARADIGM_OPENMP, NO_REF, task, 0); }
static OTF2_CallbackCode on_thread_fork(EVT_ARGS, OTF2_Paradigm model, uint32_t threads)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_FORK, model, NO_REF, 0, threads); }
static OTF2_CallbackCode on_thread_join(EVT_ARGS, OTF2_Paradigm model)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_JOIN, model, NO_REF, 0, 0); }
static OTF2_CallbackCode on_team_begin(EVT_ARGS, OTF2_CommRef team)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_TEAM_BEGIN, OTF2_PARADIGM_UNKNOWN, team, 0, 0); }
static OTF2_CallbackCode on_team_end(EVT_ARGS, OTF2_CommRef team)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_TEAM_END, OTF2_PARADIGM_UNKNOWN, team, 0, 0); }
static OTF2_CallbackCode on_thread_acquire(EVT_ARGS, OTF2_Paradigm model, uint32_t lock, uint32_t order)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_ACQUIRE_LOCK, model, NO_REF, lock, order); }
static OTF2_CallbackCode on_thread_release(EVT_ARGS, OTF2_Paradigm model, uint32_t lock, uint32_t order)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_RELEASE_LOCK, model, NO_REF, lock, order); }
static OTF2_CallbackCode on_thread_task_create(EVT_ARGS, OTF2_CommRef team, uint32_t creator, uint32_t gen)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_TASK_CREATE, OTF2_PARADIGM_UNKNOWN, team, creator, gen); }
static OTF2_CallbackCode on_thread_task_switch(EVT_ARGS, OTF2_CommRef team, uint32_t creator, uint32_t gen)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_TASK_SWITCH, OTF2_PARADIGM_UNKNOWN, team, creator, gen); }
static OTF2_CallbackCode on_thread_task_complete(EVT_ARGS, OTF2_CommRef team, uint32_t creator, uint32_t gen)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_TASK_COMPLETE, OTF2_PARADIGM_UNKNOWN, team, creator, gen); }
static OTF2_CallbackCode on_thread_create(EVT_ARGS, OTF2_CommRef contingent, uint64_t seq)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_CREATE, OTF2_PARADIGM_UNKNOWN, contingent, seq, 0); }
static OTF2_CallbackCode on_thread_begin(EVT_ARGS, OTF2_CommRef contingent, uint64_t seq)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_BEGIN, OTF2_PARADIGM_UNKNOWN, contingent, seq, 0); }
static OTF2_CallbackCode on_thread_wait(EVT_ARGS, OTF2_CommRef contingent, uint64_t seq)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_WAIT, OTF2_PARADIGM_UNKNOWN, contingent, seq, 0); }
static OTF2_CallbackCode on_thread_end(EVT_ARGS, OTF2_CommRef contingent, uint64_t seq)
{ EVT_UNUSED; return sync_event(b, t, EARL_THREAD_END, OTF2_PARADIGM_UNKNOWN, contingent, seq, 0); }

/* ---- program, metric, RMA --------------------------------------------------------- */

static OTF2_CallbackCode program_event(loc_events *b, OTF2_TimeStamp t, earl_kind kind,
                                       uint32_t name, int64_t exit_status)
{
    int64_t i = append(b, t, kind, EARL_UNDEFINED_REF);
    int64_t r = add_row(b, i, EARL_FAMILY_PROGRAM);
    if (r < 0)
        return OTF2_CALLBACK_INTERRUPT;
    b->tables.program.name[r] = name;
    b->tables.program.exit_status[r] = exit_status;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_program_begin(EVT_ARGS, OTF2_StringRef name, uint32_t n_args,
                                          const OTF2_StringRef *args)
{ EVT_UNUSED; (void)n_args; (void)args; return program_event(b, t, EARL_PROGRAM_BEGIN, name, 0); }
static OTF2_CallbackCode on_program_end(EVT_ARGS, int64_t exit_status)
{ EVT_UNUSED; return program_event(b, t, EARL_PROGRAM_END, EARL_UNDEFINED_REF, exit_status); }

static OTF2_CallbackCode on_metric(EVT_ARGS, OTF2_MetricRef metric, uint8_t n,
                                   const OTF2_Type *types, const OTF2_MetricValue *values)
{
    EVT_UNUSED;
    int64_t i = append(b, t, EARL_METRIC, EARL_UNDEFINED_REF);
    int64_t r = add_row(b, i, EARL_FAMILY_METRIC);
    if (r < 0)
        return OTF2_CALLBACK_INTERRUPT;
    earl_metric_table *m = &b->tables.metric;
    size_t cap = b->tables.cap_values;
    if (EARL_GROW(m->values, cap, m->n_values + n) != 0) { b->nomem = 1; return OTF2_CALLBACK_INTERRUPT; }
    cap = b->tables.cap_values;
    if (EARL_GROW(m->value_types, cap, m->n_values + n) != 0) { b->nomem = 1; return OTF2_CALLBACK_INTERRUPT; }
    b->tables.cap_values = cap;
    m->metric[r] = metric; m->first[r] = (uint32_t)m->n_values; m->n[r] = n;
    for (uint8_t k = 0; k < n; k++) {
        memcpy(&m->values[m->n_values], &values[k], sizeof(uint64_t));
        m->value_types[m->n_values++] = types[k];
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode rma_event(loc_events *b, OTF2_TimeStamp t, earl_kind kind, uint32_t win,
                                   uint32_t remote, uint64_t bytes, uint64_t matching)
{
    int64_t i = append(b, t, kind, EARL_UNDEFINED_REF);
    int64_t r = add_row(b, i, EARL_FAMILY_RMA);
    if (r < 0)
        return OTF2_CALLBACK_INTERRUPT;
    earl_rma_table *m = &b->tables.rma;
    m->win[r] = win; m->remote[r] = remote; m->bytes[r] = bytes;
    m->matching[r] = matching;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_rma_win_create(EVT_ARGS, OTF2_RmaWinRef win)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_WIN_CREATE, win, NO_REF, 0, 0); }
static OTF2_CallbackCode on_rma_win_destroy(EVT_ARGS, OTF2_RmaWinRef win)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_WIN_DESTROY, win, NO_REF, 0, 0); }
static OTF2_CallbackCode on_rma_coll_begin(EVT_ARGS)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_COLLECTIVE_BEGIN, NO_REF, NO_REF, 0, 0); }
static OTF2_CallbackCode on_rma_coll_end(EVT_ARGS, OTF2_CollectiveOp op, OTF2_RmaSyncLevel level,
                                         OTF2_RmaWinRef win, uint32_t root, uint64_t sent,
                                         uint64_t received)
{ EVT_UNUSED; (void)op; (void)level; (void)received;
  return rma_event(b, t, EARL_RMA_COLLECTIVE_END, win, root, sent, 0); }
static OTF2_CallbackCode on_rma_group_sync(EVT_ARGS, OTF2_RmaSyncLevel level, OTF2_RmaWinRef win,
                                           OTF2_GroupRef group)
{ EVT_UNUSED; (void)level; return rma_event(b, t, EARL_RMA_GROUP_SYNC, win, group, 0, 0); }
static OTF2_CallbackCode on_rma_request_lock(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote,
                                             uint64_t lock, OTF2_LockType type)
{ EVT_UNUSED; (void)type; return rma_event(b, t, EARL_RMA_REQUEST_LOCK, win, remote, 0, lock); }
static OTF2_CallbackCode on_rma_acquire_lock(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote,
                                             uint64_t lock, OTF2_LockType type)
{ EVT_UNUSED; (void)type; return rma_event(b, t, EARL_RMA_ACQUIRE_LOCK, win, remote, 0, lock); }
static OTF2_CallbackCode on_rma_try_lock(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote,
                                         uint64_t lock, OTF2_LockType type)
{ EVT_UNUSED; (void)type; return rma_event(b, t, EARL_RMA_TRY_LOCK, win, remote, 0, lock); }
static OTF2_CallbackCode on_rma_release_lock(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote,
                                             uint64_t lock)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_RELEASE_LOCK, win, remote, 0, lock); }
static OTF2_CallbackCode on_rma_sync(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote,
                                     OTF2_RmaSyncType type)
{ EVT_UNUSED; (void)type; return rma_event(b, t, EARL_RMA_SYNC, win, remote, 0, 0); }
static OTF2_CallbackCode on_rma_wait_change(EVT_ARGS, OTF2_RmaWinRef win)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_WAIT_CHANGE, win, NO_REF, 0, 0); }
static OTF2_CallbackCode on_rma_put(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes,
                                    uint64_t matching)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_PUT, win, remote, bytes, matching); }
static OTF2_CallbackCode on_rma_get(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes,
                                    uint64_t matching)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_GET, win, remote, bytes, matching); }
static OTF2_CallbackCode on_rma_atomic(EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote,
                                       OTF2_RmaAtomicType type, uint64_t sent, uint64_t received,
                                       uint64_t matching)
{ EVT_UNUSED; (void)type; (void)received;
  return rma_event(b, t, EARL_RMA_ATOMIC, win, remote, sent, matching); }
static OTF2_CallbackCode on_rma_complete_blocking(EVT_ARGS, OTF2_RmaWinRef win, uint64_t matching)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_OP_COMPLETE_BLOCKING, win, NO_REF, 0, matching); }
static OTF2_CallbackCode on_rma_complete_non_blocking(EVT_ARGS, OTF2_RmaWinRef win, uint64_t matching)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_OP_COMPLETE_NON_BLOCKING, win, NO_REF, 0, matching); }
static OTF2_CallbackCode on_rma_op_test(EVT_ARGS, OTF2_RmaWinRef win, uint64_t matching)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_OP_TEST, win, NO_REF, 0, matching); }
static OTF2_CallbackCode on_rma_complete_remote(EVT_ARGS, OTF2_RmaWinRef win, uint64_t matching)
{ EVT_UNUSED; return rma_event(b, t, EARL_RMA_OP_COMPLETE_REMOTE, win, NO_REF, 0, matching); }

/* ---- records not kept: counted per type ---------------------------------------- */

static OTF2_CallbackCode other(void *user_data, other_record type)
{
    UD(b);
    b->other[type]++;
    return OTF2_CALLBACK_SUCCESS;
}

/* The generated callbacks ignore their record's fields by design. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define OTHER_CB(fn, type, ...) \
    static OTF2_CallbackCode fn(EVT_ARGS, __VA_ARGS__) { return other(user_data, type); }

static OTF2_CallbackCode on_unknown(OTF2_LocationRef location, OTF2_TimeStamp t, uint64_t pos,
                                    void *user_data, OTF2_AttributeList *attributes)
{ (void)location; (void)t; (void)pos; (void)attributes; return other(user_data, OTHER_UNKNOWN); }

OTHER_CB(on_buffer_flush, OTHER_BUFFER_FLUSH, OTF2_TimeStamp stop)
OTHER_CB(on_measurement, OTHER_MEASUREMENT_ON_OFF, OTF2_MeasurementMode mode)
OTHER_CB(on_param_string, OTHER_PARAMETER_STRING, OTF2_ParameterRef p, OTF2_StringRef v)
OTHER_CB(on_param_int, OTHER_PARAMETER_INT, OTF2_ParameterRef p, int64_t v)
OTHER_CB(on_param_uint, OTHER_PARAMETER_UNSIGNED_INT, OTF2_ParameterRef p, uint64_t v)
OTHER_CB(on_cc_enter, OTHER_CALLING_CONTEXT_ENTER, OTF2_CallingContextRef c, uint32_t d)
OTHER_CB(on_cc_leave, OTHER_CALLING_CONTEXT_LEAVE, OTF2_CallingContextRef c)
OTHER_CB(on_cc_sample, OTHER_CALLING_CONTEXT_SAMPLE, OTF2_CallingContextRef c, uint32_t d,
         OTF2_InterruptGeneratorRef g)
OTHER_CB(on_nbc_request, OTHER_NONBLOCKING_COLLECTIVE_REQUEST, uint64_t request)
OTHER_CB(on_nbc_complete, OTHER_NONBLOCKING_COLLECTIVE_COMPLETE, OTF2_CollectiveOp op,
         OTF2_CommRef c, uint32_t root, uint64_t s, uint64_t r, uint64_t request)
OTHER_CB(on_comm_create, OTHER_COMM_CREATE, OTF2_CommRef c)
OTHER_CB(on_comm_destroy, OTHER_COMM_DESTROY, OTF2_CommRef c)
OTHER_CB(on_io_create, OTHER_IO, OTF2_IoHandleRef h, OTF2_IoAccessMode m, OTF2_IoCreationFlag c,
         OTF2_IoStatusFlag s)
OTHER_CB(on_io_handle, OTHER_IO, OTF2_IoHandleRef h)
OTHER_CB(on_io_duplicate, OTHER_IO, OTF2_IoHandleRef h, OTF2_IoHandleRef n, OTF2_IoStatusFlag s)
OTHER_CB(on_io_seek, OTHER_IO, OTF2_IoHandleRef h, int64_t o, OTF2_IoSeekOption w, uint64_t r)
OTHER_CB(on_io_status, OTHER_IO, OTF2_IoHandleRef h, OTF2_IoStatusFlag s)
OTHER_CB(on_io_delete, OTHER_IO, OTF2_IoParadigmRef p, OTF2_IoFileRef f)
OTHER_CB(on_io_begin, OTHER_IO, OTF2_IoHandleRef h, OTF2_IoOperationMode m,
         OTF2_IoOperationFlag f, uint64_t b, uint64_t id)
OTHER_CB(on_io_matching, OTHER_IO, OTF2_IoHandleRef h, uint64_t id)
OTHER_CB(on_io_complete, OTHER_IO, OTF2_IoHandleRef h, uint64_t b, uint64_t id)
OTHER_CB(on_io_lock, OTHER_IO, OTF2_IoHandleRef h, OTF2_LockType l)
#pragma GCC diagnostic pop

static OTF2_EvtReaderCallbacks *make_callbacks(void)
{
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
    if (!cb)
        return NULL;
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, on_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, on_isend);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, on_isend_complete);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, on_irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, on_irecv);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, on_recv);
    OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(cb, on_request_test);
    OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, on_request_cancelled);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, on_coll_begin);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, on_coll_end);
    OTF2_EvtReaderCallbacks_SetOmpForkCallback(cb, on_omp_fork);
    OTF2_EvtReaderCallbacks_SetOmpJoinCallback(cb, on_omp_join);
    OTF2_EvtReaderCallbacks_SetOmpAcquireLockCallback(cb, on_omp_acquire);
    OTF2_EvtReaderCallbacks_SetOmpReleaseLockCallback(cb, on_omp_release);
    OTF2_EvtReaderCallbacks_SetOmpTaskCreateCallback(cb, on_omp_task_create);
    OTF2_EvtReaderCallbacks_SetOmpTaskSwitchCallback(cb, on_omp_task_switch);
    OTF2_EvtReaderCallbacks_SetOmpTaskCompleteCallback(cb, on_omp_task_complete);
    OTF2_EvtReaderCallbacks_SetThreadForkCallback(cb, on_thread_fork);
    OTF2_EvtReaderCallbacks_SetThreadJoinCallback(cb, on_thread_join);
    OTF2_EvtReaderCallbacks_SetThreadTeamBeginCallback(cb, on_team_begin);
    OTF2_EvtReaderCallbacks_SetThreadTeamEndCallback(cb, on_team_end);
    OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(cb, on_thread_acquire);
    OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(cb, on_thread_release);
    OTF2_EvtReaderCallbacks_SetThreadTaskCreateCallback(cb, on_thread_task_create);
    OTF2_EvtReaderCallbacks_SetThreadTaskSwitchCallback(cb, on_thread_task_switch);
    OTF2_EvtReaderCallbacks_SetThreadTaskCompleteCallback(cb, on_thread_task_complete);
    OTF2_EvtReaderCallbacks_SetThreadCreateCallback(cb, on_thread_create);
    OTF2_EvtReaderCallbacks_SetThreadBeginCallback(cb, on_thread_begin);
    OTF2_EvtReaderCallbacks_SetThreadWaitCallback(cb, on_thread_wait);
    OTF2_EvtReaderCallbacks_SetThreadEndCallback(cb, on_thread_end);
    OTF2_EvtReaderCallbacks_SetProgramBeginCallback(cb, on_program_begin);
    OTF2_EvtReaderCallbacks_SetProgramEndCallback(cb, on_program_end);
    OTF2_EvtReaderCallbacks_SetMetricCallback(cb, on_metric);
    OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(cb, on_rma_win_create);
    OTF2_EvtReaderCallbacks_SetRmaWinDestroyCallback(cb, on_rma_win_destroy);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveBeginCallback(cb, on_rma_coll_begin);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(cb, on_rma_coll_end);
    OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(cb, on_rma_group_sync);
    OTF2_EvtReaderCallbacks_SetRmaRequestLockCallback(cb, on_rma_request_lock);
    OTF2_EvtReaderCallbacks_SetRmaAcquireLockCallback(cb, on_rma_acquire_lock);
    OTF2_EvtReaderCallbacks_SetRmaTryLockCallback(cb, on_rma_try_lock);
    OTF2_EvtReaderCallbacks_SetRmaReleaseLockCallback(cb, on_rma_release_lock);
    OTF2_EvtReaderCallbacks_SetRmaSyncCallback(cb, on_rma_sync);
    OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(cb, on_rma_wait_change);
    OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb, on_rma_put);
    OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb, on_rma_get);
    OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cb, on_rma_atomic);
    OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(cb, on_rma_complete_blocking);
    OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(cb, on_rma_complete_non_blocking);
    OTF2_EvtReaderCallbacks_SetRmaOpTestCallback(cb, on_rma_op_test);
    OTF2_EvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(cb, on_rma_complete_remote);
    OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, on_unknown);
    OTF2_EvtReaderCallbacks_SetBufferFlushCallback(cb, on_buffer_flush);
    OTF2_EvtReaderCallbacks_SetMeasurementOnOffCallback(cb, on_measurement);
    OTF2_EvtReaderCallbacks_SetParameterStringCallback(cb, on_param_string);
    OTF2_EvtReaderCallbacks_SetParameterIntCallback(cb, on_param_int);
    OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(cb, on_param_uint);
    OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(cb, on_cc_enter);
    OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(cb, on_cc_leave);
    OTF2_EvtReaderCallbacks_SetCallingContextSampleCallback(cb, on_cc_sample);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, on_nbc_request);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, on_nbc_complete);
    OTF2_EvtReaderCallbacks_SetCommCreateCallback(cb, on_comm_create);
    OTF2_EvtReaderCallbacks_SetCommDestroyCallback(cb, on_comm_destroy);
    OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback(cb, on_io_create);
    OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback(cb, on_io_handle);
    OTF2_EvtReaderCallbacks_SetIoDuplicateHandleCallback(cb, on_io_duplicate);
    OTF2_EvtReaderCallbacks_SetIoSeekCallback(cb, on_io_seek);
    OTF2_EvtReaderCallbacks_SetIoChangeStatusFlagsCallback(cb, on_io_status);
    OTF2_EvtReaderCallbacks_SetIoDeleteFileCallback(cb, on_io_delete);
    OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(cb, on_io_begin);
    OTF2_EvtReaderCallbacks_SetIoOperationTestCallback(cb, on_io_matching);
    OTF2_EvtReaderCallbacks_SetIoOperationIssuedCallback(cb, on_io_matching);
    OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(cb, on_io_complete);
    OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback(cb, on_io_matching);
    OTF2_EvtReaderCallbacks_SetIoAcquireLockCallback(cb, on_io_lock);
    OTF2_EvtReaderCallbacks_SetIoReleaseLockCallback(cb, on_io_lock);
    OTF2_EvtReaderCallbacks_SetIoTryLockCallback(cb, on_io_lock);
    return cb;
}

/* ---- reading a location --------------------------------------------------------- */

static void warn_never_completed(loc_events *b, int64_t start, uint64_t request)
{
    warning_add(&b->warnings, EARL_WARN_REQUEST_NOT_COMPLETED, b->loc, (uint64_t)start,
                "request %llu never completed", (unsigned long long)request);
}

/* The requests still pending at the end of a location, in the order they
 * started (without memory to sort them, in the map's order). */
static void warn_pending_requests(loc_events *b)
{
    const earl_map *m = &b->requests;
    int64_t (*pending)[2] = m->n ? malloc(m->n * sizeof *pending) : NULL; /* start, request */
    size_t n = 0;
    for (size_t j = 0; j < m->cap; j++) {
        const earl_map_entry *e = &m->slots[j];
        if (!e->hash)
            continue;
        if (pending) {
            pending[n][0] = e->val;
            pending[n++][1] = (int64_t)e->k1;
        } else {
            warn_never_completed(b, e->val, e->k1);
        }
    }
    if (n)
        qsort(pending, n, sizeof *pending, earl_cmp_i64); /* starts are distinct */
    for (size_t k = 0; k < n; k++)
        warn_never_completed(b, pending[k][0], (uint64_t)pending[k][1]);
    free(pending);
}

/* Checks at the end of a location: regions still open, requests never
 * completed. */
static void finish_location(loc_events *b)
{
    const earl_location *l = &b->defs->view.locations[b->loc];
    if (l->incomplete)
        warning_add(&b->warnings, EARL_WARN_LOCATION_INCOMPLETE, b->loc, b->n,
                    "the record ends early: %s",
                    l->incomplete_reason < b->defs->view.strings.count
                        ? b->defs->view.strings.text[l->incomplete_reason] : "no reason given");
    for (size_t d = b->depth; d > 0; d--)
        warning_add(&b->warnings, EARL_WARN_REGION_NOT_LEFT, b->loc, b->n,
                    "region '%s' (%u) still open at the end of the location",
                    earl_defs_region_name(&b->defs->view, b->stack[d - 1]), b->stack[d - 1]);
    warn_pending_requests(b);
    free(b->stack); b->stack = NULL; b->depth = b->cap_stack = 0;
    earl_map_free(&b->requests);
}

/* How often a reader reports progress, in events. */
#define PROGRESS_STEP (1u << 18)

/* Forget what was read of b, keeping its memory: the salvage reads the
 * location again, up to its last complete record. */
static void loc_events_restart(loc_events *b)
{
    b->n = 0;
    for (int f = EARL_FAMILY_MSG; f < N_FAMILIES; f++)
        *side_tables_count(&b->tables, (earl_family)f) = 0;
    b->tables.metric.n_values = 0;
    b->last_time = 0;
    b->depth = 0;
    earl_map_free(&b->requests);
    memset(b->other, 0, sizeof b->other);
    warning_list_free(&b->warnings);
    memset(b->warnings.counts, 0, sizeof b->warnings.counts);
}

/* Read up to `limit` records of location l into b; *done counts them.  -1
 * when libotf2 cannot even open the location's reader. */
static int read_records(OTF2_Reader *reader, const read_plan *plan, OTF2_EvtReaderCallbacks *cb,
                        loc_events *b, uint64_t limit, int progress, uint64_t *done,
                        OTF2_ErrorCode *rc)
{
    *done = 0;
    *rc = OTF2_SUCCESS;
    if (limit == 0)
        return 0;
    earl_otf2_clear_message();
    OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(reader, plan->defs->locations[b->loc].id);
    if (!er)
        return -1;
    OTF2_Reader_RegisterEvtCallbacks(reader, er, cb, b);
    while (*rc == OTF2_SUCCESS && !b->nomem && *done < limit) {
        uint64_t want = limit - *done < PROGRESS_STEP ? limit - *done : PROGRESS_STEP, got = 0;
        earl_otf2_clear_message();
        *rc = OTF2_Reader_ReadLocalEvents(reader, er, want, &got);
        *done += got;
        if (progress && plan->on_progress && got)
            plan->on_progress(plan->progress_data, got);
        if (got < want)
            break;
    }
    OTF2_Reader_CloseEvtReader(reader, er);
    return 0;
}

/* The event file of b failed to decode: when it is cut short, read it again
 * up to its last complete record and say what was lost.  libotf2 cannot be
 * asked where a record ends, and it decodes the bytes past the end of a
 * short file as zeros (a LEAVE of region 0 where the region was cut), so
 * only the scan of the file's framing can tell which records are whole. */
static earl_status salvage(OTF2_Reader *reader, const read_plan *plan,
                           OTF2_EvtReaderCallbacks *cb, loc_events *b, const char *file,
                           const char *failure, earl_error *err)
{
    uint64_t chunk = 0, def_chunk = 0;
    if (OTF2_Reader_GetChunkSize(reader, &chunk, &def_chunk) != OTF2_SUCCESS)
        return earl_fail(err, EARL_ERR_CORRUPT, "%s: the event file is corrupt or truncated: "
                         "%s", file, failure);
    earl_event_file_scan scan;
    earl_status st = earl_archive_scan_event_file(file, chunk, &scan, err);
    if (st != EARL_OK)
        return st;
    if (scan.state != EARL_EVENT_FILE_CUT_SHORT)
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the event file is corrupt (damaged inside, not only cut short: "
                         "salvage cannot tell its records from the damage): %s", file, failure);
    loc_events_restart(b);
    uint64_t done = 0;
    OTF2_ErrorCode rc;
    if (read_records(reader, plan, cb, b, scan.complete, 0, &done, &rc) != 0 ||
        (rc != OTF2_SUCCESS && !b->nomem) || (done != scan.complete && !b->nomem))
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the event file is corrupt: its first %llu records, whole by their "
                         "framing, cannot be decoded: %s", file,
                         (unsigned long long)scan.complete, earl_otf2_last_message());
    if (b->nomem)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory reading it", file);
    b->salvaged = 1;
    /* how many the file held: its last chunk header's count when that chunk
     * survives, else what the definitions announce (a count below the
     * records kept is no count) */
    uint64_t announced = plan->defs->locations[b->loc].declared_events;
    uint64_t expected = scan.chunk_last_record > announced ? scan.chunk_last_record : announced;
    uint64_t dropped = scan.file_bytes - scan.good_bytes;
    if (expected >= done)
        warning_add(&b->warnings, EARL_WARN_EVENT_FILE_CUT_SHORT, b->loc, b->n,
                    "cut short after %llu records (%llu of %llu lost; %llu bytes dropped)",
                    (unsigned long long)done, (unsigned long long)(expected - done),
                    (unsigned long long)expected, (unsigned long long)dropped);
    else
        warning_add(&b->warnings, EARL_WARN_EVENT_FILE_CUT_SHORT, b->loc, b->n,
                    "cut short after %llu records (how many were lost is unknown; %llu bytes "
                    "dropped)", (unsigned long long)done, (unsigned long long)dropped);
    return EARL_OK;
}

earl_status read_locations(OTF2_Reader *reader, const read_plan *plan, loc_events *bufs,
                           size_t n, earl_error *err)
{
    OTF2_EvtReaderCallbacks *cb = make_callbacks();
    if (!cb)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", plan->anchor);
    earl_status status_code = EARL_OK;
    for (size_t k = 0; k < n && status_code == EARL_OK; k++) {
        loc_events *b = &bufs[k];
        const earl_location *l = &plan->defs->locations[b->loc];
        b->defs = plan->defs;
        b->tables.msg_requested = defs_have_requested(plan->defs);
        /* reserve what the location is expected to hold (the caller may have
         * placed the columns in shared slots of that size already) */
        size_t want = reading_slots(plan, (size_t)b->loc);
        if (want > b->cap)
            reserve_core(b, want); /* on failure nomem stops the reading below */

        char file[4096];
        earl_archive_event_file(plan->anchor, l->id, file, sizeof file);
        uint64_t done = 0;
        OTF2_ErrorCode rc = OTF2_SUCCESS;
        int opened = read_records(reader, plan, cb, b, UINT64_MAX, 1, &done, &rc) == 0;
        char failure[600];
        snprintf(failure, sizeof failure, "%s",
                 !opened ? (earl_otf2_last_message()[0] ? earl_otf2_last_message()
                                                        : "libotf2 cannot open it")
                 : earl_otf2_last_message()[0] ? earl_otf2_last_message()
                                               : OTF2_Error_GetDescription(rc));
        if (b->nomem)
            status_code = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory reading it", file);
        else if ((!opened || rc != OTF2_SUCCESS) && plan->salvage)
            status_code = salvage(reader, plan, cb, b, file, failure, err);
        else if (!opened)
            status_code = earl_fail(err, EARL_ERR_CORRUPT, "%s: cannot open the event file: %s",
                                    file, failure);
        else if (rc != OTF2_SUCCESS)
            status_code = earl_fail(err, EARL_ERR_CORRUPT,
                                    "%s: the event file is corrupt or truncated: decoding failed "
                                    "after %llu records: %s (if it was cut short, salvage keeps "
                                    "the records before the cut: --salvage, salvage=True)", file,
                                    (unsigned long long)done, failure);
        finish_location(b);
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    return status_code;
}

loc_events *loc_events_alloc(size_t n)
{
    size_t bytes = (n ? n : 1) * sizeof(loc_events); /* a multiple of the line */
    loc_events *a = aligned_alloc(EARL_CACHE_LINE, bytes);
    if (a)
        memset(a, 0, bytes);
    return a;
}

void loc_events_free(loc_events *b)
{
    /* not kept: the merge gave their pages back as it consumed them */
    if (!b->shared) {
        earl_mem_free_unkept(b->time); earl_mem_free_unkept(b->kind);
        earl_mem_free_unkept(b->payload);
    }
    b->shared = NULL;
    b->time = NULL; b->kind = NULL; b->payload = NULL;
    side_tables_free_unkept(&b->tables);
    free(b->stack); b->stack = NULL;
    earl_map_free(&b->requests);
    warning_list_free(&b->warnings);
}
