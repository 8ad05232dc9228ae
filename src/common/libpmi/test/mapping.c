/* test/mapping.c - unit tests for pmi_mapping.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include "src/common/libpmi/pmi_mapping.h"

static void check_encode (const int *tpn, int n, const char *expect)
{
    char buf[256];
    int len = pmi_mapping_encode (tpn, n, buf, sizeof (buf));
    assert_int_equal (len, strlen (expect));
    assert_string_equal (buf, expect);
}

static void test_encode (void **state)
{
    check_encode ((int[]){ 4 }, 1, "(vector,(0,1,4))");
    check_encode ((int[]){ 1 }, 1, "(vector,(0,1,1))");
    check_encode ((int[]){ 4, 4 }, 2, "(vector,(0,2,4))");
    check_encode ((int[]){ 4, 4, 3 }, 3, "(vector,(0,2,4),(2,1,3))");
    check_encode ((int[]){ 1, 2, 3 }, 3, "(vector,(0,1,1),(1,1,2),(2,1,3))");
    check_encode ((int[]){ 2, 0, 2 }, 3, "(vector,(0,1,2),(2,1,2))");
    check_encode ((int[]){ 0, 3, 3 }, 3, "(vector,(1,2,3))");
}

static void test_encode_errors (void **state)
{
    char buf[32];
    assert_int_equal (pmi_mapping_encode ((int[]){ 0, 0 }, 2, buf, sizeof (buf)), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_mapping_encode ((int[]){ 1, -1 }, 2, buf, sizeof (buf)), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_mapping_encode ((int[]){ 1 }, 0, buf, sizeof (buf)), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_mapping_encode (NULL, 1, buf, sizeof (buf)), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_mapping_encode ((int[]){ INT_MAX, 1 }, 2, buf, sizeof (buf)), -1);
    assert_int_equal (errno, EINVAL);
    /* too small a buffer: every size below the needed one fails cleanly */
    for (size_t size = 0; size < strlen ("(vector,(0,2,4))") + 1; size++) {
        strcpy (buf, "junk");
        assert_int_equal (pmi_mapping_encode ((int[]){ 4, 4 }, 2, buf, size), -1);
        assert_int_equal (errno, EOVERFLOW);
        if (size > 0)
            assert_string_equal (buf, "");
    }
    assert_int_equal (pmi_mapping_encode ((int[]){ 4, 4 }, 2, buf, 17), 16);
}

static void test_node (void **state)
{
    const char *m = "(vector,(0,2,4),(2,1,3))";
    for (int r = 0; r < 4; r++)
        assert_int_equal (pmi_mapping_node (m, r), 0);
    for (int r = 4; r < 8; r++)
        assert_int_equal (pmi_mapping_node (m, r), 1);
    for (int r = 8; r < 11; r++)
        assert_int_equal (pmi_mapping_node (m, r), 2);
    assert_int_equal (pmi_mapping_node (m, 11), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (pmi_mapping_node (m, -1), -1);
    assert_int_equal (errno, EINVAL);
    /* spaces are tolerated */
    assert_int_equal (pmi_mapping_node (" ( vector , (0, 1, 2) ) ", 1), 0);
    /* cyclic */
    m = "(vector,(0,2,1),(0,2,1))";
    assert_int_equal (pmi_mapping_node (m, 0), 0);
    assert_int_equal (pmi_mapping_node (m, 1), 1);
    assert_int_equal (pmi_mapping_node (m, 2), 0);
    assert_int_equal (pmi_mapping_node (m, 3), 1);
}

static void test_malformed (void **state)
{
    const char *bad[] = {
        "",
        "(vector)x",
        "(vector",
        "(vector,)",
        "(vector,(0,1))",
        "(vector,(0,1,2)",
        "(vector,(0,1,2),)",
        "(vector,(0,0,2))",
        "(vector,(0,1,0))",
        "(vector,(-1,1,2))",
        "(vector,(0,1,99999999999))",
        "(vector,(0,1,2))junk",
        "(vectorx,(0,1,2))",
        "(hash,(0,1,2))",
        "(vector,(0,1,4),(junk))",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        errno = 0;
        assert_int_equal (pmi_mapping_node (bad[i], 0), -1);
        assert_int_equal (errno, EINVAL);
        assert_int_equal (pmi_mapping_clique (bad[i], 0, NULL, 0), -1);
    }
    assert_int_equal (pmi_mapping_node (NULL, 0), -1);
    assert_int_equal (errno, EINVAL);
    /* ranks beyond INT_MAX */
    assert_int_equal (pmi_mapping_node ("(vector,(0,2147483647,2))", 5), -1);
    assert_int_equal (errno, EINVAL);
    /* the empty vector maps nothing */
    assert_int_equal (pmi_mapping_node ("(vector)", 0), -1);
    assert_int_equal (errno, ENOENT);
}

static void test_clique (void **state)
{
    const char *m = "(vector,(0,2,4),(2,1,3))";
    int ranks[8];
    int n;

    n = pmi_mapping_clique (m, 5, ranks, 8);
    assert_int_equal (n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal (ranks[i], 4 + i);
    n = pmi_mapping_clique (m, 9, ranks, 8);
    assert_int_equal (n, 3);
    assert_int_equal (ranks[0], 8);
    assert_int_equal (ranks[2], 10);
    /* count only, and truncated output */
    assert_int_equal (pmi_mapping_clique (m, 0, NULL, 0), 4);
    ranks[2] = -7;
    assert_int_equal (pmi_mapping_clique (m, 0, ranks, 2), 4);
    assert_int_equal (ranks[1], 1);
    assert_int_equal (ranks[2], -7);
    /* cyclic: node 1 has ranks 1, 3 */
    n = pmi_mapping_clique ("(vector,(0,2,1),(0,2,1))", 3, ranks, 8);
    assert_int_equal (n, 2);
    assert_int_equal (ranks[0], 1);
    assert_int_equal (ranks[1], 3);
    /* single node */
    n = pmi_mapping_clique ("(vector,(0,1,8))", 7, ranks, 8);
    assert_int_equal (n, 8);
    assert_int_equal (ranks[7], 7);
    /* errors */
    assert_int_equal (pmi_mapping_clique (m, 11, ranks, 8), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (pmi_mapping_clique (m, 0, NULL, 3), -1);
    assert_int_equal (errno, EINVAL);
}

/* encode then decode: every rank lands on the node the layout says */
static void test_roundtrip (void **state)
{
    int layouts[][5] = {
        { 1, 1, 1, 1, 1 },
        { 3, 3, 2, 2, 2 },
        { 8, 0, 0, 1, 7 },
        { 1, 2, 3, 4, 5 },
    };
    char buf[256];
    for (size_t l = 0; l < sizeof (layouts) / sizeof (layouts[0]); l++) {
        assert_true (pmi_mapping_encode (layouts[l], 5, buf, sizeof (buf)) > 0);
        int rank = 0;
        for (int node = 0; node < 5; node++) {
            for (int j = 0; j < layouts[l][node]; j++, rank++) {
                assert_int_equal (pmi_mapping_node (buf, rank), node);
                assert_int_equal (pmi_mapping_clique (buf, rank, NULL, 0),
                                  layouts[l][node]);
            }
        }
        assert_int_equal (pmi_mapping_node (buf, rank), -1);
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_encode),
        cmocka_unit_test (test_encode_errors),
        cmocka_unit_test (test_node),
        cmocka_unit_test (test_malformed),
        cmocka_unit_test (test_clique),
        cmocka_unit_test (test_roundtrip),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
