/* test/treeobj.c - tree objects: creation, accessors, strict validation,
 * canonical encoding.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/treeobj.h"

static const char *ref1 = "sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static void test_val (void **state)
{
    json_t *v = treeobj_create_val ("hello", 5);
    void *data;
    size_t len;
    assert_non_null (v);
    assert_true (treeobj_is_val (v));
    assert_int_equal (treeobj_validate (v), 0);
    assert_int_equal (treeobj_decode_val (v, &data, &len), 0);
    assert_int_equal (len, 5);
    assert_memory_equal (data, "hello", 5);
    free (data);
    json_decref (v);
    v = treeobj_create_val (NULL, 0);
    assert_int_equal (treeobj_decode_val (v, &data, &len), 0);
    assert_int_equal (len, 0);
    free (data);
    json_decref (v);
}

static void test_dir (void **state)
{
    json_t *d = treeobj_create_dir ();
    assert_int_equal (treeobj_dir_count (d), 0);
    assert_int_equal (treeobj_dir_set (d, "a", treeobj_create_val ("1", 1)), 0);
    assert_int_equal (treeobj_dir_set (d, "b", treeobj_create_dirref (ref1)), 0);
    assert_int_equal (treeobj_dir_set (d, "bad.name", treeobj_create_dir ()), -1);
    assert_int_equal (treeobj_dir_count (d), 2);
    assert_non_null (treeobj_dir_get (d, "a"));
    assert_null (treeobj_dir_get (d, "zz"));
    assert_int_equal (errno, ENOENT);
    json_t *c = treeobj_dir_copy (d);
    assert_int_equal (treeobj_dir_remove (c, "a"), 0);
    assert_int_equal (treeobj_dir_count (c), 1);
    assert_int_equal (treeobj_dir_count (d), 2);     /* copy is separate */
    assert_int_equal (treeobj_validate (d), 0);
    json_decref (c);
    /* canonical encoding: insertion order does not matter */
    json_t *d2 = treeobj_create_dir ();
    treeobj_dir_set (d2, "b", treeobj_create_dirref (ref1));
    treeobj_dir_set (d2, "a", treeobj_create_val ("1", 1));
    char r1[BLOBREF_MAX], r2[BLOBREF_MAX];
    size_t l1, l2;
    char *e1 = treeobj_encode_ref (d, &l1, r1, sizeof (r1));
    char *e2 = treeobj_encode_ref (d2, &l2, r2, sizeof (r2));
    assert_string_equal (e1, e2);
    assert_string_equal (r1, r2);
    json_t *dec = treeobj_decode (e1, l1);
    assert_non_null (dec);
    assert_true (json_equal (dec, d));
    json_decref (dec);
    free (e1);
    free (e2);
    json_decref (d);
    json_decref (d2);
}

static void test_refs_symlink (void **state)
{
    json_t *v = treeobj_create_valref ();
    assert_int_equal (treeobj_append_blobref (v, ref1), 0);
    assert_int_equal (treeobj_append_blobref (v, "junk"), -1);
    assert_int_equal (treeobj_blobref_count (v), 1);
    assert_string_equal (treeobj_blobref_at (v, 0), ref1);
    /* replacing a ref in place (how a transaction fills in late hashes) */
    char ref2[BLOBREF_MAX];
    assert_int_equal (blobref_hash ("other", 5, ref2, sizeof (ref2)), 0);
    assert_int_equal (treeobj_set_blobref (v, 0, ref2), 0);
    assert_string_equal (treeobj_blobref_at (v, 0), ref2);
    assert_int_equal (treeobj_set_blobref (v, 1, ref1), -1);
    assert_int_equal (treeobj_set_blobref (v, -1, ref1), -1);
    assert_int_equal (treeobj_set_blobref (v, 0, "junk"), -1);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (treeobj_blobref_at (v, 0), ref2);
    json_t *notref = treeobj_create_dir ();
    assert_int_equal (treeobj_set_blobref (notref, 0, ref1), -1);
    json_decref (notref);
    json_decref (v);
    assert_null (treeobj_create_dirref ("junk"));
    json_t *s = treeobj_create_symlink ("a.b");
    assert_string_equal (treeobj_symlink_target (s), "a.b");
    assert_int_equal (treeobj_validate (s), 0);
    json_decref (s);
    assert_null (treeobj_create_symlink (""));
}

