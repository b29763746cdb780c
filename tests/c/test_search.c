/*
 * test_search.c - the pattern language's parser (earl_search.h): accepted
 * texts with the patterns they define, and malformed texts with the line,
 * column and expectation of their error; the glob matcher of class fields.
 * The search itself is checked from Python against a brute-force
 * enumeration (tests/python/test_search.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "earl.h"
#include "earl_search.h"

int search_glob(const char *glob, const char *s); /* search_internal.h */

static void accepts(const char *text, size_t n_patterns, const char *last)
{
    earl_search_program *p = NULL;
    earl_error err;
    if (earl_search_parse(text, &p, &err) != EARL_OK)
        fail_msg("rejected %s: %s", text, err.message);
    assert_int_equal(earl_search_pattern_count(p), n_patterns);
    assert_string_equal(earl_search_pattern_name(p, n_patterns - 1), last);
    earl_search_program_free(p);
}

/* The error names line:column and contains every fragment given. */
static void rejects(const char *text, int line, int col, ...)
{
    earl_search_program *p = (earl_search_program *)1;
    earl_error err;
    assert_int_equal(earl_search_parse(text, &p, &err), EARL_ERR_INVALID);
    assert_null(p);
    char where[64];
    snprintf(where, sizeof where, "line %d, column %d:", line, col);
    if (!strstr(err.message, where))
        fail_msg("%s\n  gave: %s\n  expected the position %s", text, err.message, where);
    va_list ap;
    va_start(ap, col);
    for (const char *frag; (frag = va_arg(ap, const char *));)
        if (!strstr(err.message, frag))
            fail_msg("%s\n  gave: %s\n  expected it to contain: %s", text, err.message, frag);
    va_end(ap);
}

static void test_accepted(void **state)
{
    (void)state;
    accepts("Send := [\"\", \"MPI_*SEND\", \"\"]; Send $a, $b; Q := $a || $b;", 1, "Q");
    accepts("Send := [\"\", \"MPI_*SEND\", \"\"]; Send $s, *all; Last := $s !--> *all", 1,
            "Last");
    /* figure 2.8 of the thesis, with MPI kinds and ASCII arrows of both lengths */
    accepts("# first and last connection\n"
            "StartConnect := [\"\", \"MPI_SEND\", \"connect\"].[\"\", \"MPI_RECV\", \"\"];\n"
            "DoneConnect := [\"\", \"MPI_SEND\", \"accept*\"].[\"\", \"MPI_RECV\", \"\"];\n"
            "StartConnect $sc, *sc_all;\n"
            "DoneConnect $dc;\n"
            "ConnectionEstablished := ($sc -> $dc) & ((*sc_all !-> $dc) | ($sc !--> *sc_all));\n"
            "ConnectionEstablished *ce_all, $ce;\n"
            "First := (*ce_all !--> $ce);\n"
            "Last := $ce !--> *ce_all;\n",
            3, "Last");
    accepts("A := [\"rank 0\", \"ENTER\", \"MPI_*\"]; B := [\"rank 1 thread 0\", \"\", \"\"];"
            "A $a; B $b; P := $a -(B)-> $b | $a !|| $b & A --> $b;", 1, "P");
    accepts("S := [\"\", \"MPI_SEND\", \"\"]; R := [\"\", \"MPI_RECV\", \"\"]; M := S.R;"
            "M $m; S ~s; P := ($m --> ~s) & [\"\", \"\", \"\"].R || ~s;", 1, "P");
}

static void test_rejected(void **state)
{
    (void)state;
    rejects("Send := [\"\", \"MPI_SEND\"];", 1, 24, "expected ','", "three strings", NULL);
    rejects("Send := [\"\", \"MPI_SEND\", \"\"] Send $a;", 1, 30, "expected ';'", NULL);
    rejects("Send := [\"\", \"MPI_SEND\", \"\"];\nSend $a\nQ := $a;", 3, 1, "expected ';'",
            "the name 'Q'", NULL);
    rejects("Send := [\"\", \"MPI_SNED\", \"\"];", 1, 14, "unknown event kind \"MPI_SNED\"",
            NULL);
    rejects("Send := [\"\", \"FOO*\", \"\"];", 1, 14, "matches no event kind", NULL);
    rejects("Send := [\"\", \"MPI_SEND\", \"\"];\nSend $a;\nQ := $a --> $b;", 3, 13,
            "'$b' is not declared", NULL);
    rejects("Q := Send;", 1, 6, "unknown name 'Send'", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a;\nQ := $a --> ;", 3, 13,
            "expected a class, a variable, a name or '('", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a, $b;\nQ := ($a --> $b;", 3, 16, "expected ')'",
            NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a, $b;\nQ := $a --> $b --> $a;", 3, 16,
            "expected ';'", "a relation has two operands", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a, $b;\nQ := $a -($b) $a;", 3, 15,
            "expected '->' of a limited precedence", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a, a;", 2, 10, "expected a variable", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a, ~a;", 2, 10, "declared twice", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a;\nQ := ~a;", 3, 6, "declared as '$a'", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend := [\"\", \"\", \"\"];", 2, 1, "defined twice",
            NULL);
    rejects("S := [\"\", \"\", \"\"];\nS $a;\nQ := $a --> [\"\", \"\", \"\"].S.S;", 3, 27,
            "expected ';'", "found '.'", NULL);
    rejects("Send := [\"\", \"\", \"MPI_Send];", 1, 18, "unterminated string", NULL);
    rejects("Send := [\"\", \"\", \"\"];\nSend $a;\nQ := $a @ $a;", 3, 9, "found '@'", NULL);
    rejects("S := [\"\", \"\", \"\"]; S $a; P := ~b --> $a;", 1, 31, "'~b' is not declared",
            NULL);
    rejects("S := [\"\", \"\", \"\"]; S ~a; P := ~a; P $x;", 1, 35, "returns no events", NULL);
    rejects("$a --> $b;", 1, 1, "expected a statement", NULL);
}

static void test_no_pattern(void **state)
{
    (void)state;
    earl_search_program *p;
    earl_error err;
    assert_int_equal(earl_search_parse("S := [\"\", \"\", \"\"]; S $a;", &p, &err),
                     EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "defines no pattern"));
    assert_int_equal(earl_search_parse("", &p, &err), EARL_ERR_INVALID);
    assert_int_equal(earl_search_parse(NULL, &p, &err), EARL_ERR_INVALID);
}

static void test_glob(void **state)
{
    (void)state;
    assert_true(search_glob("MPI_*SEND", "MPI_SEND"));
    assert_true(search_glob("MPI_*SEND", "MPI_ISEND"));
    assert_false(search_glob("MPI_*SEND", "MPI_ISEND_COMPLETE"));
    assert_true(search_glob("*", ""));
    assert_true(search_glob("rank 1*", "rank 12 thread 3"));
    assert_false(search_glob("rank 1", "rank 12"));
    assert_true(search_glob("a*b*c", "aXbYbZc"));
    assert_false(search_glob("a*b*c", "aXbYbZ"));
    assert_true(search_glob("", ""));
    assert_false(search_glob("", "x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_rejected),
        cmocka_unit_test(test_no_pattern),
        cmocka_unit_test(test_glob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
