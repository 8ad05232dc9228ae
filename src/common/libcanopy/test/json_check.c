/* test/json_check.c - unit tests for json_check.c: what is and is not a
 * "simple" object, and the one-sided contract against jansson (every text
 * the check accepts, jansson decodes to an object), also on random
 * mutations of valid texts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/common/libcanopy/json_check.h"

static bool check (const char *s)
{
    size_t close;
    bool empty;
    return json_check_simple_object (s, strlen (s), &close, &empty);
}

static bool jansson_object (const char *s, size_t len)
{
    json_error_t err;
    json_t *o = json_loadb (s, len, JSON_DECODE_ANY, &err);
    bool ok = o && json_is_object (o);
    json_decref (o);
    return ok;
}

static void test_accept (void **state)
{
    const char *good[] = {
        "{}",
        " \t\r\n{ } \n",
        "{\"a\":1}",
        "{\"pad\":\"ppppppppppppppp\"}",
        "{\"a\":-0,\"b\":12.5,\"c\":true,\"d\":false,\"e\":null}",
        "{\"a\":[],\"b\":[1,[2,[3]]],\"c\":{\"d\":{}}}",
        "{ \"a\" : [ 1 , \"x\" ] , \"b\" : { } }",
        "{\"\":\"\"}",
        "{\"a\":123456789012345}",
        "{\"a\":1,\"a\":2}",       /* duplicate keys are valid JSON */
        "{\"s\":\"~!@#$%^&*()_+{}[]:;'<>,.?/|`\"}",
        NULL,
    };
    for (int i = 0; good[i]; i++) {
        if (!check (good[i]))
            fail_msg ("rejected: %s", good[i]);
        assert_true (jansson_object (good[i], strlen (good[i])));
    }
}

static void test_reject (void **state)
{
    const char *bad[] = {
        "", " ", "[]", "1", "\"x\"", "null",
        "{", "}", "{}}", "{} x", "{}{}", "{,}", "{\"a\"}", "{\"a\":}",
        "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}", "{\"a\":[1,]}",
        "{\"a\":[1 2]}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}",
        "{\"a\":-}", "{\"a\":tru}", "{\"a\":truex}", "{\"a\":nul}",
        "{\"a\":1e5}",                      /* exponent: not simple */
        "{\"a\":1234567890123456}",          /* 16 digits: not simple */
        "{\"a\":\"x\\ny\"}",                /* escape: not simple */
        "{\"a\":\"\xc3\xa9\"}",             /* non-ASCII: not simple */
        "{\"a\":\"tab\there\"}",            /* control character */
        "{\"a\":\"unterminated}",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        if (check (bad[i]))
            fail_msg ("accepted: %s", bad[i]);
    }
    assert_false (json_check_simple_object (NULL, 0, NULL, NULL));
    /* an embedded NUL is not whitespace */
    assert_false (json_check_simple_object ("{}\0", 3, NULL, NULL));
    assert_false (json_check_simple_object ("{\"a\0\":1}", 8, NULL, NULL));
}

static void test_depth (void **state)
{
    char buf[8 * JSON_CHECK_MAX_DEPTH + 32];
    int n;

    /* depth 64 objects: accepted; 65: not simple */
    for (int depth = JSON_CHECK_MAX_DEPTH; depth <= JSON_CHECK_MAX_DEPTH + 1; depth++) {
        n = 0;
        for (int i = 0; i < depth - 1; i++)
            n += sprintf (buf + n, "{\"a\":");
        n += sprintf (buf + n, "{}");
        for (int i = 0; i < depth - 1; i++)
            buf[n++] = '}';
        buf[n] = '\0';
        assert_int_equal (check (buf), depth <= JSON_CHECK_MAX_DEPTH);
    }
}

static void test_outputs (void **state)
{
    size_t close = 0;
    bool empty = false;

    assert_true (json_check_simple_object (" { } ", 5, &close, &empty));
    assert_int_equal (close, 3);
    assert_true (empty);
    assert_true (json_check_simple_object ("{\"a\":{}}\n", 9, &close, &empty));
    assert_int_equal (close, 7);
    assert_false (empty);
    /* the length bounds the scan: a valid prefix is not enough */
    assert_false (json_check_simple_object ("{\"a\":1}", 6, &close, &empty));
    assert_true (json_check_simple_object ("{}", 2, NULL, NULL));
}

/* Random mutations of valid texts: whatever the check accepts must be an
 * object to jansson, with the closing brace where the check says.
 */
static void test_contract (void **state)
{
    const char *seeds[] = {
        "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
        "{ \"pad\" : \"pppp\" , \"seq\" : 12 }",
        "{\"x\":[[],{},-1.25,\"\"]}",
    };
    const char alphabet[] = "{}[]\":,0123456789-.eEtruefalsn \\\t\nx\x01\x80";
    char buf[128];
    unsigned int seed = 12345;
    int accepted = 0;

    for (int iter = 0; iter < 200000; iter++) {
        const char *s = seeds[iter % 3];
        size_t len = strlen (s);
        memcpy (buf, s, len + 1);
        int nmut = 1 + rand_r (&seed) % 3;
        for (int m = 0; m < nmut; m++) {
            size_t pos = rand_r (&seed) % len;
            int op = rand_r (&seed) % 3;
            char c = alphabet[rand_r (&seed) % (sizeof (alphabet) - 1)];
            if (op == 0)                        /* replace */
                buf[pos] = c;
            else if (op == 1 && len + 1 < sizeof (buf)) {   /* insert */
                memmove (buf + pos + 1, buf + pos, len - pos + 1);
                buf[pos] = c;
                len++;
            }
            else if (len > 1) {                 /* delete */
                memmove (buf + pos, buf + pos + 1, len - pos);
                len--;
            }
        }
        size_t close;
        bool empty;
        if (json_check_simple_object (buf, len, &close, &empty)) {
            accepted++;
            if (!jansson_object (buf, len))
                fail_msg ("accepted but not a JSON object: %.*s", (int)len, buf);
            assert_int_equal (buf[close], '}');
            json_t *o = json_loadb (buf, len, 0, NULL);
            assert_int_equal (empty, json_object_size (o) == 0);
            json_decref (o);
        }
    }
    /* the mutations do not only produce garbage */
    assert_true (accepted > 1000);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_accept),
        cmocka_unit_test (test_reject),
        cmocka_unit_test (test_depth),
        cmocka_unit_test (test_outputs),
        cmocka_unit_test (test_contract),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
