/* test/kvs_lookup_wire.c - the kvs.lookup payload: encode/decode round
 * trips for plain and unusual keys, the fast decoder's answers on chosen
 * texts, and its contract: on random mutations of valid payloads it
 * answers exactly as jansson ("{s:s s?i}") does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <jansson.h>
#include "src/common/libkvs/kvs_lookup_wire.h"

static void roundtrip (const char *key, int flags)
{
    char buf[256];
    int f = -12345;
    size_t len;
    char *s = kvs_lookup_wire_encode (key, flags, &len);
    assert_non_null (s);
    assert_int_equal (len, strlen (s));
    assert_int_equal (kvs_lookup_wire_decode (s, len, buf, sizeof (buf), &f), 0);
    assert_string_equal (buf, key);
    assert_int_equal (f, flags);
    /* jansson reads the same text the same way */
    json_t *o = json_loads (s, 0, NULL);
    const char *k;
    int jf;
    assert_non_null (o);
    assert_int_equal (json_unpack (o, "{s:s s:i}", "key", &k, "flags", &jf), 0);
    assert_string_equal (k, key);
    assert_int_equal (jf, flags);
    json_decref (o);
    free (s);
}

static void test_roundtrip (void **state)
{
    roundtrip ("a.b.c", 0);
    roundtrip ("", 0);
    roundtrip ("pmi.kvs-1[3]/x", 7);
    roundtrip ("quote\"and\\backslash", 2);
    roundtrip ("tab\tnewline\n", -1);
    roundtrip ("utf8-\xc3\xa9t\xc3\xa9", 2147483647);
    roundtrip ("x", -2147483647 - 1);

    errno = 0;
    assert_null (kvs_lookup_wire_encode (NULL, 0, NULL));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (kvs_lookup_wire_encode ("bad-\xff-utf8", 0, NULL));
    assert_int_equal (errno, EINVAL);
}

struct want {
    const char *text;
    int rc;             /* 0 or -errno */
    const char *key;
    int flags;
};

static void test_decode (void **state)
{
    const struct want w[] = {
        { "{\"key\":\"a\",\"flags\":3}", 0, "a", 3 },
        { " { \"flags\" : 3 , \"key\" : \"a\" } ", 0, "a", 3 },
        { "{\"key\":\"a\"}", 0, "a", 0 },
        { "{\"key\":\"a\",\"flags\":-0}", 0, "a", 0 },
        { "{\"key\":\"a\",\"extra\":[1,{\"x\":2}]}", 0, "a", 0 },   /* jansson */
        { "{\"key\":\"a\\u0041\"}", 0, "aA", 0 },                     /* jansson */
        { "{\"key\":\"a\",\"key\":\"b\"}", 0, "b", 0 },               /* jansson */
        { "{\"key\":\"a\",\"flags\":1.0}", -EPROTO, NULL, 0 },
        { "{\"key\":\"a\",\"flags\":true}", -EPROTO, NULL, 0 },
        { "{\"key\":\"a\",\"flags\":\"1\"}", -EPROTO, NULL, 0 },
        { "{\"key\":1}", -EPROTO, NULL, 0 },
        { "{\"flags\":1}", -EPROTO, NULL, 0 },
        { "{}", -EPROTO, NULL, 0 },
        { "[\"key\",\"a\"]", -EPROTO, NULL, 0 },
        { "\"key\"", -EPROTO, NULL, 0 },
        { "{\"key\":\"a\"} x", -EPROTO, NULL, 0 },
        { "{\"key\":\"a\"", -EPROTO, NULL, 0 },
        { "", -EPROTO, NULL, 0 },
    };
    for (size_t i = 0; i < sizeof (w) / sizeof (w[0]); i++) {
        char buf[64];
        int flags = -99;
        errno = 0;
        int rc = kvs_lookup_wire_decode (w[i].text, strlen (w[i].text),
                                         buf, sizeof (buf), &flags);
        if (w[i].rc == 0) {
            if (rc != 0)
                fail_msg ("'%s' failed: %s", w[i].text, strerror (errno));
            assert_string_equal (buf, w[i].key);
            assert_int_equal (flags, w[i].flags);
        }
        else {
            if (rc != -1 || errno != -w[i].rc)
                fail_msg ("'%s' gave %d errno %d", w[i].text, rc, errno);
        }
    }
    /* a key that does not fit: ENAMETOOLONG on both paths */
    char small[4];
    int flags;
    const char *t1 = "{\"key\":\"abcd\"}", *t2 = "{\"key\":\"ab\\u0063d\"}";
    assert_int_equal (kvs_lookup_wire_decode (t1, strlen (t1), small, 4, &flags), -1);
    assert_int_equal (errno, ENAMETOOLONG);
    assert_int_equal (kvs_lookup_wire_decode (t2, strlen (t2), small, 4, &flags), -1);
    assert_int_equal (errno, ENAMETOOLONG);
    char fits[5];       /* "abcd" and its NUL, exactly */
    assert_int_equal (kvs_lookup_wire_decode (t1, strlen (t1), fits, sizeof (fits), &flags), 0);
    assert_string_equal (fits, "abcd");
    /* no NUL needed after the text */
    const char *t3 = "{\"key\":\"k\"}GARBAGE";
    assert_int_equal (kvs_lookup_wire_decode (t3, 11, small, 4, &flags), 0);
    assert_string_equal (small, "k");
}

