/*
 * test_writer.c - earl_writer against libotf2's own reader and otf2-print.
 *
 * The main test writes every event kind and every kind of definition, keeps a
 * log of what it wrote, then reads the archive back with OTF2_Reader and
 * compares every event field and the definitions (groups built the Score-P
 * way, number of events per location, clock).  Other tests cover bad input,
 * existing and unwritable folders, abort, and bounded memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <otf2/otf2.h>

#include "earl_writer.h"
#include "writer_test_util.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* Paths are built with snprintf into fixed buffers far larger than /tmp/earl-test-XXXXXX/... */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* The error of the last CHECK_* call is in err. */
static earl_error err;
#define OK(call) assert_int_equal_msg((call), EARL_OK)
static void assert_int_equal_msg(earl_status st, earl_status want)
{
    if (st != want)
        fail_msg("status %d, wanted %d: %s", (int)st, (int)want, err.message);
}

/* ------------------------------------------------------------------------ */
/* Expected events                                                            */
/* ------------------------------------------------------------------------ */

typedef struct expected {
    uint64_t loc_id;
    earl_kind kind;
    earl_time time;
    earl_writer_record rec;
} expected;

#define MAX_EXPECTED 4096
static expected log_[MAX_EXPECTED];
static size_t n_log;

static earl_status write_logged(earl_writer *w, earl_kind kind, earl_loc loc, uint64_t loc_id,
                                earl_time t, const earl_writer_record *rec)
{
    earl_status st = earl_writer_event(w, kind, loc, t, rec, &err);
    if (st == EARL_OK) {
        assert_true(n_log < MAX_EXPECTED);
        log_[n_log++] = (expected){ loc_id, kind, t, *rec };
    }
    return st;
}

/* ------------------------------------------------------------------------ */
/* Reading back with libotf2                                                  */
/* ------------------------------------------------------------------------ */

typedef struct rgroup {
    int defined;
    uint32_t name;
    uint8_t type, paradigm;
    uint32_t n;
    uint64_t members[16];
} rgroup;

typedef struct rcomm {
    int defined;
    uint32_t name, group, parent;
} rcomm;

typedef struct rloc {
    uint64_t id;
    uint32_t name, group;
    uint8_t type;
    uint64_t n_events;
    size_t cursor;      /* next position in log_ to match on this location */
    uint64_t seen;
} rloc;

typedef struct readback {
    char *strings[512];
    uint32_t n_strings;
    rgroup groups[64];
    rcomm comms[64];
    rloc locs[64];
    uint32_t n_locs;
    uint32_t n_regions, n_lgroups, n_nodes, n_paradigms, n_wins, n_members, n_classes;
    uint8_t region_role[64], region_paradigm[64];
    uint32_t region_name[64];
    int32_t lgroup_creator[64];
    uint64_t resolution, offset, length;
    uint64_t unknown_events;
    uint64_t mismatches;
    char first_mismatch[512];
} readback;

static readback rb;

static void mismatch(const char *fmt, ...)
{
    if (rb.mismatches++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rb.first_mismatch, sizeof rb.first_mismatch, fmt, ap);
        va_end(ap);
    }
}

static rloc *find_loc(uint64_t id)
{
    for (uint32_t i = 0; i < rb.n_locs; i++)
        if (rb.locs[i].id == id)
            return &rb.locs[i];
    return NULL;
}

/* Compare an event read back with the next one written on its location. */
static OTF2_CallbackCode got(OTF2_LocationRef loc_id, OTF2_TimeStamp t, earl_kind kind,
                             const earl_writer_record *r)
{
    rloc *L = find_loc(loc_id);
    if (!L) {
        mismatch("event on unknown location %llu", (unsigned long long)loc_id);
        return OTF2_CALLBACK_SUCCESS;
    }
    L->seen++;
    while (L->cursor < n_log && log_[L->cursor].loc_id != loc_id)
        L->cursor++;
    if (L->cursor >= n_log) {
        mismatch("unexpected extra event %d on location %llu", (int)kind, (unsigned long long)loc_id);
        return OTF2_CALLBACK_SUCCESS;
    }
    const expected *e = &log_[L->cursor++];
    const earl_writer_record *x = &e->rec;
    if (e->kind != kind || e->time != t)
        mismatch("location %llu: read kind %d at %llu, wrote kind %d at %llu",
                 (unsigned long long)loc_id, (int)kind, (unsigned long long)t, (int)e->kind,
                 (unsigned long long)e->time);
    else if (x->ref != r->ref || x->peer != r->peer || x->tag != r->tag || x->count != r->count ||
             x->bytes != r->bytes || x->bytes2 != r->bytes2 || x->id != r->id || x->op != r->op ||
             x->sync_level != r->sync_level || x->model != r->model ||
             x->exit_status != r->exit_status || x->n_values != r->n_values ||
             x->n_args != r->n_args)
        mismatch("location %llu kind %d at %llu: a field differs (ref %u/%u peer %u/%u id %llu/%llu)",
                 (unsigned long long)loc_id, (int)kind, (unsigned long long)t, r->ref, x->ref,
                 r->peer, x->peer, (unsigned long long)r->id, (unsigned long long)x->id);
    else {
        for (uint32_t i = 0; i < r->n_values; i++)
            if (r->values[i] != x->values[i])
                mismatch("kind %d: metric value %u differs", (int)kind, i);
        for (uint32_t i = 0; i < r->n_args; i++)
            if (r->args[i] != x->args[i])
                mismatch("kind %d: program argument %u differs", (int)kind, i);
    }
    return OTF2_CALLBACK_SUCCESS;
}

#define CB(name, kind, params, ...)                                                        \
    static OTF2_CallbackCode cb_##name(OTF2_LocationRef l, OTF2_TimeStamp t, void *u,      \
                                       OTF2_AttributeList *a params)                       \
    {                                                                                      \
        (void)u;                                                                           \
        (void)a;                                                                           \
        earl_writer_record r = { __VA_ARGS__ };                                            \
        return got(l, t, kind, &r);                                                        \
    }
#define P(...) , __VA_ARGS__

CB(Enter, EARL_ENTER, P(OTF2_RegionRef reg), .ref = reg)
CB(Leave, EARL_LEAVE, P(OTF2_RegionRef reg), .ref = reg)
CB(MpiSend, EARL_MPI_SEND, P(uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t n),
   .ref = c, .peer = p, .tag = tag, .bytes = n)
CB(MpiIsend, EARL_MPI_ISEND, P(uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t n, uint64_t q),
   .ref = c, .peer = p, .tag = tag, .bytes = n, .id = q)
CB(MpiIsendComplete, EARL_MPI_ISEND_COMPLETE, P(uint64_t q), .id = q)
CB(MpiIrecvRequest, EARL_MPI_IRECV_REQUEST, P(uint64_t q), .id = q)
CB(MpiRecv, EARL_MPI_RECV, P(uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t n),
   .ref = c, .peer = p, .tag = tag, .bytes = n)
CB(MpiIrecv, EARL_MPI_IRECV, P(uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t n, uint64_t q),
   .ref = c, .peer = p, .tag = tag, .bytes = n, .id = q)
CB(MpiRequestTest, EARL_MPI_REQUEST_TEST, P(uint64_t q), .id = q)
CB(MpiRequestCancelled, EARL_MPI_REQUEST_CANCELLED, P(uint64_t q), .id = q)
CB(MpiCollectiveBegin, EARL_MPI_COLLECTIVE_BEGIN, , .ref = 0)
CB(MpiCollectiveEnd, EARL_MPI_COLLECTIVE_END,
   P(OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t s, uint64_t rcv),
   .op = op, .ref = c, .peer = root, .bytes = s, .bytes2 = rcv)
