/* test/treeobj_index.c - indexing an encoded directory: for random
 * directories (randdir.h) every present and many absent names are
 * found as treeobj_dir_scan finds them (the same span, decoding to the
 * entry a full decode has); a duplicate name yields its last value; the
 * empty directory; what the scan declines is declined (EPROTO, nothing
 * returned); bad arguments; the count and the memory reported.
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
#include "src/common/libkvs/treeobj_scan.h"
#include "src/common/libkvs/treeobj_index.h"

#include "randdir.h"

/* ix and the scan agree on name in enc, and a hit decodes to dir's entry */
static void check (const treeobj_index_t *ix, const char *enc, size_t len,
                   json_t *dir, const char *name)
{
    size_t off = 111, vlen = 222, soff = 0, svlen = 0;
    int rc = treeobj_index_find (ix, enc, name, &off, &vlen);
    int src = treeobj_dir_scan (enc, len, name, &soff, &svlen);

    assert_int_equal (rc, src);
    if (rc == 0) {
        assert_null (treeobj_dir_get (dir, name));
        assert_int_equal (off, 111);
        assert_int_equal (vlen, 222);
        return;
    }
    assert_int_equal (rc, 1);
    assert_int_equal (off, soff);
    assert_int_equal (vlen, svlen);
    json_t *got = treeobj_decode (enc + off, vlen);
    assert_non_null (got);
    assert_true (json_equal (got, treeobj_dir_get (dir, name)));
    json_decref (got);
}

static void test_random_dirs (void **state)
{
    unsigned seed = 7;
    char name[16];

    for (int round = 0; round < 60; round++) {
        json_t *dir = randdir (round < 50 ? rand_r (&seed) % 40 : 500 + round, &seed);
        size_t len;
        char *enc = treeobj_encode (dir, &len);
        assert_non_null (enc);
        treeobj_index_t *ix = treeobj_index_create (enc, len);
        assert_non_null (ix);
        assert_int_equal (treeobj_index_count (ix), treeobj_dir_count (dir));
        assert_true (treeobj_index_bytes (ix) > 0);
        const char *key;
        json_t *v;
        json_object_foreach (treeobj_data (dir), key, v)
            check (ix, enc, len, dir, key);
        for (int i = 0; i < 50; i++) {
            randname (name, sizeof (name), &seed);
            check (ix, enc, len, dir, name);
        }
        check (ix, enc, len, dir, "");
        treeobj_index_destroy (ix);
        free (enc);
        json_decref (dir);
    }
}

static void test_duplicate_and_empty (void **state)
{
    const char *dup = "{\"data\":{\"a\":{\"data\":\"x\",\"type\":\"symlink\",\"ver\":1},"
                      "\"b\":{\"data\":\"y\",\"type\":\"symlink\",\"ver\":1},"
                      "\"a\":{\"data\":\"z\",\"type\":\"symlink\",\"ver\":1}},"
                      "\"type\":\"dir\",\"ver\":1}";
    const char *empty = "{\"data\":{},\"type\":\"dir\",\"ver\":1}";
    size_t off, vlen;
    treeobj_index_t *ix = treeobj_index_create (dup, strlen (dup));

    assert_non_null (ix);
    assert_int_equal (treeobj_index_count (ix), 2);
    assert_int_equal (treeobj_index_find (ix, dup, "a", &off, &vlen), 1);
    assert_int_equal (strncmp (dup + off, "{\"data\":\"z\"", 11), 0);
    treeobj_index_destroy (ix);

    assert_non_null ((ix = treeobj_index_create (empty, strlen (empty))));
    assert_int_equal (treeobj_index_count (ix), 0);
    assert_int_equal (treeobj_index_find (ix, empty, "a", &off, &vlen), 0);
    treeobj_index_destroy (ix);
}

static void test_declined (void **state)
{
    const char *bad[] = {
        "{\"data\":{\"a\\\"b\":1},\"type\":\"dir\",\"ver\":1}",
        "{ \"data\":{},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{},\"type\":\"dir\",\"ver\":1} ",
        "{\"data\":{\"count\":3,\"level\":0,\"refs\":[]},\"type\":\"hdir\",\"ver\":1}",
        "{\"data\":{\"a\":tru},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a\":1},\"type\":\"dir\",\"ver\":1",
        "",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        assert_null (treeobj_index_create (bad[i], strlen (bad[i])));
        assert_int_equal (errno, EPROTO);
    }
    errno = 0;
    assert_null (treeobj_index_create (NULL, 0));
    assert_int_equal (errno, EINVAL);
    size_t off, vlen;
    const char *empty = "{\"data\":{},\"type\":\"dir\",\"ver\":1}";
    treeobj_index_t *ix = treeobj_index_create (empty, strlen (empty));
    assert_int_equal (treeobj_index_find (ix, empty, NULL, &off, &vlen), -1);
    assert_int_equal (treeobj_index_find (NULL, empty, "a", &off, &vlen), -1);
    assert_int_equal (errno, EINVAL);
    treeobj_index_destroy (ix);
    treeobj_index_destroy (NULL);
    assert_int_equal (treeobj_index_count (NULL), 0);
    assert_int_equal (treeobj_index_bytes (NULL), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_random_dirs),
        cmocka_unit_test (test_duplicate_and_empty),
        cmocka_unit_test (test_declined),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
