/*
 * writer_events.c - earl_writer_event and its typed shorthands: every event
 * kind of earl_kind, checked (location, references, peers within their
 * communicator, monotone time) and handed to libotf2's per-location event
 * writer.  Nothing is buffered here.
 */
#include "writer_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Events                                                                     */
/* ------------------------------------------------------------------------ */

static earl_status bad_ref(earl_writer *w, earl_error *err, earl_kind kind, earl_loc loc,
                           earl_time t, const char *what, uint32_t ref, uint32_t defined)
{
    return wr_fail(w, err, EARL_ERR_INVALID,
                 "%s at time %llu on location %d: %s %u is not defined (%u defined)", earl_kind_name(kind),
                 (unsigned long long)t, (int)loc, what, ref, defined);
}

/* A communicator of the right family, and peer < its size (unless peer may
 * be undefined and is). */
static earl_status check_comm(earl_writer *w, earl_error *err, earl_kind kind, earl_loc loc,
                              earl_time t, uint32_t comm, int want_team, uint32_t peer,
                              const char *peer_what, int peer_optional)
{
    if (comm >= w->comms.n)
        return bad_ref(w, err, kind, loc, t, want_team ? "thread team" : "communicator", comm,
                       w->comms.n);
    const wcomm *c = &w->comms.v[comm];
    if ((c->kind == COMM_TEAM) != want_team)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: communicator %u is %s, not %s", earl_kind_name(kind),
                     (unsigned long long)t, (int)loc, comm,
                     want_team ? "an MPI communicator" : "a thread team",
                     want_team ? "a thread team" : "an MPI communicator");
    if (peer_what && !(peer_optional && peer == EARL_UNDEFINED_REF) && peer >= c->size)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: %s %u is outside communicator %u of size %u",
                     earl_kind_name(kind), (unsigned long long)t, (int)loc, peer_what, peer, comm, c->size);
    return EARL_OK;
}

static earl_status check_win(earl_writer *w, earl_error *err, earl_kind kind, earl_loc loc,
                             earl_time t, uint32_t win, uint32_t remote, int has_remote)
{
    if (win >= w->wins.n)
        return bad_ref(w, err, kind, loc, t, "RMA window", win, w->wins.n);
    const wcomm *c = &w->comms.v[w->wins.v[win].comm];
    if (has_remote && remote != EARL_UNDEFINED_REF && remote >= c->size)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: remote %u is outside window %u of size %u",
                     earl_kind_name(kind), (unsigned long long)t, (int)loc, remote, win, c->size);
    return EARL_OK;
}

