/* test/kap_stats.c - unit tests for kap_stats.c: records merged in any
 * grouping give the figures of all samples taken together.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include "kap_stats.h"

static void close_to (double a, double b)
{
    if (fabs (a - b) > 1e-9 * (1 + fabs (b)))
        fail_msg ("%.12g != %.12g", a, b);
}

/* Three "ranks" with samples; rank 1 did nothing. */
static const double samples[3][5] = {
    { 1, 2, 3, 4, 0 },
    { 0 },
    { 10, 20, 0 },
};
static const int nsamples[3] = { 4, 0, 2 };

static void rank_records (double vac[3][KAP_VAC_LEN], struct tstat *all)
{
    tstat_init (all);
    for (int r = 0; r < 3; r++) {
        struct tstat ts;
        tstat_init (&ts);
        for (int i = 0; i < nsamples[r]; i++) {
            tstat_push (&ts, samples[r][i]);
            tstat_push (all, samples[r][i]);
        }
        kap_vac_from_tstat (&ts, vac[r]);
    }
}

static void check_merged (const double *vac, const struct tstat *all)
{
    struct kap_summary s;
    kap_vac_summary (vac, &s);
    close_to (s.count, 6);
    close_to (s.min, 1);
    close_to (s.max, 20);
    close_to (s.mean, tstat_mean (all));
    close_to (s.stddev, tstat_stddev (all));
    assert_int_equal (s.nranks, 2);
    close_to (s.rank_mean_min, 2.5);
    close_to (s.rank_mean_max, 15);
    close_to (s.rank_mean_avg, 8.75);
    double sd0 = sqrt (5.0 / 3.0);      /* sample stddev of 1..4 */
    double sd2 = sqrt (50.0);           /* of 10, 20 */
    close_to (s.rank_std_min, sd0);
    close_to (s.rank_std_max, sd2);
    close_to (s.rank_std_avg, (sd0 + sd2) / 2);
}

static void test_merge_orders (void **state)
{
    double vac[3][KAP_VAC_LEN], acc[KAP_VAC_LEN];
    struct tstat all;
    int orders[6][3] = { {0,1,2}, {0,2,1}, {1,0,2}, {1,2,0}, {2,0,1}, {2,1,0} };

    for (int o = 0; o < 6; o++) {
        rank_records (vac, &all);
        memset (acc, 0, sizeof (acc));
        for (int i = 0; i < 3; i++)
            kap_vac_merge (vac[orders[o][i]], acc);
        check_merged (acc, &all);
    }
    /* tree-shaped: (0 + 1) + 2 into 2's record */
    rank_records (vac, &all);
    kap_vac_merge (vac[0], vac[1]);
    kap_vac_merge (vac[1], vac[2]);
    check_merged (vac[2], &all);
}

static void test_merge_n (void **state)
{
    double in[2 * KAP_VAC_LEN], inout[2 * KAP_VAC_LEN];
    struct tstat a, b;
    struct kap_summary s;

    tstat_init (&a);
    tstat_init (&b);
    tstat_push (&a, 5);
    tstat_push (&b, 7);
    kap_vac_from_tstat (&a, in);
    kap_vac_from_tstat (&b, in + KAP_VAC_LEN);
    kap_vac_from_tstat (&b, inout);
    kap_vac_from_tstat (&a, inout + KAP_VAC_LEN);
    kap_vac_merge_n (in, inout, 2);
    for (int i = 0; i < 2; i++) {
        kap_vac_summary (inout + i * KAP_VAC_LEN, &s);
        close_to (s.count, 2);
        close_to (s.mean, 6);
        close_to (s.min, 5);
        close_to (s.max, 7);
    }
}

static void test_empty (void **state)
{
    double vac[KAP_VAC_LEN], other[KAP_VAC_LEN];
    struct tstat ts;
    struct kap_summary s;

    tstat_init (&ts);
    kap_vac_from_tstat (&ts, vac);
    kap_vac_summary (vac, &s);
    close_to (s.count, 0);
    close_to (s.max, 0);
    assert_int_equal (s.nranks, 0);

    /* empty merged into empty stays empty; one sample has no spread */
    kap_vac_from_tstat (&ts, other);
    kap_vac_merge (other, vac);
    close_to (vac[KAP_VAC_COUNT], 0);
    tstat_push (&ts, 3);
    kap_vac_from_tstat (&ts, other);
    kap_vac_merge (vac, other);
    kap_vac_summary (other, &s);
    close_to (s.count, 1);
    close_to (s.stddev, 0);
    close_to (s.mean, 3);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_merge_orders),
        cmocka_unit_test (test_merge_n),
        cmocka_unit_test (test_empty),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
