/* test/hashmap.c - unit tests for hashmap.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/hashmap.h"

static int destroyed;
static void count_destroy (void *arg)
{
    destroyed++;
    free (arg);
}

static void test_invalid (void **state)
{
    hashmap_destroy (NULL);
    errno = 0;
    assert_int_equal (hashmap_insert (NULL, "a", NULL), -1);
    assert_int_equal (errno, EINVAL);
    assert_null (hashmap_lookup (NULL, "a"));
    assert_int_equal (hashmap_size (NULL), 0);
    assert_null (hashmap_first (NULL, NULL));
}

static void test_basic (void **state)
{
    hashmap_t *map = hashmap_create (count_destroy);
    assert_non_null (map);
    destroyed = 0;
    assert_int_equal (hashmap_insert (map, "a", strdup ("1")), 0);
    assert_int_equal (hashmap_insert (map, "b", strdup ("2")), 0);
    char *dup = strdup ("x");
    assert_int_equal (hashmap_insert (map, "a", dup), -1);
    assert_int_equal (errno, EEXIST);
    free (dup);
    assert_string_equal (hashmap_lookup (map, "a"), "1");
    assert_null (hashmap_lookup (map, "zz"));
    assert_int_equal (errno, ENOENT);
    assert_int_equal (hashmap_update (map, "a", strdup ("3")), 0);
    assert_int_equal (destroyed, 1);
    assert_string_equal (hashmap_lookup (map, "a"), "3");
    char *v = hashmap_take (map, "b");
    assert_string_equal (v, "2");
    free (v);
    assert_int_equal (hashmap_delete (map, "b"), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (hashmap_size (map), 1);
    hashmap_destroy (map);
    assert_int_equal (destroyed, 2);
}

static void test_many_and_iterate (void **state)
{
    hashmap_t *map = hashmap_create (NULL);
    char key[32];
    const int n = 10000;
    for (intptr_t i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "key-%ld", (long)i);
        assert_int_equal (hashmap_insert (map, key, (void *)(i + 1)), 0);
    }
    assert_int_equal (hashmap_size (map), n);
    for (intptr_t i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "key-%ld", (long)i);
        assert_ptr_equal (hashmap_lookup (map, key), (void *)(i + 1));
    }
    /* iterate, deleting every other entry as we go */
    int seen = 0;
    void *val;
    for (const char *k = hashmap_first (map, &val); k; k = hashmap_next (map, &val)) {
        seen++;
        if (((intptr_t)val) % 2 == 0) {
            char cpy[32];
            snprintf (cpy, sizeof (cpy), "%s", k);
            assert_int_equal (hashmap_delete (map, cpy), 0);
        }
    }
    assert_int_equal (seen, n);
    assert_int_equal (hashmap_size (map), n / 2);
    hashmap_clear (map);
    assert_int_equal (hashmap_size (map), 0);
    assert_null (hashmap_first (map, NULL));
    hashmap_destroy (map);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_basic),
        cmocka_unit_test (test_many_and_iterate),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
