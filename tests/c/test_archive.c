/*
 * test_archive.c - the archive as files (csrc/archive.c): which anchor a
 * folder stands for, the paths derived from an anchor of any name, and the
 * scan of an event file's framing: on every intact event file of the
 * bundled and reference traces it finds the end its writer made and as many
 * records as libotf2 delivers; on a file cut at any byte it finds a cut,
 * never more records than the cut left whole, and more the later the cut; a
 * byte no writer makes inside a file is damage, not a cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "archive.h"
#include "earl_writer.h"
#include "writer_test_util.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static void touch(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static void test_anchor_of_a_folder(void **state)
{
    (void)state;
    char *dir = wtu_scratch();
    earl_error err;
    char *anchor = NULL;
    /* no anchor at all */
    assert_int_equal(earl_archive_find_anchor(dir, &anchor, &err), EARL_ERR_NOT_ARCHIVE);
    assert_non_null(strstr(err.message, "no anchor file"));
    /* one of any name, also through a trailing slash */
    touch(dir, "APEX.otf2");
    char slash[4096], want[4096];
    snprintf(slash, sizeof slash, "%s/", dir);
    snprintf(want, sizeof want, "%s/APEX.otf2", dir);
    assert_int_equal(earl_archive_find_anchor(slash, &anchor, &err), EARL_OK);
    assert_string_equal(anchor, want);
    free(anchor);
    /* several: refused by name, in order */
    touch(dir, "b.otf2");
    assert_int_equal(earl_archive_find_anchor(dir, &anchor, &err), EARL_ERR_NOT_ARCHIVE);
    assert_non_null(strstr(err.message, "2 anchor files (APEX.otf2, b.otf2)"));
    /* ... unless one is Score-P's traces.otf2, which was always the choice */
    touch(dir, "traces.otf2");
    snprintf(want, sizeof want, "%s/traces.otf2", dir);
    assert_int_equal(earl_archive_find_anchor(dir, &anchor, &err), EARL_OK);
    assert_string_equal(anchor, want);
    free(anchor);
    /* a file is its own anchor; a file of another kind is no archive */
    assert_int_equal(earl_archive_find_anchor(want, &anchor, &err), EARL_OK);
    assert_string_equal(anchor, want);
    free(anchor);
    touch(dir, "notes.txt");
    snprintf(want, sizeof want, "%s/notes.txt", dir);
    assert_int_equal(earl_archive_find_anchor(want, &anchor, &err), EARL_ERR_NOT_ARCHIVE);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_folder_named_like_an_anchor_is_not_one(void **state)
{
    (void)state;
    char *dir = wtu_scratch(), sub[4096], want[4096];
    snprintf(sub, sizeof sub, "%s/old.otf2", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    touch(dir, "APEX.otf2");
    earl_error err;
    char *anchor = NULL;
    assert_int_equal(earl_archive_find_anchor(dir, &anchor, &err), EARL_OK);
    snprintf(want, sizeof want, "%s/APEX.otf2", dir);
    assert_string_equal(anchor, want);
    free(anchor);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_paths_follow_the_anchor_name(void **state)
{
    (void)state;
    char buf[256];
    earl_archive_def_file("/data/run/APEX.otf2", buf, sizeof buf);
    assert_string_equal(buf, "/data/run/APEX.def");
    earl_archive_event_file("/data/run/APEX.otf2", 4294967297ULL, buf, sizeof buf);
    assert_string_equal(buf, "/data/run/APEX/4294967297.evt");
    earl_archive_event_file("/data/run/APEX.otf2", 3, buf, 12);
    assert_string_equal(buf, "/data/run/A"); /* cut to the buffer, terminated */
}

/* ---- the scan ------------------------------------------------------------------------ */

#define CHUNK (1u << 20) /* earl_writer's and Score-P's event chunk size */

static earl_event_file_scan scan_of(const char *file)
{
    earl_event_file_scan s;
    earl_error err;
    if (earl_archive_scan_event_file(file, CHUNK, &s, &err) != EARL_OK)
        fail_msg("%s", err.message);
    return s;
}

/* Every location's file of the trace at anchor: intact, with the records
 * the reader got through libotf2. */
static void check_intact(const char *anchor)
{
    earl_open_options o = {.threads = 1};
    earl_trace *t = NULL;
    earl_error err;
    if (earl_trace_open(anchor, &o, &t, &err) != EARL_OK)
        fail_msg("%s", err.message);
    const earl_defs *d = earl_trace_defs(t);
    for (uint32_t l = 0; l < d->n_locations; l++) {
        char file[4096];
        earl_archive_event_file(anchor, d->locations[l].id, file, sizeof file);
        if (!wtu_exists(file))
            continue;
        earl_event_file_scan s = scan_of(file);
        if (s.state != EARL_EVENT_FILE_INTACT)
            fail_msg("%s: state %d", file, (int)s.state);
        if (s.complete != d->locations[l].events + d->locations[l].other_records)
            fail_msg("%s: %llu records by the scan, %llu read", file,
                     (unsigned long long)s.complete,
                     (unsigned long long)(d->locations[l].events + d->locations[l].other_records));
        assert_int_equal(s.chunk_last_record, s.complete);
    }
    earl_trace_close(t);
}

static void test_scan_of_intact_files(void **state)
{
    (void)state;
    const char *traces[] = {
        "../../traces/hybrid/traces.otf2", "../../traces/omp-locks/traces.otf2",
        "../../traces/ring-late-sender/traces.otf2",
        "../../../shared/traces/pipit-ping-pong-papi/traces.otf2",
        "../../../shared/traces/sstmacro-mpi-coverage/traces.otf2",
        "../../../shared/traces/casita-jacobi-hybrid/traces.otf2",
        "../../../shared/traces/casita-cuda-simple/traces.otf2",
        "../../../shared/traces/casita-ompt-nested/traces.otf2",
    };
    int checked = 0;
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++)
        if (wtu_exists(traces[i])) {
            check_intact(traces[i]);
            checked++;
        }
    assert_true(checked >= 3);
}

/* A small archive of one location with records of every framing: ENTER and
 * LEAVE (one field), sends (a length byte), an attribute list, a METRIC. */
static char *small_archive(char *file, size_t size)
{
    char *dir = wtu_scratch(), path[4096];
    snprintf(path, sizeof path, "%s/a", dir);
    earl_writer *w;
    earl_error err;
    uint32_t node, proc, world, region, attr, member, cls;
    earl_loc loc;
    assert_int_equal(earl_writer_open(path, "APEX", 0, 0, &w, &err), EARL_OK);
    earl_writer_system_node(w, "node", "node", EARL_UNDEFINED_REF, &node, &err);
    earl_writer_process(w, "rank 0", node, 0, &proc, &err);
    earl_writer_location(w, proc, "thread", 1 /* CPU thread */, EARL_WRITER_AUTO_ID, &loc, &err);
    earl_writer_comm_world(w, NULL, &world, &err);
    earl_writer_region_def def = {.name = "work", .role = 1, .paradigm = 1};
    earl_writer_region(w, &def, &region, &err);
    earl_writer_attribute(w, "a", "", 7 /* INT32 */, &attr, &err);
    earl_writer_metric_member_def m = {.name = "power", .value_type = 10 /* DOUBLE */,
                                       .mode = 0x11};
    earl_writer_metric_member(w, &m, &member, &err);
    earl_writer_metric_class(w, 1, &member, 0, 0, &cls, &err);
    for (uint64_t i = 0; i < 40; i++) {
        earl_time t = 1000 * i;
        assert_int_equal(earl_writer_enter(w, loc, t, region, &err), EARL_OK);
        earl_writer_attr_value av = {attr, i};
        earl_writer_record rec = {.ref = world, .peer = 0, .tag = (uint32_t)i, .bytes = i << 20,
                                  .n_attributes = i % 3 == 0, .attributes = &av};
        assert_int_equal(earl_writer_event(w, EARL_MPI_SEND, loc, t + 1, &rec, &err), EARL_OK);
        double v = 0.5 * (double)i;
        uint64_t raw;
        memcpy(&raw, &v, sizeof raw);
        earl_writer_record mr = {.ref = cls, .n_values = 1, .values = &raw};
        assert_int_equal(earl_writer_event(w, EARL_METRIC, loc, t + 2, &mr, &err), EARL_OK);
        assert_int_equal(earl_writer_leave(w, loc, t + 3, region, &err), EARL_OK);
    }
    assert_int_equal(earl_writer_close(w, &err), EARL_OK);
    snprintf(file, size, "%s/a/APEX/0.evt", dir);
    return dir;
}

static void cut(const char *from, const char *to, long bytes)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    for (long i = 0; i < bytes; i++) {
        int c = fgetc(in);
        assert_true(c != EOF);
        fputc(c, out);
    }
    fclose(in);
    fclose(out);
}

