/* kap_report.h - KAP's results: the human table and the JSON document.
 *
 * kap.c fills a struct kap_result on rank 0 from the MPI reductions; the
 * functions here only format it.  Latencies and wall times are kept in
 * seconds and reported in microseconds.  Throughput of an operation is
 * the job's aggregate rate: all ranks' operations divided by the longest
 * wall time of the phase they belong to (puts and commits: producer
 * phase, syncs: sync phase, gets: consumer phase).  Bandwidth is
 * throughput times the value size, for puts and gets.
 */
#ifndef KAP_REPORT_H
#define KAP_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "kap_opts.h"
#include "kap_stats.h"

enum kap_metric {
    KAP_PUT = 0,
    KAP_COMMIT,
    KAP_SYNC,
    KAP_GET,
    KAP_NMETRICS,
};

enum kap_phase {
    KAP_PHASE_PRODUCER = 0,
    KAP_PHASE_SYNC,
    KAP_PHASE_CONSUMER,
    KAP_PHASE_TOTAL,
    KAP_NPHASES,
};

struct kap_result {
    struct kap_summary metric[KAP_NMETRICS];    /* latencies in seconds */
    double wall_max[KAP_NPHASES];               /* seconds, over ranks */
    double wall_min[KAP_NPHASES];
    int brokers;        /* size of the instance, -1 if unknown */
    int nuris;          /* lines of --uri-file, 0 when CANOPY_URI was used */
    long errors;        /* values read back wrong or missing */
};

const char *kap_metric_name (int metric);   /* "put", ... or NULL */
const char *kap_phase_name (int phase);     /* "producer", ... or NULL */
int kap_metric_phase (int metric);          /* the phase holding it */

/* Aggregate operations per second and bytes per second (0 when unknown). */
double kap_throughput (const struct kap_result *res, int metric);
double kap_bandwidth (const struct kap_config *cfg,
                      const struct kap_result *res, int metric);

/* {"kap":1, "config":{...}, "brokers":N, "uris":N, "errors":N, "ok":bool,
 *  "metrics":{"put":{count, ranks, max_us, min_us, mean_us, stddev_us,
 *             rank_mean_us{min,max,avg}, rank_stddev_us{min,max,avg},
 *             throughput_ops[, bandwidth_Bps]}, "commit", "sync", "get"},
 *  "wallclock":{"producer":{max_us,min_us}, "sync", "consumer", "total"}}
 * New reference, or NULL with errno set.
 */
json_t *kap_report_json (const struct kap_config *cfg,
                         const struct kap_result *res);

/* The human table. */
void kap_report_print (FILE *f, const struct kap_config *cfg,
                       const struct kap_result *res);

/* "key = value" lines of the configuration (--list-config). */
void kap_config_print (FILE *f, const struct kap_config *cfg);

#endif
