/* test/json_fast_dump.c - unit tests for json_fast_dump.c: for every value
 * and flags, json_fast_dumps must return exactly what json_dumps returns
 * (the same bytes, or NULL), and the fast pass itself must take the values
 * it is meant for rather than quietly declining them all.
 * Inputs: a table of values, the edge cases of integers and strings, deep
 * nesting, other flags, and random documents.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <limits.h>
#include <jansson.h>
/* the static fast pass is tested on its own too */
#include "src/common/libcanopy/json_fast_dump.c"
#include "random_json.h"

/* The fast pass alone: NULL if it declines. */
static char *fast_only (const json_t *o)
{
    struct strbuf jb = { 0 };

    if (emit_value (&jb, o, 0) < 0) {
        free (jb.s);
        return NULL;
    }
    return jb.s;
}

/* Both encoders give the same answer for (o, flags); returns whether the
 * fast pass took it.
 */
static bool agree (const json_t *o, size_t flags)
{
    char *a = json_dumps (o, flags);
    char *b = json_fast_dumps (o, flags);
    char *f = fast_only (o);
    bool took = f != NULL;

    if (!a || !b) {
        if (a || b)
            fail_msg ("only one encoder gave text: '%s' / '%s'",
                      a ? a : "(null)", b ? b : "(null)");
    }
    else
        assert_string_equal (a, b);
    if (f && a && flags == (JSON_COMPACT | JSON_ENCODE_ANY))
        assert_string_equal (f, a);
    free (a);
    free (b);
    free (f);
    return took;
}

static json_t *parse (const char *s)
{
    json_t *o = json_loads (s, JSON_DECODE_ANY, NULL);
    if (!o)
        fail_msg ("test text does not parse: %s", s);
    return o;
}

static void test_taken (void **state)
{
    const char *texts[] = {
        "{}", "[]", "0", "-1", "true", "false", "null", "\"\"",
        "\"a/b+c=\"", "\" ~!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~\\u007f\"",
        "[1,[2,[3,[]]],{}]",
        "{\"b\":1,\"a\":2,\"c\":{\"z\":[null,true,false]}}",
        "{\"ver\":1,\"type\":\"val\",\"data\":\"aGVsbG8=\"}",
        "[\"kap.1.0.0.3\",{\"data\":\"AAAAAAAAAAA=\",\"type\":\"val\",\"ver\":1}]",
        "9223372036854775807", "-9223372036854775808",
    };
    for (size_t i = 0; i < sizeof (texts) / sizeof (texts[0]); i++) {
        json_t *o = parse (texts[i]);
        if (!agree (o, JSON_COMPACT | JSON_ENCODE_ANY))
            fail_msg ("the fast pass declined %s", texts[i]);
        agree (o, JSON_COMPACT);
        json_decref (o);
    }
    /* member order is the object's, not sorted */
    json_t *o = json_pack ("{s:i s:i s:i}", "z", 1, "a", 2, "m", 3);
    char *s = json_fast_dumps (o, JSON_COMPACT);
    assert_string_equal (s, "{\"z\":1,\"a\":2,\"m\":3}");
    free (s);
    json_decref (o);
}

static void test_declined (void **state)
{
    json_t *vals[] = {
        json_string ("quote\"d"), json_string ("back\\slash"),
        json_string ("new\nline"), json_string ("caf\xc3\xa9"),
        json_stringn ("nul\0byte", 8), json_real (1.5), json_real (-0.0),
        json_real (1e300), json_pack ("{s:f}", "x", 0.1),
        json_pack ("[i,s]", 1, "tab\there"),
        json_pack ("{s:i}", "k\xc3\xa9y", 1),
    };
    for (size_t i = 0; i < sizeof (vals) / sizeof (vals[0]); i++) {
        assert_non_null (vals[i]);
        if (agree (vals[i], JSON_COMPACT | JSON_ENCODE_ANY))
            fail_msg ("the fast pass took value %zu", i);
        json_decref (vals[i]);
    }
}

static void test_flags (void **state)
{
    json_t *o = parse ("{\"b\":[1,2],\"a\":\"x/y\"}");
    size_t flags[] = { 0, JSON_INDENT (2), JSON_SORT_KEYS,
                       JSON_COMPACT | JSON_SORT_KEYS, JSON_COMPACT | JSON_ESCAPE_SLASH,
                       JSON_COMPACT | JSON_ENSURE_ASCII, JSON_COMPACT };
    for (size_t i = 0; i < sizeof (flags) / sizeof (flags[0]); i++)
        agree (o, flags[i]);
    json_decref (o);

    /* scalars need JSON_ENCODE_ANY, as with jansson */
    json_t *n = json_integer (5);
    assert_null (json_fast_dumps (n, JSON_COMPACT));
    char *s = json_fast_dumps (n, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_string_equal (s, "5");
    free (s);
    json_decref (n);
    assert_null (json_fast_dumps (NULL, JSON_COMPACT));
}

static void test_integers (void **state)
{
    json_int_t vals[] = { 0, 1, -1, 9, 10, -10, 123456789, -987654321,
                          LLONG_MAX, LLONG_MIN, LLONG_MIN + 1 };
    for (size_t i = 0; i < sizeof (vals) / sizeof (vals[0]); i++) {
        json_t *o = json_pack ("[I]", vals[i]);
        assert_true (agree (o, JSON_COMPACT));
        json_decref (o);
    }
}

static void test_depth (void **state)
{
    json_t *deep = json_array ();
    json_t *inner = deep;
    for (int i = 0; i < JSON_FAST_DUMP_MAX_DEPTH + 10; i++) {
        json_t *a = json_array ();
        json_array_append_new (inner, a);
        inner = a;
    }
    /* deeper than the fast pass goes: jansson's answer */
    assert_false (agree (deep, JSON_COMPACT));
    json_decref (deep);

    json_t *ok = json_array ();
    inner = ok;
    for (int i = 0; i < JSON_FAST_DUMP_MAX_DEPTH - 1; i++) {
        json_t *a = json_array ();
        json_array_append_new (inner, a);
        inner = a;
    }
    assert_true (agree (ok, JSON_COMPACT));
    json_decref (ok);
}

/* A long string makes the buffer grow many times. */
static void test_large (void **state)
{
    size_t n = 1 << 20;
    char *big = malloc (n + 1);
    assert_non_null (big);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('A' + i % 26);
    big[n] = '\0';
    json_t *o = json_pack ("{s:s s:[s,s]}", "big", big, "x", big, "y");
    assert_true (agree (o, JSON_COMPACT));
    json_decref (o);
    free (big);
}

static void test_random (void **state)
{
    const struct random_json_odds odds = { .real = 10, .escape = 67, .utf8 = 50 };
    size_t flags[] = { JSON_COMPACT, JSON_COMPACT | JSON_ENCODE_ANY,
                       JSON_COMPACT | JSON_SORT_KEYS, JSON_INDENT (1) };
    int taken = 0;

    srand (42);
    for (int i = 0; i < 5000; i++) {
        json_t *o = random_json (0, &odds);
        if (agree (o, flags[i % 4]))
            taken++;
        json_decref (o);
    }
    /* most documents are plain: the fast pass must be taking them */
    assert_true (taken > 2500);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_taken),
        cmocka_unit_test (test_declined),
        cmocka_unit_test (test_flags),
        cmocka_unit_test (test_integers),
        cmocka_unit_test (test_depth),
        cmocka_unit_test (test_large),
        cmocka_unit_test (test_random),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
