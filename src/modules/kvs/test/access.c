/* test/access.c - guests' rights: parsing kvs.guest-access, the guest
 * namespace, and the check of a guest's transaction (keys, fence names,
 * symlinks, malformed input).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <errno.h>
#include <jansson.h>
#include "src/modules/kvs/access.h"

static void test_parse (void **state)
{
    enum kvs_guest_access a;
    assert_int_equal (kvs_guest_access_parse ("none", &a), 0);
    assert_int_equal (a, KVS_GUEST_NONE);
    assert_int_equal (kvs_guest_access_parse ("read", &a), 0);
    assert_int_equal (a, KVS_GUEST_READ);
    assert_int_equal (kvs_guest_access_parse ("own", &a), 0);
    assert_int_equal (a, KVS_GUEST_OWN);
    a = KVS_GUEST_READ;
    errno = 0;
    assert_int_equal (kvs_guest_access_parse ("all", &a), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (a, KVS_GUEST_READ);       /* untouched */
    assert_int_equal (kvs_guest_access_parse ("", &a), -1);
    assert_int_equal (kvs_guest_access_parse (NULL, &a), -1);
    assert_int_equal (kvs_guest_access_parse ("own", NULL), -1);
}

static void test_namespace (void **state)
{
    char buf[32];
    assert_int_equal (kvs_guest_namespace (1000, buf, sizeof (buf)), 6);
    assert_string_equal (buf, "u.1000");
    kvs_guest_namespace (4294967295u, buf, sizeof (buf));
    assert_string_equal (buf, "u.4294967295");
    kvs_guest_namespace (0, buf, sizeof (buf));
    assert_string_equal (buf, "u.0");
}

/* one fence named 'name' with one op putting 'key' (a val, or 'obj') */
static json_t *txn (const char *name, const char *key, json_t *obj)
{
    if (!obj)
        obj = json_pack ("{s:i s:s s:s}", "ver", 1, "type", "val",
                         "data", "eA==");
    return json_pack ("[{s:s s:i s:i s:i s:[[s o]]}]",
                      "name", name, "nprocs", 1, "flags", 0, "count", 1,
                      "ops", key, obj);
}

static int check (const char *name, const char *key, json_t *obj,
                  bool check_name, char *text)
{
    canopy_error_t error;
    json_t *t = txn (name, key, obj);
    memset (&error, 0, sizeof (error));
    errno = 0;
    int rc = kvs_guest_check (1000, t, check_name, &error);
    if (text)
        strcpy (text, error.text);
    json_decref (t);
    return rc;
}

static void test_keys (void **state)
{
    char text[256];
    assert_int_equal (check ("x", "u.1000.a", NULL, false, NULL), 0);
    assert_int_equal (check ("x", "u.1000", NULL, false, NULL), 0);
    assert_int_equal (check ("x", "u.1000.a.b.c", NULL, false, NULL), 0);
    assert_int_equal (check ("x", "u..1000...a.", NULL, false, NULL), 0);
    assert_int_equal (check ("x", ".u.1000.a", NULL, false, NULL), 0);

    assert_int_equal (check ("x", "u.10000.a", NULL, false, text), -1);
    assert_int_equal (errno, EPERM);
    assert_non_null (strstr (text, "only write under u.1000"));
    assert_int_equal (check ("x", "u.100", NULL, false, NULL), -1);
    assert_int_equal (check ("x", "u", NULL, false, NULL), -1);
    assert_int_equal (check ("x", "a.u.1000", NULL, false, NULL), -1);
    assert_int_equal (check ("x", "", NULL, false, NULL), -1);
    assert_int_equal (check ("x", ".", NULL, false, NULL), -1);
}

static void test_unlink (void **state)
{
    json_t *t = json_pack ("[{s:s s:i s:i s:i s:[[s n] [s n]]}]",
                           "name", "x", "nprocs", 1, "flags", 0, "count", 1,
                           "ops", "u.1000.a", "b");
    errno = 0;
    assert_int_equal (kvs_guest_check (1000, t, false, NULL), -1);
    assert_int_equal (errno, EPERM);
    json_decref (t);
}

static void test_symlink (void **state)
{
    char text[256];
    json_t *l = json_pack ("{s:i s:s s:s}", "ver", 1, "type", "symlink",
                           "data", "secret");
    assert_int_equal (check ("x", "u.1000.link", l, false, text), -1);
    assert_int_equal (errno, EPERM);
    assert_non_null (strstr (text, "symlink"));
}

static void test_fence_name (void **state)
{
    char text[256];
    assert_int_equal (check ("u.1000.job1", "u.1000.a", NULL, true, NULL), 0);
    assert_int_equal (check ("job1", "u.1000.a", NULL, true, text), -1);
    assert_int_equal (errno, EPERM);
    assert_non_null (strstr (text, "fences are named under u.1000"));
    /* a commit's name is the service's own: not checked */
    assert_int_equal (check ("job1", "u.1000.a", NULL, false, NULL), 0);
    /* a fence without a name is refused, not crashed on */
    json_t *t = json_pack ("[{s:i s:[]}]", "nprocs", 1, "ops");
    assert_int_equal (kvs_guest_check (1000, t, true, NULL), -1);
    assert_int_equal (errno, EPERM);
    json_decref (t);
}

static void test_malformed (void **state)
{
    json_t *o = json_object ();
    errno = 0;
    assert_int_equal (kvs_guest_check (1000, o, false, NULL), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (kvs_guest_check (1000, NULL, false, NULL), -1);
    json_decref (o);
    /* an op whose key is not a string */
    json_t *t = json_pack ("[{s:s s:[[i n]]}]", "name", "x", "ops", 5);
    assert_int_equal (kvs_guest_check (1000, t, false, NULL), -1);
    assert_int_equal (errno, EPERM);
    json_decref (t);
    /* several fences: one bad key anywhere refuses the lot */
    t = json_pack ("[{s:s s:[[s n]]} {s:s s:[[s n]]}]",
                   "name", "x", "ops", "u.1000.a",
                   "name", "y", "ops", "other");
    assert_int_equal (kvs_guest_check (1000, t, false, NULL), -1);
    json_decref (t);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_parse),
        cmocka_unit_test (test_namespace),
        cmocka_unit_test (test_keys),
        cmocka_unit_test (test_unlink),
        cmocka_unit_test (test_symlink),
        cmocka_unit_test (test_fence_name),
        cmocka_unit_test (test_malformed),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
