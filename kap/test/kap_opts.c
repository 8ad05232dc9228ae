/* test/kap_opts.c - unit tests for kap_opts.c (no MPI, no broker) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kap_opts.h"

#define ARGC(a) ((int)(sizeof (a) / sizeof ((a)[0])) - 1)

static void test_defaults (void **state)
{
    struct kap_config cfg;
    char err[256];
    char *argv[] = { "kap", NULL };

    assert_int_equal (kap_opts_parse (&cfg, ARGC (argv), argv, 16, err,
                                      sizeof (err)), 0);
    assert_int_equal (cfg.size, 16);
    assert_int_equal (cfg.nprocs, 16);
    assert_int_equal (cfg.nproducers, 16);
    assert_int_equal (cfg.nconsumers, 16);
    assert_int_equal (cfg.value_size, 8);
    assert_int_equal (cfg.access_count, 1);
    assert_int_equal (cfg.access_stride, 1);
    assert_int_equal (cfg.iter_producer, 1);
    assert_int_equal (cfg.keys_per_iter, 1);
    assert_int_equal (cfg.iter_commit, 0);
    assert_int_equal (cfg.iter_consumer, 1);
    assert_int_equal (cfg.sync_type, KAP_SYNC_FENCE);
    assert_int_equal (cfg.commit_type, KAP_COMMIT_FENCE);
    assert_int_equal (cfg.ndirs, 1);
    assert_int_equal (cfg.read_rank, -1);
    assert_int_equal (cfg.straggler_ms, 0);
    assert_false (cfg.redundant);
    assert_false (cfg.inject_corruption);
    assert_null (cfg.uri_file);
    assert_null (cfg.json_file);
    kap_opts_free (&cfg);
}

static void test_long_options (void **state)
{
    struct kap_config cfg;
    char err[256];
    char *argv[] = { "kap", "--total-num-proc=12", "--nproducers=8",
                     "--nconsumers", "4", "--value-size=1k",
                     "--cons-acc-count=3", "--access-stride=2",
                     "--iter-producer=5", "--keys-per-iter=3", "--iter-commit=2",
                     "--iter-commit-type=s", "--iter-consumer=9",
                     "--sync-type=causal", "--ndirs=4", "--redundant-val",
                     "--instance-num=7", "--read-rank=0", "--list-config",
                     "--uri-file=uris", "--json=out.json",
                     "--inject-corruption", "--straggler=30", NULL };

    assert_int_equal (kap_opts_parse (&cfg, ARGC (argv), argv, 16, err,
                                      sizeof (err)), 0);
    assert_int_equal (cfg.nprocs, 12);
    assert_int_equal (cfg.nproducers, 8);
    assert_int_equal (cfg.nconsumers, 4);
    assert_int_equal (cfg.value_size, 1024);
    assert_int_equal (cfg.access_count, 3);
    assert_int_equal (cfg.access_stride, 2);
    assert_int_equal (cfg.iter_producer, 5);
    assert_int_equal (cfg.keys_per_iter, 3);
    assert_int_equal (cfg.iter_commit, 2);
    assert_int_equal (cfg.commit_type, KAP_COMMIT_SERIAL);
    assert_int_equal (cfg.iter_consumer, 5);    /* clamped */
    assert_int_equal (cfg.sync_type, KAP_SYNC_CAUSAL);
    assert_int_equal (cfg.ndirs, 4);
    assert_true (cfg.redundant);
    assert_int_equal (cfg.instance, 7);
    assert_int_equal (cfg.read_rank, 0);
    assert_int_equal (cfg.straggler_ms, 30);
    assert_true (cfg.list_config);
    assert_true (cfg.inject_corruption);
    assert_string_equal (cfg.uri_file, "uris");
    assert_string_equal (cfg.json_file, "out.json");
    kap_opts_free (&cfg);
}

static void test_short_options (void **state)
{
    struct kap_config cfg;
    char err[256];
    char *argv[] = { "kap", "-T", "4", "-P", "2", "-C", "3", "-p", "64",
                     "-c", "2", "-a", "3", "-i", "4", "-K", "2", "-f", "1", "-t", "f",
                     "-j", "2", "-s", "f", "-d", "2", "-e", "-n", "3", "-l",
                     NULL };

    assert_int_equal (kap_opts_parse (&cfg, ARGC (argv), argv, 8, err,
                                      sizeof (err)), 0);
    assert_int_equal (cfg.nprocs, 4);
    assert_int_equal (cfg.nproducers, 2);
    assert_int_equal (cfg.nconsumers, 3);
    assert_int_equal (cfg.value_size, 64);
    assert_int_equal (cfg.access_count, 2);
    assert_int_equal (cfg.access_stride, 3);
    assert_int_equal (cfg.iter_producer, 4);
    assert_int_equal (cfg.keys_per_iter, 2);
    assert_int_equal (cfg.iter_commit, 1);
    assert_int_equal (cfg.commit_type, KAP_COMMIT_FENCE);
    assert_int_equal (cfg.iter_consumer, 2);
    assert_int_equal (cfg.sync_type, KAP_SYNC_FENCE);
    assert_int_equal (cfg.ndirs, 2);
    assert_true (cfg.redundant);
    assert_int_equal (cfg.instance, 3);
    assert_true (cfg.list_config);
    kap_opts_free (&cfg);

    /* -T alone lowers the producer and consumer defaults with it */
    char *argv2[] = { "kap", "-T", "3", NULL };
    assert_int_equal (kap_opts_parse (&cfg, ARGC (argv2), argv2, 8, err,
                                      sizeof (err)), 0);
    assert_int_equal (cfg.nproducers, 3);
    assert_int_equal (cfg.nconsumers, 3);
    kap_opts_free (&cfg);
}

