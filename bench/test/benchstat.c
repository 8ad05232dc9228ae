/* test/benchstat.c - unit tests for benchstat.c: summary statistics and
 * the nearest-rank percentile, including the empty and one-sample cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "bench/benchstat.h"

static void test_empty (void **state)
{
    struct benchstat *bs = benchstat_create ();
    struct benchstat_summary sum;

    assert_non_null (bs);
    benchstat_summary (bs, &sum);
    assert_int_equal (sum.count, 0);
    assert_true (sum.mean == 0 && sum.median == 0 && sum.p99 == 0);
    assert_true (benchstat_percentile (NULL, 0, 50) == 0);
    benchstat_destroy (bs);
    benchstat_destroy (NULL);
}

static void test_one (void **state)
{
    struct benchstat *bs = benchstat_create ();
    struct benchstat_summary sum;

    assert_int_equal (benchstat_push (bs, 42.5), 0);
    benchstat_summary (bs, &sum);
    assert_int_equal (sum.count, 1);
    assert_true (sum.mean == 42.5 && sum.median == 42.5 && sum.p99 == 42.5);
    assert_true (sum.min == 42.5 && sum.max == 42.5);
    benchstat_destroy (bs);
}

static void test_many (void **state)
{
    struct benchstat *bs = benchstat_create ();
    struct benchstat_summary sum;

    /* 1..2000 pushed in reverse order: growth beyond the first block and
     * sorting are both exercised.
     */
    for (int i = 2000; i >= 1; i--)
        assert_int_equal (benchstat_push (bs, i), 0);
    assert_int_equal (benchstat_count (bs), 2000);
    benchstat_summary (bs, &sum);
    assert_int_equal (sum.count, 2000);
    assert_true (fabs (sum.mean - 1000.5) < 1e-9);
    assert_true (sum.median == 1000.5);     /* even count: mean of middle two */
    assert_true (sum.p99 == 1980);          /* nearest rank: ceil(0.99*2000) */
    assert_true (sum.min == 1 && sum.max == 2000);
    benchstat_destroy (bs);
}

static void test_percentile (void **state)
{
    double v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    assert_true (benchstat_percentile (v, 10, 50) == 5);
    assert_true (benchstat_percentile (v, 10, 99) == 10);
    assert_true (benchstat_percentile (v, 10, 100) == 10);
    assert_true (benchstat_percentile (v, 10, 0) == 1);
    assert_true (benchstat_percentile (v, 10, 0.001) == 1);
    assert_true (benchstat_percentile (v, 3, 50) == 2);  /* odd count */
}

static void test_print (void **state)
{
    struct benchstat_summary sum = { 3, 2.0, 2.0, 3.0, 1.0, 3.0 };
    char buf[256];
    FILE *fp = fmemopen (buf, sizeof (buf), "w");

    assert_non_null (fp);
    benchstat_print (fp, "x", 8, &sum);
    fclose (fp);
    assert_string_equal (buf, "x: n=3 size=8 mean=2.0 median=2.0 p99=3.0 "
                              "min=1.0 max=3.0 us\n");
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_empty),
        cmocka_unit_test (test_one),
        cmocka_unit_test (test_many),
        cmocka_unit_test (test_percentile),
        cmocka_unit_test (test_print),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
