/* test/topology.c - k-ary tree arithmetic. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "src/broker/topology.h"

static void test_parent_children (void **state)
{
    uint32_t kids[8];
    assert_int_equal (topology_parent (0, 2), -1);
    assert_int_equal (topology_parent (1, 2), 0);
    assert_int_equal (topology_parent (2, 2), 0);
    assert_int_equal (topology_parent (15, 2), 7);
    assert_int_equal (topology_parent (4, 3), 1);
    assert_int_equal (topology_children (0, 16, 2, kids, 8), 2);
    assert_int_equal (kids[0], 1);
    assert_int_equal (kids[1], 2);
    assert_int_equal (topology_children (7, 16, 2, kids, 8), 1);  /* only 15 */
    assert_int_equal (kids[0], 15);
    assert_int_equal (topology_children (8, 16, 2, kids, 8), 0);
    assert_int_equal (topology_children (0, 1, 2, kids, 8), 0);
    assert_int_equal (topology_children (1, 64, 3, kids, 8), 3);
    assert_int_equal (kids[2], 6);
    assert_int_equal (topology_children (0, 4, 0, kids, 8), -1);
    assert_int_equal (topology_children (5, 4, 2, kids, 8), -1);
}

static void test_subtree (void **state)
{
    assert_true (topology_in_subtree (0, 15, 2));
    assert_true (topology_in_subtree (1, 15, 2));
    assert_true (topology_in_subtree (3, 15, 2));
    assert_false (topology_in_subtree (2, 15, 2));
    assert_true (topology_in_subtree (7, 7, 2));
    assert_int_equal (topology_child_toward (0, 15, 2), 1);
    assert_int_equal (topology_child_toward (1, 15, 2), 3);
    assert_int_equal (topology_child_toward (7, 15, 2), 15);
    assert_int_equal (topology_child_toward (2, 15, 2), -1);
    assert_int_equal (topology_subtree_size (0, 16, 2), 16);
    assert_int_equal (topology_subtree_size (1, 16, 2), 8);   /* 1,3,4,7,8,9,10,15 */
    assert_int_equal (topology_subtree_size (2, 16, 2), 7);
    assert_int_equal (topology_subtree_size (7, 16, 2), 2);
    assert_int_equal (topology_subtree_size (0, 64, 3), 64);
    assert_int_equal (topology_subtree_size (0, 1, 2), 1);
    assert_int_equal (topology_subtree_size (5, 4, 2), 0);
    /* every rank's subtree sizes add up */
    for (uint32_t k = 1; k <= 4; k++) {
        for (uint32_t size = 1; size <= 70; size++) {
            for (uint32_t r = 0; r < size; r++) {
                uint32_t kids[8];
                int n = topology_children (r, size, k, kids, 8);
                uint32_t sum = 1;
                for (int i = 0; i < n; i++)
                    sum += topology_subtree_size (kids[i], size, k);
                assert_int_equal (sum, topology_subtree_size (r, size, k));
            }
        }
    }
}

static void test_depth_distance (void **state)
{
    assert_int_equal (topology_depth (0, 2), 0);
    assert_int_equal (topology_depth (15, 2), 4);
    assert_int_equal (topology_depth (63, 3), 4);
    assert_int_equal (topology_distance (15, 0, 2), 4);
    assert_int_equal (topology_distance (15, 14, 2), 7);  /* 15-7-3-1-0-2-6-14 */
    assert_int_equal (topology_distance (3, 4, 2), 2);
    assert_int_equal (topology_distance (5, 5, 2), 0);
    assert_int_equal (topology_distance (1, 2, 0), -1);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_parent_children),
        cmocka_unit_test (test_subtree),
        cmocka_unit_test (test_depth_distance),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
