/* test/kap_roles.c - unit tests for kap_roles.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kap_opts.h"
#include "kap_roles.h"

static void parse (struct kap_config *cfg, int size, char *argv[])
{
    char err[256];
    int argc = 0;
    while (argv[argc])
        argc++;
    if (kap_opts_parse (cfg, argc, argv, size, err, sizeof (err)) < 0)
        fail_msg ("parse: %s", err);
}

static void test_roles (void **state)
{
    struct kap_config cfg;

    /* 8 ranks, T=6: producers 0..2, consumers 2..5, ranks 6,7 idle */
    parse (&cfg, 8, (char *[]){ "kap", "-T", "6", "-P", "3", "-C", "4", NULL });
    for (int r = 0; r < 8; r++) {
        assert_int_equal (kap_is_producer (&cfg, r), r < 3);
        assert_int_equal (kap_is_consumer (&cfg, r), r >= 2 && r < 6);
    }
    assert_int_equal (kap_nactors (&cfg), 6);
    assert_int_equal (kap_last_actor (&cfg), 5);
    kap_opts_free (&cfg);

    parse (&cfg, 8, (char *[]){ "kap", "-P", "2", "-C", "2", NULL });
    assert_int_equal (kap_nactors (&cfg), 4);   /* 0,1 and 6,7 */
    assert_int_equal (kap_last_actor (&cfg), 7);
    kap_opts_free (&cfg);

    parse (&cfg, 4, (char *[]){ "kap", "-C", "0", NULL });
    assert_int_equal (kap_nactors (&cfg), 4);
    for (int r = 0; r < 4; r++)
        assert_false (kap_is_consumer (&cfg, r));
    kap_opts_free (&cfg);
}

/* kap_nactors's closed form against counting, over every shape of 9 */
static void test_nactors_count (void **state)
{
    struct kap_config cfg;

    memset (&cfg, 0, sizeof (cfg));
    for (int t = 0; t <= 9; t++) {
        for (int p = 0; p <= t; p++) {
            for (int c = 0; c <= t; c++) {
                int n = 0;
                cfg.nprocs = t;
                cfg.nproducers = p;
                cfg.nconsumers = c;
                for (int r = 0; r < t; r++)
                    if (kap_is_producer (&cfg, r) || kap_is_consumer (&cfg, r))
                        n++;
                assert_int_equal (kap_nactors (&cfg), n);
                int last = -1;
                for (int r = 0; r < t; r++)
                    if (kap_is_producer (&cfg, r) || kap_is_consumer (&cfg, r))
                        last = r;
                assert_int_equal (kap_last_actor (&cfg), last);
            }
        }
    }
}

static void test_targets (void **state)
{
    struct kap_config cfg;

    /* everyone both: rank r reads r+1, r+2 ... (mod P) */
    parse (&cfg, 4, (char *[]){ "kap", "-c", "3", NULL });
    assert_int_equal (kap_target (&cfg, 0, 1), 1);
    assert_int_equal (kap_target (&cfg, 3, 1), 0);
    assert_int_equal (kap_target (&cfg, 2, 3), 1);
    assert_int_equal (kap_target (&cfg, 0, 0), -1);
    assert_int_equal (kap_target (&cfg, 0, 4), -1);
    kap_opts_free (&cfg);

    /* more consumers than producers: consumers map onto producers */
    parse (&cfg, 8, (char *[]){ "kap", "-P", "2", "-C", "6", "-a", "1", NULL });
    assert_int_equal (kap_target (&cfg, 0, 1), -1);    /* not a consumer */
    assert_int_equal (kap_target (&cfg, 2, 1), 1);     /* k=0 -> p0, +1 */
    assert_int_equal (kap_target (&cfg, 3, 1), 0);     /* k=1 -> p1, +1 */
    assert_int_equal (kap_target (&cfg, 4, 1), 1);
    kap_opts_free (&cfg);

    /* stride */
    parse (&cfg, 16, (char *[]){ "kap", "-a", "4", "-c", "2", NULL });
    assert_int_equal (kap_target (&cfg, 1, 1), 5);
    assert_int_equal (kap_target (&cfg, 1, 2), 9);
    assert_int_equal (kap_target (&cfg, 15, 1), 3);
    kap_opts_free (&cfg);
}

