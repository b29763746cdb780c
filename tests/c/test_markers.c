/*
 * test_markers.c - the marker file of an archive (earl_markers): markers
 * written and read back, groups dropped on rewrite while the others stay,
 * definitions renumbered, the event and definition files untouched, and the
 * errors for a missing archive and a marker naming no definition.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "earl_markers.h"
#include "earl_synth.h"
#include "writer_test_util.h"

static void ok(earl_status st, const earl_error *err)
{
    if (st != EARL_OK)
        fail_msg("%s", err->message);
}

/* A small ring archive in a scratch folder; returns the anchor (malloc'ed). */
static char *ring_archive(char **dir)
{
    *dir = wtu_scratch();
    char *path = malloc(strlen(*dir) + 32);
    sprintf(path, "%s/ring", *dir);
    earl_synth_options o;
    earl_synth_defaults(EARL_SYNTH_RING, &o);
    o.ranks = 2;
    o.iterations = 2;
    earl_synth_result r;
    earl_error err;
    ok(earl_synth_run(&o, path, &r, &err), &err);
    strcat(path, "/traces.otf2");
    return path;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*n + 1);
    assert_int_equal(fread(buf, 1, *n, f), *n);
    fclose(f);
    return buf;
}

static void test_written_markers_read_back(void **state)
{
    (void)state;
    char *dir, *anchor = ring_archive(&dir);
    earl_error err;
    earl_markers *m = NULL;
    ok(earl_markers_read(anchor, &m, &err), &err);
    assert_int_equal(earl_markers_get(m)->n_markers, 0); /* no marker file yet */
    earl_markers_free(m);

    char def_file[4096];
    snprintf(def_file, sizeof def_file, "%.*s.def", (int)(strlen(anchor) - 5), anchor);
    size_t n_before, n_after;
    char *before = slurp(def_file, &n_before);

    earl_marker_def defs[] = {{"theirs", "hand", 1}, {"earlc: Late Sender", "main/MPI_Recv", 3}};
    earl_marker marks[] = {{100, 5, 0, 0, 0, "by hand"},
                           {200, 50, 1, 1, 1, "waited 50"},
                           {300, 7, 1, 1, 0, "waited 7"}};
    earl_marker_set add = {2, defs, 3, marks};
    size_t kept = 99;
    ok(earl_markers_update(anchor, NULL, 0, &add, &kept, &err), &err);
    assert_int_equal(kept, 0);
    ok(earl_markers_read(anchor, &m, &err), &err);
    const earl_marker_set *s = earl_markers_get(m);
    assert_int_equal(s->n_defs, 2);
    assert_int_equal(s->n_markers, 3);
    assert_string_equal(s->defs[1].group, "earlc: Late Sender");
    assert_string_equal(s->defs[1].category, "main/MPI_Recv");
    assert_int_equal(s->defs[1].severity, 3);
    assert_int_equal(s->markers[1].time, 200);
    assert_int_equal(s->markers[1].duration, 50);
    assert_int_equal(s->markers[1].def, 1);
    assert_int_equal(s->markers[1].scope, 1);
    assert_int_equal(s->markers[1].scope_ref, 1);
    assert_string_equal(s->markers[2].text, "waited 7");
    earl_markers_free(m);

    /* rewrite: earlc's group dropped and written anew, the other one kept */
    const char *drop[] = {"earlc: Late Sender"};
    earl_marker again[] = {{400, 1, 0, 1, 0, "only one now"}};
    earl_marker_set add2 = {1, defs + 1, 1, again};
    ok(earl_markers_update(anchor, drop, 1, &add2, &kept, &err), &err);
    assert_int_equal(kept, 1);
    ok(earl_markers_read(anchor, &m, &err), &err);
    s = earl_markers_get(m);
    assert_int_equal(s->n_defs, 2);
    assert_int_equal(s->n_markers, 2);
    assert_string_equal(s->defs[s->markers[0].def].group, "theirs");
    assert_string_equal(s->markers[0].text, "by hand");
    assert_string_equal(s->defs[s->markers[1].def].group, "earlc: Late Sender");
    assert_string_equal(s->markers[1].text, "only one now");
    earl_markers_free(m);

    char *after = slurp(def_file, &n_after); /* the definitions were never written */
    assert_int_equal(n_before, n_after);
    assert_memory_equal(before, after, n_before);
    free(before);
    free(after);
    wtu_remove_tree(dir);
    free(dir);
    free(anchor);
}

static void test_errors(void **state)
{
    (void)state;
    earl_error err;
    earl_markers *m = NULL;
    assert_int_equal(earl_markers_read("/nonexistent-earlc/traces.otf2", &m, &err),
                     EARL_ERR_NOT_FOUND);
    assert_null(m);
    assert_non_null(strstr(err.message, "/nonexistent-earlc/traces.otf2"));
    char *dir, *anchor = ring_archive(&dir);
    earl_marker_def defs[] = {{"g", "c", 0}};
    earl_marker marks[] = {{1, 1, 1, 0, 0, "names definition 1 of 1"}};
    earl_marker_set add = {1, defs, 1, marks};
    assert_int_equal(earl_markers_update(anchor, NULL, 0, &add, NULL, &err), EARL_ERR_INVALID);
    char marker_file[4096];
    snprintf(marker_file, sizeof marker_file, "%.*s.marker", (int)(strlen(anchor) - 5), anchor);
    assert_false(wtu_exists(marker_file)); /* refused before anything was written */
    wtu_remove_tree(dir);
    free(dir);
    free(anchor);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_markers_read_back),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
