/*
 * test_catalog.c - cmocka tests of the analysis catalog's kernels
 * (earl_catalog.h) on event columns and rows written down by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "earl.h"
#include "earl_catalog.h"

/* Location 0 receives four messages, sent by locations 1 and 2 in the
 * reverse order of their receipt, in three calls (the third receives two):
 *
 *   id  loc  time  what
 *    0   1    10   send A        5   0   51  receive D (call 4)
 *    1   2    20   send B        6   0   52  ENTER call 6
 *    2   1    30   send C        7   0   53  receive C (call 6)
 *    3   2    40   send D        8   0   54  ENTER call 8
 *    4   0    50   ENTER call 4  9   0   55  receive B (call 8)
 *                               10   0   56  (other)
 *                               11   0   57  receive A (call 8)
 */
static const earl_time wo_time[12] = {10, 20, 30, 40, 50, 51, 52, 53, 54, 55, 56, 57};
static const earl_loc wo_loc[12] = {1, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0};

static earl_events wo_events(void)
{
    return (earl_events){.count = 12, .time = wo_time, .location = wo_loc};
}

static void test_wrong_order_finds_the_first_earlier_send(void **state)
{
    (void)state;
    earl_events ev = wo_events();
    /* the messages in another order than received: the kernel sorts them */
    const earl_eid recv[4] = {9, 5, 11, 7}, call[4] = {8, 4, 8, 6}, send[4] = {1, 3, 0, 2};
    /* Late Senders: (call, send waited for) */
    const earl_eid late_call[6] = {4, 6, 8, 4, 6, 6};
    const earl_eid late_send[6] = {3, 2, 1, 0, 0, 1};
    int64_t found[6];
    earl_error err;
    assert_int_equal(earl_wrong_order(&ev, 3, 4, recv, call, send, 6, late_call, late_send,
                                      found, &err), EARL_OK);
    assert_int_equal(found[0], 1);  /* after call 4: C (30 < 40) from location 1 */
    assert_int_equal(found[1], 2);  /* after call 6: B (20 < 30) from location 2 */
    assert_int_equal(found[2], -1); /* nothing received after call 8 */
    assert_int_equal(found[3], -1); /* nothing sent before A (10) */
    assert_int_equal(found[4], -1); /* after call 6, nothing sent before A (10) */
    /* bound 20 after call 6: B (20) is not earlier, A (10) is: the search
     * passes over a message that is not earlier to a later one that is */
    assert_int_equal(found[5], 1);
}

static void test_wrong_order_without_late_senders_or_messages(void **state)
{
    (void)state;
    earl_events ev = wo_events();
    const earl_eid recv[1] = {5}, call[1] = {4}, send[1] = {3};
    const earl_eid late_call[1] = {4}, late_send[1] = {3};
    int64_t found[1] = {7};
    earl_error err;
    assert_int_equal(earl_wrong_order(&ev, 3, 1, recv, call, send, 0, late_call, late_send,
                                      found, &err), EARL_OK);
    assert_int_equal(earl_wrong_order(&ev, 3, 0, recv, call, send, 1, late_call, late_send,
                                      found, &err), EARL_OK);
    assert_int_equal(found[0], -1);
}

static void test_wrong_order_rejects_ids_out_of_range(void **state)
{
    (void)state;
    earl_events ev = wo_events();
    const earl_eid recv[1] = {5}, call[1] = {4}, send[1] = {12};
    const earl_eid late_call[1] = {4}, late_send[1] = {-1};
    int64_t found[1];
    earl_error err;
    assert_int_equal(earl_wrong_order(&ev, 3, 1, recv, call, send, 1, late_call, late_send,
                                      found, &err), EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "out of range"));
}

/* Two locations, nested calls, a repeated query, an ENTER never left
 * (enterptr as the EARL layer keeps it, 32 bits; -1 is EARL_EID32_NONE):
 *
 *   id  loc  kind      enterptr      id  loc  kind      enterptr
 *    0   0   ENTER f     -1           5   0   LEAVE g     1
 *    1   0   ENTER g      0           6   1   LEAVE h     2
 *    2   1   ENTER h     -1           7   0   LEAVE f     0
 *    3   0   (other)      1           8   1   ENTER k    -1   (never left)
 *    4   1   (other)      2
 */