CB(OmpFork, EARL_OMP_FORK, P(uint32_t n), .count = n)
CB(OmpJoin, EARL_OMP_JOIN, , .ref = 0)
CB(OmpAcquireLock, EARL_OMP_ACQUIRE_LOCK, P(uint32_t id, uint32_t o), .id = id, .count = o)
CB(OmpReleaseLock, EARL_OMP_RELEASE_LOCK, P(uint32_t id, uint32_t o), .id = id, .count = o)
CB(OmpTaskCreate, EARL_OMP_TASK_CREATE, P(uint64_t id), .id = id)
CB(OmpTaskSwitch, EARL_OMP_TASK_SWITCH, P(uint64_t id), .id = id)
CB(OmpTaskComplete, EARL_OMP_TASK_COMPLETE, P(uint64_t id), .id = id)
CB(ThreadFork, EARL_THREAD_FORK, P(OTF2_Paradigm m, uint32_t n), .model = m, .count = n)
CB(ThreadJoin, EARL_THREAD_JOIN, P(OTF2_Paradigm m), .model = m)
CB(ThreadTeamBegin, EARL_THREAD_TEAM_BEGIN, P(OTF2_CommRef c), .ref = c)
CB(ThreadTeamEnd, EARL_THREAD_TEAM_END, P(OTF2_CommRef c), .ref = c)
CB(ThreadAcquireLock, EARL_THREAD_ACQUIRE_LOCK, P(OTF2_Paradigm m, uint32_t id, uint32_t o),
   .model = m, .id = id, .count = o)
CB(ThreadReleaseLock, EARL_THREAD_RELEASE_LOCK, P(OTF2_Paradigm m, uint32_t id, uint32_t o),
   .model = m, .id = id, .count = o)
CB(ThreadTaskCreate, EARL_THREAD_TASK_CREATE, P(OTF2_CommRef c, uint32_t th, uint32_t g),
   .ref = c, .peer = th, .count = g)
CB(ThreadTaskSwitch, EARL_THREAD_TASK_SWITCH, P(OTF2_CommRef c, uint32_t th, uint32_t g),
   .ref = c, .peer = th, .count = g)
CB(ThreadTaskComplete, EARL_THREAD_TASK_COMPLETE, P(OTF2_CommRef c, uint32_t th, uint32_t g),
   .ref = c, .peer = th, .count = g)
CB(ThreadCreate, EARL_THREAD_CREATE, P(OTF2_CommRef c, uint64_t s), .ref = c, .id = s)
CB(ThreadBegin, EARL_THREAD_BEGIN, P(OTF2_CommRef c, uint64_t s), .ref = c, .id = s)
CB(ThreadWait, EARL_THREAD_WAIT, P(OTF2_CommRef c, uint64_t s), .ref = c, .id = s)
CB(ThreadEnd, EARL_THREAD_END, P(OTF2_CommRef c, uint64_t s), .ref = c, .id = s)
CB(ProgramEnd, EARL_PROGRAM_END, P(int64_t s), .exit_status = s)
CB(RmaWinCreate, EARL_RMA_WIN_CREATE, P(OTF2_RmaWinRef w), .ref = w)
CB(RmaWinDestroy, EARL_RMA_WIN_DESTROY, P(OTF2_RmaWinRef w), .ref = w)
CB(RmaCollectiveBegin, EARL_RMA_COLLECTIVE_BEGIN, , .ref = 0)
CB(RmaCollectiveEnd, EARL_RMA_COLLECTIVE_END,
   P(OTF2_CollectiveOp op, OTF2_RmaSyncLevel sl, OTF2_RmaWinRef w, uint32_t root, uint64_t s,
     uint64_t rcv),
   .op = op, .sync_level = (uint8_t)sl, .ref = w, .peer = root, .bytes = s, .bytes2 = rcv)
CB(RmaGroupSync, EARL_RMA_GROUP_SYNC, P(OTF2_RmaSyncLevel sl, OTF2_RmaWinRef w, OTF2_GroupRef g),
   .sync_level = (uint8_t)sl, .ref = w, .peer = g)
CB(RmaRequestLock, EARL_RMA_REQUEST_LOCK, P(OTF2_RmaWinRef w, uint32_t rm, uint64_t id, OTF2_LockType lt),
   .ref = w, .peer = rm, .id = id, .op = lt)
CB(RmaAcquireLock, EARL_RMA_ACQUIRE_LOCK, P(OTF2_RmaWinRef w, uint32_t rm, uint64_t id, OTF2_LockType lt),
   .ref = w, .peer = rm, .id = id, .op = lt)
CB(RmaTryLock, EARL_RMA_TRY_LOCK, P(OTF2_RmaWinRef w, uint32_t rm, uint64_t id, OTF2_LockType lt),
   .ref = w, .peer = rm, .id = id, .op = lt)
CB(RmaReleaseLock, EARL_RMA_RELEASE_LOCK, P(OTF2_RmaWinRef w, uint32_t rm, uint64_t id),
   .ref = w, .peer = rm, .id = id)
CB(RmaSync, EARL_RMA_SYNC, P(OTF2_RmaWinRef w, uint32_t rm, OTF2_RmaSyncType st),
   .ref = w, .peer = rm, .op = st)
CB(RmaWaitChange, EARL_RMA_WAIT_CHANGE, P(OTF2_RmaWinRef w), .ref = w)
CB(RmaPut, EARL_RMA_PUT, P(OTF2_RmaWinRef w, uint32_t rm, uint64_t n, uint64_t m),
   .ref = w, .peer = rm, .bytes = n, .id = m)
CB(RmaGet, EARL_RMA_GET, P(OTF2_RmaWinRef w, uint32_t rm, uint64_t n, uint64_t m),
   .ref = w, .peer = rm, .bytes = n, .id = m)
CB(RmaAtomic, EARL_RMA_ATOMIC,
   P(OTF2_RmaWinRef w, uint32_t rm, OTF2_RmaAtomicType ty, uint64_t s, uint64_t rcv, uint64_t m),
   .ref = w, .peer = rm, .op = ty, .bytes = s, .bytes2 = rcv, .id = m)
CB(RmaOpCompleteBlocking, EARL_RMA_OP_COMPLETE_BLOCKING, P(OTF2_RmaWinRef w, uint64_t m), .ref = w, .id = m)
CB(RmaOpCompleteNonBlocking, EARL_RMA_OP_COMPLETE_NON_BLOCKING, P(OTF2_RmaWinRef w, uint64_t m),
   .ref = w, .id = m)
CB(RmaOpTest, EARL_RMA_OP_TEST, P(OTF2_RmaWinRef w, uint64_t m), .ref = w, .id = m)
CB(RmaOpCompleteRemote, EARL_RMA_OP_COMPLETE_REMOTE, P(OTF2_RmaWinRef w, uint64_t m), .ref = w, .id = m)

static OTF2_CallbackCode cb_Metric(OTF2_LocationRef l, OTF2_TimeStamp t, void *u,
                                   OTF2_AttributeList *a, OTF2_MetricRef m, uint8_t n,
                                   const OTF2_Type *types, const OTF2_MetricValue *values)
{
    (void)u;
    (void)a;
    (void)types;
    uint64_t raw[255];
    for (uint8_t i = 0; i < n; i++)
        memcpy(&raw[i], &values[i], sizeof raw[i]);
    earl_writer_record r = { .ref = m, .n_values = n, .values = raw };
    return got(l, t, EARL_METRIC, &r);
}

static OTF2_CallbackCode cb_ProgramBegin(OTF2_LocationRef l, OTF2_TimeStamp t, void *u,
                                         OTF2_AttributeList *a, OTF2_StringRef name, uint32_t n,
                                         const OTF2_StringRef *args)
{
    (void)u;
    (void)a;
    earl_writer_record r = { .ref = name, .n_args = n, .args = args };
    return got(l, t, EARL_PROGRAM_BEGIN, &r);
}

