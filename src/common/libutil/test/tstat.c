/* test/tstat.c - unit tests for tstat.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include "src/common/libutil/tstat.h"

static void test_tstat (void **state)
{
    struct tstat a, b, all;
    tstat_init (&a);
    tstat_init (&b);
    tstat_init (&all);
    assert_true (tstat_stddev (&a) == 0);
    for (int i = 1; i <= 10; i++) {
        tstat_push (i <= 4 ? &a : &b, i);
        tstat_push (&all, i);
    }
    assert_true (all.min == 1 && all.max == 10);
    assert_true (fabs (tstat_mean (&all) - 5.5) < 1e-12);
    assert_true (fabs (tstat_stddev (&all) - 3.0276503540974917) < 1e-9);
    tstat_merge (&a, &b);
    assert_true (a.count == 10);
    assert_true (fabs (tstat_mean (&a) - tstat_mean (&all)) < 1e-12);
    assert_true (fabs (tstat_stddev (&a) - tstat_stddev (&all)) < 1e-9);
    assert_true (a.min == 1 && a.max == 10);
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_tstat) };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
