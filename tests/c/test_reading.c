/*
 * test_reading.c - the reading buffers of an open and what the merge makes
 * of them: a location whose definition announces fewer events than its file
 * holds outgrows its slots of the shared reading columns and moves to blocks
 * of its own, without losing or misplacing an event or a side-table row,
 * whatever the number of threads; the merge, which gives the consumed pages
 * of the reading buffers back as it goes, yields the same store with one
 * and with several threads; the halves of non-blocking requests, linked by
 * their positions on a location while reading, become each other's event
 * ids (32 bits, EARL_EID32_NONE for none) in every merge thread's share; the
 * understated count is a warning, not an error; an event file cut short is
 * refused, and salvaged (earl_open_options.salvage) up to its last whole
 * record with any number of threads.
 * The archives are written with libotf2's own writer, since earl_writer
 * always announces the true counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <otf2/otf2.h>

#include "earl.h"
#include "earl_mem.h"
#include "writer_test_util.h"

/* Iterations per location; 3 events each, so that the two locations make
 * more events than the merge needs to use threads (65,536). */
#define ITERATIONS 20000
#define UNDERSTATED 10 /* events location 0 announces */

static OTF2_FlushType pre_flush(void *u, OTF2_FileType t, OTF2_LocationRef l, void *c, bool final)
{
    (void)u; (void)t; (void)l; (void)c; (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *u, OTF2_FileType t, OTF2_LocationRef l)
{
    (void)u; (void)t; (void)l;
    return 0;
}

static const OTF2_FlushCallbacks flush = {pre_flush, post_flush};

/* Location loc, iteration i: ENTER at 10 i + 5 loc, MPI_SEND one tick later
 * (tag i, bytes 8 i + loc), LEAVE two ticks later. */
static OTF2_TimeStamp at(int loc, int i, int step)
{
    return (OTF2_TimeStamp)(10 * i + 5 * loc + step);
}

static void write_sends(OTF2_EvtWriter *w, int loc)
{
    for (int i = 0; i < ITERATIONS; i++) {
        assert_int_equal(OTF2_EvtWriter_Enter(w, NULL, at(loc, i, 0), 0), OTF2_SUCCESS);
        assert_int_equal(OTF2_EvtWriter_MpiSend(w, NULL, at(loc, i, 1), 1 - loc, 0,
                                                (uint32_t)i, 8 * (uint64_t)i + loc),
                         OTF2_SUCCESS);
        assert_int_equal(OTF2_EvtWriter_Leave(w, NULL, at(loc, i, 2), 0), OTF2_SUCCESS);
    }
}

/* An archive of two locations whose events write_events writes; location 0
 * announces UNDERSTATED events, location 1 `announced`. */
static void write_archive_of(const char *dir, void (*write_events)(OTF2_EvtWriter *, int),
                             uint64_t announced)
{
    OTF2_Archive *a = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1 << 20, 4 << 20,
                                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    assert_non_null(a);
    OTF2_Archive_SetFlushCallbacks(a, &flush, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(a);
    OTF2_Archive_OpenEvtFiles(a);
    for (int loc = 0; loc < 2; loc++) {
        OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(a, (OTF2_LocationRef)loc);
        assert_non_null(w);
        write_events(w, loc);
        OTF2_Archive_CloseEvtWriter(a, w);
    }
    OTF2_Archive_CloseEvtFiles(a);
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(a);
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 10 * ITERATIONS + 10,
                                              OTF2_UNDEFINED_TIMESTAMP);
    OTF2_GlobalDefWriter_WriteString(g, 0, "");
    OTF2_GlobalDefWriter_WriteString(g, 1, "main");
    OTF2_GlobalDefWriter_WriteString(g, 2, "node");
    OTF2_GlobalDefWriter_WriteString(g, 3, "process");
    OTF2_GlobalDefWriter_WriteString(g, 4, "thread");
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 2, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (int loc = 0; loc < 2; loc++) {
        OTF2_GlobalDefWriter_WriteLocationGroup(g, (OTF2_LocationGroupRef)loc, 3,
                                                OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                OTF2_UNDEFINED_LOCATION_GROUP);
        OTF2_GlobalDefWriter_WriteLocation(g, (OTF2_LocationRef)loc, 4,
                                           OTF2_LOCATION_TYPE_CPU_THREAD,
                                           loc == 0 ? UNDERSTATED : announced,
                                           (OTF2_LocationGroupRef)loc);
    }
    OTF2_GlobalDefWriter_WriteRegion(g, 0, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION,
                                     OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 0, 0, 0);
    assert_int_equal(OTF2_Archive_Close(a), OTF2_SUCCESS);
}

static void write_archive(const char *dir)
{
    write_archive_of(dir, write_sends, 3 * ITERATIONS);
}

static earl_trace *open_with(const char *dir, int threads)
{
    earl_open_options o = {.threads = threads, .salvage = 1};
    earl_trace *t = NULL;
    earl_error err;
    if (earl_trace_open(dir, &o, &t, &err) != EARL_OK)
        fail_msg("%s", err.message);
    return t;
}

/* Every event and message row where the archive put it. */
static void check_store(const earl_trace *t)
{
    const earl_events *e = earl_trace_events(t);
    assert_int_equal(e->count, 6 * ITERATIONS);
    assert_int_equal(e->loc_start[1], 3 * ITERATIONS);
    assert_int_equal(e->loc_start[2], 6 * ITERATIONS);
    assert_int_equal(earl_trace_defs(t)->locations[0].events, 3 * ITERATIONS);
    for (int loc = 0; loc < 2; loc++) {
        for (int k = 0; k < 3 * ITERATIONS; k++) {
            earl_eid id = e->loc_events[e->loc_start[loc] + (size_t)k];
            assert_int_equal(e->location[id], loc);
            assert_int_equal(e->time[id], at(loc, k / 3, k % 3));
            assert_int_equal(e->kind[id], k % 3 == 0 ? EARL_ENTER
                                          : k % 3 == 1 ? EARL_MPI_SEND : EARL_LEAVE);
        }
    }
    /* total order: by time, then location */
    for (size_t i = 1; i < e->count; i++)
        assert_true(e->time[i - 1] < e->time[i] ||
                    (e->time[i - 1] == e->time[i] && e->location[i - 1] < e->location[i]));
    /* message rows location after location, each pointing at its event */
    assert_int_equal(e->msg.count, 2 * ITERATIONS);
    /* location 0 announces fewer than it holds: read whole, with a warning */
    const earl_warnings *w = earl_trace_warnings(t);
    assert_int_equal(w->counts[EARL_WARN_EVENT_COUNT_MISMATCH], 1);
    assert_int_equal(w->counts[EARL_WARN_EVENT_FILE_CUT_SHORT], 0);
    for (size_t r = 0; r < e->msg.count; r++) {
        int loc = r >= ITERATIONS;
        uint32_t i = (uint32_t)(r % ITERATIONS);
        earl_eid id = e->msg.event[r];
        assert_int_equal(e->kind[id], EARL_MPI_SEND);
        assert_int_equal(e->location[id], loc);
        assert_int_equal(e->ref[id], (int32_t)r);
        assert_int_equal(e->time[id], at(loc, (int)i, 1));
        assert_int_equal(e->msg.tag[r], i);
        assert_int_equal(e->msg.bytes[r], 8 * (uint64_t)i + (uint64_t)loc);
        assert_int_equal(e->msg.peer_rank[r], 1 - loc);
        assert_int_equal(e->msg.partner[r], EARL_EID32_NONE);
        assert_int_equal(earl_msg_partner(&e->msg, r), EARL_NONE);
    }
}

static void assert_same_store(const earl_trace *a, const earl_trace *b)
{
    const earl_events *x = earl_trace_events(a), *y = earl_trace_events(b);
    assert_int_equal(x->count, y->count);
    assert_memory_equal(x->time, y->time, x->count * sizeof *x->time);
    assert_memory_equal(x->location, y->location, x->count * sizeof *x->location);
    assert_memory_equal(x->kind, y->kind, x->count);
    assert_memory_equal(x->payload, y->payload, x->count * sizeof *x->payload);
    assert_memory_equal(x->loc_events, y->loc_events, x->count * sizeof *x->loc_events);
    assert_int_equal(x->msg.count, y->msg.count);
    size_t m = x->msg.count;
    assert_memory_equal(x->msg.event, y->msg.event, m * sizeof *x->msg.event);
    assert_memory_equal(x->msg.peer, y->msg.peer, m * sizeof *x->msg.peer);
    assert_memory_equal(x->msg.tag, y->msg.tag, m * sizeof *x->msg.tag);
    assert_memory_equal(x->msg.bytes, y->msg.bytes, m * sizeof *x->msg.bytes);
    assert_memory_equal(x->msg.partner, y->msg.partner, m * sizeof *x->msg.partner);
    for (size_t r = 0; r < m; r++)
        assert_int_equal(earl_msg_requested_tag(&x->msg, r), earl_msg_requested_tag(&y->msg, r));
}

static void test_understated_count_outgrows_its_slots(void **state)
{
    (void)state;
    char *dir = wtu_scratch();
    write_archive(dir);
    earl_trace *one = open_with(dir, 1);
    check_store(one);
    for (int threads = 2; threads <= 3; threads++) {
        earl_trace *more = open_with(dir, threads);
        check_store(more);
        assert_same_store(one, more);
        earl_trace_close(more);
    }
    /* opened again in the same process, on the blocks the first trace left */
    earl_trace_close(one);
    earl_trace *again = open_with(dir, 2);
    check_store(again);
    earl_trace_close(again);
    earl_mem_release();
    wtu_remove_tree(dir);
    free(dir);
}

/* Requests: in iteration i each location starts an MPI_ISEND (request
 * 2 i + 1) and an MPI_IRECV_REQUEST (2 i + 2), tests the send, completes the
 * receive (MPI_IRECV) and then the send.  Location 0 ends with a send never
 * completed, a completion of a request never started and a receive request
 * cancelled. */
enum { ISEND, IRECV_REQUEST, TEST, IRECV, ISEND_COMPLETE, STEPS };
/* 5 events per location and iteration: 100,004 in all, so threads merge them */
#define REQUEST_ITERATIONS (ITERATIONS / 2)
#define NEVER_COMPLETED 1000000001u
#define NEVER_STARTED 1000000002u
#define CANCELLED 1000000003u

static void write_requests(OTF2_EvtWriter *w, int loc)
{
    for (int i = 0; i < REQUEST_ITERATIONS; i++) {
        uint64_t send = 2 * (uint64_t)i + 1, recv = send + 1;
        OTF2_TimeStamp t = 10 * (OTF2_TimeStamp)i;
        assert_int_equal(OTF2_EvtWriter_MpiIsend(w, NULL, t + ISEND, 1 - loc, 0, (uint32_t)i,
                                                 8, send), OTF2_SUCCESS);
        assert_int_equal(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + IRECV_REQUEST, recv),
                         OTF2_SUCCESS);
        assert_int_equal(OTF2_EvtWriter_MpiRequestTest(w, NULL, t + TEST, send), OTF2_SUCCESS);
        assert_int_equal(OTF2_EvtWriter_MpiIrecv(w, NULL, t + IRECV, 1 - loc, 0, (uint32_t)i, 8,
                                                 recv), OTF2_SUCCESS);
        assert_int_equal(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t + ISEND_COMPLETE, send),
                         OTF2_SUCCESS);
    }
    if (loc != 0)
        return;
    OTF2_TimeStamp t = 10 * (OTF2_TimeStamp)REQUEST_ITERATIONS;
    assert_int_equal(OTF2_EvtWriter_MpiIsend(w, NULL, t, 1, 0, 0, 8, NEVER_COMPLETED),
                     OTF2_SUCCESS);
    assert_int_equal(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t + 1, NEVER_STARTED),
                     OTF2_SUCCESS);
    assert_int_equal(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + 2, CANCELLED), OTF2_SUCCESS);
    assert_int_equal(OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t + 3, CANCELLED),
                     OTF2_SUCCESS);
}