/* The writer's attribute list filled with rec's attributes, checked. */
static earl_status fill_attributes(earl_writer *w, earl_error *err, earl_kind kind, earl_loc loc,
                                   earl_time t, const earl_writer_record *rec,
                                   OTF2_AttributeList **out)
{
    if (!w->attr_list && !(w->attr_list = OTF2_AttributeList_New()))
        return wr_nomem(w, err);
    OTF2_AttributeList *al = w->attr_list;
    OTF2_AttributeList_RemoveAllAttributes(al);
    for (uint32_t i = 0; i < rec->n_attributes; i++) {
        const earl_writer_attr_value *a = &rec->attributes[i];
        if (a->attribute >= w->attrs.n)
            return bad_ref(w, err, kind, loc, t, "attribute", a->attribute, w->attrs.n);
        OTF2_ErrorCode rc;
        switch (w->attrs.v[a->attribute].type) {
        case OTF2_TYPE_INT32: rc = OTF2_AttributeList_AddInt32(al, a->attribute, (int32_t)a->value); break;
        case OTF2_TYPE_UINT32: rc = OTF2_AttributeList_AddUint32(al, a->attribute, (uint32_t)a->value); break;
        case OTF2_TYPE_INT64: rc = OTF2_AttributeList_AddInt64(al, a->attribute, (int64_t)a->value); break;
        default: rc = OTF2_AttributeList_AddUint64(al, a->attribute, a->value); break;
        }
        if (rc != OTF2_SUCCESS)
            return wr_fail(w, err, EARL_ERR_INVALID,
                           "%s at time %llu on location %d: attribute %u given twice",
                           earl_kind_name(kind), (unsigned long long)t, (int)loc, a->attribute);
    }
    *out = al;
    return EARL_OK;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

earl_status earl_writer_event(earl_writer *w, earl_kind kind, earl_loc loc, earl_time t,
                              const earl_writer_record *rec, earl_error *err)
{
    static const earl_writer_record none = { 0 };
    if (w->broken)
        return wr_fail(w, err, EARL_ERR_IO, "an earlier write failed; the archive can only be aborted");
    if (loc < 0 || (uint32_t)loc >= w->locs.n)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu: location %d is not defined (%u locations defined)", earl_kind_name(kind),
                     (unsigned long long)t, (int)loc, w->locs.n);
    wloc *L = &w->locs.v[loc];
    if (t < L->last)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: time goes backwards (previous event at %llu)",
                     earl_kind_name(kind), (unsigned long long)t, (int)loc, (unsigned long long)L->last);
    if (!rec)
        rec = &none;
    OTF2_EvtWriter *ew = L->evt;
    OTF2_ErrorCode rc = OTF2_SUCCESS;
    earl_status st = EARL_OK;
    const uint32_t ref = rec->ref;
    OTF2_AttributeList *al = NULL;
    if (rec->n_attributes && (st = fill_attributes(w, err, kind, loc, t, rec, &al)))
        return st;

    switch (kind) {
    case EARL_ENTER:
    case EARL_LEAVE:
        if (ref >= w->regions.n)
            return bad_ref(w, err, kind, loc, t, "region", ref, w->regions.n);
        rc = kind == EARL_ENTER ? OTF2_EvtWriter_Enter(ew, al, t, ref)
                                : OTF2_EvtWriter_Leave(ew, al, t, ref);
        break;
    case EARL_MPI_SEND:
    case EARL_MPI_ISEND:
        if ((st = check_comm(w, err, kind, loc, t, ref, 0, rec->peer, "destination rank", 0)))
            return st;
        rc = kind == EARL_MPI_SEND
                 ? OTF2_EvtWriter_MpiSend(ew, al, t, rec->peer, ref, rec->tag, rec->bytes)
                 : OTF2_EvtWriter_MpiIsend(ew, al, t, rec->peer, ref, rec->tag, rec->bytes, rec->id);
        break;
    case EARL_MPI_RECV:
    case EARL_MPI_IRECV:
        if ((st = check_comm(w, err, kind, loc, t, ref, 0, rec->peer, "source rank", 0)))
            return st;
        rc = kind == EARL_MPI_RECV
                 ? OTF2_EvtWriter_MpiRecv(ew, al, t, rec->peer, ref, rec->tag, rec->bytes)
                 : OTF2_EvtWriter_MpiIrecv(ew, al, t, rec->peer, ref, rec->tag, rec->bytes, rec->id);
        break;
    case EARL_MPI_ISEND_COMPLETE:
        rc = OTF2_EvtWriter_MpiIsendComplete(ew, al, t, rec->id);
        break;
    case EARL_MPI_IRECV_REQUEST:
        rc = OTF2_EvtWriter_MpiIrecvRequest(ew, al, t, rec->id);
        break;
    case EARL_MPI_REQUEST_TEST:
        rc = OTF2_EvtWriter_MpiRequestTest(ew, al, t, rec->id);
        break;
    case EARL_MPI_REQUEST_CANCELLED:
        rc = OTF2_EvtWriter_MpiRequestCancelled(ew, al, t, rec->id);
        break;
    case EARL_MPI_COLLECTIVE_BEGIN:
        rc = OTF2_EvtWriter_MpiCollectiveBegin(ew, al, t);
        break;
    case EARL_MPI_COLLECTIVE_END:
        if ((st = check_comm(w, err, kind, loc, t, ref, 0, rec->peer, "root rank", 1)))
            return st;
        rc = OTF2_EvtWriter_MpiCollectiveEnd(ew, al, t, rec->op, ref, rec->peer, rec->bytes,
                                             rec->bytes2);
        break;
    case EARL_OMP_FORK:
        rc = OTF2_EvtWriter_OmpFork(ew, al, t, rec->count);
        break;
    case EARL_OMP_JOIN:
        rc = OTF2_EvtWriter_OmpJoin(ew, al, t);
        break;
    case EARL_OMP_ACQUIRE_LOCK:
        rc = OTF2_EvtWriter_OmpAcquireLock(ew, al, t, (uint32_t)rec->id, rec->count);
        break;
    case EARL_OMP_RELEASE_LOCK:
        rc = OTF2_EvtWriter_OmpReleaseLock(ew, al, t, (uint32_t)rec->id, rec->count);
        break;
    case EARL_OMP_TASK_CREATE:
        rc = OTF2_EvtWriter_OmpTaskCreate(ew, al, t, rec->id);
        break;
    case EARL_OMP_TASK_SWITCH:
        rc = OTF2_EvtWriter_OmpTaskSwitch(ew, al, t, rec->id);
        break;
    case EARL_OMP_TASK_COMPLETE:
        rc = OTF2_EvtWriter_OmpTaskComplete(ew, al, t, rec->id);
        break;
    case EARL_THREAD_FORK:
        rc = OTF2_EvtWriter_ThreadFork(ew, al, t, rec->model, rec->count);
        break;
    case EARL_THREAD_JOIN:
        rc = OTF2_EvtWriter_ThreadJoin(ew, al, t, rec->model);
        break;
    case EARL_THREAD_TEAM_BEGIN:
    case EARL_THREAD_TEAM_END:
        if ((st = check_comm(w, err, kind, loc, t, ref, 1, 0, NULL, 0)))
            return st;
        rc = kind == EARL_THREAD_TEAM_BEGIN ? OTF2_EvtWriter_ThreadTeamBegin(ew, al, t, ref)
                                            : OTF2_EvtWriter_ThreadTeamEnd(ew, al, t, ref);
        break;
    case EARL_THREAD_ACQUIRE_LOCK:
        rc = OTF2_EvtWriter_ThreadAcquireLock(ew, al, t, rec->model, (uint32_t)rec->id, rec->count);
        break;
    case EARL_THREAD_RELEASE_LOCK:
        rc = OTF2_EvtWriter_ThreadReleaseLock(ew, al, t, rec->model, (uint32_t)rec->id, rec->count);
        break;
    case EARL_THREAD_TASK_CREATE:
    case EARL_THREAD_TASK_SWITCH:
    case EARL_THREAD_TASK_COMPLETE:
        if ((st = check_comm(w, err, kind, loc, t, ref, 1, rec->peer, "creating thread", 0)))
            return st;
        rc = kind == EARL_THREAD_TASK_CREATE
                 ? OTF2_EvtWriter_ThreadTaskCreate(ew, al, t, ref, rec->peer, rec->count)
             : kind == EARL_THREAD_TASK_SWITCH
                 ? OTF2_EvtWriter_ThreadTaskSwitch(ew, al, t, ref, rec->peer, rec->count)
                 : OTF2_EvtWriter_ThreadTaskComplete(ew, al, t, ref, rec->peer, rec->count);
        break;
    case EARL_THREAD_CREATE:
    case EARL_THREAD_BEGIN:
    case EARL_THREAD_WAIT:
    case EARL_THREAD_END:
        if ((st = check_comm(w, err, kind, loc, t, ref, 1, 0, NULL, 0)))
            return st;
        rc = kind == EARL_THREAD_CREATE  ? OTF2_EvtWriter_ThreadCreate(ew, al, t, ref, rec->id)
             : kind == EARL_THREAD_BEGIN ? OTF2_EvtWriter_ThreadBegin(ew, al, t, ref, rec->id)
             : kind == EARL_THREAD_WAIT  ? OTF2_EvtWriter_ThreadWait(ew, al, t, ref, rec->id)
                                         : OTF2_EvtWriter_ThreadEnd(ew, al, t, ref, rec->id);
        break;
    case EARL_PROGRAM_BEGIN:
        if (ref >= w->strings.n)
            return bad_ref(w, err, kind, loc, t, "program name string", ref, w->strings.n);
        if (rec->n_args && !rec->args)
            return wr_fail(w, err, EARL_ERR_INVALID, "PROGRAM_BEGIN: %u arguments but no list",
                         rec->n_args);
        for (uint32_t i = 0; i < rec->n_args; i++)
            if (rec->args[i] >= w->strings.n)
                return bad_ref(w, err, kind, loc, t, "argument string", rec->args[i], w->strings.n);
        rc = OTF2_EvtWriter_ProgramBegin(ew, al, t, ref, rec->n_args, rec->args);
        break;
    case EARL_PROGRAM_END:
        rc = OTF2_EvtWriter_ProgramEnd(ew, al, t, rec->exit_status);
        break;
    case EARL_METRIC: {
        if (ref >= w->classes.n)
            return bad_ref(w, err, kind, loc, t, "metric class", ref, w->classes.n);
        const wclass *c = &w->classes.v[ref];
        if (rec->n_values != c->n || !rec->values)
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "METRIC at time %llu on location %d: metric class %u has %u members but "
                         "%u values were given", (unsigned long long)t, (int)loc, ref, c->n,
                         rec->values ? rec->n_values : 0);
        OTF2_MetricValue values[255];
        for (uint32_t i = 0; i < c->n; i++)
            memcpy(&values[i], &rec->values[i], sizeof values[i]);
        rc = OTF2_EvtWriter_Metric(ew, al, t, ref, (uint8_t)c->n, c->types, values);
        break;
    }
    case EARL_RMA_WIN_CREATE:
    case EARL_RMA_WIN_DESTROY:
    case EARL_RMA_WAIT_CHANGE:
        if ((st = check_win(w, err, kind, loc, t, ref, 0, 0)))
            return st;
        rc = kind == EARL_RMA_WIN_CREATE    ? OTF2_EvtWriter_RmaWinCreate(ew, al, t, ref)
             : kind == EARL_RMA_WIN_DESTROY ? OTF2_EvtWriter_RmaWinDestroy(ew, al, t, ref)
                                            : OTF2_EvtWriter_RmaWaitChange(ew, al, t, ref);
        break;
    case EARL_RMA_COLLECTIVE_BEGIN:
        rc = OTF2_EvtWriter_RmaCollectiveBegin(ew, al, t);
        break;
    case EARL_RMA_COLLECTIVE_END:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaCollectiveEnd(ew, al, t, rec->op, rec->sync_level, ref, rec->peer,
                                             rec->bytes, rec->bytes2);
        break;
    case EARL_RMA_GROUP_SYNC:
        if ((st = check_win(w, err, kind, loc, t, ref, 0, 0)))
            return st;
        if (rec->peer >= w->groups.n)
            return bad_ref(w, err, kind, loc, t, "group", rec->peer, w->groups.n);
        rc = OTF2_EvtWriter_RmaGroupSync(ew, al, t, rec->sync_level, ref, rec->peer);
        break;
    case EARL_RMA_REQUEST_LOCK:
    case EARL_RMA_ACQUIRE_LOCK:
    case EARL_RMA_TRY_LOCK:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = kind == EARL_RMA_REQUEST_LOCK
                 ? OTF2_EvtWriter_RmaRequestLock(ew, al, t, ref, rec->peer, rec->id, rec->op)
             : kind == EARL_RMA_ACQUIRE_LOCK
                 ? OTF2_EvtWriter_RmaAcquireLock(ew, al, t, ref, rec->peer, rec->id, rec->op)
                 : OTF2_EvtWriter_RmaTryLock(ew, al, t, ref, rec->peer, rec->id, rec->op);
        break;
    case EARL_RMA_RELEASE_LOCK:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaReleaseLock(ew, al, t, ref, rec->peer, rec->id);
        break;
    case EARL_RMA_SYNC:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaSync(ew, al, t, ref, rec->peer, rec->op);
        break;
    case EARL_RMA_PUT:
    case EARL_RMA_GET:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = kind == EARL_RMA_PUT
                 ? OTF2_EvtWriter_RmaPut(ew, al, t, ref, rec->peer, rec->bytes, rec->id)
                 : OTF2_EvtWriter_RmaGet(ew, al, t, ref, rec->peer, rec->bytes, rec->id);
        break;
    case EARL_RMA_ATOMIC:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaAtomic(ew, al, t, ref, rec->peer, rec->op, rec->bytes, rec->bytes2,
                                      rec->id);
        break;
    case EARL_RMA_OP_COMPLETE_BLOCKING:
    case EARL_RMA_OP_COMPLETE_NON_BLOCKING:
    case EARL_RMA_OP_TEST:
    case EARL_RMA_OP_COMPLETE_REMOTE:
        if ((st = check_win(w, err, kind, loc, t, ref, 0, 0)))
            return st;
        rc = kind == EARL_RMA_OP_COMPLETE_BLOCKING
                 ? OTF2_EvtWriter_RmaOpCompleteBlocking(ew, al, t, ref, rec->id)
             : kind == EARL_RMA_OP_COMPLETE_NON_BLOCKING
                 ? OTF2_EvtWriter_RmaOpCompleteNonBlocking(ew, al, t, ref, rec->id)
             : kind == EARL_RMA_OP_TEST
                 ? OTF2_EvtWriter_RmaOpTest(ew, al, t, ref, rec->id)
                 : OTF2_EvtWriter_RmaOpCompleteRemote(ew, al, t, ref, rec->id);
        break;
    default:
        return wr_fail(w, err, EARL_ERR_INVALID, "event kind %d on location %d is not a known kind",
                     (int)kind, (int)loc);
    }
    if (rc != OTF2_SUCCESS)
        return wr_otf2_fail(w, err, rc, "write an event");
    if (L->n_events == 0 || t < L->tmin)
        L->tmin = t;
    if (L->n_events == 0 || t > L->tmax)
        L->tmax = t;
    L->last = t;
    L->n_events++;
    return EARL_OK;
}