static void test_hdir (void **state)
{
    json_t *h = treeobj_create_hdir (0);
    assert_int_equal (treeobj_validate (h), 0);
    assert_int_equal (treeobj_hdir_level (h), 0);
    assert_int_equal (treeobj_hdir_count (h), 0);
    int b = treeobj_hdir_bucket_of (h, "key-1");
    assert_true (b >= 0 && b < TREEOBJ_HDIR_FANOUT);
    assert_int_equal (b, treeobj_hdir_bucket_of (h, "key-1"));
    assert_null (treeobj_hdir_ref (h, b));
    assert_int_equal (errno, ENOENT);
    /* level L uses hash bits 4L..4L+3 */
    json_t *h1 = treeobj_create_hdir (1);
    uint64_t hash = treeobj_name_hash ("key-1");
    assert_int_equal (treeobj_hdir_bucket_of (h1, "key-1"), (int)((hash >> 4) & 15));
    assert_int_equal (treeobj_hdir_set_slot (h, b, json_string (ref1)), 0);
    assert_string_equal (treeobj_hdir_ref (h, b), ref1);
    assert_int_equal (treeobj_hdir_set_count (h, 7), 0);
    json_t *c = treeobj_hdir_copy (h);
    assert_int_equal (treeobj_hdir_count (c), 7);
    assert_int_equal (treeobj_hdir_set_slot (c, b, json_null ()), 0);
    assert_string_equal (treeobj_hdir_ref (h, b), ref1);   /* copy is separate */
    assert_int_equal (treeobj_validate (h), 0);
    /* an inline slot is the working form: not valid as stored */
    assert_int_equal (treeobj_hdir_set_slot (c, 0, treeobj_create_dir ()), 0);
    assert_int_equal (treeobj_validate (c), -1);
    json_decref (c);
    json_decref (h1);
    json_decref (h);
    assert_null (treeobj_create_hdir (-1));
    assert_null (treeobj_create_hdir (16));
}

/* A dir turned into an hdir: every entry (shared, not copied) in the
 * bucket bucket_of names, the count set, empty buckets null.
 */
static void test_hdir_from_dir (void **state)
{
    json_t *d = treeobj_create_dir ();
    char name[16];
    for (int i = 0; i < 40; i++) {
        snprintf (name, sizeof (name), "k%d", i);
        assert_int_equal (treeobj_dir_set (d, name, treeobj_create_val ("x", 1)), 0);
    }
    for (int level = 0; level < 2; level++) {
        json_t *h = treeobj_hdir_from_dir (d, level);
        int found = 0;
        assert_non_null (h);
        assert_int_equal (treeobj_hdir_level (h), level);
        assert_int_equal (treeobj_hdir_count (h), 40);
        for (int i = 0; i < 40; i++) {
            snprintf (name, sizeof (name), "k%d", i);
            json_t *bucket = treeobj_hdir_slot (h, treeobj_hdir_bucket_of (h, name));
            assert_true (treeobj_is_dir (bucket));
            assert_ptr_equal (treeobj_dir_get (bucket, name), treeobj_dir_get (d, name));
        }
        for (int slot = 0; slot < TREEOBJ_HDIR_FANOUT; slot++) {
            json_t *bucket = treeobj_hdir_slot (h, slot);
            if (json_is_null (bucket))
                continue;
            assert_true (treeobj_dir_count (bucket) > 0);
            found += treeobj_dir_count (bucket);
        }
        assert_int_equal (found, 40);
        json_decref (h);
    }
    json_t *e = treeobj_create_dir ();
    json_t *empty = treeobj_hdir_from_dir (e, 0);
    assert_non_null (empty);
    assert_int_equal (treeobj_hdir_count (empty), 0);
    assert_int_equal (treeobj_validate (empty), 0);
    json_decref (empty);
    json_decref (e);
    errno = 0;
    assert_null (treeobj_hdir_from_dir (d, 16));
    assert_int_equal (errno, EINVAL);
    json_t *v = treeobj_create_val ("x", 1);
    errno = 0;
    assert_null (treeobj_hdir_from_dir (v, 0));
    assert_int_equal (errno, EINVAL);
    assert_null (treeobj_hdir_from_dir (NULL, 0));
    json_decref (v);
    json_decref (d);
}