static void test_leaves_of_nested_and_open_calls(void **state)
{
    (void)state;
    static const earl_loc loc[9] = {0, 0, 1, 0, 1, 0, 1, 0, 1};
    static const uint8_t kind[9] = {EARL_ENTER, EARL_ENTER, EARL_ENTER, EARL_MPI_SEND,
                                    EARL_MPI_SEND, EARL_LEAVE, EARL_LEAVE, EARL_LEAVE,
                                    EARL_ENTER};
    const earl_eid32 no = EARL_EID32_NONE;
    const earl_eid32 enterptr[9] = {no, 0, no, 1, 2, 1, 2, 0, no};
    earl_events ev = {.count = 9, .location = loc, .kind = kind};
    const earl_eid ids[8] = {7, 1, 0, 2, 8, -1, 1, 3}; /* any order, repeats, -1, a non-ENTER */
    earl_eid leave[8];
    earl_error err;
    assert_int_equal(earl_leaves(&ev, enterptr, ids, 8, leave, 1, &err), EARL_OK);
    const earl_eid want[8] = {-1, 5, 7, 6, -1, -1, 5, -1};
    for (int k = 0; k < 8; k++)
        assert_int_equal(leave[k], want[k]);
    const earl_eid bad[1] = {9};
    assert_int_equal(earl_leaves(&ev, enterptr, bad, 1, leave, 1, &err), EARL_ERR_INVALID);
    /* knowing an event inside each call (any event from the ENTER on, before
     * the LEAVE): the same answers */
    const earl_eid calls[5] = {1, 0, 2, 8, -1}, inside[5] = {3, 6, 2, 8, 0};
    assert_int_equal(earl_leaves_after(&ev, enterptr, calls, inside, 5, leave, 1, &err), EARL_OK);
    const earl_eid want_after[5] = {5, 7, 6, -1, -1};
    for (int k = 0; k < 5; k++)
        assert_int_equal(leave[k], want_after[k]);
    const earl_eid before[1] = {0};
    assert_int_equal(earl_leaves_after(&ev, enterptr, calls, before, 1, leave, 1, &err),
                     EARL_ERR_INVALID); /* the event inside comes before the call */
}

/* 300 nested calls on one location, left in reverse order at the end: most
 * LEAVEs are further than the look after each ENTER reaches, so the kernel
 * turns to the pass over the events for the rest; the answers are the same. */
static void test_leaves_after_turns_to_the_pass_for_long_calls(void **state)
{
    (void)state;
    enum { CALLS = 300, EVENTS = 2 * CALLS };
    static earl_loc loc[EVENTS];
    static uint8_t kind[EVENTS];
    static earl_eid32 enterptr[EVENTS];
    static earl_eid ids[CALLS], leave[CALLS];
    for (int q = 0; q < CALLS; q++) {
        kind[q] = EARL_ENTER;
        enterptr[q] = q > 0 ? (earl_eid32)(q - 1) : EARL_EID32_NONE;
        kind[EVENTS - 1 - q] = EARL_LEAVE;
        enterptr[EVENTS - 1 - q] = q;
        ids[q] = q;
    }
    earl_events ev = {.count = EVENTS, .location = loc, .kind = kind};
    earl_error err;
    assert_int_equal(earl_leaves_after(&ev, enterptr, ids, ids, CALLS, leave, 1, &err), EARL_OK);
    for (int q = 0; q < CALLS; q++)
        assert_int_equal(leave[q], EVENTS - 1 - q);
}

/* Location 0 runs two collective calls, location 1 one whose BEGIN is not
 * recorded:
 *
 *   id  loc  kind                 id  loc  kind
 *    0   0   ENTER (call 0)        5   0   MPI_COLLECTIVE_END
 *    1   0   MPI_COLLECTIVE_BEGIN  6   0   ENTER (call 6)
 *    2   1   ENTER (call 2)        7   0   MPI_COLLECTIVE_END
 *    3   1   MPI_COLLECTIVE_END    8   0   LEAVE
 *    4   0   MPI_COLLECTIVE_BEGIN
 */