#pragma GCC diagnostic pop

/* Typed shorthands.  ENTER and LEAVE skip the record for speed. */

static inline earl_status enter_leave(earl_writer *w, earl_kind kind, earl_loc loc, earl_time t,
                                      uint32_t region, earl_error *err)
{
    if (w->broken || loc < 0 || (uint32_t)loc >= w->locs.n || region >= w->regions.n) {
        earl_writer_record r = { .ref = region };
        return earl_writer_event(w, kind, loc, t, &r, err);
    }
    wloc *L = &w->locs.v[loc];
    if (t < L->last || L->n_events == 0) {
        earl_writer_record r = { .ref = region };
        return earl_writer_event(w, kind, loc, t, &r, err);
    }
    OTF2_ErrorCode rc = kind == EARL_ENTER ? OTF2_EvtWriter_Enter(L->evt, NULL, t, region)
                                           : OTF2_EvtWriter_Leave(L->evt, NULL, t, region);
    if (rc != OTF2_SUCCESS)
        return wr_otf2_fail(w, err, rc, "write an event");
    if (t > L->tmax)
        L->tmax = t;
    L->last = t;
    L->n_events++;
    return EARL_OK;
}

earl_status earl_writer_enter(earl_writer *w, earl_loc loc, earl_time t, uint32_t region,
                              earl_error *err)
{
    return enter_leave(w, EARL_ENTER, loc, t, region, err);
}

