/* test/kvs_relay.c - relays: ops text, merging by concatenation, encoding,
 * decoding, and refusing malformed input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "src/common/libkvs/kvs_relay.h"
#include "src/common/libkvs/blobtab.h"


/* The relay as a malloc'd buffer (the caller frees it), through
 * kvs_relay_enc_finish_msg as the kvs module sends it.
 */
static int finish (kvs_relay_enc_t *e, void **buf, size_t *len)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    const void *p;
    int rc = -1;

    assert_non_null (msg);
    if (kvs_relay_enc_finish_msg (e, msg) == 0
        && canopy_msg_get_payload (msg, &p, len) == 0
        && (*buf = malloc (*len))) {
        memcpy (*buf, p, *len);
        rc = 0;
    }
    int saved_errno = errno;
    canopy_msg_decref (msg);
    errno = saved_errno;
    return rc;
}
static void test_opsbuf (void **state)
{
    struct kvs_opsbuf ob;
    json_t *ops, *a = json_loads ("[[\"a\",null],[\"b\",{\"ver\":1,\"type\":"
                                  "\"val\",\"data\":\"eA==\"}]]", 0, NULL);
    assert_non_null (a);
    kvs_opsbuf_init (&ob);
    /* empty */
    assert_non_null ((ops = kvs_opsbuf_parse (&ob)));
    assert_int_equal (json_array_size (ops), 0);
    json_decref (ops);
    assert_int_equal (kvs_opsbuf_append_json (&ob, a), 0);
    assert_int_equal (ob.nops, 2);
    assert_int_equal (kvs_opsbuf_append_text (&ob, "[\"c\",null]", 10, 1), 0);
    assert_int_equal (kvs_opsbuf_append_text (&ob, NULL, 0, 0), 0);
    assert_int_equal (ob.nops, 3);
    assert_non_null ((ops = kvs_opsbuf_parse (&ob)));
    assert_int_equal (json_array_size (ops), 3);
    assert_string_equal (json_string_value (json_array_get (json_array_get (ops, 2), 0)), "c");
    assert_true (json_equal (json_array_get (ops, 1), json_array_get (a, 1)));
    json_decref (ops);
    /* wrong counts and bad arguments */
    ob.nops = 4;
    errno = 0;
    assert_null (kvs_opsbuf_parse (&ob));
    assert_int_equal (errno, EPROTO);
    ob.nops = 3;
    assert_int_equal (kvs_opsbuf_append_text (&ob, "x", 1, 0), -1);
    assert_int_equal (kvs_opsbuf_append_text (&ob, "", 0, 1), -1);
    json_t *notop = json_object ();
    assert_int_equal (kvs_opsbuf_append_json (&ob, notop), -1);
    json_decref (notop);
    kvs_opsbuf_clear (&ob);
    assert_int_equal (ob.len, 0);
    /* text that is not JSON */
    assert_int_equal (kvs_opsbuf_append_text (&ob, "[\"a\",nul", 8, 1), 0);
    assert_null (kvs_opsbuf_parse (&ob));
    assert_int_equal (errno, EPROTO);
    kvs_opsbuf_clear (&ob);
    /* text that smuggles a closing bracket */
    assert_int_equal (kvs_opsbuf_append_text (&ob, "1],[2", 5, 1), 0);
    assert_null (kvs_opsbuf_parse (&ob));
    kvs_opsbuf_clear (&ob);
    json_decref (a);
}

static void *encode_two (size_t *len)
{
    kvs_relay_enc_t *e = kvs_relay_enc_create ();
    blobtab_t *b1 = blobtab_create (), *b2 = blobtab_create ();
    char r1[80], r2[80];
    void *buf;
    assert_non_null (e);
    assert_int_equal (blobtab_add (b1, NULL, "shared", 6, r1, sizeof (r1)), 1);
    assert_int_equal (blobtab_add (b2, NULL, "shared", 6, r2, sizeof (r2)), 1);
    assert_int_equal (blobtab_add (b2, NULL, "own", 3, NULL, 0), 1);
    assert_string_equal (r1, r2);
    struct kvs_relay_fence f1 = { .name = "f1", .nprocs = 4, .count = 2,
                                  .userid = 7, .nops = 2,
                                  .ops = "[\"a\",null],[\"b\",null]",
                                  .opslen = 21 };
    /* a uid of 2^31 or more (a uid_t) survives the trip */
    struct kvs_relay_fence f2 = { .name = "f2", .nprocs = 1, .count = 1,
                                  .userid = 4294967294LL, .nops = 1,
                                  .ops = "[\"c\",null]", .opslen = 10 };
    struct kvs_relay_fence f3 = { .name = "f3", .nprocs = 2, .count = 0,
                                  .errnum = EINVAL, .errstr = "no" };
    assert_int_equal (kvs_relay_enc_add (e, &f1, b1), 0);
    assert_int_equal (kvs_relay_enc_add (e, &f2, b2), 0);
    assert_int_equal (kvs_relay_enc_add (e, &f3, NULL), 0);
    assert_int_equal (finish (e, &buf, len), 0);
    kvs_relay_enc_destroy (e);
    blobtab_destroy (b1);
    blobtab_destroy (b2);
    return buf;
}

