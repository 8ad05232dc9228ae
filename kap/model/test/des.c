/* test/des.c - the event engine: order, ties, stop, bad arguments. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <cmocka.h>
#include "des.h"

static int64_t seen[64];
static double when[64];
static int nseen;

static void record (des_t *d, void *arg, int64_t a, int64_t b)
{
    when[nseen] = des_now (d);
    seen[nseen++] = a;
    if (b > 0)      /* chain: schedule another */
        assert_int_equal (des_schedule (d, (double)b, record, arg, a + 100, 0), 0);
    if (b < 0)
        des_stop (d);
}

static void test_order (void **state)
{
    des_t *d = des_create ();
    nseen = 0;
    /* out of order, with ties kept in scheduling order */
    assert_int_equal (des_schedule (d, 5, record, NULL, 1, 0), 0);
    assert_int_equal (des_schedule (d, 1, record, NULL, 2, 0), 0);
    assert_int_equal (des_schedule (d, 5, record, NULL, 3, 0), 0);
    assert_int_equal (des_schedule (d, 0, record, NULL, 4, 2), 0);
    assert_int_equal (des_schedule (d, 3, record, NULL, 5, 0), 0);
    assert_int_equal (des_pending (d), 5);
    assert_int_equal (des_run (d), 6);
    int64_t expect[] = { 4, 2, 104, 5, 1, 3 };
    double at[] = { 0, 1, 2, 3, 5, 5 };
    assert_int_equal (nseen, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal (seen[i], expect[i]);
        assert_true (when[i] == at[i]);
    }
    assert_true (des_now (d) == 5);
    des_destroy (d);
}

static double last_t;
static int nordered;

static void ordered (des_t *d, void *arg, int64_t a, int64_t b)
{
    assert_true (des_now (d) >= last_t);
    last_t = des_now (d);
    nordered++;
}

static void test_many (void **state)
{
    des_t *d = des_create ();
    /* a heap of thousands stays ordered */
    last_t = -1;
    nordered = 0;
    for (int i = 0; i < 5000; i++)
        assert_int_equal (des_schedule (d, (i * 7919) % 1000, ordered, NULL, 0, 0), 0);
    assert_int_equal (des_run (d), 5000);
    assert_int_equal (nordered, 5000);
    assert_int_equal (des_pending (d), 0);
    des_destroy (d);
}

static void test_stop (void **state)
{
    des_t *d = des_create ();
    nseen = 0;
    assert_int_equal (des_schedule (d, 1, record, NULL, 1, -1), 0);
    assert_int_equal (des_schedule (d, 2, record, NULL, 2, 0), 0);
    assert_int_equal (des_run (d), 1);
    assert_int_equal (des_pending (d), 1);
    assert_int_equal (des_run (d), 1);
    assert_int_equal (seen[1], 2);
    des_destroy (d);
}

static void test_errors (void **state)
{
    des_t *d = des_create ();
    assert_int_equal (des_schedule (d, -1, record, NULL, 0, 0), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (des_schedule (d, 1, NULL, NULL, 0, 0), -1);
    assert_int_equal (des_schedule (NULL, 1, record, NULL, 0, 0), -1);
    assert_int_equal (des_run (NULL), 0);
    des_destroy (d);
    des_destroy (NULL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_order),
        cmocka_unit_test (test_many),
        cmocka_unit_test (test_stop),
        cmocka_unit_test (test_errors),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