earl_status earl_writer_leave(earl_writer *w, earl_loc loc, earl_time t, uint32_t region,
                              earl_error *err)
{
    return enter_leave(w, EARL_LEAVE, loc, t, region, err);
}

earl_status earl_writer_mpi_send(earl_writer *w, earl_loc loc, earl_time t, uint32_t dest,
                                 uint32_t comm, uint32_t tag, uint64_t bytes, earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = dest, .tag = tag, .bytes = bytes };
    return earl_writer_event(w, EARL_MPI_SEND, loc, t, &r, err);
}

earl_status earl_writer_mpi_recv(earl_writer *w, earl_loc loc, earl_time t, uint32_t source,
                                 uint32_t comm, uint32_t tag, uint64_t bytes, earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = source, .tag = tag, .bytes = bytes };
    return earl_writer_event(w, EARL_MPI_RECV, loc, t, &r, err);
}

earl_status earl_writer_mpi_isend(earl_writer *w, earl_loc loc, earl_time t, uint32_t dest,
                                  uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t request,
                                  earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = dest, .tag = tag, .bytes = bytes, .id = request };
    return earl_writer_event(w, EARL_MPI_ISEND, loc, t, &r, err);
}

earl_status earl_writer_mpi_isend_complete(earl_writer *w, earl_loc loc, earl_time t,
                                           uint64_t request, earl_error *err)
{
    earl_writer_record r = { .id = request };
    return earl_writer_event(w, EARL_MPI_ISEND_COMPLETE, loc, t, &r, err);
}

