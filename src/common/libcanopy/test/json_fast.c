/* test/json_fast.c - unit tests for json_fast.c: on every input,
 * json_fast_loadb must give what json_loadb gives (the same values, types
 * and member order, or the same error), and the fast pass itself must
 * take the texts it is meant for rather than quietly declining them all.
 * Inputs: a table of valid and invalid texts, random documents dumped in
 * several styles, and random mutations of them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <jansson.h>
/* the static fast pass is tested on its own too */
#include "src/common/libcanopy/json_fast.c"
#include "random_json.h"

/* The fast pass alone: NULL if it declines. */
static json_t *fast_only (const char *s, size_t len, size_t flags)
{
    struct jparse jp = { .p = s, .end = s + len };
    json_t *v;

    skip_ws (&jp);
    if (jp.p >= jp.end
        || (!(flags & JSON_DECODE_ANY) && *jp.p != '{' && *jp.p != '['))
        return NULL;
    if (!(v = parse_value (&jp)))
        return NULL;
    skip_ws (&jp);
    if (jp.p != jp.end) {
        json_decref (v);
        return NULL;
    }
    return v;
}

static char *dump (const json_t *o)
{
    return json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Both decoders agree on s[0..len-1]; returns whether it decoded. */
static bool agree (const char *s, size_t len, size_t flags)
{
    json_error_t ea, eb;
    json_t *a = json_loadb (s, len, flags, &ea);
    json_t *b = json_fast_loadb (s, len, flags, &eb);
    bool ok = a != NULL;

    if (!a || !b) {
        if (a || b)
            fail_msg ("only one decoder accepted '%.*s'", (int)len, s);
        assert_string_equal (ea.text, eb.text);
        assert_int_equal (ea.position, eb.position);
    }
    else {
        char *da = dump (a), *db = dump (b);
        assert_non_null (da);
        assert_non_null (db);
        if (strcmp (da, db) != 0 || !json_equal (a, b))
            fail_msg ("'%.*s': jansson %s, fast %s", (int)len, s, da, db);
        free (da);
        free (db);
        assert_string_equal (eb.text, "");
    }
    json_decref (a);
    json_decref (b);
    return ok;
}

static bool agree_s (const char *s, size_t flags)
{
    return agree (s, strlen (s), flags);
}

static void test_valid (void **state)
{
    const char *good[] = {
        "{}", "[]", " \t\r\n{ } \n",
        "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a\":{\"ver\":1,\"type\":\"val\","
            "\"data\":\"AAAAAAAAAAA=\"}}}",
        "{\"a\":-0,\"b\":12.5,\"c\":true,\"d\":false,\"e\":null}",
        "[1,-1,0,1.0,1e2,1E-2,0.5e+3,-0.0,123456789012345678]",
        "[9223372036854775807,-9223372036854775808]",
        "[1e-400]",                             /* underflows to 0 */
        "{\"a\":[],\"b\":[1,[2,[3]]],\"c\":{\"d\":{}}}",
        "{\"a\":1,\"b\":2,\"a\":3}",            /* last wins, first place */
        "{\"\":\"\"}",
        "[\"~\x7f\"]",
        "{ \"a\" : [ 1 , 2 ] , \"b\" : { } }",
    };
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        assert_true (agree_s (good[i], 0));
        assert_true (agree_s (good[i], JSON_DECODE_ANY));
        /* and the fast pass took it */
        json_t *v = fast_only (good[i], strlen (good[i]), 0);
        if (!v)
            fail_msg ("the fast pass declined '%s'", good[i]);
        json_decref (v);
    }
    /* scalars only with JSON_DECODE_ANY */
    const char *scalars[] = { "1", " -2 ", "3.5", "\"s\"", "true", "false", "null" };
    for (size_t i = 0; i < sizeof (scalars) / sizeof (scalars[0]); i++) {
        assert_false (agree_s (scalars[i], 0));
        assert_true (agree_s (scalars[i], JSON_DECODE_ANY));
        json_t *v = fast_only (scalars[i], strlen (scalars[i]), JSON_DECODE_ANY);
        assert_non_null (v);
        json_decref (v);
    }
    /* types are kept apart */
    json_t *o = json_fast_loadb ("[1,1.0,1e0]", 11, 0, NULL);
    assert_non_null (o);
    assert_true (json_is_integer (json_array_get (o, 0)));
    assert_true (json_is_real (json_array_get (o, 1)));
    assert_true (json_is_real (json_array_get (o, 2)));
    json_decref (o);
    /* duplicate key: value 3 at the first place */
    o = json_fast_loadb ("{\"a\":1,\"b\":2,\"a\":3}", 19, 0, NULL);
    assert_non_null (o);
    assert_int_equal (json_integer_value (json_object_get (o, "a")), 3);
    assert_string_equal (json_object_iter_key (json_object_iter (o)), "a");
    json_decref (o);
}