/* Each row's partner: the event at the position its request's other half
 * has on the same location, or none. */
static void check_partners(const earl_trace *t)
{
    const earl_events *e = earl_trace_events(t);
    const size_t per_location = STEPS * REQUEST_ITERATIONS;
    assert_int_equal(e->msg.count, 2 * per_location + 4);
    size_t linked = 0;
    for (size_t r = 0; r < e->msg.count; r++) {
        earl_eid id = e->msg.event[r];
        earl_loc loc = e->location[id];
        const earl_eid32 *seq = e->loc_events + e->loc_start[loc];
        size_t pos = (size_t)(r - (loc ? e->msg.count - per_location : 0));
        assert_int_equal(seq[pos], id);
        earl_eid want = EARL_NONE;
        if (pos < per_location) {
            /* the other half of this step's request in the same iteration */
            static const int other[STEPS] = {ISEND_COMPLETE, IRECV, ISEND, IRECV_REQUEST, ISEND};
            want = seq[pos - pos % STEPS + (size_t)other[pos % STEPS]];
        } else if (pos == per_location + 2 || pos == per_location + 3) {
            want = seq[pos == per_location + 2 ? pos + 1 : pos - 1]; /* the cancel */
        }
        assert_int_equal(earl_msg_partner(&e->msg, r), want);
        assert_int_equal(e->msg.partner[r], want >= 0 ? (earl_eid32)want : EARL_EID32_NONE);
        linked += want >= 0;
    }
    assert_int_equal(linked, 2 * per_location + 2);
    const earl_warnings *w = earl_trace_warnings(t);
    assert_int_equal(w->counts[EARL_WARN_REQUEST_NOT_COMPLETED], 1);
    assert_int_equal(w->counts[EARL_WARN_REQUEST_UNKNOWN], 1);
}

