/* test/objcache.c - the KVS object cache: typed entries, one load per
 * object for many waiters, failed loads, withdrawn waits, expiry (LRU
 * order, age, pending entries kept), directories put encoded and decoded
 * on first use.
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
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/blobrecs.h"
#include <canopy/message.h>
#include "src/modules/kvs/objcache.h"

static const char *ref1 = "sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static int calls;
static int last_errnum;
static void wait_cb (int errnum, void *arg)
{
    calls++;
    last_errnum = errnum;
}

static void test_wait (void **state)
{
    objcache_t *c = objcache_create (1 << 20, 60);
    calls = 0;
    assert_int_equal (objcache_wait (c, ref1, OBJ_DIR, wait_cb, NULL), 1);
    assert_int_equal (objcache_wait (c, ref1, OBJ_DIR, wait_cb, NULL), 0);
    assert_int_equal (objcache_wait (c, ref1, OBJ_DIR, wait_cb, NULL), 0);
    struct objcache_stats st;
    objcache_stats (c, &st);
    assert_int_equal (st.pending, 1);
    assert_int_equal (st.waiters, 3);
    json_t *d = treeobj_create_dir ();
    assert_int_equal (objcache_put_dir (c, ref1, d, 10), 0);
    objcache_load_done (c, OBJ_DIR, ref1, 0);
    assert_int_equal (calls, 3);
    assert_int_equal (last_errnum, 0);
    assert_ptr_equal (objcache_get_dir (c, ref1), d);
    /* the same ref as raw bytes is a different entry */
    assert_false (objcache_has (c, OBJ_RAW, ref1));
    const void *data;
    size_t len;
    assert_int_equal (objcache_get_raw (c, ref1, &data, &len), -1);
    json_decref (d);
    objcache_destroy (c);
}

static void test_failed_load (void **state)
{
    objcache_t *c = objcache_create (1 << 20, 60);
    calls = 0;
    assert_int_equal (objcache_wait (c, ref1, OBJ_RAW, wait_cb, NULL), 1);
    objcache_load_done (c, OBJ_RAW, ref1, ENOENT);
    assert_int_equal (calls, 1);
    assert_int_equal (last_errnum, ENOENT);
    /* a later wait starts a new load */
    assert_int_equal (objcache_wait (c, ref1, OBJ_RAW, wait_cb, NULL), 1);
    objcache_load_done (c, OBJ_RAW, ref1, EIO);
    objcache_destroy (c);
}

/* An entry filled while its load was in flight (an event brought it
 * first) keeps its waiters until the load is done: neither expiry nor
 * clearing may drop it, or they would never be called.
 */
static void test_keep_waited (void **state)
{
    objcache_t *c = objcache_create (1, 0);     /* everything is expired */
    calls = 0;
    assert_int_equal (objcache_wait (c, ref1, OBJ_RAW, wait_cb, NULL), 1);
    assert_int_equal (objcache_put_raw (c, ref1, "abc", 3), 0);
    assert_int_equal (objcache_expire (c, 1e9), 0);
    assert_int_equal (objcache_clear (c), 0);
    assert_true (objcache_has (c, OBJ_RAW, ref1));
    objcache_load_done (c, OBJ_RAW, ref1, 0);
    assert_int_equal (calls, 1);
    assert_int_equal (last_errnum, 0);
    /* once its waiters ran, it goes like any other */
    assert_int_equal (objcache_clear (c), 1);
    assert_false (objcache_has (c, OBJ_RAW, ref1));
    objcache_destroy (c);
}

static void test_expire (void **state)
{
    objcache_t *c = objcache_create (15, 1000);
    char ref[80];
    for (int i = 0; i < 5; i++) {
        snprintf (ref, sizeof (ref), "sha256-%064d", i);
        assert_int_equal (objcache_put_raw (c, ref, "12345", 5), 0);
    }
    assert_int_equal (objcache_expire (c, 0), 2);   /* down to 15 bytes */
    struct objcache_stats st;
    objcache_stats (c, &st);
    assert_int_equal (st.bytes, 15);
    assert_int_equal (objcache_clear (c), 3);
    objcache_destroy (c);
}