earl_status earl_writer_mpi_irecv_request(earl_writer *w, earl_loc loc, earl_time t,
                                          uint64_t request, earl_error *err)
{
    earl_writer_record r = { .id = request };
    return earl_writer_event(w, EARL_MPI_IRECV_REQUEST, loc, t, &r, err);
}

earl_status earl_writer_mpi_irecv(earl_writer *w, earl_loc loc, earl_time t, uint32_t source,
                                  uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t request,
                                  earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = source, .tag = tag, .bytes = bytes, .id = request };
    return earl_writer_event(w, EARL_MPI_IRECV, loc, t, &r, err);
}

earl_status earl_writer_mpi_collective_begin(earl_writer *w, earl_loc loc, earl_time t,
                                             earl_error *err)
{
    return earl_writer_event(w, EARL_MPI_COLLECTIVE_BEGIN, loc, t, NULL, err);
}

earl_status earl_writer_mpi_collective_end(earl_writer *w, earl_loc loc, earl_time t, uint8_t op,
                                           uint32_t comm, uint32_t root, uint64_t sent,
                                           uint64_t received, earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = root, .op = op, .bytes = sent, .bytes2 = received };
    return earl_writer_event(w, EARL_MPI_COLLECTIVE_END, loc, t, &r, err);
}