static void test_request_partners_become_event_ids(void **state)
{
    (void)state;
    char *dir = wtu_scratch();
    write_archive_of(dir, write_requests, STEPS * REQUEST_ITERATIONS);
    earl_trace *one = open_with(dir, 1);
    check_partners(one);
    for (int threads = 2; threads <= 3; threads++) {
        earl_trace *more = open_with(dir, threads);
        check_partners(more);
        assert_same_store(one, more);
        earl_trace_close(more);
    }
    earl_trace_close(one);
    earl_mem_release();
    wtu_remove_tree(dir);
    free(dir);
}

/* Location 1's event file loses its last 3 bytes: the last LEAVE's region
 * and the end mark.  Refused by default; salvaged, location 1 keeps every
 * record but that LEAVE, with one warning saying one of its records was
 * lost, and the same store for any number of threads. */
static void test_cut_file_salvaged(void **state)
{
    (void)state;
    char *dir = wtu_scratch(), file[4096];
    write_archive(dir);
    snprintf(file, sizeof file, "%s/traces/1.evt", dir);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(truncate(file, st.st_size - 3), 0);
    earl_open_options strict = {.threads = 2};
    earl_trace *t = NULL;
    earl_error err;
    assert_int_equal(earl_trace_open(dir, &strict, &t, &err), EARL_ERR_CORRUPT);
    assert_null(t);
    assert_non_null(strstr(err.message, "1.evt: the event file is corrupt or truncated"));
    assert_non_null(strstr(err.message, "salvage"));
    earl_trace *one = open_with(dir, 1);
    for (int threads = 1; threads <= 3; threads += 2) {
        earl_trace *s = threads == 1 ? one : open_with(dir, threads);
        const earl_events *e = earl_trace_events(s);
        assert_int_equal(e->count, 6 * ITERATIONS - 1);
        assert_int_equal(e->loc_start[2] - e->loc_start[1], 3 * ITERATIONS - 1);
        for (int k = 0; k < 3 * ITERATIONS - 1; k++) {
            earl_eid id = e->loc_events[e->loc_start[1] + (size_t)k];
            assert_int_equal(e->time[id], at(1, k / 3, k % 3));
            assert_int_equal(e->kind[id], k % 3 == 0 ? EARL_ENTER
                                          : k % 3 == 1 ? EARL_MPI_SEND : EARL_LEAVE);
        }
        const earl_warnings *w = earl_trace_warnings(s);
        assert_int_equal(w->counts[EARL_WARN_EVENT_FILE_CUT_SHORT], 1);
        assert_int_equal(w->counts[EARL_WARN_REGION_NOT_LEFT], 1);
        int found = 0;
        for (size_t i = 0; i < w->n_details; i++)
            if (w->details[i].code == EARL_WARN_EVENT_FILE_CUT_SHORT) {
                found = 1;
                assert_int_equal(w->details[i].location, 1);
                assert_non_null(strstr(w->details[i].detail, "(1 of 60000 lost;"));
            }
        assert_true(found);
        if (s != one) {
            assert_same_store(one, s);
            earl_trace_close(s);
        }
    }
    earl_trace_close(one);
    earl_mem_release();
    wtu_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_understated_count_outgrows_its_slots),
        cmocka_unit_test(test_request_partners_become_event_ids),
        cmocka_unit_test(test_cut_file_salvaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
