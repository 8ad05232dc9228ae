/* test/kvs_wire.c - transactions: building, encoding, decoding, and
 * refusing malformed or lying input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/kvs.h>
#include "src/common/libkvs/kvs_txn.h"
#include "src/common/libkvs/kvs_wire.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_path.h"
#include "src/common/libutil/blobref.h"
#include <stdio.h>

static void test_txn_roundtrip (void **state)
{
    kvs_txn_t *txn = kvs_txn_create ();
    size_t biglen = 3 * KVS_CHUNK_SIZE + 17;
    char *big = malloc (biglen);
    memset (big, 'q', biglen);      /* identical chunks de-duplicate */
    assert_int_equal (kvs_txn_put_raw (txn, "a.b", "small", 5), 0);
    assert_int_equal (kvs_txn_put_raw (txn, "big", big, biglen), 0);
    assert_int_equal (kvs_txn_put_raw (txn, "big2", big, biglen), 0);
    assert_int_equal (kvs_txn_unlink (txn, "old"), 0);
    assert_int_equal (kvs_txn_mkdir (txn, "d"), 0);
    assert_int_equal (kvs_txn_symlink (txn, "l", "a.b"), 0);
    assert_int_equal (kvs_txn_put_raw (txn, "bad\001key", "x", 1), -1);
    assert_int_equal (kvs_txn_put_raw (txn, ".", "x", 1), -1);
    assert_int_equal (kvs_txn_count (txn), 6);
    /* 3 full identical chunks + 1 tail chunk = 2 distinct blobs */
    assert_int_equal (blobtab_count (kvs_txn_blobs (txn)), 2);

    void *buf;
    size_t len;
    assert_int_equal (kvs_txn_encode (txn, "f1", 4, 0, &buf, &len), 0);
    json_t *fences;
    blobtab_t *blobs;
    canopy_error_t error;
    assert_int_equal (kvs_wire_decode (buf, len, true, &fences, &blobs, &error), 0);
    assert_int_equal (json_array_size (fences), 1);
    json_t *f = json_array_get (fences, 0);
    json_t *ops = json_object_get (f, "ops");
    assert_int_equal (json_array_size (ops), 6);
    size_t i;
    json_t *op;
    json_array_foreach (ops, i, op)
        assert_int_equal (kvs_wire_check_op (op, blobs, &error), 0);
    assert_int_equal (blobtab_count (blobs), 2);
    json_decref (fences);
    blobtab_destroy (blobs);

    /* every truncation is refused */
    for (size_t n = 0; n < len; n += (n < 200 ? 1 : 997)) {
        errno = 0;
        assert_int_equal (kvs_wire_decode (buf, n, true, &fences, &blobs, &error), -1);
        assert_int_equal (errno, EPROTO);
    }
    /* a blob whose data does not match its ref is refused when verifying */
    ((char *)buf)[len - 1] ^= 1;
    assert_int_equal (kvs_wire_decode (buf, len, true, &fences, &blobs, &error), -1);
    assert_non_null (strstr (error.text, "does not match"));
    free (buf);
    free (big);
    kvs_txn_destroy (txn);
}

/* A failing put leaves the transaction as it was: no chunks of the
 * refused value stay behind (regression: they used to).
 */