static OTF2_CallbackCode cb_unknown(OTF2_LocationRef l, OTF2_TimeStamp t, void *u,
                                    OTF2_AttributeList *a)
{
    (void)l;
    (void)t;
    (void)u;
    (void)a;
    rb.unknown_events++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_flush(OTF2_LocationRef l, OTF2_TimeStamp t, void *u,
                                  OTF2_AttributeList *a, OTF2_TimeStamp s)
{
    (void)s;
    return cb_unknown(l, t, u, a);
}

/* Global definitions. */
static OTF2_CallbackCode d_clock(void *u, uint64_t res, uint64_t off, uint64_t len, uint64_t rt)
{
    (void)u;
    (void)rt;
    rb.resolution = res;
    rb.offset = off;
    rb.length = len;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_string(void *u, OTF2_StringRef self, const char *s)
{
    (void)u;
    if (self < 512) {
        rb.strings[self] = strdup(s);
        if (self + 1 > rb.n_strings)
            rb.n_strings = self + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_paradigm(void *u, OTF2_Paradigm p, OTF2_StringRef n, OTF2_ParadigmClass c)
{
    (void)u;
    (void)p;
    (void)n;
    (void)c;
    rb.n_paradigms++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_node(void *u, OTF2_SystemTreeNodeRef self, OTF2_StringRef n,
                                OTF2_StringRef c, OTF2_SystemTreeNodeRef parent)
{
    (void)u;
    (void)self;
    (void)n;
    (void)c;
    (void)parent;
    rb.n_nodes++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_lgroup(void *u, OTF2_LocationGroupRef self, OTF2_StringRef n,
                                  OTF2_LocationGroupType t, OTF2_SystemTreeNodeRef p,
                                  OTF2_LocationGroupRef creator)
{
    (void)u;
    (void)n;
    (void)t;
    (void)p;
    if (self < 64)
        rb.lgroup_creator[self] = creator == OTF2_UNDEFINED_LOCATION_GROUP ? -1 : (int32_t)creator;
    rb.n_lgroups++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_loc(void *u, OTF2_LocationRef self, OTF2_StringRef name,
                               OTF2_LocationType type, uint64_t n, OTF2_LocationGroupRef g)
{
    (void)u;
    if (rb.n_locs < 64)
        rb.locs[rb.n_locs++] = (rloc){ self, name, g, type, n, 0, 0 };
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_region(void *u, OTF2_RegionRef self, OTF2_StringRef name,
                                  OTF2_StringRef canon, OTF2_StringRef desc, OTF2_RegionRole role,
                                  OTF2_Paradigm par, OTF2_RegionFlag flags, OTF2_StringRef file,
                                  uint32_t b, uint32_t e)
{
    (void)u;
    (void)canon;
    (void)desc;
    (void)flags;
    (void)file;
    (void)b;
    (void)e;
    if (self < 64) {
        rb.region_role[self] = role;
        rb.region_paradigm[self] = par;
        rb.region_name[self] = name;
    }
    rb.n_regions++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_group(void *u, OTF2_GroupRef self, OTF2_StringRef name,
                                 OTF2_GroupType type, OTF2_Paradigm par, OTF2_GroupFlag flags,
                                 uint32_t n, const uint64_t *members)
{
    (void)u;
    (void)flags;
    if (self < 64) {
        rgroup *g = &rb.groups[self];
        *g = (rgroup){ 1, name, type, par, n, { 0 } };
        for (uint32_t i = 0; i < n && i < 16; i++)
            g->members[i] = members[i];
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_comm(void *u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef g,
                                OTF2_CommRef parent, OTF2_CommFlag flags)
{
    (void)u;
    (void)flags;
    if (self < 64)
        rb.comms[self] = (rcomm){ 1, name, g, parent };
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_win(void *u, OTF2_RmaWinRef self, OTF2_StringRef n, OTF2_CommRef c,
                               OTF2_RmaWinFlag f)
{
    (void)u;
    (void)self;
    (void)n;
    (void)c;
    (void)f;
    rb.n_wins++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_member(void *u, OTF2_MetricMemberRef self, OTF2_StringRef n,
                                  OTF2_StringRef d, OTF2_MetricType t, OTF2_MetricMode m,
                                  OTF2_Type vt, OTF2_Base b, int64_t e, OTF2_StringRef unit)
{
    (void)u;
    (void)self;
    (void)n;
    (void)d;
    (void)t;
    (void)m;
    (void)vt;
    (void)b;
    (void)e;
    (void)unit;
    rb.n_members++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_class(void *u, OTF2_MetricRef self, uint8_t n,
                                 const OTF2_MetricMemberRef *m, OTF2_MetricOccurrence o,
                                 OTF2_RecorderKind k)
{
    (void)u;
    (void)self;
    (void)n;
    (void)m;
    (void)o;
    (void)k;
    rb.n_classes++;
    return OTF2_CALLBACK_SUCCESS;
}

static void readback_free(void)
{
    for (uint32_t i = 0; i < 512; i++)
        free(rb.strings[i]);
    memset(&rb, 0, sizeof rb);
}

/* Read the archive with libotf2 into rb, matching the events against log_. */
static void read_archive(const char *anchor)
{
    readback_free();
    OTF2_Reader *r = OTF2_Reader_Open(anchor);
    assert_non_null(r);
    assert_int_equal(OTF2_Reader_SetSerialCollectiveCallbacks(r), OTF2_SUCCESS);

    OTF2_GlobalDefReader *gd = OTF2_Reader_GetGlobalDefReader(r);
    assert_non_null(gd);
    OTF2_GlobalDefReaderCallbacks *dc = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dc, d_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(dc, d_string);
    OTF2_GlobalDefReaderCallbacks_SetParadigmCallback(dc, d_paradigm);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(dc, d_node);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(dc, d_lgroup);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dc, d_loc);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(dc, d_region);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(dc, d_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(dc, d_comm);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(dc, d_win);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(dc, d_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(dc, d_class);
    assert_int_equal(OTF2_Reader_RegisterGlobalDefCallbacks(r, gd, dc, NULL), OTF2_SUCCESS);
    OTF2_GlobalDefReaderCallbacks_Delete(dc);
    uint64_t n;
    assert_int_equal(OTF2_Reader_ReadAllGlobalDefinitions(r, gd, &n), OTF2_SUCCESS);
    OTF2_Reader_CloseGlobalDefReader(r, gd);

    for (uint32_t i = 0; i < rb.n_locs; i++)
        assert_int_equal(OTF2_Reader_SelectLocation(r, rb.locs[i].id), OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_OpenDefFiles(r), OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_OpenEvtFiles(r), OTF2_SUCCESS);
    for (uint32_t i = 0; i < rb.n_locs; i++) {
        OTF2_DefReader *d = OTF2_Reader_GetDefReader(r, rb.locs[i].id);
        assert_non_null(d); /* the local definition file exists */
        uint64_t k;
        assert_int_equal(OTF2_Reader_ReadAllLocalDefinitions(r, d, &k), OTF2_SUCCESS);
        OTF2_Reader_CloseDefReader(r, d);
        assert_non_null(OTF2_Reader_GetEvtReader(r, rb.locs[i].id));
    }
    OTF2_Reader_CloseDefFiles(r);

    OTF2_GlobalEvtReader *ge = OTF2_Reader_GetGlobalEvtReader(r);
    assert_non_null(ge);
    OTF2_GlobalEvtReaderCallbacks *ec = OTF2_GlobalEvtReaderCallbacks_New();
#define SET(name) OTF2_GlobalEvtReaderCallbacks_Set##name##Callback(ec, cb_##name)
    SET(Enter); SET(Leave); SET(MpiSend); SET(MpiIsend); SET(MpiIsendComplete); SET(MpiIrecvRequest);
    SET(MpiRecv); SET(MpiIrecv); SET(MpiRequestTest); SET(MpiRequestCancelled);
    SET(MpiCollectiveBegin); SET(MpiCollectiveEnd); SET(OmpFork); SET(OmpJoin); SET(OmpAcquireLock);
    SET(OmpReleaseLock); SET(OmpTaskCreate); SET(OmpTaskSwitch); SET(OmpTaskComplete);
    SET(ThreadFork); SET(ThreadJoin); SET(ThreadTeamBegin); SET(ThreadTeamEnd);
    SET(ThreadAcquireLock); SET(ThreadReleaseLock); SET(ThreadTaskCreate); SET(ThreadTaskSwitch);
    SET(ThreadTaskComplete); SET(ThreadCreate); SET(ThreadBegin); SET(ThreadWait); SET(ThreadEnd);
    SET(ProgramBegin); SET(ProgramEnd); SET(Metric); SET(RmaWinCreate); SET(RmaWinDestroy);
    SET(RmaCollectiveBegin); SET(RmaCollectiveEnd); SET(RmaGroupSync); SET(RmaRequestLock);
    SET(RmaAcquireLock); SET(RmaTryLock); SET(RmaReleaseLock); SET(RmaSync); SET(RmaWaitChange);
    SET(RmaPut); SET(RmaGet); SET(RmaAtomic); SET(RmaOpCompleteBlocking);
    SET(RmaOpCompleteNonBlocking); SET(RmaOpTest); SET(RmaOpCompleteRemote);
#undef SET
    OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(ec, cb_unknown);
    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(ec, cb_flush);
    assert_int_equal(OTF2_Reader_RegisterGlobalEvtCallbacks(r, ge, ec, NULL), OTF2_SUCCESS);
    OTF2_GlobalEvtReaderCallbacks_Delete(ec);
    assert_int_equal(OTF2_Reader_ReadAllGlobalEvents(r, ge, &n), OTF2_SUCCESS);
    OTF2_Reader_CloseGlobalEvtReader(r, ge);
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
}

static const char *str(uint32_t ref)
{
    return ref < rb.n_strings && rb.strings[ref] ? rb.strings[ref] : "<undefined>";
}

/* ------------------------------------------------------------------------ */
/* A scenario with every definition and event kind                            */
/* ------------------------------------------------------------------------ */

typedef struct scenario {
    uint32_t node, proc[2], gpu, main_, send, allreduce, parallel;
    uint32_t world, row, self, team[2], contingent, win, sync_group, metric;
    uint32_t prog_name, args[2];
    earl_loc loc[5];
    uint64_t id[5];
} scenario;

static const uint64_t metric_values[3] = { 123456789u, 0x400921fb54442d18ull /* pi */,
                                           (uint64_t)-42 };

/* The payload written for each kind on rank 0's master thread. */
static earl_writer_record record_for(const scenario *s, earl_kind k, uint32_t i)
{
    earl_writer_record r = { 0 };
    switch (k) {
    case EARL_ENTER: case EARL_LEAVE: r.ref = s->main_; break;
    case EARL_MPI_SEND: case EARL_MPI_RECV:
        r = (earl_writer_record){ .ref = s->row, .peer = 1, .tag = 7 + i, .bytes = 1000 + i }; break;
    case EARL_MPI_ISEND: case EARL_MPI_IRECV:
        r = (earl_writer_record){ .ref = s->world, .peer = 1, .tag = 9, .bytes = 64, .id = 500 + i }; break;
    case EARL_MPI_ISEND_COMPLETE: case EARL_MPI_IRECV_REQUEST: case EARL_MPI_REQUEST_TEST:
    case EARL_MPI_REQUEST_CANCELLED: r.id = 500 + i; break;
    case EARL_MPI_COLLECTIVE_BEGIN: case EARL_OMP_JOIN: case EARL_RMA_COLLECTIVE_BEGIN: break;
    case EARL_MPI_COLLECTIVE_END:
        r = (earl_writer_record){ .op = OTF2_COLLECTIVE_OP_ALLREDUCE, .ref = s->world,
                                  .peer = EARL_UNDEFINED_REF, .bytes = 8, .bytes2 = 16 }; break;
    case EARL_OMP_FORK: r.count = 2; break;
    case EARL_OMP_ACQUIRE_LOCK: case EARL_OMP_RELEASE_LOCK: r.id = 3; r.count = 1 + i; break;
    case EARL_OMP_TASK_CREATE: case EARL_OMP_TASK_SWITCH: case EARL_OMP_TASK_COMPLETE:
        r.id = 0x100000000ull + i; break;
    case EARL_THREAD_FORK: r.model = OTF2_PARADIGM_OPENMP; r.count = 2; break;
    case EARL_THREAD_JOIN: r.model = OTF2_PARADIGM_OPENMP; break;
    case EARL_THREAD_TEAM_BEGIN: case EARL_THREAD_TEAM_END: r.ref = s->team[0]; break;
    case EARL_THREAD_ACQUIRE_LOCK: case EARL_THREAD_RELEASE_LOCK:
        r.model = OTF2_PARADIGM_OPENMP; r.id = 4; r.count = 2; break;
    case EARL_THREAD_TASK_CREATE: case EARL_THREAD_TASK_SWITCH: case EARL_THREAD_TASK_COMPLETE:
        r.ref = s->team[0]; r.peer = 1; r.count = 5 + i; break;
    case EARL_THREAD_CREATE: case EARL_THREAD_BEGIN: case EARL_THREAD_WAIT: case EARL_THREAD_END:
        r.ref = s->contingent; r.id = 77; break;
    case EARL_PROGRAM_BEGIN: r.ref = s->prog_name; r.n_args = 2; r.args = s->args; break;
    case EARL_PROGRAM_END: r.exit_status = -3; break;
    case EARL_METRIC: r.ref = s->metric; r.n_values = 3; r.values = metric_values; break;
    case EARL_RMA_WIN_CREATE: case EARL_RMA_WIN_DESTROY: case EARL_RMA_WAIT_CHANGE: r.ref = s->win; break;
    case EARL_RMA_COLLECTIVE_END:
        r = (earl_writer_record){ .op = OTF2_COLLECTIVE_OP_BARRIER, .sync_level = OTF2_RMA_SYNC_LEVEL_MEMORY,
                                  .ref = s->win, .peer = 0, .bytes = 1, .bytes2 = 2 }; break;
    case EARL_RMA_GROUP_SYNC:
        r = (earl_writer_record){ .sync_level = OTF2_RMA_SYNC_LEVEL_PROCESS, .ref = s->win,
                                  .peer = s->sync_group }; break;
    case EARL_RMA_REQUEST_LOCK: case EARL_RMA_ACQUIRE_LOCK: case EARL_RMA_TRY_LOCK:
        r = (earl_writer_record){ .ref = s->win, .peer = 1, .id = 11, .op = OTF2_LOCK_SHARED }; break;
    case EARL_RMA_RELEASE_LOCK: r = (earl_writer_record){ .ref = s->win, .peer = 1, .id = 11 }; break;
    case EARL_RMA_SYNC:
        r = (earl_writer_record){ .ref = s->win, .peer = 1, .op = OTF2_RMA_SYNC_TYPE_NOTIFY_OUT }; break;
    case EARL_RMA_PUT: case EARL_RMA_GET:
        r = (earl_writer_record){ .ref = s->win, .peer = 1, .bytes = 4096, .id = 900 + i }; break;
    case EARL_RMA_ATOMIC:
        r = (earl_writer_record){ .ref = s->win, .peer = 0, .op = OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ADD,
                                  .bytes = 8, .bytes2 = 8, .id = 950 }; break;
    case EARL_RMA_OP_COMPLETE_BLOCKING: case EARL_RMA_OP_COMPLETE_NON_BLOCKING:
    case EARL_RMA_OP_TEST: case EARL_RMA_OP_COMPLETE_REMOTE: r.ref = s->win; r.id = 900; break;
    default: fail_msg("no record for kind %d", (int)k);
    }
    return r;
}

static earl_writer *build_scenario(const char *dir, scenario *s, unsigned flags)
{
    earl_writer *w = NULL;
    OK(earl_writer_open(dir, NULL, 1000000000u, flags, &w, &err));
    uint32_t machine;
    OK(earl_writer_system_node(w, "Linux", "machine", EARL_UNDEFINED_REF, &machine, &err));
    OK(earl_writer_system_node(w, "node0", "node", machine, &s->node, &err));
    OK(earl_writer_process(w, "MPI Rank 0", s->node, 0, &s->proc[0], &err));
    OK(earl_writer_process(w, "MPI Rank 1", s->node, 1, &s->proc[1], &err));
    OK(earl_writer_location(w, s->proc[0], "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                            EARL_WRITER_AUTO_ID, &s->loc[0], &err));
    OK(earl_writer_location(w, s->proc[0], "OMP thread 1", OTF2_LOCATION_TYPE_CPU_THREAD,
                            EARL_WRITER_AUTO_ID, &s->loc[1], &err));
    OK(earl_writer_location(w, s->proc[1], "Master thread", OTF2_LOCATION_TYPE_CPU_THREAD,
                            EARL_WRITER_AUTO_ID, &s->loc[2], &err));
    OK(earl_writer_location(w, s->proc[1], "OMP thread 1", OTF2_LOCATION_TYPE_CPU_THREAD,
                            EARL_WRITER_AUTO_ID, &s->loc[3], &err));
    OK(earl_writer_location_group(w, "CUDA[0]", OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, s->node,
                                  s->proc[0], -1, &s->gpu, &err));
    OK(earl_writer_location(w, s->gpu, "CUDA[0:7]", OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, 1000,
                            &s->loc[4], &err));
    s->id[0] = 0;
    s->id[1] = 1ull << 32;
    s->id[2] = 1;
    s->id[3] = (1ull << 32) | 1;
    s->id[4] = 1000;

    earl_writer_region_def rd = { .name = "main", .role = OTF2_REGION_ROLE_FUNCTION,
                                  .paradigm = OTF2_PARADIGM_USER, .source_file = "main.c",
                                  .begin_line = 10, .end_line = 99 };
    OK(earl_writer_region(w, &rd, &s->main_, &err));
    rd = (earl_writer_region_def){ .name = "MPI_Send", .role = OTF2_REGION_ROLE_POINT2POINT,
                                   .paradigm = OTF2_PARADIGM_MPI };
    OK(earl_writer_region(w, &rd, &s->send, &err));
    rd = (earl_writer_region_def){ .name = "MPI_Allreduce", .role = OTF2_REGION_ROLE_COLL_ALL2ALL,
                                   .paradigm = OTF2_PARADIGM_MPI };
    OK(earl_writer_region(w, &rd, &s->allreduce, &err));
    rd = (earl_writer_region_def){ .name = "!$omp parallel @main.c:20", .role = OTF2_REGION_ROLE_PARALLEL,
                                   .paradigm = OTF2_PARADIGM_OPENMP };
    OK(earl_writer_region(w, &rd, &s->parallel, &err));

    OK(earl_writer_comm_world(w, NULL, &s->world, &err));
    uint32_t ranks[2] = { 1, 0 };
    OK(earl_writer_comm(w, "row", s->world, 2, ranks, &s->row, &err));
    OK(earl_writer_comm_self(w, NULL, &s->self, &err));
    earl_loc t0[2] = { s->loc[0], s->loc[1] }, t1[2] = { s->loc[2], s->loc[3] };
    OK(earl_writer_thread_team(w, "team0", OTF2_PARADIGM_OPENMP, EARL_UNDEFINED_REF, 2, t0, &s->team[0], &err));
    OK(earl_writer_thread_team(w, "team1", OTF2_PARADIGM_OPENMP, EARL_UNDEFINED_REF, 2, t1, &s->team[1], &err));
    OK(earl_writer_thread_team(w, "contingent", OTF2_PARADIGM_PTHREAD, EARL_UNDEFINED_REF, 2, t0,
                               &s->contingent, &err));
    OK(earl_writer_rma_win(w, "win", s->world, &s->win, &err));
    uint64_t gm[2] = { 0, 1 };
    OK(earl_writer_group(w, "sync", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, 0, 2, gm,
                         &s->sync_group, &err));
    uint32_t mm[3];
    earl_writer_metric_member_def md = { .name = "PAPI_TOT_CYC", .metric_type = OTF2_METRIC_TYPE_PAPI,
                                         .mode = OTF2_METRIC_ACCUMULATED_START,
                                         .value_type = OTF2_TYPE_UINT64 };
    OK(earl_writer_metric_member(w, &md, &mm[0], &err));
    md = (earl_writer_metric_member_def){ .name = "temperature", .unit = "C",
                                          .mode = OTF2_METRIC_ABSOLUTE_POINT,
                                          .value_type = OTF2_TYPE_DOUBLE };
    OK(earl_writer_metric_member(w, &md, &mm[1], &err));
    md = (earl_writer_metric_member_def){ .name = "delta", .mode = OTF2_METRIC_RELATIVE_POINT,
                                          .value_type = OTF2_TYPE_INT64 };
    OK(earl_writer_metric_member(w, &md, &mm[2], &err));
    OK(earl_writer_metric_class(w, 3, mm, OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU,
                                &s->metric, &err));
    OK(earl_writer_string(w, "./app", &s->prog_name, &err));
    OK(earl_writer_string(w, "-n", &s->args[0], &err));
    OK(earl_writer_string(w, "10", &s->args[1], &err));
    return w;
}

static void test_every_kind_roundtrip(void **state)
{
    (void)state;
    char *root = wtu_scratch();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/archive", root);
    scenario s;
    n_log = 0;
    earl_writer *w = build_scenario(dir, &s, 0);

    /* Every kind twice on rank 0's master thread, at times 100, 110, ... */
    earl_time t = 100;
    for (uint32_t i = 0; i < 2; i++)
        for (int k = 0; k < EARL_KIND_COUNT; k++) {
            earl_writer_record r = record_for(&s, (earl_kind)k, i);
            OK(write_logged(w, (earl_kind)k, s.loc[0], s.id[0], t, &r));
            t += 10;
        }
    /* Two events at the same time are fine. */
    earl_writer_record r = { .ref = s.main_ };
    OK(write_logged(w, EARL_ENTER, s.loc[0], s.id[0], t, &r));
    OK(write_logged(w, EARL_LEAVE, s.loc[0], s.id[0], t, &r));
    /* A message to rank 1 answered there; the typed shorthands. */
    OK(earl_writer_enter(w, s.loc[2], 50, s.send, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_ENTER, 50, { .ref = s.send } };
    OK(earl_writer_mpi_recv(w, s.loc[2], 60, 1, s.row, 7, 1000, &err)); /* rank 1 of row = world 0 */
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_RECV, 60, { .ref = s.row, .peer = 1, .tag = 7, .bytes = 1000 } };
    OK(earl_writer_mpi_isend(w, s.loc[2], 61, 0, s.world, 1, 2, 3, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_ISEND, 61, { .ref = s.world, .peer = 0, .tag = 1, .bytes = 2, .id = 3 } };
    OK(earl_writer_mpi_isend_complete(w, s.loc[2], 62, 3, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_ISEND_COMPLETE, 62, { .id = 3 } };
    OK(earl_writer_mpi_irecv_request(w, s.loc[2], 63, 4, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_IRECV_REQUEST, 63, { .id = 4 } };
    OK(earl_writer_mpi_irecv(w, s.loc[2], 64, 0, s.self, 1, 2, 4, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_IRECV, 64, { .ref = s.self, .peer = 0, .tag = 1, .bytes = 2, .id = 4 } };
    OK(earl_writer_mpi_send(w, s.loc[2], 65, 0, s.world, 5, 6, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_SEND, 65, { .ref = s.world, .peer = 0, .tag = 5, .bytes = 6 } };
    OK(earl_writer_mpi_collective_begin(w, s.loc[2], 66, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_COLLECTIVE_BEGIN, 66, { 0 } };
    OK(earl_writer_mpi_collective_end(w, s.loc[2], 67, OTF2_COLLECTIVE_OP_BCAST, s.world, 0, 0, 8, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_MPI_COLLECTIVE_END, 67,
                                { .op = OTF2_COLLECTIVE_OP_BCAST, .ref = s.world, .peer = 0, .bytes2 = 8 } };
    OK(earl_writer_leave(w, s.loc[2], 70, s.send, &err));
    log_[n_log++] = (expected){ s.id[2], EARL_LEAVE, 70, { .ref = s.send } };
    /* The accelerator stream starts earliest: it sets the global offset. */
    r.ref = s.main_;
    OK(write_logged(w, EARL_ENTER, s.loc[4], s.id[4], 20, &r));
    OK(write_logged(w, EARL_LEAVE, s.loc[4], s.id[4], 30, &r));

    assert_int_equal(earl_writer_event_count(w, s.loc[1]), 0);
    assert_int_equal(earl_writer_event_count(w, -1), n_log);
    char anchor[700];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", dir);
    assert_string_equal(earl_writer_anchor_path(w), anchor);
    assert_false(wtu_exists(dir)); /* not before close */
    earl_time t_end = t;
    OK(earl_writer_close(w, &err));
    assert_true(wtu_exists(anchor));
    assert_int_equal(wtu_count_prefixed(root, "archive.tmp-"), 0);

    read_archive(anchor);
    if (rb.mismatches)
        fail_msg("%llu mismatches; first: %s", (unsigned long long)rb.mismatches, rb.first_mismatch);
    assert_int_equal(rb.unknown_events, 0);
    /* Every event read, on every location, in order. */
    assert_int_equal(rb.n_locs, 5);
    for (uint32_t i = 0; i < rb.n_locs; i++) {
        uint64_t want = 0;
        for (size_t k = 0; k < n_log; k++)
            want += log_[k].loc_id == rb.locs[i].id;
        assert_int_equal(rb.locs[i].seen, want);
        assert_int_equal(rb.locs[i].n_events, want); /* the definition's count */
    }
    /* Clock: offset is the first event (the stream at 20), length to the last. */
    assert_int_equal(rb.resolution, 1000000000u);
    assert_int_equal(rb.offset, 20);
    assert_int_equal(rb.length, t_end - 20);

    /* Definitions. */
    assert_int_equal(rb.n_nodes, 2);
    assert_int_equal(rb.n_lgroups, 3);
    assert_int_equal(rb.lgroup_creator[s.gpu], (int32_t)s.proc[0]);
    assert_int_equal(rb.n_regions, 4);
    assert_string_equal(str(rb.region_name[s.allreduce]), "MPI_Allreduce");
    assert_int_equal(rb.region_role[s.allreduce], OTF2_REGION_ROLE_COLL_ALL2ALL);
    assert_int_equal(rb.region_paradigm[s.parallel], OTF2_PARADIGM_OPENMP);
    assert_int_equal(rb.n_paradigms, 3); /* MPI, OpenMP, Pthread */
    assert_int_equal(rb.n_wins, 1);
    assert_int_equal(rb.n_members, 3);
    assert_int_equal(rb.n_classes, 1);
    assert_string_equal(str(rb.locs[0].name), "Master thread");
    assert_int_equal(rb.locs[0].id, 0);
    assert_int_equal(rb.locs[3].id, (1ull << 32) | 1);

    /* The Score-P shape of the communicators. */
    const rgroup *mpi_locs = NULL, *omp_locs = NULL, *pth_locs = NULL;
    for (int g = 0; g < 64; g++) {
        const rgroup *gr = &rb.groups[g];
        if (!gr->defined || gr->type != OTF2_GROUP_TYPE_COMM_LOCATIONS)
            continue;
        if (gr->paradigm == OTF2_PARADIGM_MPI)
            mpi_locs = gr;
        else if (gr->paradigm == OTF2_PARADIGM_OPENMP)
            omp_locs = gr;
        else if (gr->paradigm == OTF2_PARADIGM_PTHREAD)
            pth_locs = gr;
    }
    assert_non_null(mpi_locs);
    assert_int_equal(mpi_locs->n, 2);
    assert_int_equal(mpi_locs->members[0], s.id[0]);
    assert_int_equal(mpi_locs->members[1], s.id[2]);
    assert_non_null(omp_locs);
    assert_int_equal(omp_locs->n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(omp_locs->members[i], s.id[i]);
    assert_non_null(pth_locs);
    assert_int_equal(pth_locs->n, 2);

    const rcomm *world = &rb.comms[s.world], *row = &rb.comms[s.row], *self = &rb.comms[s.self];
    assert_true(world->defined && row->defined && self->defined);
    assert_string_equal(str(world->name), "MPI_COMM_WORLD");
    assert_int_equal(world->parent, OTF2_UNDEFINED_COMM);
    assert_int_equal(rb.groups[world->group].type, OTF2_GROUP_TYPE_COMM_GROUP);
    assert_int_equal(rb.groups[world->group].paradigm, OTF2_PARADIGM_MPI);
    assert_int_equal(rb.groups[world->group].n, 2);
    assert_int_equal(rb.groups[world->group].members[1], 1);
    assert_string_equal(str(row->name), "row");
    assert_int_equal(row->parent, s.world);
    assert_int_equal(rb.groups[row->group].n, 2);
    assert_int_equal(rb.groups[row->group].members[0], 1); /* world rank 1 */
    assert_int_equal(rb.groups[row->group].members[1], 0);
    assert_string_equal(str(self->name), "MPI_COMM_SELF");
    assert_int_equal(rb.groups[self->group].type, OTF2_GROUP_TYPE_COMM_SELF);
    const rcomm *team1 = &rb.comms[s.team[1]];
    assert_string_equal(str(team1->name), "team1");
    assert_int_equal(rb.groups[team1->group].type, OTF2_GROUP_TYPE_COMM_GROUP);
    assert_int_equal(rb.groups[team1->group].paradigm, OTF2_PARADIGM_OPENMP);
    assert_int_equal(rb.groups[team1->group].members[0], 2); /* indices into omp_locs */
    assert_int_equal(rb.groups[team1->group].members[1], 3);

    /* otf2-print reads it without complaint. */
    char cmd[800], *out = NULL;
    snprintf(cmd, sizeof cmd, "otf2-print '%s' 2>&1", anchor);
    int rc = wtu_run(cmd, &out);
    if (rc < 0 || (rc == 127)) {
        free(out);
        out = NULL;
    } else {
        assert_int_equal(rc, 0);
        assert_null(strstr(out, "error"));
        assert_non_null(strstr(out, "MPI_COLLECTIVE_END"));
        assert_non_null(strstr(out, "RMA_OP_COMPLETE_REMOTE"));
        assert_non_null(strstr(out, "PROGRAM_BEGIN"));
    }
    free(out);
    readback_free();
    wtu_remove_tree(root);
    free(root);
}

/* ------------------------------------------------------------------------ */
/* Bad input                                                                  */
/* ------------------------------------------------------------------------ */

static void expect_invalid(earl_status st, const char *needle)
{
    if (st != EARL_ERR_INVALID)
        fail_msg("status %d, wanted EARL_ERR_INVALID (%s)", (int)st, needle);
    assert_int_equal(err.code, EARL_ERR_INVALID);
    if (!strstr(err.message, needle))
        fail_msg("message '%s' does not mention '%s'", err.message, needle);
    assert_non_null(strstr(err.message, "trace archive '"));
}

static void test_bad_events(void **state)
{
    (void)state;
    char *root = wtu_scratch();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/bad", root);
    scenario s;
    n_log = 0;
    earl_writer *w = build_scenario(dir, &s, 0);
    earl_writer_record r = { .ref = s.main_ };
    OK(write_logged(w, EARL_ENTER, s.loc[0], s.id[0], 100, &r));

    expect_invalid(earl_writer_event(w, EARL_ENTER, 42, 200, &r, &err), "location 42 is not defined");
    expect_invalid(earl_writer_enter(w, -1, 200, s.main_, &err), "location -1 is not defined");
    expect_invalid(earl_writer_enter(w, s.loc[0], 200, 99, &err), "region 99 is not defined");
    expect_invalid(earl_writer_leave(w, s.loc[0], 99, s.main_, &err), "time goes backwards");
    expect_invalid(earl_writer_mpi_send(w, s.loc[0], 200, 1, 77, 0, 0, &err), "communicator 77 is not defined");
    expect_invalid(earl_writer_mpi_send(w, s.loc[0], 200, 2, s.world, 0, 0, &err), "outside communicator");
    expect_invalid(earl_writer_mpi_send(w, s.loc[0], 200, 0, s.team[0], 0, 0, &err), "is a thread team");
    expect_invalid(earl_writer_mpi_collective_end(w, s.loc[0], 200, 0, s.self, 1, 0, 0, &err),
                   "root rank 1 is outside");
    earl_writer_record tr = { .ref = s.world };
    expect_invalid(earl_writer_event(w, EARL_THREAD_TEAM_BEGIN, s.loc[0], 200, &tr, &err), "an MPI communicator");
    earl_writer_record m = { .ref = s.metric, .n_values = 2, .values = metric_values };
    expect_invalid(earl_writer_event(w, EARL_METRIC, s.loc[0], 200, &m, &err), "3 members but 2 values");
    earl_writer_record rw = { .ref = 5 };
    expect_invalid(earl_writer_event(w, EARL_RMA_PUT, s.loc[0], 200, &rw, &err), "RMA window 5 is not defined");
    earl_writer_record rp = { .ref = s.win, .peer = 2 };
    expect_invalid(earl_writer_event(w, EARL_RMA_GET, s.loc[0], 200, &rp, &err), "remote 2 is outside");
    expect_invalid(earl_writer_event(w, (earl_kind)EARL_KIND_COUNT, s.loc[0], 200, &r, &err), "not a known kind");
    earl_writer_record pb = { .ref = 4000 };
    expect_invalid(earl_writer_event(w, EARL_PROGRAM_BEGIN, s.loc[0], 200, &pb, &err), "program name string");

    /* Bad definitions. */
    uint32_t ref;
    earl_loc loc;
    expect_invalid(earl_writer_location(w, 99, "x", OTF2_LOCATION_TYPE_CPU_THREAD, EARL_WRITER_AUTO_ID, &loc, &err),
                   "location group 99 is not defined");
    expect_invalid(earl_writer_location(w, s.proc[0], "dup", OTF2_LOCATION_TYPE_CPU_THREAD, 1, &loc, &err),
                   "id 1 is already");
    uint32_t bad_ranks[2] = { 0, 5 };
    expect_invalid(earl_writer_comm(w, "c", s.world, 2, bad_ranks, &ref, &err), "world rank 5");
    uint32_t dup_ranks[2] = { 1, 1 };
    expect_invalid(earl_writer_comm(w, "c", s.world, 2, dup_ranks, &ref, &err), "listed twice");
    expect_invalid(earl_writer_comm(w, "c", 50, 2, dup_ranks, &ref, &err), "parent communicator 50");
    expect_invalid(earl_writer_process(w, "late", s.node, 2, &ref, &err), "MPI_COMM_WORLD is already defined");
    expect_invalid(earl_writer_comm_world(w, NULL, &ref, &err), "already defined");
    expect_invalid(earl_writer_rma_win(w, "w", 40, &ref, &err), "communicator 40 is not defined");
    earl_loc bad_team[1] = { 17 };
    expect_invalid(earl_writer_thread_team(w, "t", OTF2_PARADIGM_OPENMP, EARL_UNDEFINED_REF, 1, bad_team, &ref, &err),
                   "location 17");
    earl_writer_metric_member_def md = { .name = "m", .value_type = OTF2_TYPE_STRING };
    expect_invalid(earl_writer_metric_member(w, &md, &ref, &err), "not INT64, UINT64 or DOUBLE");
    uint32_t mem = 30;
    expect_invalid(earl_writer_metric_class(w, 1, &mem, 0, 0, &ref, &err), "member 0 (30) is not defined");
    expect_invalid(earl_writer_system_node(w, "n", "c", 12, &ref, &err), "parent 12");

    /* The writer is still usable: the good events make a whole archive. */
    OK(write_logged(w, EARL_LEAVE, s.loc[0], s.id[0], 300, &r));
    OK(earl_writer_close(w, &err));
    char anchor[700];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", dir);
    read_archive(anchor);
    if (rb.mismatches)
        fail_msg("%s", rb.first_mismatch);
    assert_int_equal(find_loc(s.id[0])->seen, 2);
    assert_int_equal(find_loc(s.id[0])->n_events, 2);
    readback_free();
    wtu_remove_tree(root);
    free(root);
}

/* A rank without a thread, or a gap in the ranks: close refuses, and leaves
 * nothing behind. */
static void test_close_refuses_incomplete(void **state)
{
    (void)state;
    char *root = wtu_scratch();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/inc", root);
    earl_writer *w = NULL;
    uint32_t node, p0, p2;
    earl_loc l0;
    OK(earl_writer_open(dir, "t", 0, 0, &w, &err));
    OK(earl_writer_system_node(w, "m", "machine", EARL_UNDEFINED_REF, &node, &err));
    OK(earl_writer_process(w, "r0", node, 0, &p0, &err));
    OK(earl_writer_process(w, "r2", node, 2, &p2, &err));
    OK(earl_writer_location(w, p0, "t", OTF2_LOCATION_TYPE_CPU_THREAD, EARL_WRITER_AUTO_ID, &l0, &err));
    uint32_t ref;
    expect_invalid(earl_writer_comm_world(w, NULL, &ref, &err), "rank 1 has no process");
    expect_invalid(earl_writer_close(w, &err), "MPI rank 1 has no process");
    assert_false(wtu_exists(dir));
    assert_int_equal(wtu_count_prefixed(root, "inc."), 0);

    OK(earl_writer_open(dir, "t", 0, 0, &w, &err));
    OK(earl_writer_system_node(w, "m", "machine", EARL_UNDEFINED_REF, &node, &err));
    OK(earl_writer_process(w, "r0", node, 0, &p0, &err));
    expect_invalid(earl_writer_close(w, &err), "has no CPU thread");
    assert_false(wtu_exists(dir));
    wtu_remove_tree(root);
    free(root);
}

/* ------------------------------------------------------------------------ */
/* Folders                                                                    */
/* ------------------------------------------------------------------------ */

static void write_tiny(const char *dir, unsigned flags, earl_status want_open)
{
    earl_writer *w = NULL;
    earl_status st = earl_writer_open(dir, NULL, 0, flags, &w, &err);
    if (st != want_open)
        fail_msg("open '%s': status %d, wanted %d: %s", dir, (int)st, (int)want_open, err.message);
    if (st != EARL_OK) {
        assert_null(w);
        return;
    }
    uint32_t node, p, reg;
    earl_loc l;
    OK(earl_writer_system_node(w, "m", "machine", EARL_UNDEFINED_REF, &node, &err));
    OK(earl_writer_process(w, "p", node, -1, &p, &err));
    OK(earl_writer_location(w, p, "t", OTF2_LOCATION_TYPE_CPU_THREAD, EARL_WRITER_AUTO_ID, &l, &err));
    earl_writer_region_def rd = { .name = "f", .role = OTF2_REGION_ROLE_FUNCTION, .paradigm = OTF2_PARADIGM_USER };
    OK(earl_writer_region(w, &rd, &reg, &err));
    OK(earl_writer_enter(w, l, 1, reg, &err));
    OK(earl_writer_leave(w, l, 2, reg, &err));
    OK(earl_writer_close(w, &err));
}

static void test_folders(void **state)
{
    (void)state;
    char *root = wtu_scratch();
    char dir[800], path[900], other[900];

    /* Missing parents are created. */
    snprintf(dir, sizeof dir, "%s/a/b/c", root);
    write_tiny(dir, 0, EARL_OK);
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    assert_true(wtu_exists(path));
    /* An existing archive is not overwritten unless asked. */
    write_tiny(dir, 0, EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "not empty"));
    write_tiny(dir, EARL_WRITER_OVERWRITE, EARL_OK);
    assert_true(wtu_exists(path));
    snprintf(path, sizeof path, "%s/a/b", root);
    assert_int_equal(wtu_count_prefixed(path, "c."), 0); /* no .tmp- or .old- left */

    /* An empty folder is fine; a folder of other data is never replaced. */
    snprintf(dir, sizeof dir, "%s/empty", root);
    assert_int_equal(mkdir(dir, 0777), 0);
    write_tiny(dir, 0, EARL_OK);
    snprintf(dir, sizeof dir, "%s/data", root);
    assert_int_equal(mkdir(dir, 0777), 0);
    snprintf(other, sizeof other, "%s/precious.txt", dir);
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);
    write_tiny(dir, EARL_WRITER_OVERWRITE, EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "holds no archive"));
    assert_true(wtu_exists(other));

    /* A path that is a file, a parent that is a file. */
    write_tiny(other, 0, EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "not a folder"));
    snprintf(dir, sizeof dir, "%s/sub/x", other);
    write_tiny(dir, 0, EARL_ERR_IO);
    assert_non_null(strstr(err.message, "cannot create the parent folder"));
    assert_non_null(strstr(err.message, dir));

    /* A read-only parent (meaningless for root, who may write anyway). */
    if (geteuid() != 0) {
        snprintf(dir, sizeof dir, "%s/ro", root);
        assert_int_equal(mkdir(dir, 0555), 0);
        snprintf(path, sizeof path, "%s/ro/t", root);
        write_tiny(path, 0, EARL_ERR_IO);
        assert_non_null(strstr(err.message, "not writable"));
        chmod(dir, 0755);
    }
    /* Bad arguments. */
    earl_writer *w = (earl_writer *)1;
    assert_int_equal(earl_writer_open("", NULL, 0, 0, &w, &err), EARL_ERR_INVALID);
    assert_null(w);
    assert_int_equal(earl_writer_open(root, "a/b", 0, 0, &w, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "invalid archive name"));
    earl_writer_abort(NULL);
    wtu_remove_tree(root);
    free(root);
}

static void test_abort_leaves_nothing(void **state)
{
    (void)state;
    char *root = wtu_scratch();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/aborted", root);
    scenario s;
    earl_writer *w = build_scenario(dir, &s, 0);
    for (earl_time t = 0; t < 1000; t += 2) {
        OK(earl_writer_enter(w, s.loc[0], t, s.main_, &err));
        OK(earl_writer_leave(w, s.loc[0], t + 1, s.main_, &err));
    }
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s", earl_writer_tmp_dir(w));
    assert_true(wtu_exists(tmp));
    earl_writer_abort(w);
    assert_false(wtu_exists(dir));
    assert_false(wtu_exists(tmp));
    assert_int_equal(wtu_count_prefixed(root, ""), 0);
    wtu_remove_tree(root);
    free(root);
}

/* Attributes on events and a location property, read back by earl_trace_open
 * into the requested_source / requested_tag columns and a
 * location_incomplete warning (what `earlc record` writes, docs/record.md). */
static void test_attributes_and_incomplete_locations(void **state)
{
    (void)state;
    char *root = wtu_scratch();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/attributes", root);
    scenario s;
    earl_writer *w = build_scenario(dir, &s, 0);
    uint32_t src, tag;
    OK(earl_writer_attribute(w, EARL_ATTR_REQUESTED_SOURCE, "asked for", OTF2_TYPE_INT32, &src, &err));
    OK(earl_writer_attribute(w, EARL_ATTR_REQUESTED_TAG, "asked for", OTF2_TYPE_INT32, &tag, &err));
    assert_int_equal(earl_writer_attribute(w, "bad", NULL, OTF2_TYPE_DOUBLE, &tag, &err),
                     EARL_ERR_INVALID);
    earl_writer_attr_value any_source[2] = { { src, (uint64_t)(int64_t)-1 }, { tag, 5 } };
    earl_writer_attr_value any_tag[2] = { { src, 0 }, { tag, (uint64_t)(int64_t)-1 } };
    earl_writer_attr_value undefined[1] = { { 99, 1 } };
    OK(earl_writer_mpi_send(w, s.loc[0], 10, 1, s.world, 5, 8, &err));
    OK(earl_writer_mpi_send(w, s.loc[0], 11, 1, s.world, 6, 8, &err));
    earl_writer_record recv = { .ref = s.world, .peer = 0, .tag = 5, .bytes = 8,
                                .n_attributes = 2, .attributes = any_source };
    OK(earl_writer_event(w, EARL_MPI_RECV, s.loc[2], 20, &recv, &err));
    earl_writer_record post = { .id = 77, .n_attributes = 2, .attributes = any_tag };
    OK(earl_writer_event(w, EARL_MPI_IRECV_REQUEST, s.loc[2], 21, &post, &err));
    earl_writer_record bad = { .id = 78, .n_attributes = 1, .attributes = undefined };
    assert_int_equal(earl_writer_event(w, EARL_MPI_IRECV_REQUEST, s.loc[2], 21, &bad, &err),
                     EARL_ERR_INVALID);
    OK(earl_writer_mpi_irecv(w, s.loc[2], 22, 0, s.world, 6, 8, 77, &err));
    OK(earl_writer_location_property(w, s.loc[2], EARL_PROPERTY_INCOMPLETE, "killed", &err));
    OK(earl_writer_close(w, &err));

    earl_trace *t = NULL;
    OK(earl_trace_open(dir, NULL, &t, &err));
    const earl_events *ev = earl_trace_events(t);
    int seen = 0;
    for (size_t r = 0; r < ev->msg.count; r++) {
        earl_kind k = (earl_kind)ev->kind[ev->msg.event[r]];
        int32_t want_src = k == EARL_MPI_RECV ? -1 : k == EARL_MPI_SEND ? EARL_REQUESTED_UNKNOWN : 0;
        int32_t want_tag = k == EARL_MPI_RECV ? 5 : k == EARL_MPI_SEND ? EARL_REQUESTED_UNKNOWN : -1;
        assert_int_equal(ev->msg.requested_source[r], want_src);
        assert_int_equal(ev->msg.requested_tag[r], want_tag);
        seen++;
    }
    assert_int_equal(seen, 5);
    const earl_warnings *wn = earl_trace_warnings(t);
    assert_int_equal(wn->counts[EARL_WARN_LOCATION_INCOMPLETE], 1);
    int found = 0;
    for (size_t i = 0; i < wn->n_details; i++)
        if (wn->details[i].code == EARL_WARN_LOCATION_INCOMPLETE) {
            assert_non_null(strstr(wn->details[i].detail, "killed"));
            assert_true(earl_trace_defs(t)->locations[wn->details[i].location].incomplete);
            found++;
        }
    assert_int_equal(found, 1);
    const earl_defs *defs = earl_trace_defs(t);
    assert_int_equal(defs->n_location_properties, 1);
    assert_string_equal(defs->strings.text[defs->location_properties[0].name], EARL_PROPERTY_INCOMPLETE);
    assert_string_equal(defs->strings.text[defs->location_properties[0].value], "killed");
    earl_trace_close(t);
    wtu_remove_tree(root);
    free(root);
}

/* Events are flushed to disk while writing once the memory budget is used:
 * the event files grow before close, and the archive is whole. */
static void test_bounded_memory(void **state)
{
    (void)state;
    char *root = wtu_scratch();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/big", root);
    scenario s;
    n_log = 0;
    earl_writer *w = build_scenario(dir, &s, 0);
    earl_writer_set_memory_limit(w, 2u << 20);
    const uint64_t per_loc = 400000;
    for (uint64_t i = 0; i < per_loc / 2; i++)
        for (int l = 0; l < 4; l++) {
            OK(earl_writer_enter(w, s.loc[l], 2 * i, s.main_, &err));
            OK(earl_writer_leave(w, s.loc[l], 2 * i + 1, s.main_, &err));
        }
    char evt[800];
    snprintf(evt, sizeof evt, "%s/traces/%llu.evt", earl_writer_tmp_dir(w), (unsigned long long)s.id[3]);
    struct stat st;
    assert_int_equal(stat(evt, &st), 0);
    assert_true(st.st_size > (off_t)(1u << 20)); /* flushed while writing */
    OK(earl_writer_close(w, &err));
    char anchor[700];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", dir);
    n_log = 0; /* do not match fields: count only */
    read_archive(anchor);
    for (int l = 0; l < 4; l++) {
        assert_int_equal(find_loc(s.id[l])->n_events, per_loc);
        assert_int_equal(find_loc(s.id[l])->seen, per_loc);
    }
    readback_free();
    wtu_remove_tree(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_roundtrip),
        cmocka_unit_test(test_bad_events),
        cmocka_unit_test(test_close_refuses_incomplete),
        cmocka_unit_test(test_folders),
        cmocka_unit_test(test_abort_leaves_nothing),
        cmocka_unit_test(test_attributes_and_incomplete_locations),
        cmocka_unit_test(test_bounded_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
