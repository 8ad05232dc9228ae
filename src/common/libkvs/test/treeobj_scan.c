/* test/treeobj_scan.c - finding one entry in an encoded directory: for
 * random directories (values, valrefs, symlinks, nested dirs and dirrefs,
 * names of every printable character) the scan agrees with a full decode
 * on every present and many absent names, and the span it returns decodes
 * to the very entry; the empty directory; names with escapes, non-ASCII
 * bytes, white space, hdirs and other shapes are declined (EPROTO, and
 * the outputs untouched); every truncation and many one-byte corruptions
 * of a valid encoding give either a decline or the answer a decode of the
 * corrupted text gives; a duplicate name yields its last value; a byte
 * to decline, or an escape, at every position of a string or a name is
 * seen by the 8-bytes-at-a-time skip as byte by byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/treeobj_scan.h"

#include "randdir.h"

/* The scan of 'name' in enc agrees with the decoded dir 'dir'. */
static void check_agrees (const char *enc, size_t len, json_t *dir, const char *name)
{
    size_t off = 12345, vlen = 6789;
    int rc = treeobj_dir_scan (enc, len, name, &off, &vlen);
    json_t *want = treeobj_dir_get (dir, name);

    if (!want) {
        assert_int_equal (rc, 0);
        assert_int_equal (off, 12345);
        assert_int_equal (vlen, 6789);
        return;
    }
    assert_int_equal (rc, 1);
    assert_true (off + vlen <= len);
    json_t *got = treeobj_decode (enc + off, vlen);
    assert_non_null (got);
    assert_true (json_equal (got, want));
    json_decref (got);
}

static void test_random_dirs (void **state)
{
    unsigned seed = 42;
    char name[16];

    for (int round = 0; round < 300; round++) {
        json_t *dir = randdir (rand_r (&seed) % 60, &seed);
        size_t len;
        char *enc = treeobj_encode (dir, &len);
        assert_non_null (enc);
        const char *k;
        json_t *e;
        json_object_foreach (treeobj_data (dir), k, e)
            check_agrees (enc, len, dir, k);
        for (int i = 0; i < 20; i++) {
            randname (name, sizeof (name), &seed);
            check_agrees (enc, len, dir, name);
        }
        check_agrees (enc, len, dir, "");
        free (enc);
        json_decref (dir);
    }
}

static void test_empty (void **state)
{
    const char *enc = "{\"data\":{},\"type\":\"dir\",\"ver\":1}";
    size_t off, vlen;
    assert_int_equal (treeobj_dir_scan (enc, strlen (enc), "a", &off, &vlen), 0);
}