static void test_txn_failed_put (void **state)
{
    kvs_txn_t *txn = kvs_txn_create ();
    size_t biglen = 2 * KVS_CHUNK_SIZE + 5;
    char *big = malloc (biglen);
    uint32_t x = 1;
    for (size_t i = 0; i < biglen; i++) {     /* no two chunks alike */
        x = x * 1103515245 + 12345;
        big[i] = (char)(x >> 16);
    }
    assert_int_equal (kvs_txn_put_raw (txn, "ok", "x", 1), 0);
    assert_int_equal (kvs_txn_put_raw (txn, "kept", big, KVS_CHUNK_SIZE + 1), 0);
    int nblobs = blobtab_count (kvs_txn_blobs (txn));
    size_t nbytes = blobtab_bytes (kvs_txn_blobs (txn));
    size_t tbytes = kvs_txn_bytes (txn);
    assert_int_equal (nblobs, 2);
    /* a bad key, and the root (not a value), each with a large value */
    errno = 0;
    assert_int_equal (kvs_txn_put_raw (txn, "bad\001key", big, biglen), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (kvs_txn_put_raw (txn, ".", big, biglen), -1);
    assert_int_equal (errno, EINVAL);
    /* and a small one */
    assert_int_equal (kvs_txn_put_raw (txn, "bad\002key", "y", 1), -1);
    assert_int_equal (kvs_txn_count (txn), 2);
    assert_int_equal (blobtab_count (kvs_txn_blobs (txn)), nblobs);
    assert_int_equal (blobtab_bytes (kvs_txn_blobs (txn)), nbytes);
    assert_int_equal (kvs_txn_bytes (txn), tbytes);
    /* the chunk shared with the kept value stays (it was there before) */
    assert_int_equal (kvs_txn_put_raw (txn, "big", big, biglen), 0);
    assert_int_equal (blobtab_count (kvs_txn_blobs (txn)), nblobs + 2);
    free (big);
    kvs_txn_destroy (txn);
}

/* Chunks are hashed when the transaction is first read: every valref
 * then carries the chunk's real ref (checked against blobref_hash), no
 * placeholder is left, identical chunks of different puts collapse, and
 * the byte count, an upper bound before, becomes exact.
 */
static void test_txn_late_hash (void **state)
{
    kvs_txn_t *txn = kvs_txn_create ();
    char v[40][100];
    char ref[BLOBREF_MAX];
    char key[32];

    for (int i = 0; i < 40; i++) {
        memset (v[i], 'a' + i % 20, sizeof (v[i]));    /* 20 distinct */
        snprintf (key, sizeof (key), "k%d", i);
        assert_int_equal (kvs_txn_put_raw (txn, key, v[i], sizeof (v[i])), 0);
    }
    size_t before = kvs_txn_bytes (txn);
    json_t *ops = kvs_txn_ops (txn);
    assert_non_null (ops);
    assert_int_equal (json_array_size (ops), 40);
    for (int i = 0; i < 40; i++) {
        json_t *obj = json_array_get (json_array_get (ops, i), 1);
        assert_int_equal (treeobj_blobref_count (obj), 1);
        assert_int_equal (blobref_hash (v[i], sizeof (v[i]), ref, sizeof (ref)), 0);
        assert_string_equal (treeobj_blobref_at (obj, 0), ref);
    }
    const blobtab_t *blobs = kvs_txn_blobs (txn);
    assert_int_equal (blobtab_count (blobs), 20);
    assert_int_equal (blobtab_bytes (blobs), 20 * sizeof (v[0]));
    assert_int_equal (kvs_txn_bytes (txn), before - 20 * sizeof (v[0]));
    /* a put after reading is hashed at the next read */
    assert_int_equal (kvs_txn_put_raw (txn, "late", v[0], sizeof (v[0]) - 1), 0);
    void *buf;
    size_t len;
    json_t *fences;
    blobtab_t *got;
    canopy_error_t error;
    assert_int_equal (kvs_txn_encode (txn, "f", 1, 0, &buf, &len), 0);
    assert_int_equal (kvs_wire_decode (buf, len, true, &fences, &got, &error), 0);
    assert_int_equal (blobtab_count (got), 21);
    assert_null (memmem (buf, len, "sha256-0000000000000000000000000000", 35));
    json_decref (fences);
    blobtab_destroy (got);
    free (buf);
    kvs_txn_destroy (txn);
}

/* The operations are kept as text: the encoding decodes to what the
 * same operations built as tree objects and encoded with jansson give
 * (every kind of operation, keys that need escapes or are UTF-8, values inline, empty
 * and chunked), and kvs_txn_ops parses back to them.
 */
/* kvs_txn_encode_msg writes into a request the bytes kvs_txn_encode
 * returns; a failure leaves the message as it was.
 */
static void test_txn_encode_msg (void **state)
{
    kvs_txn_t *txn = kvs_txn_create ();
    char big[3000];
    void *buf;
    size_t len, plen;
    const void *payload;
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    (void)state;

    memset (big, 'm', sizeof (big));
    assert_int_equal (kvs_txn_put_raw (txn, "a", "small", 5), 0);
    assert_int_equal (kvs_txn_put_raw (txn, "b", big, sizeof (big)), 0);
    assert_int_equal (kvs_txn_unlink (txn, "c"), 0);
    assert_non_null (msg);
    assert_int_equal (kvs_txn_encode_msg (txn, "f", 3, 0, msg), 0);
    assert_int_equal (kvs_txn_encode (txn, "f", 3, 0, &buf, &len), 0);
    assert_int_equal (canopy_msg_get_payload (msg, &payload, &plen), 0);
    assert_int_equal (plen, len);
    assert_memory_equal (payload, buf, len);
    free (buf);
    assert_int_equal (kvs_txn_encode_msg (txn, "f", 0, 0, msg), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (kvs_txn_encode_msg (txn, "f", 3, 0, NULL), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (canopy_msg_get_payload (msg, &payload, &plen), 0);
    assert_int_equal (plen, len);
    canopy_msg_decref (msg);
    kvs_txn_destroy (txn);
}

static void test_txn_text_same_as_json (void **state)
{
    kvs_txn_t *txn = kvs_txn_create ();
    json_t *want = json_array ();
    static char big[70000];
    const char *keys[] = { "a.b", "q\"uote", "back\\slash", "sl/ash", "caf\xc3\xa9.x", "sp ace" };
    char ref[BLOBREF_MAX];
    (void)state;

    memset (big, 'z', sizeof (big));
    big[100] = 'y';
    for (int i = 0; i < 6; i++) {
        char *norm = kvs_path_normalize (keys[i]);
        assert_non_null (norm);
        /* inline, empty, chunked (two chunks), unlink, mkdir, symlink */
        assert_int_equal (kvs_txn_put_raw (txn, keys[i], "v\x01\xff", 3), 0);
        json_array_append_new (want, json_pack ("[s,o]", norm, treeobj_create_val ("v\x01\xff", 3)));
        assert_int_equal (kvs_txn_put_raw (txn, keys[i], "", 0), 0);
        json_array_append_new (want, json_pack ("[s,o]", norm, treeobj_create_val ("", 0)));
        assert_int_equal (kvs_txn_put_raw (txn, keys[i], big, sizeof (big)), 0);
        json_t *vr = treeobj_create_valref ();
        assert_int_equal (blobref_hash (big, 65536, ref, sizeof (ref)), 0);
        treeobj_append_blobref (vr, ref);
        assert_int_equal (blobref_hash (big + 65536, sizeof (big) - 65536, ref, sizeof (ref)), 0);
        treeobj_append_blobref (vr, ref);
        json_array_append_new (want, json_pack ("[s,o]", norm, vr));
        assert_int_equal (kvs_txn_unlink (txn, keys[i]), 0);
        json_array_append_new (want, json_pack ("[s,n]", norm));
        assert_int_equal (kvs_txn_mkdir (txn, keys[i]), 0);
        json_array_append_new (want, json_pack ("[s,o]", norm, treeobj_create_dir ()));
        assert_int_equal (kvs_txn_symlink (txn, keys[i], "t\"x"), 0);
        json_array_append_new (want, json_pack ("[s,o]", norm, treeobj_create_symlink ("t\"x")));
        free (norm);
    }
    /* refused without a trace: the root takes no value, a bad key */
    assert_int_equal (kvs_txn_put_raw (txn, ".", "x", 1), -1);
    assert_int_equal (kvs_txn_put_raw (txn, "a\x01b", "x", 1), -1);
    assert_int_equal (kvs_txn_count (txn), 36);
    assert_true (json_equal (kvs_txn_ops (txn), want));

    void *buf;
    size_t len;
    assert_int_equal (kvs_txn_encode (txn, "n\"ame", 3, 1, &buf, &len), 0);
    json_t *fences = json_pack ("[{s:s s:i s:i s:i s:O}]", "name", "n\"ame", "nprocs", 3,
                                "flags", 1, "count", 1, "ops", want);
    void *buf2;
    size_t len2;
    assert_int_equal (kvs_wire_encode (fences, kvs_txn_blobs (txn), &buf2, &len2), 0);
    json_t *f1, *f2;
    blobtab_t *b1, *b2;
    canopy_error_t error;
    assert_int_equal (kvs_wire_decode (buf, len, true, &f1, &b1, &error), 0);
    assert_int_equal (kvs_wire_decode (buf2, len2, true, &f2, &b2, &error), 0);
    assert_true (json_equal (f1, f2));
    assert_true (json_equal (f1, fences));
    assert_int_equal (blobtab_count (b1), 2);
    assert_int_equal (blobtab_count (b2), 2);
    assert_int_equal (blobtab_bytes (b1), sizeof (big));
    json_decref (f1);
    json_decref (f2);
    blobtab_destroy (b1);
    blobtab_destroy (b2);
    free (buf);
    free (buf2);
    json_decref (fences);
    json_decref (want);
    kvs_txn_destroy (txn);
}

static void test_check_op (void **state)
{
    canopy_error_t error;
    blobtab_t *blobs = blobtab_create ();
    const char *bad[] = {
        "[\"a\"]",
        "[1, null]",
        "[\"a\\u0001b\", null]",
        "[\"a\", {\"ver\":1,\"type\":\"dirref\",\"data\":"
            "[\"sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"]}]",
        "[\"a\", {\"ver\":1,\"type\":\"valref\",\"data\":"
            "[\"sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"]}]",
        "[\"a\", {\"ver\":1,\"type\":\"dir\",\"data\":{\"x\":"
            "{\"ver\":1,\"type\":\"val\",\"data\":\"\"}}}]",
        "[\".\", {\"ver\":1,\"type\":\"val\",\"data\":\"\"}]",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        json_t *op = json_loads (bad[i], 0, NULL);
        assert_non_null (op);
        assert_int_equal (kvs_wire_check_op (op, blobs, &error), -1);
        json_decref (op);
    }
    blobtab_destroy (blobs);
}

static void test_garbage (void **state)
{
    unsigned int seed = 7;
    unsigned char buf[512];
    json_t *fences;
    blobtab_t *blobs;
    canopy_error_t error;
    for (int iter = 0; iter < 5000; iter++) {
        size_t len = rand_r (&seed) % sizeof (buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = rand_r (&seed);
        if (len >= 4) {
            buf[0] = buf[1] = 0;
            buf[2] = 0;
            buf[3] = (len - 4) & 0xff;
        }
        if (kvs_wire_decode (buf, len, true, &fences, &blobs, &error) == 0) {
            json_decref (fences);
            blobtab_destroy (blobs);
        }
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_txn_roundtrip),
        cmocka_unit_test (test_txn_failed_put),
        cmocka_unit_test (test_txn_late_hash),
        cmocka_unit_test (test_txn_text_same_as_json),
        cmocka_unit_test (test_txn_encode_msg),
        cmocka_unit_test (test_check_op),
        cmocka_unit_test (test_garbage),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
