/* kap_stats.c - per-rank records and their exact merge (see kap_stats.h).
 *
 * A record with count 0 is the identity of the merge, whatever its other
 * fields hold, so ranks without a role contribute nothing.
 */
#include <math.h>
#include <string.h>
#include "kap_stats.h"

void kap_vac_from_tstat (const struct tstat *ts, double vac[KAP_VAC_LEN])
{
    memset (vac, 0, sizeof (double) * KAP_VAC_LEN);
    if (ts->count == 0)
        return;
    double sd = tstat_stddev (ts);
    vac[KAP_VAC_COUNT] = ts->count;
    vac[KAP_VAC_MEAN] = ts->mean;
    vac[KAP_VAC_M2] = ts->m2;
    vac[KAP_VAC_MIN] = ts->min;
    vac[KAP_VAC_MAX] = ts->max;
    vac[KAP_VAC_RMEAN_MIN] = ts->mean;
    vac[KAP_VAC_RMEAN_MAX] = ts->mean;
    vac[KAP_VAC_RMEAN_SUM] = ts->mean;
    vac[KAP_VAC_RSTD_MIN] = sd;
    vac[KAP_VAC_RSTD_MAX] = sd;
    vac[KAP_VAC_RSTD_SUM] = sd;
    vac[KAP_VAC_NRANKS] = 1;
}

static double dmin (double a, double b)
{
    return a < b ? a : b;
}

static double dmax (double a, double b)
{
    return a > b ? a : b;
}

void kap_vac_merge (const double in[KAP_VAC_LEN], double inout[KAP_VAC_LEN])
{
    double na = inout[KAP_VAC_COUNT];
    double nb = in[KAP_VAC_COUNT];

    if (nb == 0)
        return;
    if (na == 0) {
        memcpy (inout, in, sizeof (double) * KAP_VAC_LEN);
        return;
    }
    double n = na + nb;
    double delta = in[KAP_VAC_MEAN] - inout[KAP_VAC_MEAN];
    inout[KAP_VAC_M2] += in[KAP_VAC_M2] + delta * delta * na * nb / n;
    inout[KAP_VAC_MEAN] += delta * nb / n;
    inout[KAP_VAC_COUNT] = n;
    inout[KAP_VAC_MIN] = dmin (inout[KAP_VAC_MIN], in[KAP_VAC_MIN]);
    inout[KAP_VAC_MAX] = dmax (inout[KAP_VAC_MAX], in[KAP_VAC_MAX]);
    inout[KAP_VAC_RMEAN_MIN] = dmin (inout[KAP_VAC_RMEAN_MIN],
                                     in[KAP_VAC_RMEAN_MIN]);
    inout[KAP_VAC_RMEAN_MAX] = dmax (inout[KAP_VAC_RMEAN_MAX],
                                     in[KAP_VAC_RMEAN_MAX]);
    inout[KAP_VAC_RMEAN_SUM] += in[KAP_VAC_RMEAN_SUM];
    inout[KAP_VAC_RSTD_MIN] = dmin (inout[KAP_VAC_RSTD_MIN],
                                    in[KAP_VAC_RSTD_MIN]);
    inout[KAP_VAC_RSTD_MAX] = dmax (inout[KAP_VAC_RSTD_MAX],
                                    in[KAP_VAC_RSTD_MAX]);
    inout[KAP_VAC_RSTD_SUM] += in[KAP_VAC_RSTD_SUM];
    inout[KAP_VAC_NRANKS] += in[KAP_VAC_NRANKS];
}

void kap_vac_merge_n (const double *in, double *inout, int n)
{
    for (int i = 0; i < n; i++)
        kap_vac_merge (in + i * KAP_VAC_LEN, inout + i * KAP_VAC_LEN);
}

void kap_vac_summary (const double vac[KAP_VAC_LEN], struct kap_summary *s)
{
    memset (s, 0, sizeof (*s));
    if (vac[KAP_VAC_COUNT] == 0)
        return;
    double n = vac[KAP_VAC_COUNT];
    double nr = vac[KAP_VAC_NRANKS];
    s->count = n;
    s->min = vac[KAP_VAC_MIN];
    s->max = vac[KAP_VAC_MAX];
    s->mean = vac[KAP_VAC_MEAN];
    s->stddev = n > 1 ? sqrt (vac[KAP_VAC_M2] / (n - 1)) : 0;
    s->nranks = (int)nr;
    s->rank_mean_min = vac[KAP_VAC_RMEAN_MIN];
    s->rank_mean_max = vac[KAP_VAC_RMEAN_MAX];
    s->rank_mean_avg = nr > 0 ? vac[KAP_VAC_RMEAN_SUM] / nr : 0;
    s->rank_std_min = vac[KAP_VAC_RSTD_MIN];
    s->rank_std_max = vac[KAP_VAC_RSTD_MAX];
    s->rank_std_avg = nr > 0 ? vac[KAP_VAC_RSTD_SUM] / nr : 0;
}
