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

/* The walk against a brute-force depth-first walk, and its order. */
static int64_t walk (uint32_t r, uint32_t size, uint32_t k, uint32_t *order, int64_t n)
{
    order[n++] = r;
    for (uint64_t c = (uint64_t)k * r + 1; c <= (uint64_t)k * r + k && c < size; c++)
        n = walk (c, size, k, order, n);
    return n;
}

static void test_preorder (void **state)
{
    uint32_t order[200];
    const uint32_t ks[] = { 1, 2, 3, 8 };
    const uint32_t sizes[] = { 1, 2, 7, 64, 100, 200 };

    for (size_t i = 0; i < 4; i++) {
        for (size_t j = 0; j < 6; j++) {
            int64_t n = walk (0, sizes[j], ks[i], order, 0);
            assert_int_equal (n, sizes[j]);
            for (int64_t p = 0; p < n; p++)
                assert_int_equal (topology_preorder (order[p], sizes[j], ks[i]), p);
        }
    }
    /* k=2, 7 ranks: 0 1 3 4 2 5 6 */
    assert_int_equal (topology_preorder (4, 7, 2), 3);
    assert_int_equal (topology_preorder (2, 7, 2), 4);
    assert_int_equal (topology_preorder (7, 7, 2), -1);
    assert_int_equal (topology_preorder (0, 7, 0), -1);
    /* a large tree: the last rank of k=2 and 2^31 ranks is the deepest */
    assert_true (topology_preorder (2147483646u, 2147483647u, 2) > 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_parent_children),
        cmocka_unit_test (test_subtree),
        cmocka_unit_test (test_depth_distance),
        cmocka_unit_test (test_preorder),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