static void test_roundtrip (void **state)
{
    size_t len;
    void *buf = encode_two (&len);
    canopy_error_t error;
    kvs_relay_t *r = kvs_relay_decode (buf, len, &error);

    assert_non_null (r);
    assert_int_equal (kvs_relay_count (r), 3);
    /* the shared blob travels once */
    assert_int_equal (blobtab_count (kvs_relay_blobs (r)), 2);
    /* and is read in place: the table borrows the relay's bytes */
    for (int k = 0; k < 2; k++) {
        const void *d;
        size_t dlen;
        assert_int_equal (blobtab_at (kvs_relay_blobs (r), k, NULL, &d, &dlen), 0);
        assert_true ((const char *)d >= (const char *)buf
                     && (const char *)d + dlen <= (const char *)buf + len);
    }
    const struct kvs_relay_fence *f = kvs_relay_fence (r, 0);
    assert_string_equal (f->name, "f1");
    assert_int_equal (f->nprocs, 4);
    assert_int_equal (f->count, 2);
    assert_int_equal (f->userid, 7);
    assert_int_equal (f->nops, 2);
    assert_int_equal (f->opslen, 21);
    assert_memory_equal (f->ops, "[\"a\",null],[\"b\",null]", 21);
    assert_int_equal (json_array_size (f->refs), 1);
    f = kvs_relay_fence (r, 1);
    assert_true (f->userid == 4294967294LL);
    assert_memory_equal (f->ops, "[\"c\",null]", 10);
    assert_int_equal (json_array_size (f->refs), 2);
    f = kvs_relay_fence (r, 2);
    assert_int_equal (f->errnum, EINVAL);
    assert_string_equal (f->errstr, "no");
    assert_int_equal (f->nops, 0);
    assert_null (kvs_relay_fence (r, 3));

    /* merging on the next hop is concatenation */
    struct kvs_opsbuf ob;
    kvs_opsbuf_init (&ob);
    for (int i = 0; i < 2; i++) {
        f = kvs_relay_fence (r, i);
        assert_int_equal (kvs_opsbuf_append_text (&ob, f->ops, f->opslen, f->nops), 0);
    }
    json_t *ops = kvs_opsbuf_parse (&ob);
    assert_non_null (ops);
    assert_int_equal (json_array_size (ops), 3);
    json_decref (ops);
    kvs_opsbuf_clear (&ob);
    kvs_relay_destroy (r);
    free (buf);
}

