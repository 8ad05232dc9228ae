/* test/objcache.c - the KVS object cache: typed entries, one load per
 * object for many waiters, failed loads, expiry.
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

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_wait),
        cmocka_unit_test (test_failed_load),
        cmocka_unit_test (test_expire),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
