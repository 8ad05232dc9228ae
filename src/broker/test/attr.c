/* test/attr.c - broker attribute table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "src/broker/attr.h"

static void test_attr (void **state)
{
    attr_table_t *a = attr_create ();
    int flags;
    assert_int_equal (attr_set (a, "rank", "3", ATTR_IMMUTABLE, true), 0);
    assert_int_equal (attr_set (a, "rank", "4", 0, false), -1);
    assert_int_equal (errno, EPERM);
    assert_string_equal (attr_get (a, "rank", &flags), "3");
    assert_true (flags & ATTR_IMMUTABLE);
    assert_null (attr_get (a, "nope", NULL));
    assert_int_equal (errno, ENOENT);
    assert_int_equal (attr_set (a, "x", "1", 0, false), 0);
    assert_int_equal (attr_set (a, "x", "2", 0, false), 0);
    assert_string_equal (attr_get (a, "x", NULL), "2");
    assert_int_equal (attr_set_uint (a, "size", 16, ATTR_IMMUTABLE), 0);
    assert_int_equal (attr_set (a, "", "1", 0, false), -1);
    assert_int_equal (attr_set (NULL, "a", "1", 0, false), -1);
    json_t *o = attr_list (a);
    assert_non_null (o);
    assert_int_equal (json_object_size (o), 3);
    char *s = json_dumps (o, JSON_COMPACT);
    assert_string_equal (s, "{\"rank\":\"3\",\"size\":\"16\",\"x\":\"2\"}");
    free (s);
    json_decref (o);
    attr_destroy (a);
    attr_destroy (NULL);
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_attr) };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