static void test_wait_cancel (void **state)
{
    objcache_t *c = objcache_create (1 << 20, 60);
    struct objcache_stats st;
    int a, b;
    calls = 0;
    assert_int_equal (objcache_wait (c, ref1, OBJ_DIR, wait_cb, &a), 1);
    assert_int_equal (objcache_wait (c, ref1, OBJ_DIR, wait_cb, &b), 0);
    /* one waiter withdraws: the other is still called */
    objcache_wait_cancel (c, ref1, OBJ_DIR, wait_cb, &a);
    objcache_stats (c, &st);
    assert_int_equal (st.pending, 1);
    assert_int_equal (st.waiters, 1);
    objcache_load_done (c, OBJ_DIR, ref1, EIO);
    assert_int_equal (calls, 1);
    /* the last waiter withdraws: the pending entry is forgotten, and the
     * next wait starts a load again
     */
    assert_int_equal (objcache_wait (c, ref1, OBJ_RAW, wait_cb, &a), 1);
    objcache_wait_cancel (c, ref1, OBJ_RAW, wait_cb, &b);     /* not there */
    objcache_wait_cancel (c, ref1, OBJ_DIR, wait_cb, &a);     /* other type */
    objcache_stats (c, &st);
    assert_int_equal (st.waiters, 1);
    objcache_wait_cancel (c, ref1, OBJ_RAW, wait_cb, &a);
    objcache_stats (c, &st);
    assert_int_equal (st.pending, 0);
    assert_int_equal (st.waiters, 0);
    assert_int_equal (st.count, 0);
    objcache_load_done (c, OBJ_RAW, ref1, 0);     /* nobody: no call */
    assert_int_equal (calls, 1);
    assert_int_equal (objcache_wait (c, ref1, OBJ_RAW, wait_cb, &a), 1);
    objcache_destroy (c);
}

/* Least recently used first; a get counts as a use; age expiry. */
static void test_lru (void **state)
{
    objcache_t *c = objcache_create (20, 1000);
    char ref[5][80];
    for (int i = 0; i < 4; i++) {
        snprintf (ref[i], sizeof (ref[i]), "sha256-%064d", i);
        assert_int_equal (objcache_put_raw (c, ref[i], "12345", 5), 0);
    }
    /* a put of a valid entry changes nothing */
    assert_int_equal (objcache_put_raw (c, ref[0], "other bytes", 11), 0);
    /* use 0 and 1: 2 is now the least recently used */
    const void *data;
    size_t len;
    assert_int_equal (objcache_get_raw (c, ref[0], &data, &len), 0);
    assert_memory_equal (data, "12345", 5);
    assert_int_equal (objcache_get_raw (c, ref[1], &data, &len), 0);
    snprintf (ref[4], sizeof (ref[4]), "sha256-%064d", 4);
    json_t *d = treeobj_create_dir ();
    assert_int_equal (objcache_put_dir (c, ref[4], d, 10), 0);
    json_decref (d);
    /* 30 bytes > 20: 2 and 3 go */
    assert_int_equal (objcache_expire (c, 0), 2);
    assert_false (objcache_has (c, OBJ_RAW, ref[2]));
    assert_false (objcache_has (c, OBJ_RAW, ref[3]));
    assert_true (objcache_has (c, OBJ_RAW, ref[0]));
    assert_true (objcache_has (c, OBJ_DIR, ref[4]));
    /* pending entries never expire, even when everything is old */
    assert_int_equal (objcache_wait (c, ref[2], OBJ_RAW, wait_cb, NULL), 1);
    assert_int_equal (objcache_expire (c, 1e12), 3);
    struct objcache_stats st;
    objcache_stats (c, &st);
    assert_int_equal (st.count, 1);
    assert_int_equal (st.pending, 1);
    assert_int_equal (st.bytes, 0);
    calls = 0;
    assert_int_equal (objcache_put_raw (c, ref[2], "abc", 3), 0);
    objcache_load_done (c, OBJ_RAW, ref[2], 0);
    assert_int_equal (calls, 1);
    assert_int_equal (last_errnum, 0);
    assert_true (objcache_has (c, OBJ_RAW, ref[2]));
    objcache_destroy (c);
}

/* A primed directory stays encoded until asked for; one that does not
 * decode is dropped, and the next wait starts a load as for any missing
 * object.
 */
