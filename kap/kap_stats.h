/* kap_stats.h - KAP's statistics: per-rank running figures and the
 * 12-double records that merge them across ranks.
 *
 * Each rank accumulates the latencies of one kind of operation (put,
 * commit, sync, get) in a struct tstat (Welford's running mean and sum of
 * squared differences, libutil/tstat.h).  To combine ranks, each turns
 * its tstat into a record of KAP_VAC_LEN doubles; kap_vac_merge combines
 * two records exactly (pooled mean and variance by Chan's formula, min,
 * max, and the spread of the per-rank means and deviations).  The merge
 * is associative and commutative, with the all-zero record of a rank that
 * did no such operation as its identity, so kap.c can register it as an
 * MPI reduction operator; nothing here calls MPI.
 */
#ifndef KAP_STATS_H
#define KAP_STATS_H

#include "src/common/libutil/tstat.h"

enum kap_vac_field {
    KAP_VAC_COUNT = 0,      /* operations */
    KAP_VAC_MEAN,           /* mean latency over all operations */
    KAP_VAC_M2,             /* sum of squared differences from the mean */
    KAP_VAC_MIN,            /* fastest operation */
    KAP_VAC_MAX,            /* slowest operation */
    KAP_VAC_RMEAN_MIN,      /* smallest per-rank mean */
    KAP_VAC_RMEAN_MAX,      /* largest per-rank mean */
    KAP_VAC_RMEAN_SUM,      /* sum of per-rank means */
    KAP_VAC_RSTD_MIN,       /* smallest per-rank standard deviation */
    KAP_VAC_RSTD_MAX,       /* largest per-rank standard deviation */
    KAP_VAC_RSTD_SUM,       /* sum of per-rank standard deviations */
    KAP_VAC_NRANKS,         /* ranks that did at least one operation */
    KAP_VAC_LEN,            /* = 12 */
};

/* One rank's figures as a record (all zero if ts->count is 0). */
void kap_vac_from_tstat (const struct tstat *ts, double vac[KAP_VAC_LEN]);

/* inout := merge (in, inout). */
void kap_vac_merge (const double in[KAP_VAC_LEN], double inout[KAP_VAC_LEN]);

/* The same over n consecutive records (the MPI operator's body). */
void kap_vac_merge_n (const double *in, double *inout, int n);

struct kap_summary {
    double count;
    double min, max, mean, stddev;  /* over all operations (sample stddev) */
    int nranks;
    double rank_mean_min, rank_mean_max, rank_mean_avg;
    double rank_std_min, rank_std_max, rank_std_avg;
};

/* Figures of a merged record (zeros if count is 0). */
void kap_vac_summary (const double vac[KAP_VAC_LEN], struct kap_summary *s);

#endif
