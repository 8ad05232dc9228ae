/* test/kvs_frame.c - the frame shared by transactions and relays: layout,
 * round trip with a body and blobs, size limit, and every malformed shape
 * the readers must refuse.
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
#include "src/common/libutil/blobref.h"
#include <canopy/rpc.h>
#include "src/common/libkvs/kvs_frame.h"

static void test_layout (void **state)
{
    json_t *fences = json_pack ("[{s:s}]", "name", "f");
    blobtab_t *b = blobtab_create ();
    char ref[80];
    void *buf;
    size_t len, off;
    assert_int_equal (blobtab_add (b, NULL, "BLOB", 4, ref, sizeof (ref)), 1);
    assert_int_equal (kvs_frame_encode (fences, b, "body", 4, 1 << 20, &buf, &len), 0);
    const uint8_t *p = buf;
    size_t hlen = ((size_t)p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
    assert_int_equal (len, 4 + hlen + 4 + 4);
    assert_memory_equal (p + 4 + hlen, "bodyBLOB", 8);
    assert_int_equal (p[len], '\0');

    json_t *hdr, *f, *t;
    assert_int_equal (kvs_frame_header (buf, len, "x", &hdr, &f, &t, &off, NULL), 0);
    assert_int_equal (off, 4 + hlen);
    assert_true (json_equal (f, fences));
    assert_int_equal (json_array_size (t), 1);
    blobtab_t *out = blobtab_create ();
    /* the body is the caller's: skip it */
    assert_int_equal (kvs_frame_blobs (buf, len, off + 4, t, true, "x", out, NULL), 0);
    assert_int_equal (blobtab_count (out), 1);
    assert_true (blobtab_has (out, ref));
    json_decref (hdr);
    blobtab_destroy (out);
    free (buf);
    json_decref (fences);
    blobtab_destroy (b);
}

static int count_blob (const char *ref, const void *data, size_t len, void *arg)
{
    (*(int *)arg)++;
    return 0;
}

static int refuse_blob (const char *ref, const void *data, size_t len, void *arg)
{
    errno = EIO;
    return -1;
}

/* foreach checks the whole table before delivering anything: a bad last
 * entry means no blob at all reaches the callback; a callback's failure
 * stops the walk with its errno.
 */