/* What jansson says: 0 with key/flags, or -1 */
static int reference (const char *s, size_t len, char *key, size_t keysize, int *flags)
{
    json_t *o = json_loadb (s, len, JSON_DECODE_ANY, NULL);
    const char *k;
    int f = 0;
    int rc = -1;
    if (o && json_unpack (o, "{s:s s?i}", "key", &k, "flags", &f) == 0
        && strlen (k) < keysize) {
        strcpy (key, k);
        *flags = f;
        rc = 0;
    }
    json_decref (o);
    return rc;
}

static void test_contract (void **state)
{
    const char *seeds[] = {
        "{\"key\":\"a.b.c\",\"flags\":12}",
        "{\"flags\":4,\"key\":\"pmi.kvs-1[3]\"}",
        " {\"key\" : \"x\" , \"flags\" : -7 } ",
        "{\"key\":\"k\",\"other\":{\"a\":[1,2.5,null,true]},\"flags\":1}",
    };
    const char alphabet[] = "{}[]\":,- .0123456789keyflagsaxtrunl\\e\t";
    int fast_ok = 0;
    srand (4242);
    for (int iter = 0; iter < 200000; iter++) {
        char text[128];
        const char *seed = seeds[iter % 4];
        size_t len = strlen (seed);
        memcpy (text, seed, len);
        int nmut = 1 + rand () % 3;
        for (int m = 0; m < nmut; m++) {
            int op = rand () % 3;
            size_t pos = len ? rand () % len : 0;
            char c = alphabet[rand () % (sizeof (alphabet) - 1)];
            if (op == 0 && len > 0)
                text[pos] = c;
            else if (op == 1 && len + 1 < sizeof (text)) {
                memmove (text + pos + 1, text + pos, len - pos);
                text[pos] = c;
                len++;
            }
            else if (len > 0) {
                memmove (text + pos, text + pos + 1, len - pos - 1);
                len--;
            }
        }
        char k1[64], k2[64];
        int f1 = 0, f2 = 0;
        int r1 = kvs_lookup_wire_decode (text, len, k1, sizeof (k1), &f1);
        int r2 = reference (text, len, k2, sizeof (k2), &f2);
        if (r1 != r2 || (r1 == 0 && (strcmp (k1, k2) || f1 != f2)))
            fail_msg ("disagree on '%.*s': fast %d '%s' %d, jansson %d '%s' %d",
                      (int)len, text, r1, r1 ? "" : k1, f1, r2, r2 ? "" : k2, f2);
        if (r1 == 0)
            fast_ok++;
    }
    assert_true (fast_ok > 1000);   /* mutations do not only make garbage */
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_roundtrip),
        cmocka_unit_test (test_decode),
        cmocka_unit_test (test_contract),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