static void test_encode_matches_json (void **state)
{
    /* the hand-written encoder is canonical JSON: it parses back to the
     * same object, and equals jansson's sorted compact output
     */
    json_t *d = treeobj_create_dir ();
    treeobj_dir_set (d, "zeta", treeobj_create_val ("z", 1));
    treeobj_dir_set (d, "alpha\"quote\\back", treeobj_create_symlink ("a.b"));
    treeobj_dir_set (d, "ctl\001x", treeobj_create_dirref (ref1));
    treeobj_dir_set (d, "caf\xc3\xa9", treeobj_create_val ("", 0));
    json_t *h = treeobj_create_hdir (2);
    treeobj_hdir_set_slot (h, 3, json_string (ref1));
    treeobj_dir_set (d, "h", h);
    size_t len;
    char *enc = treeobj_encode (d, &len);
    char *ref = json_dumps (d, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal (enc, ref);
    json_t *back = json_loadb (enc, len, 0, NULL);
    assert_true (json_equal (back, d));
    json_decref (back);
    free (enc);
    free (ref);
    json_decref (d);
}

/* treeobj_encode_max: the same text as treeobj_encode up to max bytes
 * exactly, E2BIG past it (escapes counted as written), and no limit at 0
 */
static void test_encode_max (void **state)
{
    json_t *d = treeobj_create_dir ();
    char name[32];

    errno = 0;
    assert_null (treeobj_encode_max (NULL, 100, NULL));
    assert_int_equal (errno, EINVAL);
    for (int i = 0; i < 44; i++) {
        json_t *e;
        snprintf (name, sizeof (name), "producer-%d", i);
        switch (i % 4) {
            case 0: e = treeobj_create_val ("abcdefg", i % 8); break;
            case 1: e = treeobj_create_dirref (ref1); break;
            case 2: e = treeobj_create_symlink ("a.b.c"); break;
            default:
                e = treeobj_create_valref ();
                for (int k = 0; k < i % 3 + 1; k++)
                    treeobj_append_blobref (e, ref1);
                break;
        }
        assert_int_equal (treeobj_dir_set (d, name, e), 0);
        if (i == 40) {
            /* escapes, bytes over 0x7f, integers of several digits */
            json_t *h = treeobj_create_hdir (12);
            treeobj_hdir_set_count (h, 12345);
            treeobj_dir_set (d, "h", h);
            treeobj_dir_set (d, "quote\"back\\", treeobj_create_val ("", 0));
            treeobj_dir_set (d, "ctl\001", treeobj_create_val ("", 0));
            treeobj_dir_set (d, "caf\xc3\xa9", treeobj_create_val ("", 0));
        }
        size_t len, mlen = 0;
        char *enc = treeobj_encode (d, &len);
        assert_non_null (enc);
        char *m = treeobj_encode_max (d, len, &mlen);
        assert_non_null (m);
        assert_int_equal (mlen, len);
        assert_memory_equal (m, enc, len + 1);
        free (m);
        m = treeobj_encode_max (d, 0, &mlen);
        assert_non_null (m);
        assert_int_equal (mlen, len);
        free (m);
        errno = 0;
        assert_null (treeobj_encode_max (d, len - 1, &mlen));
        assert_int_equal (errno, E2BIG);
        errno = 0;
        assert_null (treeobj_encode_max (d, len / 2, NULL));
        assert_int_equal (errno, E2BIG);
        free (enc);
    }
    json_decref (d);
}

static void test_invalid (void **state)
{
    const char *bad[] = {
        "{}",
        "[]",
        "{\"ver\":2,\"type\":\"val\",\"data\":\"\"}",
        "{\"ver\":1,\"type\":\"nope\",\"data\":\"\"}",
        "{\"ver\":1,\"type\":\"val\",\"data\":5}",
        "{\"ver\":1,\"type\":\"val\",\"data\":\"!!!\"}",
        "{\"ver\":1,\"type\":\"valref\",\"data\":[\"x\"]}",
        "{\"ver\":1,\"type\":\"dirref\",\"data\":[]}",
        "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a.b\":{}}}",
        "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a\":{\"ver\":1}}}",
        "{\"ver\":1,\"type\":\"symlink\",\"data\":{\"target\":\"\"}}",
        "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"count\":0,\"level\":0,\"refs\":[null]}}",
        "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"count\":0,\"level\":16,\"refs\":"
            "[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]}}",
        "{\"ver\":1,\"type\":\"val\",\"data\":\"\",\"extra\":1}",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        json_t *o = json_loads (bad[i], 0, NULL);
        assert_non_null (o);
        errno = 0;
        assert_int_equal (treeobj_validate (o), -1);
        assert_int_equal (errno, EINVAL);
        json_decref (o);
        assert_null (treeobj_decode (bad[i], strlen (bad[i])));
        assert_int_equal (errno, EPROTO);
    }
    assert_null (treeobj_decode ("{not json", 9));
}

/* Regression (fuzz/treeobj): validation looks one level into a dir, so a
 * deeper object shaped almost like a tree object ("ver":0, or an extra
 * member) was encoded as if it were one, silently rewriting it: decode and
 * re-encode no longer agreed.  Encoding must be faithful or fail.
 */
static void test_encode_refuses_misshapen_nested (void **state)
{
    const char *inputs[] = {
        "{\"data\":{\"d\":{\"data\":{\"x\":{\"data\":\"\",\"type\":\"val\","
            "\"ver\":0}},\"type\":\"dir\",\"ver\":1}},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"d\":{\"data\":{\"x\":{\"data\":\"\",\"type\":\"val\","
            "\"ver\":1,\"extra\":2}},\"type\":\"dir\",\"ver\":1}},\"type\":\"dir\",\"ver\":1}",
    };
    for (size_t i = 0; i < sizeof (inputs) / sizeof (inputs[0]); i++) {
        json_t *o = treeobj_decode (inputs[i], strlen (inputs[i]));
        size_t len;
        assert_non_null (o);            /* the top two levels are valid */
        errno = 0;
        assert_null (treeobj_encode (o, &len));
        assert_int_equal (errno, EINVAL);
        json_decref (o);
    }
    /* the well-formed version of the same nesting still encodes */
    const char *ok = "{\"data\":{\"d\":{\"data\":{\"x\":{\"data\":\"\",\"type\":"
                     "\"val\",\"ver\":1}},\"type\":\"dir\",\"ver\":1}},\"type\":\"dir\","
                     "\"ver\":1}";
    json_t *o = treeobj_decode (ok, strlen (ok));
    size_t len;
    char *s = treeobj_encode (o, &len);
    assert_non_null (s);
    assert_int_equal (len, strlen (ok));
    assert_memory_equal (s, ok, len);
    free (s);
    json_decref (o);
}

/* treeobj_kind: each kind from its constructor, and look-alikes that are
 * not tree objects (prefixes and extensions of the type names).
 */
static void test_kind (void **state)
{
    struct { json_t *o; treeobj_kind_t k; } c[] = {
        { treeobj_create_val ("x", 1), TREEOBJ_VAL },
        { treeobj_create_valref (), TREEOBJ_VALREF },
        { treeobj_create_dir (), TREEOBJ_DIR },
        { treeobj_create_dirref (ref1), TREEOBJ_DIRREF },
        { treeobj_create_symlink ("a.b"), TREEOBJ_SYMLINK },
        { treeobj_create_hdir (0), TREEOBJ_HDIR },
    };
    const char *unknown[] = { "", "v", "va", "valr", "valrefs", "di", "dirre",
                              "dirrefs", "dirx", "h", "hdi", "hdirs", "symlin",
                              "symlinks", "sym", "link", "VAL", "Dir" };
    for (size_t i = 0; i < sizeof (c) / sizeof (c[0]); i++) {
        assert_non_null (c[i].o);
        assert_int_equal (treeobj_kind (c[i].o), c[i].k);
        assert_int_equal (treeobj_is_dirlike (c[i].o),
                          c[i].k == TREEOBJ_DIR || c[i].k == TREEOBJ_HDIR);
        assert_int_equal (treeobj_is_directory (c[i].o),
                          c[i].k == TREEOBJ_DIR || c[i].k == TREEOBJ_HDIR
                          || c[i].k == TREEOBJ_DIRREF);
        /* the members as json_pack gave them: ver, type, data */
        const char *names[3], *name;
        json_t *v;
        int n = 0;
        json_object_foreach (c[i].o, name, v) {
            if (n < 3)
                names[n] = name;
            n++;
        }
        assert_int_equal (n, 3);
        assert_string_equal (names[0], "ver");
        assert_string_equal (names[1], "type");
        assert_string_equal (names[2], "data");
        assert_int_equal (treeobj_validate (c[i].o), 0);
        json_decref (c[i].o);
    }
    for (size_t i = 0; i < sizeof (unknown) / sizeof (unknown[0]); i++) {
        json_t *o = json_pack ("{s:i s:s s:{}}", "ver", 1, "type", unknown[i], "data");
        assert_non_null (o);
        assert_int_equal (treeobj_kind (o), TREEOBJ_NONE);
        assert_false (treeobj_is_val (o) || treeobj_is_valref (o) || treeobj_is_dir (o)
                      || treeobj_is_dirref (o) || treeobj_is_symlink (o)
                      || treeobj_is_hdir (o) || treeobj_is_dirlike (o)
                      || treeobj_is_directory (o));
        json_decref (o);
    }
    json_t *notype = json_pack ("{s:i}", "ver", 1);
    json_t *numtype = json_pack ("{s:i}", "type", 3);
    json_t *arr = json_array ();
    assert_int_equal (treeobj_kind (NULL), TREEOBJ_NONE);
    assert_int_equal (treeobj_kind (notype), TREEOBJ_NONE);
    assert_int_equal (treeobj_kind (numtype), TREEOBJ_NONE);
    assert_int_equal (treeobj_kind (arr), TREEOBJ_NONE);
    json_decref (notype);
    json_decref (numtype);
    json_decref (arr);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_val),
        cmocka_unit_test (test_kind),
        cmocka_unit_test (test_dir),
        cmocka_unit_test (test_refs_symlink),
        cmocka_unit_test (test_hdir),
        cmocka_unit_test (test_hdir_from_dir),
        cmocka_unit_test (test_encode_matches_json),
        cmocka_unit_test (test_encode_max),
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_encode_refuses_misshapen_nested),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
