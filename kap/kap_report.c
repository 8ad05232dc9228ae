/* kap_report.c - format KAP's results (see kap_report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kap_report.h"

static const char *metric_names[KAP_NMETRICS] = {
    "put", "commit", "sync", "get",
};
static const int metric_phase[KAP_NMETRICS] = {
    KAP_PHASE_PRODUCER, KAP_PHASE_PRODUCER, KAP_PHASE_SYNC, KAP_PHASE_CONSUMER,
};
static const char *phase_names[KAP_NPHASES] = {
    "producer", "sync", "consumer", "total",
};

const char *kap_metric_name (int metric)
{
    return metric >= 0 && metric < KAP_NMETRICS ? metric_names[metric] : NULL;
}

const char *kap_phase_name (int phase)
{
    return phase >= 0 && phase < KAP_NPHASES ? phase_names[phase] : NULL;
}

int kap_metric_phase (int metric)
{
    return metric >= 0 && metric < KAP_NMETRICS ? metric_phase[metric] : -1;
}

static bool has_bandwidth (int metric)
{
    return metric == KAP_PUT || metric == KAP_GET;
}

double kap_throughput (const struct kap_result *res, int metric)
{
    int phase = kap_metric_phase (metric);
    if (phase < 0 || res->wall_max[phase] <= 0)
        return 0;
    return res->metric[metric].count / res->wall_max[phase];
}

double kap_bandwidth (const struct kap_config *cfg,
                      const struct kap_result *res, int metric)
{
    if (!has_bandwidth (metric))
        return 0;
    return kap_throughput (res, metric) * cfg->value_size;
}

static const double us = 1e6;

static json_t *metric_json (const struct kap_config *cfg,
                            const struct kap_result *res, int m)
{
    const struct kap_summary *s = &res->metric[m];
    json_t *o = json_pack ("{s:f s:i s:f s:f s:f s:f"
                           " s:{s:f s:f s:f} s:{s:f s:f s:f} s:f}",
                           "count", s->count,
                           "ranks", s->nranks,
                           "max_us", s->max * us,
                           "min_us", s->min * us,
                           "mean_us", s->mean * us,
                           "stddev_us", s->stddev * us,
                           "rank_mean_us",
                             "min", s->rank_mean_min * us,
                             "max", s->rank_mean_max * us,
                             "avg", s->rank_mean_avg * us,
                           "rank_stddev_us",
                             "min", s->rank_std_min * us,
                             "max", s->rank_std_max * us,
                             "avg", s->rank_std_avg * us,
                           "throughput_ops", kap_throughput (res, m));
    if (o && has_bandwidth (m)) {
        json_t *bw = json_real (kap_bandwidth (cfg, res, m));
        if (!bw || json_object_set_new (o, "bandwidth_Bps", bw) < 0) {
            json_decref (o);
            return NULL;
        }
    }
    return o;
}

void kap_timeline_add (struct kap_result *res, double enter, double answer)
{
    if (res->sync_ranks++ == 0) {
        res->sync_enter_first = res->sync_enter_last = enter;
        res->sync_answer_first = res->sync_answer_last = answer;
        return;
    }
    if (enter < res->sync_enter_first)
        res->sync_enter_first = enter;
    if (enter > res->sync_enter_last)
        res->sync_enter_last = enter;
    if (answer < res->sync_answer_first)
        res->sync_answer_first = answer;
    if (answer > res->sync_answer_last)
        res->sync_answer_last = answer;
}

int kap_timeline_set_kvs (struct kap_result *res, const char *status,
                          double offset)
{
    json_t *o;
    const char *state;
    double ready = 0, decided = 0;
    int rc = -1;

    if (!res || !status) {
        errno = EINVAL;
        return -1;
    }
    res->kvs_ready = res->kvs_decided = 0;
    if (!(o = json_loads (status, 0, NULL))
        || json_unpack (o, "{s:s s:F s?F}", "state", &state, "ready", &ready,
                        "decided", &decided) < 0
        || strcmp (state, "complete") != 0 || ready <= 0 || decided < ready) {
        errno = EPROTO;
        goto done;
    }
    res->kvs_ready = ready - offset;
    res->kvs_decided = decided - offset;
    rc = 0;
done:
    json_decref (o);
    return rc;
}

/* The sync timeline's three spans, in seconds: entries spread, last entry
 * to first answer, answers spread.
 */
