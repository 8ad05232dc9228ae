/* test/liveness.c - keepalive, torpid and lost arithmetic on a fake clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "src/broker/liveness.h"

static void test_durations (void **state)
{
    double v;
    assert_int_equal (liveness_parse_duration ("2", &v), 0);
    assert_true (v == 2.0);
    assert_int_equal (liveness_parse_duration ("0.25s", &v), 0);
    assert_true (v == 0.25);
    assert_int_equal (liveness_parse_duration ("150ms", &v), 0);
    assert_true (v > 0.149 && v < 0.151);
    assert_int_equal (liveness_parse_duration ("2m", &v), 0);
    assert_true (v == 120.0);
    assert_int_equal (liveness_parse_duration ("1h", &v), 0);
    assert_true (v == 3600.0);
    assert_int_equal (liveness_parse_duration ("0", &v), 0);
    assert_true (v == 0.0);
    const char *bad[] = { "", "-1", "abc", "1x", "1 s", "nan", "inf", NULL };
    for (int i = 0; bad[i]; i++) {
        errno = 0;
        assert_int_equal (liveness_parse_duration (bad[i], &v), -1);
        assert_int_equal (errno, EINVAL);
    }
    assert_int_equal (liveness_parse_duration (NULL, &v), -1);
}

static void test_config_check (void **state)
{
    struct liveness_config c;
    char err[128];
    liveness_config_default (&c);
    assert_int_equal (liveness_config_check (&c, err, sizeof (err)), 0);
    c.period = 0;
    assert_int_equal (liveness_config_check (&c, err, sizeof (err)), -1);
    assert_non_null (strstr (err, "keepalive-period"));
    liveness_config_default (&c);
    c.torpid = 1;   /* below the period */
    assert_int_equal (liveness_config_check (&c, err, sizeof (err)), -1);
    assert_non_null (strstr (err, "torpid-timeout"));
    liveness_config_default (&c);
    c.lost = 5;     /* below torpid */
    assert_int_equal (liveness_config_check (&c, err, sizeof (err)), -1);
    assert_non_null (strstr (err, "lost-timeout"));
    c.torpid = 0;   /* torpid disabled: lost alone is fine */
    assert_int_equal (liveness_config_check (&c, NULL, 0), 0);
    c.lost = 0;
    assert_int_equal (liveness_config_check (&c, NULL, 0), 0);
}

static void test_tick (void **state)
{
    struct liveness_config c = { .period = 0.1, .torpid = 0.5, .lost = 1.0 };
    assert_true (liveness_tick_interval (&c) == 0.05);
    c.period = 10;
    assert_true (liveness_tick_interval (&c) == 1.0);
    c.period = 0.001;
    assert_true (liveness_tick_interval (&c) == 0.01);
    assert_true (liveness_stall (0, 100, 0.05) == 0);       /* first tick */
    assert_true (liveness_stall (10, 10.05, 0.05) == 0);    /* on time */
    assert_true (liveness_stall (10, 10.09, 0.05) == 0);    /* a little late */
    double s = liveness_stall (10, 11.05, 0.05);            /* stopped for 1 s */
    assert_true (s > 0.999 && s < 1.001);
    assert_true (liveness_stall (10, 11.9, 1.0) == 0);
    assert_true (liveness_stall (10, 13.0, 1.0) == 2.0);
}

static void test_verdicts (void **state)
{
    struct liveness_config c = { .period = 1, .torpid = 3, .lost = 6 };
    struct peer_clock pc;
    peer_clock_reset (&pc, 100);
    assert_false (liveness_need_keepalive (&pc, 100.5, &c));
    assert_true (liveness_need_keepalive (&pc, 101, &c));
    peer_clock_sent (&pc, 101);
    assert_false (liveness_need_keepalive (&pc, 101.5, &c));
    assert_int_equal (liveness_check (&pc, 102, &c), LIVENESS_OK);
    assert_int_equal (liveness_check (&pc, 103, &c), LIVENESS_TORPID);
    assert_true (pc.torpid);
    assert_int_equal (liveness_check (&pc, 104, &c), LIVENESS_OK);  /* once */
    assert_true (peer_clock_heard (&pc, 104.5));                    /* recovered */
    assert_false (pc.torpid);
    assert_false (peer_clock_heard (&pc, 104.6));
    assert_int_equal (liveness_check (&pc, 109.0, &c), LIVENESS_TORPID);
    assert_int_equal (liveness_check (&pc, 110.6, &c), LIVENESS_LOST);
    /* disabled verdicts */
    c.torpid = 0;
    c.lost = 0;
    peer_clock_reset (&pc, 0);
    assert_int_equal (liveness_check (&pc, 1e6, &c), LIVENESS_OK);
}

static void test_backoff (void **state)
{
    double b = 0;
    b = backoff_next (b, 0.1, 1.0);
    assert_true (b == 0.1);
    b = backoff_next (b, 0.1, 1.0);
    assert_true (b == 0.2);
    b = backoff_next (b, 0.1, 1.0);
    b = backoff_next (b, 0.1, 1.0);
    assert_true (b == 0.8);
    b = backoff_next (b, 0.1, 1.0);
    assert_true (b == 1.0);
    b = backoff_next (b, 0.1, 1.0);
    assert_true (b == 1.0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_durations),
        cmocka_unit_test (test_config_check),
        cmocka_unit_test (test_tick),
        cmocka_unit_test (test_verdicts),
        cmocka_unit_test (test_backoff),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