static void put32 (uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

static kvs_relay_t *decode_hdr (const char *hdr, const char *tail)
{
    size_t hlen = strlen (hdr), tlen = strlen (tail);
    uint8_t *buf = malloc (4 + hlen + tlen);
    canopy_error_t error;
    put32 (buf, hlen);
    memcpy (buf + 4, hdr, hlen);
    memcpy (buf + 4 + hlen, tail, tlen);
    kvs_relay_t *r = kvs_relay_decode (buf, 4 + hlen + tlen, &error);
    if (!r)
        assert_int_equal (errno, EPROTO);
    kvs_relay_destroy (r);
    free (buf);
    return r;   /* only compared with NULL */
}

static void test_malformed (void **state)
{
    size_t len;
    uint8_t *buf = encode_two (&len);
    canopy_error_t error;

    /* truncations anywhere */
    for (size_t n = 0; n < len; n++) {
        errno = 0;
        assert_null (kvs_relay_decode (buf, n, &error));
        assert_int_equal (errno, EPROTO);
    }
    /* header length beyond the message */
    put32 (buf, len);
    assert_null (kvs_relay_decode (buf, len, &error));
    free (buf);
    assert_null (kvs_relay_decode (NULL, 10, &error));

    const char *ok = "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,"
                     "\"count\":1,\"userid\":0,\"nops\":1,\"opslen\":3,"
                     "\"refs\":[]}],\"blobs\":[]}";
    assert_non_null (decode_hdr (ok, "abc"));
    assert_null (decode_hdr (ok, "ab"));            /* ops overrun */
    assert_null (decode_hdr (ok, "abcd"));          /* trailing bytes */
    assert_null (decode_hdr ("[]", ""));
    assert_null (decode_hdr ("{\"fences\":{},\"blobs\":[]}", ""));
    /* bad entries */
    const char *bad[] = {
        "{\"fences\":[{\"name\":\"\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":0,\"nops\":0,\"opslen\":0,\"refs\":[]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":0,\"flags\":0,\"count\":0,\"userid\":0,\"nops\":0,\"opslen\":0,\"refs\":[]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":2,\"userid\":0,\"nops\":0,\"opslen\":0,\"refs\":[]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":0,\"nops\":1,\"opslen\":0,\"refs\":[]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":0,\"nops\":0,\"opslen\":-1,\"refs\":[]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":0,\"nops\":0,\"opslen\":0}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":4294967296,\"nops\":0,\"opslen\":0,\"refs\":[]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":-2,\"nops\":0,\"opslen\":0,\"refs\":[]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":0,\"nops\":0,\"opslen\":0,\"refs\":[\"sha256-00\"]}],\"blobs\":[]}",
        "{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,\"count\":1,\"userid\":0,\"nops\":0,\"opslen\":0,\"refs\":[1]}],\"blobs\":[]}",
        "{\"fences\":[],\"blobs\":[[\"nonsense\",0]]}",
        "{\"fences\":[],\"blobs\":[[\"sha256-0000000000000000000000000000000000000000000000000000000000000000\",-1]]}",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        assert_null (decode_hdr (bad[i], ""));
    /* an error entry may not carry operations */
    assert_null (decode_hdr ("{\"fences\":[{\"name\":\"x\",\"nprocs\":1,\"flags\":0,"
                             "\"count\":0,\"userid\":0,\"nops\":1,\"opslen\":1,"
                             "\"refs\":[],\"errnum\":5}],\"blobs\":[]}", "a"));
}

static void test_enc_errors (void **state)
{
    kvs_relay_enc_t *e = kvs_relay_enc_create ();
    struct kvs_relay_fence f = { .name = NULL };
    void *buf;
    size_t len;
    assert_int_equal (kvs_relay_enc_add (e, &f, NULL), -1);
    assert_int_equal (errno, EINVAL);
    f.name = "x";
    f.opslen = 3;
    assert_int_equal (kvs_relay_enc_add (e, &f, NULL), -1);
    assert_int_equal (finish (NULL, &buf, &len), -1);
    /* an empty relay is valid */
    assert_int_equal (finish (e, &buf, &len), 0);
    canopy_error_t error;
    kvs_relay_t *r = kvs_relay_decode (buf, len, &error);
    assert_non_null (r);
    assert_int_equal (kvs_relay_count (r), 0);
    kvs_relay_destroy (r);
    free (buf);
    kvs_relay_enc_destroy (e);
    kvs_relay_enc_destroy (NULL);
    kvs_relay_destroy (NULL);
}

/* The bounds are never below the real size (names that need escaping,
 * many blobs, error text), and a lower limit gives EFBIG.
 */
static void test_bounds (void **state)
{
    kvs_relay_enc_t *e = kvs_relay_enc_create ();
    blobtab_t *b = blobtab_create ();
    void *buf;
    size_t len;

    assert_true (kvs_relay_enc_bound (e) >= 4);
    for (int i = 0; i < 50; i++) {
        char data[64];
        int n = snprintf (data, sizeof (data), "blob %d", i);
        assert_int_equal (blobtab_add (b, NULL, data, n, NULL, 0), 1);
    }
    struct kvs_relay_fence f1 = { .name = "\x01\x02\"\\name\x7f", .nprocs = 1000000,
                                  .count = 999999, .userid = 2147483647,
                                  .nops = 1, .ops = "[\"k\",null]", .opslen = 10,
                                  .flags = -1 };
    struct kvs_relay_fence f2 = { .name = "err", .nprocs = 3, .errnum = 1000,
                                  .errstr = "\x01\x01\x01\"quoted\"" };
    size_t b1 = kvs_relay_fence_bound (&f1, b);
    size_t b2 = kvs_relay_fence_bound (&f2, NULL);
    assert_true (b1 > blobtab_bytes (b) + 10);
    assert_int_equal (kvs_relay_enc_add (e, &f1, b), 0);
    assert_int_equal (kvs_relay_enc_add (e, &f2, NULL), 0);
    size_t bound = kvs_relay_enc_bound (e);
    assert_true (bound >= b1 + b2);
    assert_int_equal (finish (e, &buf, &len), 0);
    assert_true (len <= bound);
    free (buf);
    /* the same message under a limit just below its size */
    kvs_relay_enc_set_max (e, len - 1);
    errno = 0;
    assert_int_equal (finish (e, &buf, &len), -1);
    assert_int_equal (errno, EFBIG);
    kvs_relay_enc_set_max (e, 0);       /* back to the message limit */
    assert_int_equal (finish (e, &buf, &len), 0);
    free (buf);
    kvs_relay_enc_destroy (e);
    blobtab_destroy (b);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_opsbuf),
        cmocka_unit_test (test_roundtrip),
        cmocka_unit_test (test_malformed),
        cmocka_unit_test (test_enc_errors),
        cmocka_unit_test (test_bounds),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
