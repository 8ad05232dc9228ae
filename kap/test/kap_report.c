/* test/kap_report.c - unit tests for kap_report.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <cmocka.h>
#include "kap_opts.h"
#include "kap_report.h"

static void make_result (struct kap_config *cfg, struct kap_result *res,
                         long errors)
{
    char err[256];
    char *argv[] = { "kap", "-p", "1k", "-i", "2", "-j", "2", NULL };
    struct tstat ts;
    double vac[KAP_VAC_LEN];

    if (kap_opts_parse (cfg, 7, argv, 4, err, sizeof (err)) < 0)
        fail_msg ("%s", err);
    memset (res, 0, sizeof (*res));
    for (int m = 0; m < KAP_NMETRICS; m++) {
        if (m == KAP_COMMIT)
            continue;           /* no intermediate commits */
        tstat_init (&ts);
        for (int i = 0; i < 8; i++)
            tstat_push (&ts, 0.001 * (m + 1) * (i + 1));
        kap_vac_from_tstat (&ts, vac);
        kap_vac_summary (vac, &res->metric[m]);
    }
    for (int p = 0; p < KAP_NPHASES; p++) {
        res->wall_max[p] = 0.5 * (p + 1);
        res->wall_min[p] = 0.1 * (p + 1);
    }
    res->brokers = 2;
    res->nuris = 2;
    res->errors = errors;
}

static void test_names (void **state)
{
    assert_string_equal (kap_metric_name (KAP_SYNC), "sync");
    assert_null (kap_metric_name (KAP_NMETRICS));
    assert_string_equal (kap_phase_name (KAP_PHASE_CONSUMER), "consumer");
    assert_null (kap_phase_name (-1));
    assert_int_equal (kap_metric_phase (KAP_COMMIT), KAP_PHASE_PRODUCER);
    assert_int_equal (kap_metric_phase (KAP_GET), KAP_PHASE_CONSUMER);
}

static void test_throughput (void **state)
{
    struct kap_config cfg;
    struct kap_result res;

    make_result (&cfg, &res, 0);
    /* 8 puts in a producer phase of 0.5 s at most */
    assert_true (fabs (kap_throughput (&res, KAP_PUT) - 16) < 1e-9);
    assert_true (fabs (kap_bandwidth (&cfg, &res, KAP_PUT) - 16 * 1024) < 1e-6);
    /* 8 gets in 1.5 s */
    assert_true (fabs (kap_throughput (&res, KAP_GET) - 8 / 1.5) < 1e-9);
    assert_true (kap_bandwidth (&cfg, &res, KAP_SYNC) == 0);
    res.wall_max[KAP_PHASE_SYNC] = 0;
    assert_true (kap_throughput (&res, KAP_SYNC) == 0);
    kap_opts_free (&cfg);
}