static void expect_decline (const char *enc, const char *name)
{
    size_t off = 1, vlen = 2;
    errno = 0;
    assert_int_equal (treeobj_dir_scan (enc, strlen (enc), name, &off, &vlen), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (off, 1);
    assert_int_equal (vlen, 2);
}

static void test_declined (void **state)
{
    size_t off, vlen;
    /* a name with an escape */
    json_t *dir = treeobj_create_dir ();
    assert_int_equal (treeobj_dir_set (dir, "a\"b", treeobj_create_symlink ("x")), 0);
    assert_int_equal (treeobj_dir_set (dir, "c", treeobj_create_symlink ("y")), 0);
    char *enc = treeobj_encode (dir, NULL);
    assert_non_null (enc);
    expect_decline (enc, "c");
    free (enc);
    json_decref (dir);
    /* a name beyond ASCII */
    expect_decline ("{\"data\":{\"\xc3\xa9\":{\"data\":\"x\",\"type\":\"symlink\",\"ver\":1}},"
                    "\"type\":\"dir\",\"ver\":1}", "a");
    /* white space, other shapes, trailing bytes, an hdir, a value */
    expect_decline ("{ \"data\":{},\"type\":\"dir\",\"ver\":1}", "a");
    expect_decline ("{\"data\":{},\"type\":\"dir\",\"ver\":1} ", "a");
    expect_decline ("{\"data\":{},\"type\":\"dir\",\"ver\":2}", "a");
    expect_decline ("{\"data\":{\"a\":1 },\"type\":\"dir\",\"ver\":1}", "a");
    expect_decline ("{\"data\":{\"count\":3,\"level\":0,\"refs\":[]},\"type\":\"hdir\",\"ver\":1}",
                    "count");
    expect_decline ("{\"data\":\"aGk=\",\"type\":\"val\",\"ver\":1}", "a");
    expect_decline ("", "a");
    /* grammar of what is skipped */
    expect_decline ("{\"data\":{\"a\":tru},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":01},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":1.},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":12345678901234567890},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":[1,]},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":{\"x\"}},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":\"\\q\"},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":\"\\ud800\"},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},"
                    "\"type\":\"dir\",\"ver\":1}", "b");
    /* what jansson itself refuses though the grammar allows it (a decode
     * of the same text fails, so the scan must not answer from it) */
    expect_decline ("{\"data\":{\"a\":\"x\\u0000y\"},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":1e999},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":-1e309},\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":1000000000000000000000000000000.0e300},"
                    "\"type\":\"dir\",\"ver\":1}", "b");
    /* and each refusal is jansson's, not ours */
    assert_null (json_loads ("[\"x\\u0000y\"]", 0, NULL));
    assert_null (json_loads ("[1e999]", 0, NULL));
    /* but what is well formed is skipped */
    const char *ok = "{\"data\":{\"a\":[1,-2.5e+3,1e-99,0.5E99,true,false,null,\"\\u0041\\n\",{}],"
                     "\"b\":{\"data\":\"x\",\"type\":\"symlink\",\"ver\":1}},\"type\":\"dir\",\"ver\":1}";
    assert_int_equal (treeobj_dir_scan (ok, strlen (ok), "b", &off, &vlen), 1);
    assert_int_equal (vlen, strlen ("{\"data\":\"x\",\"type\":\"symlink\",\"ver\":1}"));
    assert_int_equal (treeobj_dir_scan (ok, strlen (ok), "c", &off, &vlen), 0);
    /* bad arguments */
    errno = 0;
    assert_int_equal (treeobj_dir_scan (NULL, 0, "a", &off, &vlen), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (treeobj_dir_scan (ok, strlen (ok), NULL, &off, &vlen), -1);
    assert_int_equal (treeobj_dir_scan (ok, strlen (ok), "a", NULL, &vlen), -1);
}

/* The canonical entry forms skipped by their fixed parts (skip_entry):
 * each accepted with the right value bounds, each near miss skipped by
 * the general grammar instead (same answer), and bad data inside a
 * canonical frame still declined.
 */