static void timeline_spans (const struct kap_result *res, double *enter,
                            double *kvs, double *answer)
{
    *enter = res->sync_enter_last - res->sync_enter_first;
    *kvs = res->sync_answer_first - res->sync_enter_last;
    *answer = res->sync_answer_last - res->sync_answer_first;
}

/* The KVS's part (last entry to first answer) split by rank 0's record:
 * the last contribution on its way up, the apply, the event on its way
 * down to the first answered rank.  Clocks of different nodes may differ
 * a little: a span can come out slightly negative.
 */
static void kvs_spans (const struct kap_result *res, double *up,
                       double *apply, double *down)
{
    *up = res->kvs_ready - res->sync_enter_last;
    *apply = res->kvs_decided - res->kvs_ready;
    *down = res->sync_answer_first - res->kvs_decided;
}

json_t *kap_report_json (const struct kap_config *cfg,
                         const struct kap_result *res)
{
    json_t *doc = NULL, *config, *metrics, *wall;

    if (!cfg || !res) {
        errno = EINVAL;
        return NULL;
    }
    if (!(config = kap_config_json (cfg)))
        goto nomem;
    if (!(doc = json_pack ("{s:i s:o s:i s:i s:I s:b s:{} s:{} s:{s:I s:I}}",
                           "kap", 1,
                           "config", config,
                           "brokers", res->brokers,
                           "uris", res->nuris,
                           "errors", (json_int_t)res->errors,
                           "ok", res->errors == 0,
                           "metrics",
                           "wallclock",
                           "reads", "shared", (json_int_t)res->gets_shared,
                                    "asked", (json_int_t)res->gets_asked)))
        goto nomem;
    metrics = json_object_get (doc, "metrics");
    wall = json_object_get (doc, "wallclock");
    for (int m = 0; m < KAP_NMETRICS; m++) {
        json_t *o = metric_json (cfg, res, m);
        if (!o || json_object_set_new (metrics, metric_names[m], o) < 0)
            goto nomem;
    }
    for (int p = 0; p < KAP_NPHASES; p++) {
        json_t *o = json_pack ("{s:f s:f}",
                               "max_us", res->wall_max[p] * us,
                               "min_us", res->wall_min[p] * us);
        if (!o || json_object_set_new (wall, phase_names[p], o) < 0)
            goto nomem;
    }
    if (res->sync_ranks > 0) {
        double e, k, a;
        timeline_spans (res, &e, &k, &a);
        json_t *o = json_pack ("{s:i s:f s:f s:f s:f}",
                               "ranks", res->sync_ranks,
                               "first_enter_s", res->sync_enter_first,
                               "enter_spread_us", e * us,
                               "answer_spread_us", a * us,
                               "last_enter_to_first_answer_us", k * us);
        if (!o || json_object_set_new (doc, "sync_timeline", o) < 0)
            goto nomem;
        if (res->kvs_ready > 0) {
            double up, apply, down;
            kvs_spans (res, &up, &apply, &down);
            if (json_object_set_new (o, "last_enter_to_complete_us",
                                     json_real (up * us)) < 0
                || json_object_set_new (o, "complete_to_decided_us",
                                        json_real (apply * us)) < 0
                || json_object_set_new (o, "decided_to_first_answer_us",
                                        json_real (down * us)) < 0)
                goto nomem;
        }
    }
    return doc;
nomem:
    json_decref (doc);
    errno = ENOMEM;
    return NULL;
}

void kap_config_print (FILE *f, const struct kap_config *cfg)
{
    json_t *o = kap_config_json (cfg);
    const char *key;
    json_t *val;

    if (!o)
        return;
    json_object_foreach (o, key, val) {
        char *s = json_dumps (val, JSON_ENCODE_ANY);
        const char *text = s;
        if (json_is_string (val))
            text = json_string_value (val);
        fprintf (f, "%-18s = %s\n", key, text ? text : "?");
        free (s);
    }
    json_decref (o);
}