static void test_collective_begins_stay_inside_the_call(void **state)
{
    (void)state;
    static const earl_loc loc[9] = {0, 0, 1, 1, 0, 0, 0, 0, 0};
    static const uint8_t kind[9] = {EARL_ENTER, EARL_MPI_COLLECTIVE_BEGIN, EARL_ENTER,
                                    EARL_MPI_COLLECTIVE_END, EARL_MPI_COLLECTIVE_BEGIN,
                                    EARL_MPI_COLLECTIVE_END, EARL_ENTER,
                                    EARL_MPI_COLLECTIVE_END, EARL_LEAVE};
    earl_events ev = {.count = 9, .location = loc, .kind = kind};
    /* an ENTER, END 3 on location 1 (no BEGIN there), END 5 after BEGIN 4
     * (call 0), END 7 in call 6 after which location 0 recorded no BEGIN */
    const earl_eid ends[5] = {0, 3, 5, 5, 7}, calls[5] = {0, 2, 0, 0, 6};
    earl_eid begin[5];
    earl_error err;
    assert_int_equal(earl_collective_begins(&ev, 2, ends, calls, 5, begin, &err), EARL_OK);
    assert_int_equal(begin[0], -1);
    assert_int_equal(begin[1], -1);
    assert_int_equal(begin[2], 4); /* the last BEGIN, not the first */
    assert_int_equal(begin[3], 4); /* an END asked twice */
    assert_int_equal(begin[4], -1);
    const earl_eid bad[1] = {9}, unsorted[2] = {5, 3};
    assert_int_equal(earl_collective_begins(&ev, 2, bad, calls, 1, begin, &err),
                     EARL_ERR_INVALID);
    assert_int_equal(earl_collective_begins(&ev, 2, unsorted, calls, 2, begin, &err),
                     EARL_ERR_INVALID);
}

/* Sends and receives of two locations in three call paths; one receive
 * outside every call path, one request record that is no send or receive. */
static void test_message_sums_per_call_path_and_location(void **state)
{
    (void)state;
    static const earl_loc loc[6] = {0, 1, 0, 1, 0, 1};
    static const uint8_t kind[6] = {EARL_MPI_SEND, EARL_MPI_RECV, EARL_MPI_ISEND,
                                    EARL_MPI_IRECV, EARL_MPI_ISEND_COMPLETE, EARL_MPI_RECV};
    static const int32_t cnode[6] = {2, 1, 2, 1, 2, -1};
    static const int32_t ref[6] = {0, 1, 2, 3, 4, 5};
    earl_eid32 msg_event[6] = {0, 1, 2, 3, 4, 5};
    uint64_t msg_bytes[6] = {8, 8, 0, 0, 0, 4};
    earl_events ev = {.count = 6, .location = loc, .kind = kind, .ref = ref,
                      .msg = {.count = 6, .event = msg_event, .bytes = msg_bytes}};
    earl_message_sums sends, recvs;
    earl_error err;
    assert_int_equal(earl_message_sums_build(&ev, cnode, 2, &sends, &recvs, &err), EARL_OK);
    assert_int_equal(sends.n, 1); /* cnode 2 on location 0: two sends, one with 8 bytes */
    assert_int_equal(sends.cnode[0], 2);
    assert_int_equal(sends.location[0], 0);
    assert_int_equal(sends.records[0], 2);
    assert_int_equal(sends.payload[0], 1);
    assert_int_equal(sends.bytes[0], 8);
    assert_int_equal(recvs.n, 1); /* the receive outside every call path is left out */
    assert_int_equal(recvs.cnode[0], 1);
    assert_int_equal(recvs.location[0], 1);
    assert_int_equal(recvs.records[0], 2);
    assert_int_equal(recvs.bytes[0], 8);
    earl_message_sums_free(&sends);
    earl_message_sums_free(&recvs);
}

static void test_first_of_runs_takes_the_first_largest(void **state)
{
    (void)state;
    const int64_t keys[8] = {1, 1, 1, 4, 6, 6, 6, 1};
    const int64_t values[8] = {3, 5, 5, 0, -2, -1, -1, 9};
    int64_t rows[8];
    assert_int_equal(earl_first_of_runs(8, keys, values, rows), 4);
    assert_int_equal(rows[0], 1);
    assert_int_equal(rows[1], 3);
    assert_int_equal(rows[2], 5);
    assert_int_equal(rows[3], 7); /* key 1 again: a run of its own */
    assert_int_equal(earl_first_of_runs(0, keys, values, rows), 0);
}

static void test_exclusive_running_max_restarts_per_group(void **state)
{
    (void)state;
    const int64_t keys[6] = {0, 0, 0, 3, 3, 5};
    const int64_t values[6] = {4, 2, 7, 1, 9, 8};
    int64_t out[6];
    earl_exclusive_running_max(6, keys, values, -1, out);
    const int64_t want[6] = {-1, 4, 4, -1, 1, -1};
    for (int k = 0; k < 6; k++)
        assert_int_equal(out[k], want[k]);
}

