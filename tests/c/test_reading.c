/*
 * test_reading.c - the reading buffers of an open and what the merge makes
 * of them: a location whose definition announces fewer events than its file
 * holds outgrows its slots of the shared reading columns and moves to blocks
 * of its own, without losing or misplacing an event or a side-table row,
 * whatever the number of threads; the merge, which gives the consumed pages
 * of the reading buffers back as it goes, yields the same store with one
 * and with several threads.  The archive is written with libotf2's own
 * writer, since earl_writer always announces the true counts.
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

static void write_archive(const char *dir)
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
        for (int i = 0; i < ITERATIONS; i++) {
            assert_int_equal(OTF2_EvtWriter_Enter(w, NULL, at(loc, i, 0), 0), OTF2_SUCCESS);
            assert_int_equal(OTF2_EvtWriter_MpiSend(w, NULL, at(loc, i, 1), 1 - loc, 0,
                                                    (uint32_t)i, 8 * (uint64_t)i + loc),
                             OTF2_SUCCESS);
            assert_int_equal(OTF2_EvtWriter_Leave(w, NULL, at(loc, i, 2), 0), OTF2_SUCCESS);
        }
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
                                           loc == 0 ? UNDERSTATED : 3 * ITERATIONS,
                                           (OTF2_LocationGroupRef)loc);
    }
    OTF2_GlobalDefWriter_WriteRegion(g, 0, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION,
                                     OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 0, 0, 0);
    assert_int_equal(OTF2_Archive_Close(a), OTF2_SUCCESS);
}

static earl_trace *open_with(const char *dir, int threads)
{
    earl_open_options o = {.threads = threads};
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
        assert_int_equal(e->msg.partner[r], EARL_NONE);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_understated_count_outgrows_its_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