static void human_size (char *buf, size_t len, double bytes)
{
    if (bytes >= 1024 * 1024)
        snprintf (buf, len, "%.1f MiB", bytes / (1024 * 1024));
    else if (bytes >= 1024)
        snprintf (buf, len, "%.1f KiB", bytes / 1024);
    else
        snprintf (buf, len, "%.0f B", bytes);
}

void kap_report_print (FILE *f, const struct kap_config *cfg,
                       const struct kap_result *res)
{
    char vs[32];

    human_size (vs, sizeof (vs), cfg->value_size);
    fprintf (f, "KAP: %d procs (%d producers, %d consumers) over ",
             cfg->nprocs, cfg->nproducers, cfg->nconsumers);
    if (res->brokers > 0)
        fprintf (f, "%d brokers", res->brokers);
    else
        fprintf (f, "? brokers");
    int puts = cfg->iter_producer * cfg->keys_per_iter;
    int gets = cfg->iter_consumer * cfg->access_count * cfg->keys_per_iter;
    fprintf (f, "; value %s, %d put%s/producer, %d get%s/consumer\n",
             vs, puts, puts == 1 ? "" : "s", gets, gets == 1 ? "" : "s");
    fprintf (f, "     sync %s, commit every %d (%s), %d dir%s, %s values,"
             " instance %d\n",
             cfg->sync_type == KAP_SYNC_FENCE ? "fence" : "causal",
             cfg->iter_commit,
             cfg->commit_type == KAP_COMMIT_FENCE ? "fence" : "serial",
             cfg->ndirs, cfg->ndirs == 1 ? "" : "s",
             cfg->redundant ? "redundant" : "unique", cfg->instance);
    fprintf (f, "%-7s %8s %10s %10s %10s %10s %12s %12s\n",
             "op", "count", "max(ms)", "min(ms)", "mean(ms)", "std(ms)",
             "ops/s", "bandwidth");
    for (int m = 0; m < KAP_NMETRICS; m++) {
        const struct kap_summary *s = &res->metric[m];
        if (s->count == 0) {
            fprintf (f, "%-7s %8s\n", metric_names[m], "-");
            continue;
        }
        char bw[32] = "-";
        if (has_bandwidth (m)) {
            human_size (bw, sizeof (bw), kap_bandwidth (cfg, res, m));
            strncat (bw, "/s", sizeof (bw) - strlen (bw) - 1);
        }
        fprintf (f, "%-7s %8.0f %10.3f %10.3f %10.3f %10.3f %12.0f %12s\n",
                 metric_names[m], s->count, s->max * 1e3, s->min * 1e3,
                 s->mean * 1e3, s->stddev * 1e3, kap_throughput (res, m), bw);
    }
    fprintf (f, "%-9s %10s %10s\n", "phase", "max(ms)", "min(ms)");
    for (int p = 0; p < KAP_NPHASES; p++)
        fprintf (f, "%-9s %10.3f %10.3f\n", phase_names[p],
                 res->wall_max[p] * 1e3, res->wall_min[p] * 1e3);
    if (res->sync_ranks > 0) {
        double e, k, a;
        timeline_spans (res, &e, &k, &a);
        fprintf (f, "sync timeline: entries spread over %.3f ms, %.3f ms from the"
                 " last entry to the first answer, answers spread over %.3f ms\n",
                 e * 1e3, k * 1e3, a * 1e3);
        if (res->kvs_ready > 0) {
            double up, apply, down;
            kvs_spans (res, &up, &apply, &down);
            fprintf (f, "  of which: %.3f ms until the fence was complete at rank 0,"
                     " %.3f ms applying it, %.3f ms until the first answer\n",
                     up * 1e3, apply * 1e3, down * 1e3);
        }
    }
    if (res->gets_shared + res->gets_asked > 0)
        fprintf (f, "gets: %ld from the brokers' shared read caches, %ld asked"
                 " of the KVS\n", res->gets_shared, res->gets_asked);
    if (res->errors > 0)
        fprintf (f, "FAILED: %ld value%s read back wrong or missing\n",
                 res->errors, res->errors == 1 ? "" : "s");
    else
        fprintf (f, "all %.0f values read back were checked and correct\n",
                 res->metric[KAP_GET].count);
}
