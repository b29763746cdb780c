/*
 * test_other_records.c - records earlc reads but does not keep are counted
 * per record type, never dropped silently.  The archive is written with
 * libotf2's own writer, since earl_writer writes only the kinds earlc keeps.
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

/* One process, one thread: ENTER main, MEASUREMENT_ON_OFF, two PARAMETER_INT,
 * LEAVE main: 5 records, 2 kept as events, 3 counted. */
static void write_archive(const char *dir)
{
    OTF2_Archive *a = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1 << 20, 4 << 20,
                                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    assert_non_null(a);
    OTF2_Archive_SetFlushCallbacks(a, &flush, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(a);
    OTF2_Archive_OpenEvtFiles(a);
    OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(a, 0);
    assert_non_null(w);
    assert_int_equal(OTF2_EvtWriter_Enter(w, NULL, 10, 0), OTF2_SUCCESS);
    assert_int_equal(OTF2_EvtWriter_MeasurementOnOff(w, NULL, 20, OTF2_MEASUREMENT_OFF),
                     OTF2_SUCCESS);
    assert_int_equal(OTF2_EvtWriter_ParameterInt(w, NULL, 30, 0, 7), OTF2_SUCCESS);
    assert_int_equal(OTF2_EvtWriter_ParameterInt(w, NULL, 35, 0, 8), OTF2_SUCCESS);
    assert_int_equal(OTF2_EvtWriter_Leave(w, NULL, 40, 0), OTF2_SUCCESS);
    OTF2_Archive_CloseEvtWriter(a, w);
    OTF2_Archive_CloseEvtFiles(a);
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(a);
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 50, OTF2_UNDEFINED_TIMESTAMP);
    OTF2_GlobalDefWriter_WriteString(g, 0, "");
    OTF2_GlobalDefWriter_WriteString(g, 1, "main");
    OTF2_GlobalDefWriter_WriteString(g, 2, "node");
    OTF2_GlobalDefWriter_WriteString(g, 3, "process");
    OTF2_GlobalDefWriter_WriteString(g, 4, "thread");
    OTF2_GlobalDefWriter_WriteString(g, 5, "size");
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 2, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 3, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, 0, 4, OTF2_LOCATION_TYPE_CPU_THREAD, 5, 0);
    OTF2_GlobalDefWriter_WriteRegion(g, 0, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION,
                                     OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 0, 0, 0);
    OTF2_GlobalDefWriter_WriteParameter(g, 0, 5, OTF2_PARAMETER_TYPE_INT64);
    assert_int_equal(OTF2_Archive_Close(a), OTF2_SUCCESS);
}

static void test_records_not_kept_are_counted_per_type(void **state)
{
    (void)state;
    char *dir = wtu_scratch();
    write_archive(dir);
    earl_trace *t = NULL;
    earl_error err;
    if (earl_trace_open(dir, NULL, &t, &err) != EARL_OK)
        fail_msg("%s", err.message);
    const earl_events *ev = earl_trace_events(t);
    assert_int_equal(ev->count, 2);
    assert_int_equal(ev->kind_counts[EARL_ENTER], 1);
    assert_int_equal(earl_trace_defs(t)->locations[0].other_records, 3);
    const earl_warnings *w = earl_trace_warnings(t);
    assert_int_equal(w->counts[EARL_WARN_OTHER_RECORD], 3);
    assert_int_equal(w->n_other_types, 2);
    uint64_t measurement = 0, parameter = 0;
    for (size_t k = 0; k < w->n_other_types; k++) {
        if (strcmp(w->other_type_names[k], "MEASUREMENT_ON_OFF") == 0)
            measurement = w->other_type_counts[k];
        if (strcmp(w->other_type_names[k], "PARAMETER_INT") == 0)
            parameter = w->other_type_counts[k];
    }
    assert_int_equal(measurement, 1);
    assert_int_equal(parameter, 2);
    earl_trace_close(t);
    wtu_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_not_kept_are_counted_per_type),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