static void test_canonical_entries (void **state)
{
    static const char *entries[] = {
        "{\"data\":\"aGk=\",\"type\":\"val\",\"ver\":1}",
        "{\"data\":\"\",\"type\":\"val\",\"ver\":1}",
        "{\"data\":[\"sha256-00\",\"sha256-11\"],\"type\":\"valref\",\"ver\":1}",
        "{\"data\":[],\"type\":\"valref\",\"ver\":1}",
        "{\"data\":[\"sha256-22\"],\"type\":\"dirref\",\"ver\":1}",
        /* near misses: other types, versions, members, order */
        "{\"data\":\"x\",\"type\":\"symlink\",\"ver\":1}",
        "{\"data\":\"x\",\"type\":\"val\",\"ver\":2}",
        "{\"data\":\"x\",\"type\":\"val\",\"ver\":1,\"more\":{}}",
        "{\"data\":\"x\",\"type\":\"val\"}",
        "{\"data\":[\"a\"],\"type\":\"dirref\",\"ver\":10}",
        "{\"data\":{\"a\":[1]},\"type\":\"val\",\"ver\":1}",
        "{\"data\":1,\"type\":\"val\",\"ver\":1}",
        "{\"data\":",
        "{\"type\":\"val\",\"data\":\"x\",\"ver\":1}",
    };
    int n = (int)(sizeof (entries) / sizeof (entries[0]));
    char text[4096];
    size_t off, vlen;
    (void)state;

    for (int i = 0; i < n; i++) {
        bool complete = i != 12;
        snprintf (text, sizeof (text),
                  "{\"data\":{\"a\":%s,\"b\":%s},\"type\":\"dir\",\"ver\":1}",
                  entries[i], entries[0]);
        if (!complete) {
            expect_decline (text, "b");
            continue;
        }
        assert_int_equal (treeobj_dir_scan (text, strlen (text), "a", &off, &vlen), 1);
        assert_int_equal (vlen, strlen (entries[i]));
        assert_memory_equal (text + off, entries[i], vlen);
        assert_int_equal (treeobj_dir_scan (text, strlen (text), "b", &off, &vlen), 1);
        assert_int_equal (vlen, strlen (entries[0]));
    }
    /* bad bytes inside a canonical frame */
    expect_decline ("{\"data\":{\"a\":{\"data\":\"a\x01\",\"type\":\"val\",\"ver\":1}},"
                    "\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":{\"data\":[\"x\",],\"type\":\"valref\",\"ver\":1}},"
                    "\"type\":\"dir\",\"ver\":1}", "b");
    expect_decline ("{\"data\":{\"a\":{\"data\":\"x\",\"type\":\"val\",\"ver\":1},"
                    "\"type\":\"dir\",\"ver\":1}", "b");
}

static void test_duplicate (void **state)
{
    const char *enc = "{\"data\":{\"a\":{\"data\":{\"target\":\"x\"},\"type\":\"symlink\",\"ver\":1},"
                      "\"a\":{\"data\":{\"target\":\"y\"},\"type\":\"symlink\",\"ver\":1}},"
                      "\"type\":\"dir\",\"ver\":1}";
    size_t off, vlen;
    assert_int_equal (treeobj_dir_scan (enc, strlen (enc), "a", &off, &vlen), 1);
    json_t *got = treeobj_decode (enc + off, vlen);
    json_t *dir = treeobj_decode (enc, strlen (enc));
    assert_non_null (got);
    assert_non_null (dir);
    assert_true (json_equal (got, treeobj_dir_get (dir, "a")));
    assert_string_equal (treeobj_symlink_target (got), "y");
    json_decref (got);
    json_decref (dir);
}

/* Damaged texts: never a crash or a span outside the text, and any answer
 * (not a decline) is the answer of a decode of that same text.
 */
static void test_damaged (void **state)
{
    unsigned seed = 7;
    json_t *dir = treeobj_create_dir ();
    char name[16];
    for (int i = 0; i < 12; i++) {
        randname (name, sizeof (name), &seed);
        assert_int_equal (treeobj_dir_set (dir, name, randentry (&seed, 0)), 0);
    }
    assert_int_equal (treeobj_dir_set (dir, "key", treeobj_create_symlink ("t")), 0);
    size_t len;
    char *enc = treeobj_encode (dir, &len);
    char *buf = malloc (len + 1);
    assert_non_null (enc);
    assert_non_null (buf);

    for (size_t cut = 0; cut < len; cut++) {
        size_t off, vlen;
        memcpy (buf, enc, cut);
        assert_int_equal (treeobj_dir_scan (buf, cut, "key", &off, &vlen), -1);
    }
    for (int round = 0; round < 5000; round++) {
        size_t off = 0, vlen = 0;
        memcpy (buf, enc, len);
        buf[rand_r (&seed) % len] = (char)(32 + rand_r (&seed) % 95);
        int rc = treeobj_dir_scan (buf, len, "key", &off, &vlen);
        if (rc < 0)
            continue;
        json_t *d = treeobj_decode (buf, len);
        if (!d)
            continue;   /* a grammar-valid text that is not a valid dir */
        json_t *want = treeobj_dir_get (d, "key");
        if (rc == 0)
            assert_null (want);
        else {
            assert_true (off + vlen <= len);
            json_t *got = treeobj_decode (buf + off, vlen);
            if (got && want)
                assert_true (json_equal (got, want));
            json_decref (got);
        }
        json_decref (d);
    }
    free (buf);
    free (enc);
    json_decref (dir);
}

/* The scan skips plain bytes 8 at a time: a byte it must decline, or an
 * escape, at every position of a string, of a name, and across the
 * 8-byte words, is seen as the byte-by-byte scan sees it.
 */
static void scan_one (const char *prefix, const char *str, size_t slen,
                      int want_rc)
{
    const char *tailtext = "\",\"type\":\"val\",\"ver\":1},"
                           "\"key\":{\"data\":\"QQ==\",\"type\":\"val\",\"ver\":1}},"
                           "\"type\":\"dir\",\"ver\":1}";
    size_t plen = strlen (prefix), tlen = strlen (tailtext);
    char *buf = malloc (plen + slen + tlen);
    size_t off = 0, vlen = 0;

    assert_non_null (buf);
    memcpy (buf, prefix, plen);
    memcpy (buf + plen, str, slen);
    memcpy (buf + plen + slen, tailtext, tlen);
    int rc = treeobj_dir_scan (buf, plen + slen + tlen, "key", &off, &vlen);
    assert_int_equal (rc, want_rc);
    if (rc == 1) {
        const char *want = "{\"data\":\"QQ==\",\"type\":\"val\",\"ver\":1}";
        assert_int_equal (vlen, strlen (want));
        assert_memory_equal (buf + off, want, vlen);
    }
    else
        assert_int_equal (errno, EPROTO);
    free (buf);
}

static void test_special_bytes (void **state)
{
    const unsigned char bad[] = { 0x01, 0x1f, 0x7f, 0x80, 0xc3, 0xfe, 0xff };
    const char *value = "{\"data\":{\"a\":{\"data\":\"";
    char str[40];

    for (int len = 0; len <= 33; len++) {
        memset (str, 'A', len);
        scan_one (value, str, len, 1);
        for (int pos = 0; pos < len; pos++) {
            for (size_t i = 0; i < sizeof (bad); i++) {
                memset (str, 'A', len);
                str[pos] = (char)bad[i];
                scan_one (value, str, len, -1);
            }
            if (pos + 1 < len) {
                memset (str, 'A', len);
                str[pos] = '\\';
                str[pos + 1] = '"';         /* an escaped quote: plain */
                scan_one (value, str, len, 1);
                str[pos + 1] = 'x';         /* no such escape */
                scan_one (value, str, len, -1);
            }
            if (pos + 6 <= len) {
                memset (str, 'A', len);
                memcpy (str + pos, "\\u0041", 6);
                scan_one (value, str, len, 1);
            }
            /* a quote ends the string early: what follows is not JSON */
            if (pos + 1 < len) {
                memset (str, 'A', len);
                str[pos] = '"';
                scan_one (value, str, len, -1);
            }
        }
    }
    /* names: the same bytes are declined there too */
    for (int len = 1; len <= 20; len++) {
        char prefix[64];
        for (int pos = 0; pos < len; pos++) {
            for (size_t i = 0; i < sizeof (bad); i++) {
                int n = snprintf (prefix, sizeof (prefix), "{\"data\":{\"%.*s",
                                  len, "bbbbbbbbbbbbbbbbbbbbbbbb");
                prefix[n - len + pos] = (char)bad[i];
                strcat (prefix, "\":{\"data\":\"");
                scan_one (prefix, "QQ==", 4, -1);
            }
        }
        snprintf (prefix, sizeof (prefix), "{\"data\":{\"%.*s\":{\"data\":\"",
                  len, "bbbbbbbbbbbbbbbbbbbbbbbb");
        scan_one (prefix, "QQ==", 4, 1);
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_random_dirs),
        cmocka_unit_test (test_empty),
        cmocka_unit_test (test_declined),
        cmocka_unit_test (test_canonical_entries),
        cmocka_unit_test (test_duplicate),
        cmocka_unit_test (test_damaged),
        cmocka_unit_test (test_special_bytes),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
