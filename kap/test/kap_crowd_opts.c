/* test/kap_crowd_opts.c - unit tests for kap_crowd_opts.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kap_crowd_opts.h"

static int count (char *argv[])
{
    int n = 0;
    while (argv[n])
        n++;
    return n;
}

static void test_split (void **state)
{
    struct kap_crowd_config cc;
    char err[256];
    char *argv[] = { "kap-crowd", "-N", "4096", "-P", "8", "--placement=block",
                     "--brokers", "16", "--progress", "-c4", "--json=x.json",
                     NULL };

    assert_int_equal (kap_crowd_opts_parse (&cc, count (argv), argv, err,
                                            sizeof (err)), 0);
    assert_int_equal (cc.participants, 4096);
    assert_int_equal (cc.placement, KAP_PLACE_BLOCK);
    assert_int_equal (cc.brokers, 16);
    assert_true (cc.progress);
    assert_false (cc.help);
    /* KAP's options are passed on in order */
    assert_int_equal (cc.kap_argc, 5);
    assert_string_equal (cc.kap_argv[0], "kap-crowd");
    assert_string_equal (cc.kap_argv[1], "-P");
    assert_string_equal (cc.kap_argv[2], "8");
    assert_string_equal (cc.kap_argv[3], "-c4");
    assert_string_equal (cc.kap_argv[4], "--json=x.json");
    assert_null (cc.kap_argv[5]);
    kap_crowd_opts_free (&cc);
}

static void test_forms (void **state)
{
    struct kap_crowd_config cc;
    char err[256];
    char *a1[] = { "kap-crowd", "-N12", "--participants=7", NULL };
    char *a2[] = { "kap-crowd", "--", "-N", "3", NULL };
    char *a3[] = { "kap-crowd", "--help", NULL };

    assert_int_equal (kap_crowd_opts_parse (&cc, count (a1), a1, err,
                                            sizeof (err)), 0);
    assert_int_equal (cc.participants, 7);     /* the last one wins */
    assert_int_equal (cc.placement, KAP_PLACE_CYCLIC);
    kap_crowd_opts_free (&cc);

    /* after "--" everything is KAP's */
    assert_int_equal (kap_crowd_opts_parse (&cc, count (a2), a2, err,
                                            sizeof (err)), 0);
    assert_int_equal (cc.participants, 0);
    assert_int_equal (cc.kap_argc, 3);
    assert_string_equal (cc.kap_argv[1], "-N");
    kap_crowd_opts_free (&cc);

    assert_int_equal (kap_crowd_opts_parse (&cc, count (a3), a3, err,
                                            sizeof (err)), 0);
    assert_true (cc.help);
    kap_crowd_opts_free (&cc);
}

static void test_errors (void **state)
{
    struct kap_crowd_config cc;
    char err[256];
    char *bad[][4] = {
        { "kap-crowd", "-N", "0", NULL },
        { "kap-crowd", "-N", "x", NULL },
        { "kap-crowd", "-N", NULL, NULL },
        { "kap-crowd", "--participants", NULL, NULL },
        { "kap-crowd", "--brokers=-1", NULL, NULL },
        { "kap-crowd", "--placement=random", NULL, NULL },
        { "kap-crowd", "--placement", NULL, NULL },
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal (kap_crowd_opts_parse (&cc, count (bad[i]), bad[i],
                                                err, sizeof (err)), -1);
        assert_true (strlen (err) > 0);
    }
}

static void test_placement (void **state)
{
    /* cyclic */
    assert_int_equal (kap_crowd_broker_of (KAP_PLACE_CYCLIC, 0, 10, 4), 0);
    assert_int_equal (kap_crowd_broker_of (KAP_PLACE_CYCLIC, 5, 10, 4), 1);
    assert_int_equal (kap_crowd_broker_of (KAP_PLACE_CYCLIC, 9, 10, 4), 1);
    /* block: 10 over 4 = 3,3,2,2 */
    int expect[10] = { 0, 0, 0, 1, 1, 1, 2, 2, 3, 3 };
    for (int r = 0; r < 10; r++)
        assert_int_equal (kap_crowd_broker_of (KAP_PLACE_BLOCK, r, 10, 4),
                          expect[r]);
    /* fewer participants than brokers */
    for (int r = 0; r < 3; r++)
        assert_int_equal (kap_crowd_broker_of (KAP_PLACE_BLOCK, r, 3, 8), r);
    /* every broker gets a share, balanced to within one */
    int per[7] = { 0 };
    for (int r = 0; r < 100; r++) {
        int b = kap_crowd_broker_of (KAP_PLACE_BLOCK, r, 100, 7);
        assert_true (b >= 0 && b < 7);
        per[b]++;
    }
    for (int b = 0; b < 7; b++)
        assert_true (per[b] == 14 || per[b] == 15);
    /* bad arguments */
    assert_int_equal (kap_crowd_broker_of (KAP_PLACE_CYCLIC, 10, 10, 4), -1);
    assert_int_equal (kap_crowd_broker_of (KAP_PLACE_CYCLIC, 0, 10, 0), -1);
    assert_int_equal (kap_crowd_broker_of (KAP_PLACE_BLOCK, -1, 10, 2), -1);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_split),
        cmocka_unit_test (test_forms),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_placement),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