static void test_json (void **state)
{
    struct kap_config cfg;
    struct kap_result res;
    json_t *doc, *m;

    make_result (&cfg, &res, 0);
    assert_non_null ((doc = kap_report_json (&cfg, &res)));
    assert_true (json_is_true (json_object_get (doc, "ok")));
    assert_int_equal (json_integer_value (json_object_get (doc, "brokers")), 2);
    assert_int_equal (json_integer_value (json_object_get (
                        json_object_get (doc, "config"), "value_size")), 1024);
    const char *metrics[] = { "put", "commit", "sync", "get" };
    for (int i = 0; i < 4; i++) {
        m = json_object_get (json_object_get (doc, "metrics"), metrics[i]);
        assert_non_null (m);
        assert_non_null (json_object_get (m, "max_us"));
        assert_non_null (json_object_get (m, "min_us"));
        assert_non_null (json_object_get (m, "mean_us"));
        assert_non_null (json_object_get (m, "stddev_us"));
        assert_non_null (json_object_get (m, "throughput_ops"));
        assert_non_null (json_object_get (json_object_get (m, "rank_mean_us"),
                                          "avg"));
    }
    m = json_object_get (json_object_get (doc, "metrics"), "get");
    assert_true (fabs (json_real_value (json_object_get (m, "max_us"))
                       - 4 * 0.008 * 1e6) < 1e-6);
    assert_non_null (json_object_get (m, "bandwidth_Bps"));
    m = json_object_get (json_object_get (doc, "metrics"), "sync");
    assert_null (json_object_get (m, "bandwidth_Bps"));
    const char *phases[] = { "producer", "sync", "consumer", "total" };
    for (int i = 0; i < 4; i++) {
        m = json_object_get (json_object_get (doc, "wallclock"), phases[i]);
        assert_true (fabs (json_real_value (json_object_get (m, "max_us"))
                           - 0.5e6 * (i + 1)) < 1e-3);
    }
    json_decref (doc);
    kap_opts_free (&cfg);

    /* how the gets were answered */
    make_result (&cfg, &res, 0);
    res.gets_shared = 7;
    res.gets_asked = 1;
    assert_non_null ((doc = kap_report_json (&cfg, &res)));
    m = json_object_get (doc, "reads");
    assert_int_equal (json_integer_value (json_object_get (m, "shared")), 7);
    assert_int_equal (json_integer_value (json_object_get (m, "asked")), 1);
    json_decref (doc);
    kap_opts_free (&cfg);

    make_result (&cfg, &res, 3);
    assert_non_null ((doc = kap_report_json (&cfg, &res)));
    assert_true (json_is_false (json_object_get (doc, "ok")));
    assert_int_equal (json_integer_value (json_object_get (doc, "errors")), 3);
    json_decref (doc);
    kap_opts_free (&cfg);
    assert_null (kap_report_json (NULL, &res));
}

/* kap_report_print's text (free it). */
static char *report_text (const struct kap_config *cfg, const struct kap_result *res)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);
    assert_non_null (f);
    kap_report_print (f, cfg, res);
    fclose (f);
    return text;
}

/* The sync timeline: first/last entry and answer over the ranks folded
 * in, in the JSON only when some rank synced.
 */
static void test_timeline (void **state)
{
    struct kap_config cfg;
    struct kap_result res;
    json_t *doc, *tl;
    char *text = NULL;

    make_result (&cfg, &res, 0);
    assert_non_null ((doc = kap_report_json (&cfg, &res)));
    assert_null (json_object_get (doc, "sync_timeline"));
    json_decref (doc);

    kap_timeline_add (&res, 100.002, 100.010);
    kap_timeline_add (&res, 100.000, 100.012);
    kap_timeline_add (&res, 100.004, 100.011);
    assert_int_equal (res.sync_ranks, 3);
    assert_true (res.sync_enter_first == 100.000 && res.sync_enter_last == 100.004);
    assert_true (res.sync_answer_first == 100.010 && res.sync_answer_last == 100.012);
    assert_non_null ((doc = kap_report_json (&cfg, &res)));
    assert_non_null ((tl = json_object_get (doc, "sync_timeline")));
    assert_int_equal (json_integer_value (json_object_get (tl, "ranks")), 3);
    assert_true (fabs (json_real_value (json_object_get (tl, "enter_spread_us"))
                       - 4000) < 1e-3);
    assert_true (fabs (json_real_value (json_object_get (tl, "answer_spread_us"))
                       - 2000) < 1e-3);
    assert_true (fabs (json_real_value (json_object_get (
                        tl, "last_enter_to_first_answer_us")) - 6000) < 1e-3);
    json_decref (doc);

    text = report_text (&cfg, &res);
    assert_non_null (strstr (text, "sync timeline: entries spread over 4.000 ms,"
                             " 6.000 ms from the last entry to the first answer,"
                             " answers spread over 2.000 ms"));
    assert_null (strstr (text, "of which"));
    free (text);
    kap_opts_free (&cfg);
}

/* Rank 0's record of the fence (kvs.fence-status) splits the KVS part:
 * up to 'ready', the apply to 'decided', down to the first answer; times
 * come in realtime and are moved onto the timeline's clock by 'offset'.
 * Anything but a complete fence's record is refused and leaves no split.
 */
