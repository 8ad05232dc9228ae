/* test/kvs_wire_scan.c - the scan of a client's transaction: it accepts
 * what the client library writes, with the meaning the general decoder
 * gives it, and declines everything else.
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
#include <canopy/kvs.h>
#include "src/common/libkvs/kvs_txn.h"
#include "src/common/libkvs/kvs_wire.h"
#include "src/common/libkvs/kvs_wire_scan.h"
#include "src/common/libutil/blobref.h"

/* A frame of header text 'hdr' and 'blen' blob bytes. */
static void *frame (const char *hdr, const void *blobs, size_t blen, size_t *len)
{
    size_t hlen = strlen (hdr);
    uint8_t *buf = malloc (4 + hlen + blen + 1);
    assert_non_null (buf);
    buf[0] = hlen >> 24;
    buf[1] = hlen >> 16;
    buf[2] = hlen >> 8;
    buf[3] = hlen;
    memcpy (buf + 4, hdr, hlen);
    if (blen)
        memcpy (buf + 4 + hlen, blobs, blen);
    *len = 4 + hlen + blen;
    return buf;
}

/* The scan accepted buf: the general decoder agrees, field by field. */
static void check_same_as_decode (const void *buf, size_t len,
                                  const struct kvs_wire_txn *txn,
                                  const blobtab_t *blobs)
{
    json_t *fences, *f, *ops, *op;
    blobtab_t *dblobs;
    canopy_error_t error;
    size_t i;

    assert_int_equal (kvs_wire_decode (buf, len, true, &fences, &dblobs, &error), 0);
    assert_int_equal (json_array_size (fences), 1);
    f = json_array_get (fences, 0);
    assert_string_equal (json_string_value (json_object_get (f, "name")), txn->name);
    assert_int_equal (json_integer_value (json_object_get (f, "nprocs")), txn->nprocs);
    assert_int_equal (json_integer_value (json_object_get (f, "flags")), txn->flags);
    assert_int_equal (json_integer_value (json_object_get (f, "count")), 1);
    assert_null (json_object_get (f, "errnum"));
    ops = json_object_get (f, "ops");
    assert_int_equal (json_array_size (ops), txn->nops);
    json_array_foreach (ops, i, op)
        assert_int_equal (kvs_wire_check_op (op, dblobs, &error), 0);
    /* the text the relay carries means the same operations */
    char *text = malloc (txn->opslen + 3);
    assert_non_null (text);
    text[0] = '[';
    memcpy (text + 1, txn->ops, txn->opslen);
    strcpy (text + 1 + txn->opslen, "]");
    json_t *parsed = json_loads (text, 0, NULL);
    assert_non_null (parsed);
    assert_true (json_equal (parsed, ops));
    json_decref (parsed);
    free (text);
    assert_int_equal (blobtab_count (blobs), blobtab_count (dblobs));
    assert_int_equal (blobtab_bytes (blobs), blobtab_bytes (dblobs));
    for (int k = 0; k < blobtab_count (blobs); k++) {
        const char *ref;
        const void *a, *b;
        size_t alen, blen;
        assert_int_equal (blobtab_at (blobs, k, &ref, &a, &alen), 0);
        assert_int_equal (blobtab_get (dblobs, ref, &b, &blen), 0);
        assert_int_equal (alen, blen);
        assert_memory_equal (a, b, alen);
        /* borrowed from the request, not copied */
        assert_true ((const uint8_t *)a >= (const uint8_t *)buf
                     && (const uint8_t *)a + alen <= (const uint8_t *)buf + len);
    }
    json_decref (fences);
    blobtab_destroy (dblobs);
}

static void test_client_transactions (void **state)
{
    char small[8] = "12345678", big[1024], key[64];
    memset (big, 'k', sizeof (big));

    /* 8 B values; 1 KiB values (valrefs); a mix with unlinks; empty */
    for (int shape = 0; shape < 4; shape++) {
        kvs_txn_t *txn = kvs_txn_create ();
        assert_non_null (txn);
        for (int i = 0; shape < 3 && i < 16; i++) {
            snprintf (key, sizeof (key), "kap.0.%d.0.%d", i, 7);
            big[0] = i;
            if (shape == 0)
                assert_int_equal (kvs_txn_put_raw (txn, key, small, sizeof (small)), 0);
            else if (shape == 1)
                assert_int_equal (kvs_txn_put_raw (txn, key, big, sizeof (big)), 0);
            else if (i % 2)
                assert_int_equal (kvs_txn_unlink (txn, key), 0);
            else
                assert_int_equal (kvs_txn_put_raw (txn, key, big, i * 10), 0);
        }
        void *buf;
        size_t len;
        struct kvs_wire_txn t;
        blobtab_t *blobs;
        assert_int_equal (kvs_txn_encode (txn, "kap.0.sync", 32, KVS_SYNC, &buf, &len), 0);
        assert_int_equal (kvs_wire_scan (buf, len, true, &t, &blobs), 1);
        assert_string_equal (t.name, "kap.0.sync");
        assert_int_equal (t.nprocs, 32);
        assert_int_equal (t.flags, KVS_SYNC);
        assert_int_equal (t.nops, shape < 3 ? 16 : 0);
        assert_int_equal (blobtab_count (blobs), shape == 1 ? 16 : shape == 2 ? 4 : 0);
        check_same_as_decode (buf, len, &t, blobs);
        blobtab_destroy (blobs);

        /* every truncation and every extension is declined */
        for (size_t n = 0; n < len; n++) {
            uint8_t *cut = malloc (n + 1);
            memcpy (cut, buf, n);
            assert_int_equal (kvs_wire_scan (cut, n, true, &t, &blobs), 0);
            free (cut);
        }
        uint8_t *more = malloc (len + 1);
        memcpy (more, buf, len);
        more[len] = 'x';
        assert_int_equal (kvs_wire_scan (more, len + 1, true, &t, &blobs), 0);
        free (more);
        free (buf);
        kvs_txn_destroy (txn);
    }
}