static void test_encoded (void **state)
{
    objcache_t *c = objcache_create (1 << 20, 60);
    struct objcache_stats st;
    const char *ref2 = "sha256-0000000000000000000000000000000000000000000000000000000000000002";
    const char *ref3 = "sha256-0000000000000000000000000000000000000000000000000000000000000003";
    json_t *d = treeobj_create_dir ();
    size_t len;
    char *enc;

    assert_non_null (d);
    assert_int_equal (treeobj_dir_set (d, "k", treeobj_create_val ("v", 1)), 0);
    assert_non_null ((enc = treeobj_encode (d, &len)));
    assert_int_equal (objcache_put_dir_encoded (c, ref1, enc, len, NULL), 0);
    assert_int_equal (objcache_put_dir_encoded (c, ref1, enc, len, NULL), 0);   /* no-op */
    /* not a directory (a val), and not JSON */
    json_t *v = treeobj_create_val ("x", 1);
    size_t vlen;
    char *venc = treeobj_encode (v, &vlen);
    assert_int_equal (objcache_put_dir_encoded (c, ref2, venc, vlen, NULL), 0);
    assert_int_equal (objcache_put_dir_encoded (c, ref3, "{nope", 5, NULL), 0);
    objcache_stats (c, &st);
    assert_int_equal (st.count, 3);
    assert_int_equal (st.encoded, 3);
    assert_int_equal (st.bytes, len + vlen + 5);
    errno = 0;
    assert_int_equal (objcache_put_dir_encoded (c, ref1, NULL, 0, NULL), -1);
    assert_int_equal (errno, EINVAL);
    /* a raw value under the same ref is another entry */
    assert_false (objcache_has (c, OBJ_RAW, ref1));

    json_t *got = objcache_get_dir (c, ref1);
    assert_non_null (got);
    assert_true (json_equal (got, d));
    assert_ptr_equal (objcache_get_dir (c, ref1), got);     /* decoded once */
    objcache_stats (c, &st);
    assert_int_equal (st.encoded, 2);

    assert_null (objcache_get_dir (c, ref2));
    assert_null (objcache_get_dir (c, ref3));
    objcache_stats (c, &st);
    assert_int_equal (st.count, 1);
    assert_int_equal (st.encoded, 0);
    /* decoded: its one entry is accounted as jansson holds it */
    assert_int_equal (st.bytes, len + OBJCACHE_DECODED_ENTRY_BYTES);
    /* dropped: a wait is the first again, so its load is started */
    calls = 0;
    assert_int_equal (objcache_wait (c, ref3, OBJ_DIR, wait_cb, NULL), 1);
    assert_int_equal (objcache_put_dir (c, ref3, d, 7), 0);
    objcache_load_done (c, OBJ_DIR, ref3, 0);
    assert_int_equal (calls, 1);
    assert_int_equal (last_errnum, 0);
    assert_non_null (objcache_get_dir (c, ref3));

    /* an encoded entry expires like any other, and is counted out */
    assert_int_equal (objcache_put_dir_encoded (c, ref2, enc, len, NULL), 0);
    objcache_stats (c, &st);
    assert_int_equal (st.encoded, 1);
    assert_int_equal (objcache_clear (c), 3);
    objcache_stats (c, &st);
    assert_int_equal (st.encoded, 0);
    assert_int_equal (st.bytes, 0);

    /* an encoded entry put while a load is pending satisfies its waiters */
    calls = 0;
    assert_int_equal (objcache_wait (c, ref2, OBJ_DIR, wait_cb, NULL), 1);
    assert_int_equal (objcache_put_dir_encoded (c, ref2, enc, len, NULL), 0);
    objcache_load_done (c, OBJ_DIR, ref2, 0);
    assert_int_equal (calls, 1);
    assert_int_equal (last_errnum, 0);
    assert_non_null (objcache_get_dir (c, ref2));

    free (enc);
    free (venc);
    json_decref (v);
    json_decref (d);
    objcache_destroy (c);
}

/* objcache_find: a primed directory answers without being decoded, by a
 * scan the first time and from an index from the second on (counted in
 * the cache's bytes, and gone with the encoded text when the directory is
 * decoded for objcache_get_dir); a decoded one is returned as such; a text
 * the scan declines is decoded at once (and a bad one dropped, as
 * objcache_get_dir does); not cached is 0.
 */
