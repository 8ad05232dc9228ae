/* test/list.c - unit tests for list.h */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "src/common/libutil/list.h"

struct item {
    int v;
    struct list_node node;
};

static void test_list (void **state)
{
    struct list_node head;
    struct item items[5];
    struct list_node *pos, *tmp;
    int expect = 0;

    list_init (&head);
    assert_true (list_empty (&head));
    for (int i = 0; i < 5; i++) {
        items[i].v = i;
        list_add_tail (&head, &items[i].node);
    }
    assert_int_equal (list_length (&head), 5);
    list_for_each (pos, &head) {
        assert_int_equal (list_entry (pos, struct item, node)->v, expect++);
    }
    list_for_each_safe (pos, tmp, &head) {
        struct item *it = list_entry (pos, struct item, node);
        if (it->v % 2 == 0)
            list_del (&it->node);
    }
    assert_int_equal (list_length (&head), 2);
    assert_int_equal (list_first_entry (&head, struct item, node)->v, 1);
    list_add_head (&head, &items[0].node);
    assert_int_equal (list_first_entry (&head, struct item, node)->v, 0);
    assert_false (list_node_linked (&items[2].node));
    assert_true (list_node_linked (&items[0].node));
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_list) };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
