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
    /* The sync phase on one clock (seconds; meaningful where the ranks
     * share a clock: one node, or synchronised clocks), over the
     * sync_ranks ranks that took part (0: none, the rest unset): when the
     * first and the last entered it, and got their answer.
     */
    int sync_ranks;
    double sync_enter_first, sync_enter_last;
    double sync_answer_first, sync_answer_last;
    /* Rank 0's record of the sync fence (kvs.fence-status), on the same
     * clock: when its last contribution reached rank 0 (the fence became
     * complete) and when its outcome was decided (applied, published);
     * 0: unknown (causal sync, or the query failed).
     */
    double kvs_ready, kvs_decided;
    int brokers;        /* size of the instance, -1 if unknown */
    int nuris;          /* lines of --uri-file, 0 when CANOPY_URI was used */
    long errors;        /* values read back wrong or missing */
    /* How the gets were answered, over every rank (kvs_read_stats): from
     * the broker's shared read cache, or by the KVS.
     */
    long gets_shared;
    long gets_asked;
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
 *  "wallclock":{"producer":{max_us,min_us}, "sync", "consumer", "total"},
 *  "reads":{"shared", "asked"} (the gets answered from the brokers'
 *           shared read caches, and those the KVS answered),
 *  "sync_timeline":{ranks, enter_spread_us, answer_spread_us,
 *                   last_enter_to_first_answer_us, and with the KVS's
 *                   record: last_enter_to_complete_us (the last
 *                   contribution on its way up), complete_to_decided_us
 *                   (rank 0's apply) and decided_to_first_answer_us (the
 *                   setroot event on its way down)} (if sync_ranks > 0)}
 * New reference, or NULL with errno set.
 */
json_t *kap_report_json (const struct kap_config *cfg,
                         const struct kap_result *res);

/* Fold one rank's sync phase (entered at 'enter', answered at 'answer',
 * seconds on a shared clock) into res (sync_ranks 0 to start).
 */
void kap_timeline_add (struct kap_result *res, double enter, double answer);

/* Take the sync fence's times from a kvs.fence-status response (JSON
 * text, times in CLOCK_REALTIME seconds) into res->kvs_ready and
 * res->kvs_decided, minus 'offset' (the timeline's clock is realtime -
 * offset).  Returns 0, or -1 with EPROTO (malformed, or the fence not
 * complete: both left 0) or EINVAL.
 */
int kap_timeline_set_kvs (struct kap_result *res, const char *status,
                          double offset);

/* The human table. */
void kap_report_print (FILE *f, const struct kap_config *cfg,
                       const struct kap_result *res);

/* "key = value" lines of the configuration (--list-config). */
void kap_config_print (FILE *f, const struct kap_config *cfg);

#endif