static void test_find (void **state)
{
    objcache_t *c = objcache_create (1 << 20, 60);
    struct objcache_stats st;
    const char *ref2 = "sha256-0000000000000000000000000000000000000000000000000000000000000002";
    const char *ref3 = "sha256-0000000000000000000000000000000000000000000000000000000000000003";
    json_t *d = treeobj_create_dir ();
    json_t *dir, *entry;
    size_t len, bytes0 = 0;
    char *enc;

    assert_int_equal (treeobj_dir_set (d, "k", treeobj_create_val ("v", 1)), 0);
    assert_int_equal (treeobj_dir_set (d, "l", treeobj_create_val ("w", 1)), 0);
    assert_non_null ((enc = treeobj_encode (d, &len)));
    assert_int_equal (objcache_find (c, ref1, "k", &dir, &entry), 0);
    assert_int_equal (objcache_put_dir_encoded (c, ref1, enc, len, NULL), 0);
    for (int i = 0; i < 20; i++) {
        dir = entry = NULL;
        int rc = objcache_find (c, ref1, i % 2 ? "k" : "absent", &dir, &entry);
        assert_int_equal (rc, 2);
        assert_null (dir);
        if (i % 2) {
            assert_non_null (entry);
            assert_true (json_equal (entry, treeobj_dir_get (d, "k")));
            json_decref (entry);
        }
        else
            assert_null (entry);
        objcache_stats (c, &st);
        assert_int_equal (st.encoded, 1);       /* never decoded */
        assert_int_equal (st.scans, i + 1);
        assert_int_equal (st.indexed, i == 0 ? 0 : 1);
        if (i == 0)
            bytes0 = st.bytes;
        else
            assert_true (st.bytes > bytes0);    /* the index counts */
    }
    /* asked for whole: decoded, the index gone with the text */
    assert_non_null ((dir = objcache_get_dir (c, ref1)));
    assert_true (json_equal (dir, d));
    objcache_stats (c, &st);
    assert_int_equal (st.encoded, 0);
    assert_int_equal (st.bytes, bytes0 + 2 * OBJCACHE_DECODED_ENTRY_BYTES);
    /* decoded now: the same dir every time */
    assert_int_equal (objcache_find (c, ref1, "l", &dir, &entry), 1);
    assert_ptr_equal (dir, objcache_get_dir (c, ref1));
    /* an indexed entry dropped takes its index's bytes with it */
    assert_int_equal (objcache_put_dir_encoded (c, ref2, enc, len, NULL), 0);
    assert_int_equal (objcache_find (c, ref2, "k", &dir, &entry), 2);
    json_decref (entry);
    assert_int_equal (objcache_find (c, ref2, "k", &dir, &entry), 2);
    json_decref (entry);
    assert_int_equal (objcache_clear (c), 2);
    objcache_stats (c, &st);
    assert_int_equal (st.bytes, 0);

    /* an hdir's text is declined: decoded at the first find */
    json_t *h = treeobj_create_hdir (0);
    size_t hlen;
    char *henc = treeobj_encode (h, &hlen);
    assert_non_null (henc);
    assert_int_equal (objcache_put_dir_encoded (c, ref2, henc, hlen, NULL), 0);
    assert_int_equal (objcache_find (c, ref2, "k", &dir, &entry), 1);
    assert_true (treeobj_is_hdir (dir));
    /* not JSON: declined, then dropped by the decode */
    assert_int_equal (objcache_put_dir_encoded (c, ref3, "{nope", 5, NULL), 0);
    assert_int_equal (objcache_find (c, ref3, "k", &dir, &entry), 0);
    assert_false (objcache_has (c, OBJ_DIR, ref3));
    /* no name: decode */
    assert_int_equal (objcache_clear (c), 1);
    assert_int_equal (objcache_put_dir_encoded (c, ref1, enc, len, NULL), 0);
    assert_int_equal (objcache_find (c, ref1, NULL, &dir, &entry), 1);
    assert_true (json_equal (dir, d));

    free (henc);
    json_decref (h);
    free (enc);
    json_decref (d);
    objcache_destroy (c);
}

/* Shared entries: the bytes stay where they are in a message's payload,
 * which outlives the caller's reference for as long as an entry made from
 * it is cached; an empty value is copied (nothing to share).
 */