/* The bitmap of a dense set and the search of a sparse one (a range past
 * 64 bits per id) give the same answers, values below, inside and above the
 * set's range, and the extremes of int64 whose differences overflow. */
static void test_ids_in_set_by_bitmap_and_by_search(void **state)
{
    (void)state;
    const int64_t dense[5] = {3, 4, 4, 70, 200};
    const int64_t values[9] = {-1, 3, 5, 4, 70, 71, 200, 201, INT64_MIN};
    uint8_t out[9];
    const uint8_t want[9] = {0, 1, 0, 1, 1, 0, 1, 0, 0};
    earl_ids_in_set(9, values, 5, dense, out);
    for (int k = 0; k < 9; k++)
        assert_int_equal(out[k], want[k]);
    const int64_t sparse[3] = {INT64_MIN, 4, INT64_MAX};
    const int64_t asked[5] = {INT64_MIN, 4, 5, INT64_MAX, -1};
    const uint8_t want_sparse[5] = {1, 1, 0, 1, 0};
    earl_ids_in_set(5, asked, 3, sparse, out);
    for (int k = 0; k < 5; k++)
        assert_int_equal(out[k], want_sparse[k]);
    const int64_t none[1] = {0};
    out[0] = 7;
    earl_ids_in_set(1, asked, 0, none, out); /* an empty set */
    assert_int_equal(out[0], 0);
}

/* The same 300 nested calls asked in parts on 1 to 8 threads, every part at
 * least one event (EARLC_PARALLEL_GRAIN=1): the waves' parts see LEAVEs of
 * calls entered in other parts. */
static void test_leaves_in_parts_on_threads(void **state)
{
    (void)state;
    enum { CALLS = 300, EVENTS = 2 * CALLS };
    static earl_loc loc[EVENTS];
    static uint8_t kind[EVENTS];
    static earl_eid32 enterptr[EVENTS];
    static earl_eid ids[CALLS + 2], leave[CALLS + 2];
    for (int q = 0; q < CALLS; q++) {
        kind[q] = EARL_ENTER;
        enterptr[q] = q > 0 ? (earl_eid32)(q - 1) : EARL_EID32_NONE;
        kind[EVENTS - 1 - q] = EARL_LEAVE;
        enterptr[EVENTS - 1 - q] = q;
        ids[CALLS - 1 - q] = q; /* descending: the kernel orders them */
    }
    ids[CALLS] = 7;   /* asked twice */
    ids[CALLS + 1] = -1;
    earl_events ev = {.count = EVENTS, .location = loc, .kind = kind};
    earl_error err;
    setenv("EARLC_PARALLEL_GRAIN", "1", 1);
    for (int threads = 1; threads <= 8; threads++) {
        assert_int_equal(earl_leaves(&ev, enterptr, ids, CALLS + 2, leave, threads, &err),
                         EARL_OK);
        for (int q = 0; q < CALLS; q++)
            assert_int_equal(leave[CALLS - 1 - q], EVENTS - 1 - q);
        assert_int_equal(leave[CALLS], EVENTS - 1 - 7);
        assert_int_equal(leave[CALLS + 1], -1);
    }
    unsetenv("EARLC_PARALLEL_GRAIN");
}

/* Messages in wrong order, two receivers:
 *
 *   id  loc  what                     id  loc  what
 *    0   1   send A (to 0)             6   0   ENTER call 6
 *    1   1   send B (to 0)             7   0   receive B (call 6)
 *    2   2   send C (to 0)             8   0   ENTER call 8
 *    3   1   send D (to 3)             9   0   receive A (call 8)
 *    4   2   send E (to 3)            10   0   receive C (call 8)
 *    5   3   ENTER call 5             11   3   receive E   12  3  receive D
 *
 * B is received while A, sent earlier by the same location, is still in
 * transfer (call 8 comes after call 6): B is out of order; A and C have no
 * older message of their pair; E and D come in one call. */