static void test_names (void **state)
{
    struct kap_config cfg;
    char buf[128];

    parse (&cfg, 8, (char *[]){ "kap", "-d", "3", "-n", "5", NULL });
    assert_int_equal (kap_dir_of (&cfg, 7), 1);
    assert_true (kap_key (&cfg, 2, 7, 0, buf, sizeof (buf)) > 0);
    assert_string_equal (buf, "kap.5.2.1.7");
    assert_true (kap_dir_key (&cfg, 2, 1, buf, sizeof (buf)) > 0);
    assert_string_equal (buf, "kap.5.2.1");
    assert_true (kap_name (&cfg, "sync", buf, sizeof (buf)) > 0);
    assert_string_equal (buf, "kap.5.sync");
    assert_int_equal (kap_key (&cfg, 0, 8, 0, buf, sizeof (buf)), -1);
    assert_int_equal (kap_key (&cfg, -1, 0, 0, buf, sizeof (buf)), -1);
    assert_int_equal (kap_dir_key (&cfg, 0, 3, buf, sizeof (buf)), -1);
    assert_int_equal (kap_name (&cfg, NULL, buf, sizeof (buf)), -1);
    assert_int_equal (kap_key (&cfg, 0, 0, 1, buf, sizeof (buf)), -1);
    kap_opts_free (&cfg);

    /* several keys per iteration */
    parse (&cfg, 4, (char *[]){ "kap", "-K", "16", NULL });
    assert_true (kap_key (&cfg, 3, 2, 15, buf, sizeof (buf)) > 0);
    assert_string_equal (buf, "kap.0.3.0.2-15");
    assert_int_equal (kap_key (&cfg, 3, 2, 16, buf, sizeof (buf)), -1);
    /* the digits written by hand, as snprintf writes them (a negative
     * instance number too), returned and truncated as snprintf does
     */
    char want[128], small[12];
    int its[] = { 0, 9, 10, 99, 100, 12345, 2147483647 };
    for (int n = -1; n < 2; n++) {
        cfg.instance = n == -1 ? -2147483647 - 1 : n * 1000000007;
        for (size_t i = 0; i < sizeof (its) / sizeof (its[0]); i++) {
            int w = snprintf (want, sizeof (want), "kap.%d.%d.0.3-9", cfg.instance,
                              its[i]);
            assert_int_equal (kap_key (&cfg, its[i], 3, 9, buf, sizeof (buf)), w);
            assert_string_equal (buf, want);
            assert_int_equal (kap_key (&cfg, its[i], 3, 9, small, sizeof (small)), w);
            want[sizeof (small) - 1] = '\0';
            assert_string_equal (small, want);
        }
    }
    kap_opts_free (&cfg);
}

static void test_values (void **state)
{
    struct kap_config cfg;
    unsigned char a[1001], b[1001];

    parse (&cfg, 4, (char *[]){ "kap", "-p", "1001", NULL });
    kap_value_fill (&cfg, 0, 1, 0, a);
    kap_value_fill (&cfg, 0, 2, 0, b);
    assert_true (kap_value_check (&cfg, 0, 1, 0, a, sizeof (a)));
    assert_true (kap_value_check (&cfg, 0, 2, 0, b, sizeof (b)));
    assert_memory_not_equal (a, b, sizeof (a));
    assert_false (kap_value_check (&cfg, 0, 2, 0, a, sizeof (a)));  /* wrong producer */
    assert_false (kap_value_check (&cfg, 1, 1, 0, a, sizeof (a)));  /* wrong iteration */
    assert_false (kap_value_check (&cfg, 0, 1, 0, a, sizeof (a) - 1)); /* short */
    assert_false (kap_value_check (&cfg, 0, 1, 0, NULL, 0));
    a[1000] ^= 1;                                                 /* last byte */
    assert_false (kap_value_check (&cfg, 0, 1, 0, a, sizeof (a)));
    kap_opts_free (&cfg);

    /* redundant values: all producers write the same bytes */
    parse (&cfg, 4, (char *[]){ "kap", "-p", "64", "-e", NULL });
    kap_value_fill (&cfg, 3, 0, 0, a);
    kap_value_fill (&cfg, 3, 3, 0, b);
    assert_memory_equal (a, b, 64);
    assert_true (kap_value_check (&cfg, 3, 2, 0, a, 64));
    kap_value_fill (&cfg, 4, 0, 0, b);
    assert_memory_not_equal (a, b, 64);
    kap_opts_free (&cfg);

    /* each key of an iteration has its own value */
    parse (&cfg, 4, (char *[]){ "kap", "-K", "2", NULL });
    kap_value_fill (&cfg, 0, 0, 1, a);
    assert_true (kap_value_check (&cfg, 0, 0, 1, a, 8));
    assert_false (kap_value_check (&cfg, 0, 0, 0, a, 8));
    kap_opts_free (&cfg);

    /* the instance number changes the values */
    parse (&cfg, 4, (char *[]){ "kap", "-n", "1", NULL });
    kap_value_fill (&cfg, 0, 0, 0, a);
    kap_opts_free (&cfg);
    parse (&cfg, 4, (char *[]){ "kap", "-n", "2", NULL });
    assert_false (kap_value_check (&cfg, 0, 0, 0, a, 8));
    kap_opts_free (&cfg);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_roles),
        cmocka_unit_test (test_nactors_count),
        cmocka_unit_test (test_targets),
        cmocka_unit_test (test_names),
        cmocka_unit_test (test_values),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