static void test_help (void **state)
{
    struct kap_config cfg;
    char err[256];
    char *argv[] = { "kap", "--help", NULL };

    assert_int_equal (kap_opts_parse (&cfg, ARGC (argv), argv, 1, err,
                                      sizeof (err)), 0);
    assert_true (cfg.help);
    kap_opts_free (&cfg);
    assert_non_null (strstr (kap_opts_usage (), "--iter-commit-type"));
    assert_null (strstr (kap_opts_usage (), "inject"));   /* hidden */
}

static void expect_error (int size, const char *want, char *argv[])
{
    struct kap_config cfg;
    char err[256] = "";
    int argc = 0;

    while (argv[argc])
        argc++;
    assert_int_equal (kap_opts_parse (&cfg, argc, argv, size, err,
                                      sizeof (err)), -1);
    if (!strstr (err, want))
        fail_msg ("error '%s' does not mention '%s'", err, want);
}

static void test_errors (void **state)
{
    expect_error (4, "--total-num-proc", (char *[]){ "kap", "-T", "5", NULL });
    expect_error (4, "--total-num-proc", (char *[]){ "kap", "-T", "0", NULL });
    /* kap-crowd shares these texts: no "MPI" in them */
    expect_error (4, "number of ranks (participants) (4)",
                  (char *[]){ "kap", "-T", "5", NULL });
    expect_error (4, "--nproducers", (char *[]){ "kap", "-P", "0", NULL });
    expect_error (4, "--nproducers", (char *[]){ "kap", "-T", "2", "-P", "3", NULL });
    expect_error (4, "--nconsumers", (char *[]){ "kap", "-C", "9", NULL });
    expect_error (4, "--value-size", (char *[]){ "kap", "-p", "0", NULL });
    expect_error (4, "--value-size", (char *[]){ "kap", "-p", "12q", NULL });
    expect_error (4, "--value-size", (char *[]){ "kap", "-p", "100m", NULL });
    expect_error (4, "--cons-acc-count", (char *[]){ "kap", "-c", "0", NULL });
    expect_error (4, "--access-stride", (char *[]){ "kap", "-a", "0", NULL });
    expect_error (4, "--iter-producer", (char *[]){ "kap", "-i", "0", NULL });
    expect_error (4, "--iter-commit", (char *[]){ "kap", "-f", "-1", NULL });
    expect_error (4, "--keys-per-iter", (char *[]){ "kap", "-K", "0", NULL });
    expect_error (4, "--iter-commit-type", (char *[]){ "kap", "-t", "x", NULL });
    expect_error (4, "--sync-type", (char *[]){ "kap", "-s", "x", NULL });
    expect_error (4, "--ndirs", (char *[]){ "kap", "-d", "5", NULL });
    expect_error (4, "--instance-num", (char *[]){ "kap", "-n", "-2", NULL });
    expect_error (4, "--read-rank", (char *[]){ "kap", "-R", "-3", NULL });
    expect_error (4, "--straggler", (char *[]){ "kap", "--straggler=-1", NULL });
    expect_error (4, "--straggler", (char *[]){ "kap", "--straggler", "60001", NULL });
    expect_error (4, "--straggler", (char *[]){ "kap", "--straggler=1.5", NULL });
    expect_error (4, "not an integer", (char *[]){ "kap", "-c", "two", NULL });
    expect_error (4, "unknown option '--bogus'", (char *[]){ "kap", "--bogus", NULL });
    expect_error (4, "unknown option '-z'", (char *[]){ "kap", "-z", NULL });
    expect_error (4, "needs an argument", (char *[]){ "kap", "-P", NULL });
    expect_error (4, "unexpected argument", (char *[]){ "kap", "extra", NULL });
}

static void test_parse_size (void **state)
{
    int v;
    assert_int_equal (kap_parse_size ("8", &v), 0);
    assert_int_equal (v, 8);
    assert_int_equal (kap_parse_size ("32k", &v), 0);
    assert_int_equal (v, 32768);
    assert_int_equal (kap_parse_size ("2M", &v), 0);
    assert_int_equal (v, 2 * 1024 * 1024);
    assert_int_equal (kap_parse_size ("", &v), -1);
    assert_int_equal (kap_parse_size ("-1", &v), -1);
    assert_int_equal (kap_parse_size ("1kk", &v), -1);
    assert_int_equal (kap_parse_size ("99999999999", &v), -1);
    assert_int_equal (kap_parse_size ("4096m", &v), -1);
}

static void test_config_json (void **state)
{
    struct kap_config cfg;
    char err[256];
    char *argv[] = { "kap", "-s", "c", "-e", "-t", "s", NULL };
    json_t *o;

    assert_int_equal (kap_opts_parse (&cfg, ARGC (argv), argv, 4, err,
                                      sizeof (err)), 0);
    assert_non_null ((o = kap_config_json (&cfg)));
    assert_int_equal (json_integer_value (json_object_get (o, "nproducers")), 4);
    assert_string_equal (json_string_value (json_object_get (o, "sync_type")),
                         "causal");
    assert_string_equal (json_string_value (json_object_get (o, "iter_commit_type")),
                         "serial");
    assert_true (json_is_true (json_object_get (o, "redundant_val")));
    json_decref (o);
    kap_opts_free (&cfg);
    kap_opts_free (NULL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_defaults),
        cmocka_unit_test (test_long_options),
        cmocka_unit_test (test_short_options),
        cmocka_unit_test (test_help),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_parse_size),
        cmocka_unit_test (test_config_json),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