static void test_foreach (void **state)
{
    json_t *fences = json_array ();
    blobtab_t *b = blobtab_create ();
    char ref1[80], ref2[80];
    void *buf;
    size_t len, off;
    json_t *hdr, *f, *t;
    canopy_error_t error;
    int n = 0;

    assert_int_equal (blobtab_add (b, NULL, "ONE", 3, ref1, sizeof (ref1)), 1);
    assert_int_equal (blobtab_add (b, NULL, "TWO!", 4, ref2, sizeof (ref2)), 1);
    assert_int_equal (kvs_frame_encode (fences, b, NULL, 0, 1 << 20, &buf, &len), 0);
    assert_int_equal (kvs_frame_header (buf, len, "x", &hdr, &f, &t, &off, NULL), 0);
    assert_int_equal (kvs_frame_foreach_blob (buf, len, off, t, true, "x", count_blob,
                                              &n, NULL), 0);
    assert_int_equal (n, 2);

    /* the second blob's length claims one byte more than there is */
    json_array_set_new (json_array_get (t, 1), 1, json_integer (5));
    n = 0;
    errno = 0;
    assert_int_equal (kvs_frame_foreach_blob (buf, len, off, t, false, "x", count_blob,
                                              &n, &error), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (n, 0);
    json_array_set_new (json_array_get (t, 1), 1, json_integer (4));

    assert_int_equal (kvs_frame_foreach_blob (buf, len, off, t, false, "x", refuse_blob,
                                              NULL, &error), -1);
    assert_int_equal (errno, EIO);
    assert_non_null (strstr (error.text, ref1));
    json_decref (hdr);
    free (buf);
    json_decref (fences);
    blobtab_destroy (b);
}

/* Written into a message, the frame is byte for byte the malloc'd one;
 * the request is raw; errors leave the message as it was.
 */
static void test_encode_msg (void **state)
{
    json_t *fences = json_pack ("[{s:s}]", "name", "f");
    blobtab_t *b = blobtab_create ();
    char ref[80];
    void *buf;
    const void *pay;
    size_t len, plen;

    assert_int_equal (blobtab_add (b, NULL, "BLOB", 4, ref, sizeof (ref)), 1);
    assert_int_equal (kvs_frame_encode (fences, b, "body", 4, 1 << 20, &buf, &len), 0);
    canopy_msg_t *msg = canopy_rpc_raw_request ("kvs.relay");
    assert_non_null (msg);
    assert_true (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW));
    assert_int_equal (canopy_msg_set_payload (msg, "old", 3), 0);
    errno = 0;
    assert_int_equal (kvs_frame_encode_msg (fences, b, "body", 4, len - 1, msg), -1);
    assert_int_equal (errno, EFBIG);
    assert_int_equal (kvs_frame_encode_msg (NULL, b, "body", 4, len, msg), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (canopy_msg_get_payload (msg, &pay, &plen), 0);
    assert_int_equal (plen, 3);
    assert_int_equal (kvs_frame_encode_msg (fences, b, "body", 4, len, msg), 0);
    assert_int_equal (canopy_msg_get_payload (msg, &pay, &plen), 0);
    assert_int_equal (plen, len);
    assert_memory_equal (pay, buf, len);
    assert_int_equal (((const char *)pay)[plen], '\0');
    canopy_msg_decref (msg);
    free (buf);
    json_decref (fences);
    blobtab_destroy (b);
}

static void test_encode_errors (void **state)
{
    json_t *fences = json_array ();
    void *buf = NULL;
    size_t len;
    errno = 0;
    assert_int_equal (kvs_frame_encode (NULL, NULL, NULL, 0, 100, &buf, &len), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (kvs_frame_encode (fences, NULL, NULL, 3, 100, &buf, &len), -1);
    assert_int_equal (errno, EINVAL);
    /* exactly at the limit is fine, one byte less is EFBIG */
    assert_int_equal (kvs_frame_encode (fences, NULL, "abc", 3, 100, &buf, &len), 0);
    free (buf);
    size_t need = len;
    buf = NULL;
    assert_int_equal (kvs_frame_encode (fences, NULL, "abc", 3, need, &buf, &len), 0);
    free (buf);
    buf = NULL;
    errno = 0;
    assert_int_equal (kvs_frame_encode (fences, NULL, "abc", 3, need - 1, &buf, &len), -1);
    assert_int_equal (errno, EFBIG);
    assert_null (buf);
    json_decref (fences);
}

static int header (const char *hdr, const char *rest, char *text)
{
    size_t hlen = strlen (hdr), rlen = strlen (rest);
    uint8_t *buf = malloc (4 + hlen + rlen);
    canopy_error_t error;
    json_t *h = NULL, *f, *t;
    size_t off;
    buf[0] = hlen >> 24; buf[1] = hlen >> 16; buf[2] = hlen >> 8; buf[3] = hlen;
    memcpy (buf + 4, hdr, hlen);
    memcpy (buf + 4 + hlen, rest, rlen);
    error.text[0] = '\0';
    int rc = kvs_frame_header (buf, 4 + hlen + rlen, "relay", &h, &f, &t, &off, &error);
    if (rc == 0) {
        blobtab_t *b = blobtab_create ();
        rc = kvs_frame_blobs (buf, 4 + hlen + rlen, off, t, true, "relay", b, &error);
        blobtab_destroy (b);
        json_decref (h);
    }
    if (text)
        strcpy (text, error.text);
    free (buf);
    return rc;
}

static void test_malformed (void **state)
{
    char text[256];
    canopy_error_t error;
    json_t *h, *f, *t;
    size_t off;
    uint8_t shortbuf[3] = { 0 };
    uint8_t lying[8] = { 0, 0, 0, 200, '{', '}', ' ', ' ' };

    errno = 0;
    assert_int_equal (kvs_frame_header (shortbuf, 3, "relay", &h, &f, &t, &off, &error), -1);
    assert_int_equal (errno, EPROTO);
    assert_string_equal (error.text, "relay too short");
    assert_int_equal (kvs_frame_header (NULL, 0, "relay", &h, &f, &t, &off, NULL), -1);
    assert_int_equal (kvs_frame_header (lying, 8, "relay", &h, &f, &t, &off, &error), -1);
    assert_string_equal (error.text, "relay header length is wrong");

    assert_int_equal (header ("{\"fences\":[],\"blobs\":[]}", "", NULL), 0);
    assert_int_equal (header ("not json", "", text), -1);
    assert_string_equal (text, "malformed relay header");
    assert_int_equal (header ("{\"fences\":{},\"blobs\":[]}", "", NULL), -1);
    assert_int_equal (header ("{\"fences\":[]}", "", NULL), -1);
    assert_int_equal (header ("{\"fences\":[],\"blobs\":[]}", "x", text), -1);
    assert_int_equal (errno, EPROTO);
    assert_string_equal (text, "relay has trailing bytes");
    assert_int_equal (header ("{\"fences\":[],\"blobs\":[[\"sha256-00\",1]]}", "x", text), -1);
    assert_string_equal (text, "malformed relay blob table");
    assert_int_equal (header ("{\"fences\":[],\"blobs\":[1]}", "", NULL), -1);

    /* a blob longer than what is left, and one that is not its hash */
    char ref[80], hdr[256];
    blobtab_t *b = blobtab_create ();
    assert_int_equal (blobtab_add (b, NULL, "abc", 3, ref, sizeof (ref)), 1);
    snprintf (hdr, sizeof (hdr), "{\"fences\":[],\"blobs\":[[\"%s\",3]]}", ref);
    assert_int_equal (header (hdr, "abc", NULL), 0);
    assert_int_equal (header (hdr, "ab", NULL), -1);
    assert_int_equal (header (hdr, "abd", text), -1);
    assert_non_null (strstr (text, "does not match its data"));
    snprintf (hdr, sizeof (hdr), "{\"fences\":[],\"blobs\":[[\"%s\",-1]]}", ref);
    assert_int_equal (header (hdr, "", NULL), -1);
    blobtab_destroy (b);
}

/* The header is written without jansson for the blob table: it must be
 * exactly the JSON the table means, for 0, 1 and many blobs (refs of
 * every blob, lengths up to the largest), with fences of any content.
 */
static void test_header_text (void **state)
{
    int counts[] = { 0, 1, 600 };
    for (int c = 0; c < 3; c++) {
        blobtab_t *bt = blobtab_create ();
        json_t *fences = json_pack ("[{s:s s:i s:[s]}]", "name", "f\"q\u00e9",
                                    "nprocs", 3, "ops", "a\\b");
        json_t *want = json_array ();
        char data[64];
        assert_non_null (bt);
        assert_non_null (fences);
        for (int i = 0; i < counts[c]; i++) {
            char ref[BLOBREF_MAX];
            int len = snprintf (data, sizeof (data), "blob %d", i);
            assert_int_equal (blobtab_add (bt, NULL, data, len, ref, sizeof (ref)), 1);
            json_array_append_new (want, json_pack ("[s,I]", ref, (json_int_t)len));
        }
        void *buf;
        size_t len, off;
        json_t *hdr, *f2, *table;
        assert_int_equal (kvs_frame_encode (fences, bt, NULL, 0, SIZE_MAX, &buf, &len), 0);
        assert_int_equal (kvs_frame_header (buf, len, "test", &hdr, &f2, &table, &off,
                                            NULL), 0);
        assert_true (json_equal (f2, fences));
        assert_true (json_equal (table, want));
        /* and jansson reads the header text the same way */
        uint32_t hlen = ((uint8_t *)buf)[0] << 24 | ((uint8_t *)buf)[1] << 16
                      | ((uint8_t *)buf)[2] << 8 | ((uint8_t *)buf)[3];
        json_t *j = json_loadb ((char *)buf + 4, hlen, 0, NULL);
        assert_non_null (j);
        assert_true (json_equal (json_object_get (j, "blobs"), want));
        assert_true (json_equal (json_object_get (j, "fences"), fences));
        json_decref (j);
        json_decref (hdr);
        json_decref (want);
        json_decref (fences);
        blobtab_destroy (bt);
        free (buf);
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_layout),
        cmocka_unit_test (test_foreach),
        cmocka_unit_test (test_encode_msg),
        cmocka_unit_test (test_encode_errors),
        cmocka_unit_test (test_malformed),
        cmocka_unit_test (test_header_text),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
