/* test/kvs_path.c - key normalisation and splitting */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/kvs.h>
#include "src/common/libkvs/kvs_path.h"

static void check_norm (const char *in, const char *out)
{
    char *s = kvs_path_normalize (in);
    assert_non_null (s);
    assert_string_equal (s, out);
    free (s);
}

static void test_normalize (void **state)
{
    check_norm ("a.b.c", "a.b.c");
    check_norm ("..a..b.", "a.b");
    check_norm ("", ".");
    check_norm (".", ".");
    check_norm ("...", ".");
    /* the characters MPI libraries use */
    check_norm ("pmi.-bcast-1-0", "pmi.-bcast-1-0");
    check_norm ("pmi.hostname[3]", "pmi.hostname[3]");
    check_norm ("pmi.-allgather-shm-1-2-seg-1/2", "pmi.-allgather-shm-1-2-seg-1/2");
    check_norm ("1234-0-key0", "1234-0-key0");
    assert_null (kvs_path_normalize ("a\nb"));
    assert_int_equal (errno, EINVAL);
    assert_null (kvs_path_normalize (NULL));
    char *big = malloc (KVS_MAX_KEY + 2);
    memset (big, 'a', KVS_MAX_KEY + 1);
    big[KVS_MAX_KEY + 1] = '\0';
    assert_null (kvs_path_normalize (big));
    assert_int_equal (errno, ENAMETOOLONG);
    free (big);
    char comp[KVS_MAX_COMPONENT + 2];
    memset (comp, 'x', sizeof (comp) - 1);
    comp[sizeof (comp) - 1] = '\0';
    assert_null (kvs_path_normalize (comp));
    assert_int_equal (errno, ENAMETOOLONG);
}

static void test_split_join (void **state)
{
    char **v;
    char *buf;
    assert_int_equal (kvs_path_split ("a.b.c", &v, &buf), 3);
    assert_string_equal (v[0], "a");
    assert_string_equal (v[2], "c");
    free (v);
    free (buf);
    assert_int_equal (kvs_path_split (".", &v, &buf), 0);
    free (v);
    free (buf);
    char *j = kvs_path_join ("a.b", "c");
    assert_string_equal (j, "a.b.c");
    free (j);
    j = kvs_path_join (".", "c");
    assert_string_equal (j, "c");
    free (j);
    assert_true (kvs_path_is_root ("."));
    assert_false (kvs_path_is_root ("a"));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_normalize),
        cmocka_unit_test (test_split_join),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