static void test_shared (void **state)
{
    objcache_t *c = objcache_create (1 << 20, 60);
    const char *ref2 = "sha256-0000000000000000000000000000000000000000000000000000000000000002";
    const char *ref3 = "sha256-0000000000000000000000000000000000000000000000000000000000000003";
    json_t *d = treeobj_create_dir ();
    size_t len;
    char *enc;
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    const void *payload, *got;
    size_t plen, glen;
    struct objcache_stats st;

    assert_non_null (d);
    assert_int_equal (treeobj_dir_set (d, "k", treeobj_create_val ("v", 1)), 0);
    assert_non_null ((enc = treeobj_encode (d, &len)));
    /* payload: the encoded directory, then blob records of a 6-byte
     * value and an empty one
     */
    size_t total = len + blobrecs_size (6) + blobrecs_size (0);
    char *buf = malloc (total);
    assert_non_null (buf);
    memcpy (buf, enc, len);
    void *end = blobrecs_put (blobrecs_put (buf + len, ref2, "value!", 6), ref3, "", 0);
    assert_ptr_equal (end, buf + total);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_payload (msg, buf, total), 0);
    free (buf);
    assert_int_equal (canopy_msg_get_payload (msg, &payload, &plen), 0);

    assert_int_equal (objcache_put_dir_encoded (c, ref1, payload, len, msg), 0);
    assert_int_equal (objcache_put_blobrecs (c, msg, len, NULL), 2);
    canopy_msg_decref (msg);        /* the cache's references keep it */

    assert_int_equal (objcache_get_raw (c, ref2, &got, &glen), 0);
    assert_ptr_equal (got, (const char *)payload + len + blobrecs_size (0)); /* not a copy */
    assert_int_equal (glen, 6);
    assert_memory_equal (got, "value!", 6);
    assert_int_equal (objcache_get_raw (c, ref3, &got, &glen), 0);
    assert_non_null (got);
    assert_int_equal (glen, 0);
    objcache_stats (c, &st);
    assert_int_equal (st.bytes, len + 6);
    assert_int_equal (st.encoded, 1);

    /* decoding the directory releases its span; the value still reads */
    json_t *dir = objcache_get_dir (c, ref1);
    assert_non_null (dir);
    assert_true (json_equal (dir, d));
    assert_int_equal (objcache_get_raw (c, ref2, &got, &glen), 0);
    assert_memory_equal (got, "value!", 6);
    /* the last entry gone, the payload goes (ASan and valgrind check) */
    assert_int_equal (objcache_clear (c), 3);

    errno = 0;
    assert_int_equal (objcache_put_raw (c, NULL, "x", 1), -1);
    assert_int_equal (errno, EINVAL);

    /* one value at a time, as kvs.prime's handler caches them */
    msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_payload (msg, "value!", 6), 0);
    assert_int_equal (canopy_msg_get_payload (msg, &payload, &plen), 0);
    assert_int_equal (objcache_put_raw_shared (c, ref2, payload, 6, msg), 0);
    assert_int_equal (objcache_put_raw_shared (c, ref2, payload, 6, msg), 0);
    assert_int_equal (objcache_put_raw_shared (c, ref3, NULL, 0, msg), 0);
    canopy_msg_decref (msg);
    assert_int_equal (objcache_get_raw (c, ref2, &got, &glen), 0);
    assert_ptr_equal (got, payload);                /* not a copy */
    assert_int_equal (glen, 6);
    assert_int_equal (objcache_get_raw (c, ref3, &got, &glen), 0);
    assert_int_equal (glen, 0);
    assert_int_equal (objcache_put_raw_shared (c, ref2, payload, 6, NULL), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (objcache_clear (c), 2);
    free (enc);
    json_decref (d);
    objcache_destroy (c);
}

/* The values of a kvs.prime frame: every record cached in place, the
 * payload kept by the entries; a malformed buffer caches nothing.
 */