static void test_messages_out_of_order_per_pair_in_sending_order(void **state)
{
    (void)state;
    static const earl_loc loc[13] = {1, 1, 2, 1, 2, 3, 0, 0, 0, 0, 0, 3, 3};
    earl_events ev = {.count = 13, .location = loc};
    /* rows grouped by receiver (location 0, then 3), as p2p rows come */
    const earl_eid recv[5] = {7, 9, 10, 11, 12}, call[5] = {6, 8, 8, 5, 5};
    const earl_eid send[5] = {1, 0, 2, 4, 3};
    uint8_t wrong[5];
    earl_error err;
    setenv("EARLC_PARALLEL_GRAIN", "1", 1);
    for (int threads = 1; threads <= 4; threads++) {
        assert_int_equal(earl_messages_out_of_order(&ev, 4, 5, recv, call, send, threads,
                                                    wrong, &err), EARL_OK);
        const uint8_t expect[5] = {1, 0, 0, 0, 0};
        assert_memory_equal(wrong, expect, 5);
    }
    /* the same rows not grouped by receiver: grouped first, the same answer */
    const earl_eid recv2[5] = {11, 7, 12, 9, 10}, call2[5] = {5, 6, 5, 8, 8};
    const earl_eid send2[5] = {4, 1, 3, 0, 2};
    assert_int_equal(earl_messages_out_of_order(&ev, 4, 5, recv2, call2, send2, 2, wrong, &err),
                     EARL_OK);
    const uint8_t expect2[5] = {0, 1, 0, 0, 0};
    assert_memory_equal(wrong, expect2, 5);
    unsetenv("EARLC_PARALLEL_GRAIN");
    const earl_eid bad[1] = {13};
    assert_int_equal(earl_messages_out_of_order(&ev, 4, 1, bad, call, send, 1, wrong, &err),
                     EARL_ERR_INVALID);
}

/* Events of chosen kinds, and ENTERs of chosen regions, in parts. */
static void test_select_events_in_parts(void **state)
{
    (void)state;
    static const uint8_t kind[8] = {EARL_ENTER, EARL_MPI_SEND, EARL_ENTER, EARL_LEAVE,
                                    EARL_ENTER, EARL_MPI_RECV, EARL_LEAVE, EARL_ENTER};
    static const uint32_t region[8] = {0, 0, 2, 2, 1, 0, 1, 9};
    earl_events ev = {.count = 8, .kind = kind, .region = region};
    uint8_t kinds[256] = {0};
    kinds[EARL_MPI_SEND] = kinds[EARL_MPI_RECV] = 1;
    const uint8_t regions[4] = {0, 1, 1, 0}; /* regions 1 and 2; refs beyond: no */
    earl_eid out[8];
    earl_selection sel;
    setenv("EARLC_PARALLEL_GRAIN", "1", 1);
    for (int threads = 1; threads <= 8; threads++) {
        earl_select_count(&ev, kinds, NULL, 0, threads, &sel);
        assert_int_equal(sel.total, 2);
        earl_select_fill(&ev, kinds, NULL, 0, &sel, out);
        assert_int_equal(out[0], 1);
        assert_int_equal(out[1], 5);
        uint8_t enter[256] = {0};
        enter[EARL_ENTER] = 1;
        earl_select_count(&ev, enter, regions, 3, threads, &sel);
        assert_int_equal(sel.total, 2);
        earl_select_fill(&ev, enter, regions, 3, &sel, out);
        assert_int_equal(out[0], 2);
        assert_int_equal(out[1], 4);
    }
    unsetenv("EARLC_PARALLEL_GRAIN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrong_order_finds_the_first_earlier_send),
        cmocka_unit_test(test_wrong_order_without_late_senders_or_messages),
        cmocka_unit_test(test_wrong_order_rejects_ids_out_of_range),
        cmocka_unit_test(test_leaves_of_nested_and_open_calls),
        cmocka_unit_test(test_leaves_after_turns_to_the_pass_for_long_calls),
        cmocka_unit_test(test_leaves_in_parts_on_threads),
        cmocka_unit_test(test_messages_out_of_order_per_pair_in_sending_order),
        cmocka_unit_test(test_select_events_in_parts),
        cmocka_unit_test(test_collective_begins_stay_inside_the_call),
        cmocka_unit_test(test_message_sums_per_call_path_and_location),
        cmocka_unit_test(test_first_of_runs_takes_the_first_largest),
        cmocka_unit_test(test_exclusive_running_max_restarts_per_group),
        cmocka_unit_test(test_ids_in_set_by_bitmap_and_by_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