static void test_scan_of_every_cut(void **state)
{
    (void)state;
    char file[4096], part[4096];
    char *dir = small_archive(file, sizeof file);
    snprintf(part, sizeof part, "%s/part.evt", dir);
    earl_event_file_scan whole = scan_of(file);
    assert_int_equal(whole.state, EARL_EVENT_FILE_INTACT);
    assert_int_equal(whole.complete, 160);
    long size = (long)whole.file_bytes;
    uint64_t before = 0;
    for (long n = 0; n < size; n++) {
        cut(file, part, n);
        earl_event_file_scan s = scan_of(part);
        /* the end of the file is its END_OF_FILE byte and one more */
        if (n >= size - 1) {
            assert_int_equal(s.state, EARL_EVENT_FILE_INTACT);
        } else if (s.state != EARL_EVENT_FILE_CUT_SHORT) {
            fail_msg("cut at %ld of %ld: state %d", n, size, (int)s.state);
        }
        assert_true(s.good_bytes <= (uint64_t)n);
        assert_true(s.complete >= before && s.complete <= before + 1);
        before = s.complete;
    }
    assert_int_equal(before, 160);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_damage_inside_is_not_a_cut(void **state)
{
    (void)state;
    char file[4096];
    char *dir = small_archive(file, sizeof file);
    earl_event_file_scan whole = scan_of(file);
    FILE *f = fopen(file, "r+b");
    assert_non_null(f);
    /* a record type no writer uses (4), where the first record after the
     * chunk header starts */
    fseek(f, 18, SEEK_SET);
    fputc(4, f);
    fclose(f);
    earl_event_file_scan s = scan_of(file);
    assert_int_equal(s.state, EARL_EVENT_FILE_BROKEN);
    assert_int_equal(s.complete, 0);
    assert_int_equal(s.file_bytes, whole.file_bytes);
    wtu_remove_tree(dir);
    free(dir);
}

static void test_scan_across_chunks(void **state)
{
    (void)state;
    char *dir = wtu_scratch(), path[4096], file[4096], part[4096];
    snprintf(path, sizeof path, "%s/a", dir);
    earl_writer *w;
    earl_error err;
    uint32_t node, proc, region;
    earl_loc loc;
    assert_int_equal(earl_writer_open(path, NULL, 0, 0, &w, &err), EARL_OK);
    earl_writer_system_node(w, "node", "node", EARL_UNDEFINED_REF, &node, &err);
    earl_writer_process(w, "rank 0", node, 0, &proc, &err);
    earl_writer_location(w, proc, "thread", 1, EARL_WRITER_AUTO_ID, &loc, &err);
    earl_writer_region_def def = {.name = "work", .role = 1, .paradigm = 1};
    earl_writer_region(w, &def, &region, &err);
    enum { N = 150000 }; /* two chunks of 1 MiB */
    for (uint64_t i = 0; i < N; i++) {
        earl_writer_enter(w, loc, 10 * i, region, &err);
        earl_writer_leave(w, loc, 10 * i + 5, region, &err);
    }
    assert_int_equal(earl_writer_close(w, &err), EARL_OK);
    snprintf(file, sizeof file, "%s/a/traces/0.evt", dir);
    snprintf(part, sizeof part, "%s/part.evt", dir);
    earl_event_file_scan whole = scan_of(file);
    assert_int_equal(whole.state, EARL_EVENT_FILE_INTACT);
    assert_int_equal(whole.complete, 2 * N);
    assert_true(whole.file_bytes > CHUNK);
    /* cut where the second chunk starts: the first chunk's records are whole */
    cut(file, part, CHUNK);
    earl_event_file_scan first = scan_of(part);
    assert_int_equal(first.state, EARL_EVENT_FILE_CUT_SHORT);
    assert_true(first.complete > 0 && first.complete < 2 * N);
    assert_int_equal(first.chunk_last_record, first.complete);
    /* a few bytes into the second chunk: its header says how many records
     * the file held up to its end, the cut records are not counted */
    cut(file, part, CHUNK + 40);
    earl_event_file_scan second = scan_of(part);
    assert_int_equal(second.state, EARL_EVENT_FILE_CUT_SHORT);
    assert_true(second.complete > first.complete && second.complete < first.complete + 10);
    assert_true(second.chunk_last_record > second.complete + 1000);
    /* the whole file's last chunk header counts them all */
    assert_int_equal(whole.chunk_last_record, 2 * N);
    wtu_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_anchor_of_a_folder),
        cmocka_unit_test(test_folder_named_like_an_anchor_is_not_one),
        cmocka_unit_test(test_paths_follow_the_anchor_name),
        cmocka_unit_test(test_scan_of_intact_files),
        cmocka_unit_test(test_scan_of_every_cut),
        cmocka_unit_test(test_damage_inside_is_not_a_cut),
        cmocka_unit_test(test_scan_across_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