static void test_blobrecs (void **state)
{
    objcache_t *c = objcache_create (1 << 20, 60);
    const char *ref1 = "sha256-1111111111111111111111111111111111111111111111111111111111111111";
    const char *ref2 = "sha256-2222222222222222222222222222222222222222222222222222222222222222";
    size_t total = 3 + blobrecs_size (5) + blobrecs_size (2);
    char *buf = malloc (total);
    const void *payload, *got;
    size_t plen, glen;
    canopy_error_t error;

    assert_non_null (c);
    assert_non_null (buf);
    memcpy (buf, "hdr", 3);
    void *p = blobrecs_put (buf + 3, ref1, "hello", 5);
    p = blobrecs_put (p, ref2, "hi", 2);
    assert_ptr_equal (p, buf + total);
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    assert_int_equal (canopy_msg_set_payload (msg, buf, total), 0);
    assert_int_equal (canopy_msg_get_payload (msg, &payload, &plen), 0);

    /* a cut record: nothing cached */
    canopy_msg_t *cut = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    assert_int_equal (canopy_msg_set_payload (cut, buf, total - 1), 0);
    assert_int_equal (objcache_put_blobrecs (c, cut, 3, &error), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (objcache_get_raw (c, ref1, &got, &glen), -1);
    canopy_msg_decref (cut);
    errno = 0;
    assert_int_equal (objcache_put_blobrecs (c, msg, total + 1, &error), -1);
    assert_int_equal (errno, EINVAL);

    assert_int_equal (objcache_put_blobrecs (c, msg, 3, &error), 2);
    canopy_msg_decref (msg);        /* the entries keep it */
    assert_int_equal (objcache_get_raw (c, ref1, &got, &glen), 0);
    assert_int_equal (glen, 5);
    assert_memory_equal (got, "hello", 5);
    assert_true ((const char *)got > (const char *)payload
                 && (const char *)got < (const char *)payload + plen);  /* not a copy */
    assert_int_equal (objcache_get_raw (c, ref2, &got, &glen), 0);
    assert_memory_equal (got, "hi", 2);
    free (buf);
    objcache_destroy (c);
}

/* Decoded dirs count what jansson holds for them, not only their text:
 * a 32-entry dir of 1.6 KB in a cache of 16 KiB is over it (it held 15x
 * cache-max before), and expiry drops it, taking all its bytes off.
 */
static void test_decoded_bytes (void **state)
{
    objcache_t *c = objcache_create (16 * 1024, 60);
    struct objcache_stats st;
    json_t *d = treeobj_create_dir ();
    char name[16];
    size_t len;
    char *enc;

    for (int i = 0; i < 32; i++) {
        snprintf (name, sizeof (name), "%d", i);
        assert_int_equal (treeobj_dir_set (d, name, treeobj_create_val ("12345678", 8)), 0);
    }
    assert_non_null ((enc = treeobj_encode (d, &len)));
    assert_true (len < 2048);
    /* made (rank 0's applier) */
    assert_int_equal (objcache_put_dir (c, ref1, d, len), 0);
    objcache_stats (c, &st);
    assert_int_equal (st.bytes, len + 32 * OBJCACHE_DECODED_ENTRY_BYTES);
    assert_true (st.bytes > 16 * 1024);
    assert_int_equal (objcache_expire (c, 0), 1);
    objcache_stats (c, &st);
    assert_int_equal (st.count, 0);
    assert_int_equal (st.bytes, 0);
    /* primed encoded: counted at its text until decoded */
    assert_int_equal (objcache_put_dir_encoded (c, ref1, enc, len, NULL), 0);
    objcache_stats (c, &st);
    assert_int_equal (st.bytes, len);
    assert_int_equal (objcache_expire (c, 0), 0);
    assert_non_null (objcache_get_dir (c, ref1));
    objcache_stats (c, &st);
    assert_int_equal (st.bytes, len + 32 * OBJCACHE_DECODED_ENTRY_BYTES);
    assert_int_equal (objcache_expire (c, 0), 1);
    objcache_stats (c, &st);
    assert_int_equal (st.bytes, 0);
    free (enc);
    json_decref (d);
    objcache_destroy (c);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_wait),
        cmocka_unit_test (test_failed_load),
        cmocka_unit_test (test_expire),
        cmocka_unit_test (test_wait_cancel),
        cmocka_unit_test (test_lru),
        cmocka_unit_test (test_encoded),
        cmocka_unit_test (test_find),
        cmocka_unit_test (test_decoded_bytes),
        cmocka_unit_test (test_shared),
        cmocka_unit_test (test_keep_waited),
        cmocka_unit_test (test_blobrecs),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