/* Valid texts the fast pass leaves to jansson: still the same answer. */
static void test_declined (void **state)
{
    const char *text[] = {
        "[\"a\\nb\"]", "[\"\\u00e9\\u0000\"]", "{\"\\\"\":1}",
        "[\"\xc3\xa9\"]",                                  /* UTF-8 */
        "[0.0000000000000000000000000000000000000000000000000000000000000000001]",
    };
    for (size_t i = 0; i < sizeof (text) / sizeof (text[0]); i++) {
        assert_null (fast_only (text[i], strlen (text[i]), 0));
        agree_s (text[i], 0);
    }
    /* the \u0000 one is an error without JSON_ALLOW_NUL: still agreed */
    assert_true (agree_s ("[\"\\u00e9\"]", 0));
    /* other flags go to jansson */
    json_error_t e;
    json_t *o = json_fast_loadb ("{\"a\":1,\"a\":2}", 13, JSON_REJECT_DUPLICATES, &e);
    assert_null (o);
    o = json_fast_loadb ("[1]", 3, JSON_DECODE_INT_AS_REAL, NULL);
    assert_true (json_is_real (json_array_get (o, 0)));
    json_decref (o);
}

static void test_invalid (void **state)
{
    const char *bad[] = {
        "", " ", "{", "}", "[", "]", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}",
        "{\"a\":1,}", "{a:1}", "{'a':1}", "[01]", "[1.]", "[.5]", "[-]",
        "[+1]", "[1e]", "[1e+]", "[0x10]", "[Infinity]", "[NaN]", "[tru]",
        "[truex]", "[nul]", "{} x", "{}{}", "[1 2]", "[\"a]", "[\"a\x01\"]",
        "[\"\xff\"]", "[1e400]", "[-1e400]", "[9223372036854775808]",
        "[-9223372036854775809]", "\xef\xbb\xbf{}", "{\"a\":1 \"b\":2}",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        assert_false (agree_s (bad[i], 0));
        assert_false (agree_s (bad[i], JSON_DECODE_ANY));
    }
    /* an embedded NUL, and a length that cuts a valid text short */
    assert_false (agree ("[1]\0", 4, 0));
    assert_false (agree ("[\"a\0b\"]", 7, 0));
    assert_false (agree ("{\"a\":1}", 6, 0));
    assert_true (agree ("[1] garbage", 3, 0));
    /* NULL input */
    json_error_t e;
    assert_null (json_fast_loadb (NULL, 0, 0, &e));
}

static void test_depth (void **state)
{
    size_t sizes[] = { JSON_FAST_MAX_DEPTH, JSON_FAST_MAX_DEPTH + 1, 3000 };
    for (size_t i = 0; i < sizeof (sizes) / sizeof (sizes[0]); i++) {
        size_t n = sizes[i];
        char *s = malloc (2 * n + 1);
        assert_non_null (s);
        memset (s, '[', n);
        memset (s + n, ']', n);
        s[2 * n] = '\0';
        bool ok = agree (s, 2 * n, 0);
        assert_true (n <= 2048 ? ok : !ok);     /* jansson's own limit */
        json_t *v = fast_only (s, 2 * n, 0);
        assert_true (n <= JSON_FAST_MAX_DEPTH ? v != NULL : v == NULL);
        json_decref (v);
        free (s);
    }
}

static void test_random (void **state)
{
    const struct random_json_odds odds = { .real = 1, .escape = 13, .utf8 = 20 };
    size_t styles[] = { JSON_COMPACT, JSON_INDENT (2), JSON_SORT_KEYS,
                        JSON_COMPACT | JSON_ENSURE_ASCII };
    srand (42);
    for (int i = 0; i < 3000; i++) {
        json_t *o = json_object ();
        json_object_set_new (o, "doc", random_json (0, &odds));
        char *s = json_dumps (o, styles[i % 4]);
        assert_non_null (s);
        size_t len = strlen (s);
        assert_true (agree (s, len, 0));
        /* mutations: a byte changed, the text cut short */
        for (int m = 0; m < 4; m++) {
            char *t = strdup (s);
            assert_non_null (t);
            t[rand () % len] = " {}[],:\"\\01-.eE\x01\xff"[rand () % 18];
            agree (t, len, JSON_DECODE_ANY);
            agree (t, rand () % len, 0);
            free (t);
        }
        free (s);
        json_decref (o);
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_valid),
        cmocka_unit_test (test_declined),
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_depth),
        cmocka_unit_test (test_random),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}

/*
 * vi:tabstop=4 shiftwidth=4 expandtab
 */