static void test_timeline_kvs (void **state)
{
    struct kap_config cfg;
    struct kap_result res;
    json_t *doc, *tl;
    char *text = NULL;

    make_result (&cfg, &res, 0);
    kap_timeline_add (&res, 100.000, 100.010);
    kap_timeline_add (&res, 100.004, 100.012);
    assert_int_equal (kap_timeline_set_kvs (&res,
                      "{\"name\":\"x\",\"state\":\"complete\",\"nprocs\":2,"
                      "\"first\":1100.001,\"ready\":1100.005,\"decided\":1100.008}",
                      1000.), 0);
    assert_true (fabs (res.kvs_ready - 100.005) < 1e-9
                 && fabs (res.kvs_decided - 100.008) < 1e-9);
    assert_non_null ((doc = kap_report_json (&cfg, &res)));
    assert_non_null ((tl = json_object_get (doc, "sync_timeline")));
    assert_true (fabs (json_real_value (json_object_get (tl, "last_enter_to_complete_us"))
                       - 1000) < 1e-3);
    assert_true (fabs (json_real_value (json_object_get (tl, "complete_to_decided_us"))
                       - 3000) < 1e-3);
    assert_true (fabs (json_real_value (json_object_get (tl, "decided_to_first_answer_us"))
                       - 2000) < 1e-3);
    json_decref (doc);
    text = report_text (&cfg, &res);
    assert_non_null (strstr (text, "of which: 1.000 ms until the fence was complete"
                             " at rank 0, 3.000 ms applying it, 2.000 ms until the"
                             " first answer"));
    free (text);

    /* an open fence, a malformed answer, no answer: refused, no split */
    const char *bad[] = {
        "{\"name\":\"x\",\"state\":\"open\",\"count\":1,\"nprocs\":2,"
        "\"first\":1100.001,\"ready\":0}",
        "{\"state\":\"complete\",\"ready\":\"soon\"}",
        "{\"state\":\"complete\",\"ready\":1100.005,\"decided\":1100.001}",
        "not json",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        assert_int_equal (kap_timeline_set_kvs (&res, bad[i], 1000.), -1);
        assert_int_equal (errno, EPROTO);
        assert_true (res.kvs_ready == 0 && res.kvs_decided == 0);
    }
    assert_non_null ((doc = kap_report_json (&cfg, &res)));
    tl = json_object_get (doc, "sync_timeline");
    assert_null (json_object_get (tl, "complete_to_decided_us"));
    json_decref (doc);
    errno = 0;
    assert_int_equal (kap_timeline_set_kvs (&res, NULL, 0.), -1);
    assert_int_equal (errno, EINVAL);
    kap_opts_free (&cfg);
}

static void test_print (void **state)
{
    struct kap_config cfg;
    struct kap_result res;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    make_result (&cfg, &res, 0);
    assert_non_null ((f = open_memstream (&text, &len)));
    kap_report_print (f, &cfg, &res);
    kap_config_print (f, &cfg);
    fclose (f);
    assert_non_null (strstr (text, "over 2 brokers"));
    assert_non_null (strstr (text, "value 1.0 KiB"));
    assert_non_null (strstr (text, "\nput "));
    assert_non_null (strstr (text, "\ncommit  "));
    assert_non_null (strstr (text, "\nconsumer "));
    assert_non_null (strstr (text, "all 8 values read back were checked"));
    assert_non_null (strstr (text, "value_size         = 1024"));
    assert_non_null (strstr (text, "sync_type          = fence"));
    free (text);
    kap_opts_free (&cfg);

    make_result (&cfg, &res, 1);
    text = report_text (&cfg, &res);
    assert_non_null (strstr (text, "FAILED: 1 value read back wrong"));
    free (text);
    kap_opts_free (&cfg);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_names),
        cmocka_unit_test (test_throughput),
        cmocka_unit_test (test_json),
        cmocka_unit_test (test_print),
        cmocka_unit_test (test_timeline),
        cmocka_unit_test (test_timeline_kvs),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