/* Headers the client library does not write, or that are wrong: the
 * scan declines them all; 'general' says whether the general path takes
 * them (then it is the one to read them).
 */
static void test_declines (void **state)
{
    static const struct {
        const char *hdr;
        bool general;
    } cases[] = {
        /* the reference: accepted */
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"a.b\",{\"data\":\"eHk=\",\"type\":\"val\",\"ver\":1}]]}],\"blobs\":[]}", true },
        /* valid, but not in the client's form */
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"a\\u0062\",null]]}],\"blobs\":[]}", true },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"a\",{\"type\":\"val\",\"data\":\"eHk=\",\"ver\":1}]]}],\"blobs\":[]}", true },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"d\",{\"data\":{},\"type\":\"dir\",\"ver\":1}]]}],\"blobs\":[]}", true },
        { "{\"fences\": [{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[]}],\"blobs\":[]}", true },
        { "{\"blobs\":[],\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,"
          "\"ops\":[]}]}", true },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"..a..b.\",null]]}],\"blobs\":[]}", false },     /* scanned: see below */
        /* wrong */
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\".\",null]]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"a\x7f\",null]]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"a\",{\"data\":\"eHk\",\"type\":\"val\",\"ver\":1}]]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":2,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":0,\"ops\":"
          "[]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2.0,\"ops\":"
          "[]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":4294967298,"
          "\"ops\":[]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"\",\"nprocs\":2,\"ops\":"
          "[]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"count\":1,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[]}],\"blobs\":[]}", false },
        { "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\",\"nprocs\":2,\"ops\":"
          "[[\"a\",{\"ver\":1,\"type\":\"valref\",\"data\":[\"sha256-"
          "0000000000000000000000000000000000000000000000000000000000000000\"]}]]}],"
          "\"blobs\":[]}", false },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        size_t len;
        void *buf = frame (cases[i].hdr, NULL, 0, &len);
        struct kvs_wire_txn t;
        blobtab_t *blobs;
        json_t *fences;
        canopy_error_t error;
        int rc = kvs_wire_scan (buf, len, true, &t, &blobs);
        if (i == 0 || i == 6) {
            /* the reference, and a key the KVS normalises as it applies */
            assert_int_equal (rc, 1);
            check_same_as_decode (buf, len, &t, blobs);
            blobtab_destroy (blobs);
        }
        else {
            assert_int_equal (rc, 0);
            if (cases[i].general) {
                assert_int_equal (kvs_wire_decode (buf, len, true, &fences, &blobs,
                                                   &error), 0);
                json_decref (fences);
                blobtab_destroy (blobs);
            }
        }
        free (buf);
    }
}

/* The blob table: hashes verified (or not), lengths must add up. */
static void test_blob_table (void **state)
{
    char ref[BLOBREF_MAX], hdr[512];
    const char data[] = "0123456789";
    size_t len;
    void *buf;
    struct kvs_wire_txn t;
    blobtab_t *blobs;

    assert_int_equal (blobref_hash (data, 10, ref, sizeof (ref)), 0);
    snprintf (hdr, sizeof (hdr), "{\"fences\":[{\"count\":1,\"flags\":0,\"name\":\"f\","
              "\"nprocs\":1,\"ops\":[[\"k\",{\"data\":[\"%s\"],\"type\":\"valref\","
              "\"ver\":1}]]}],\"blobs\":[[\"%s\",10]]}", ref, ref);
    buf = frame (hdr, data, 10, &len);
    assert_int_equal (kvs_wire_scan (buf, len, true, &t, &blobs), 1);
    assert_int_equal (blobtab_count (blobs), 1);
    check_same_as_decode (buf, len, &t, blobs);
    blobtab_destroy (blobs);
    /* a byte changed: declined when verifying, taken when not */
    ((char *)buf)[len - 1] = 'X';
    assert_int_equal (kvs_wire_scan (buf, len, true, &t, &blobs), 0);
    assert_int_equal (kvs_wire_scan (buf, len, false, &t, &blobs), 1);
    blobtab_destroy (blobs);
    free (buf);
    /* a length that overruns, or leaves bytes over */
    buf = frame (hdr, data, 9, &len);
    assert_int_equal (kvs_wire_scan (buf, len, false, &t, &blobs), 0);
    free (buf);
    buf = frame (hdr, "0123456789ab", 12, &len);
    assert_int_equal (kvs_wire_scan (buf, len, false, &t, &blobs), 0);
    free (buf);

    assert_int_equal (kvs_wire_scan (NULL, 0, true, &t, &blobs), 0);
    assert_int_equal (kvs_wire_scan (hdr, 3, true, &t, &blobs), 0);
    assert_int_equal (kvs_wire_scan (hdr, strlen (hdr), true, NULL, &blobs), -1);
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_client_transactions),
        cmocka_unit_test (test_declines),
        cmocka_unit_test (test_blob_table),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
