/* kap_crowd.c - kap-crowd: KAP's phases without MPI, for thousands of
 * participants from one process.
 *
 * Design notes:
 * - Each participant (a KAP "rank") has its own canopy handle, connected
 *   to the broker its placement gives it; all handles share one reactor,
 *   so a participant is a small state machine driven by future
 *   continuations, never blocking:
 *     producer  --keys-per-iter puts per iteration (local, write-back); a
 *               commit or fence every --iter-commit iterations (timed: put,
 *               commit)
 *     sync      fence mode: one fence of every actor; causal mode:
 *               producers fence, participant 0 publishes the version as
 *               an event, consumers wait for that version (timed: sync)
 *     consumer  --cons-acc-count producers per iteration, each of its
 *               keys looked up one at a time, every byte checked (timed:
 *               get); through broker --read-rank if given
 *   A participant moves to its next phase as soon as its own phase ends,
 *   as each MPI rank of kap does; there is no barrier between phases.
 * - Set-up (untimed): participant 0 makes the directories and commits;
 *   every handle then waits until its broker has that version.
 * - Statistics are the same tstat records as kap's, merged with
 *   kap_vac_merge instead of an MPI reduction, and reported by
 *   kap_report, so kap and kap-crowd results are read by the same
 *   scripts.
 * - Everything runs in one thread.  A KVS error in a timed phase stops
 *   the run (exit 1), as kap aborts its job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdarg.h>
#include <float.h>
#include <time.h>
#include <canopy/canopy.h>
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/fdutil.h"
#include "kap_opts.h"
#include "kap_roles.h"
#include "kap_stats.h"
#include "kap_report.h"
#include "kap_crowd_opts.h"
#include "kap_out.h"

enum {
    NAME_MAX_LEN = 512,
    MAX_REPORTED = 5,       /* wrong values printed */
};

struct crowd;

struct part {
    struct crowd *c;
    int rank;
    int broker;
    canopy_t *h;
    canopy_future_t *f;
    canopy_msg_handler_t *mh;   /* causal consumers: the version event */
    int causal_version;         /* -1 until the event arrives */
    bool waiting_event;
    int iter;
    int access;
    int k;                      /* key of the iteration (--keys-per-iter) */
    double t_op;
    double t_phase;
    double t0, t1, t2;          /* start, end of sync, start of consumer */
    struct tstat stat[KAP_NMETRICS];
    double wall[KAP_NPHASES];   /* -1: no part in the phase */
};

struct crowd {
    struct kap_config cfg;
    struct kap_crowd_config cc;
    canopy_reactor_t *r;
    char **uris;
    int nbrokers;               /* instance size */
    int nused;                  /* brokers participants were placed on */
    struct part *parts;
    int nparts;
    int running;
    int phase_done[KAP_NPHASES];
    long errors;
    int failed;
    unsigned char *buf;
};

/* the --json document's file, open from before the run (kap_out.h);
 * die() leaves through exit, which removes it
 */
static kap_out_t *out;

static void out_atexit (void)
{
    kap_out_abandon (out);
    out = NULL;
}

static void die (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));
static void die (const char *fmt, ...)
{
    va_list ap;

    fprintf (stderr, "kap-crowd: ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "\n");
    exit (1);
}

static const char *kvs_error (canopy_t *h)
{
    const char *s = h ? kvs_errstr (h) : NULL;
    return s ? s : strerror (errno);
}

/* A timed KVS operation failed: stop everything. */
static void fail (struct part *p, const char *what)
{
    struct crowd *c = p->c;
    fprintf (stderr, "kap-crowd: participant %d: %s: %s\n", p->rank, what,
             p->f ? canopy_future_error_string (p->f) : kvs_error (p->h));
    c->failed = 1;
    canopy_reactor_stop (c->r);
}

/* This process's CPU time so far, in milliseconds. */
static double cpu_ms (void)
{
    struct timespec ts;
    if (clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
        return 0;
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* With --progress: each phase's end, and the client's CPU time by then
 * (what one process running every participant costs: kap/model).
 */
static void progress (struct crowd *c, int phase)
{
    if (!c->cc.progress)
        return;
    fprintf (stderr, "kap-crowd: %s phase: %d participant%s done"
             " (client CPU %.1f ms)\n",
             kap_phase_name (phase), c->phase_done[phase],
             c->phase_done[phase] == 1 ? "" : "s", cpu_ms ());
}

static void phase_finished (struct part *p, int phase)
{
    struct crowd *c = p->c;
    int want;

    p->wall[phase] = monotime () - p->t_phase;
    c->phase_done[phase]++;
    switch (phase) {
        case KAP_PHASE_PRODUCER:
            want = c->cfg.nproducers;
            break;
        case KAP_PHASE_CONSUMER:
            want = c->cfg.nconsumers;
            break;
        default:
            want = kap_nactors (&c->cfg);
            break;
    }
    if (c->phase_done[phase] == want)
        progress (c, phase);
}

static void finish (struct part *p)
{
    struct crowd *c = p->c;

    p->wall[KAP_PHASE_TOTAL] = (monotime () - p->t2) + (p->t1 - p->t0);
    if (--c->running == 0)
        canopy_reactor_stop (c->r);
}

/* Consumer */

static void consume_next (struct part *p);

static void get_cb (canopy_future_t *f, void *arg)
{
    struct part *p = arg;
    struct crowd *c = p->c;
    const struct kap_config *cfg = &c->cfg;
    const void *data;
    size_t len;
    int target = kap_target (cfg, p->rank, p->access);
    char key[NAME_MAX_LEN];

    tstat_push (&p->stat[KAP_GET], monotime () - p->t_op);
    kap_key (cfg, p->iter, target, p->k, key, sizeof (key));
    if (kvs_lookup_get_raw (f, &data, &len) < 0) {
        if (c->errors++ < MAX_REPORTED)
            fprintf (stderr, "kap-crowd: participant %d: get %s: %s\n",
                     p->rank, key, canopy_future_error_string (f));
    }
    else if (!kap_value_check (cfg, p->iter, target, p->k, data, len)) {
        if (c->errors++ < MAX_REPORTED)
            fprintf (stderr, "kap-crowd: participant %d: get %s: wrong value"
                     " (%zu bytes, expected the %d bytes producer %d wrote)\n",
                     p->rank, key, len, cfg->value_size, target);
    }
    canopy_future_destroy (f);
    p->f = NULL;
    consume_next (p);
}

static void consume_next (struct part *p)
{
    const struct kap_config *cfg = &p->c->cfg;
    char key[NAME_MAX_LEN];

    if (p->access == 0 || ++p->k >= cfg->keys_per_iter) {
        p->k = 0;
        if (++p->access > cfg->access_count) {
            p->access = 1;
            p->iter++;
        }
    }
    if (p->iter >= cfg->iter_consumer) {
        phase_finished (p, KAP_PHASE_CONSUMER);
        finish (p);
        return;
    }
    kap_key (cfg, p->iter, kap_target (cfg, p->rank, p->access), p->k, key,
             sizeof (key));
    p->t_op = monotime ();
    if (!(p->f = kvs_lookup (p->h, key, 0))
        || canopy_future_then (p->f, -1, get_cb, p) < 0)
        fail (p, "kvs_lookup");
}

static void sync_finished (struct part *p)
{
    phase_finished (p, KAP_PHASE_SYNC);
    tstat_push (&p->stat[KAP_SYNC], p->wall[KAP_PHASE_SYNC]);
    p->t1 = p->t2 = monotime ();
    if (kap_is_consumer (&p->c->cfg, p->rank)) {
        p->t_phase = monotime ();
        p->iter = 0;
        p->access = 0;
        p->k = 0;
        consume_next (p);
    }
    else
        finish (p);
}

/* Sync */

static void version_cb (canopy_future_t *f, void *arg)
{
    struct part *p = arg;

    if (canopy_future_get (f, NULL) < 0) {
        fail (p, "kvs_wait_version");
        return;
    }
    canopy_future_destroy (f);
    p->f = NULL;
    sync_finished (p);
}

static void wait_causal (struct part *p)
{
    if (p->causal_version < 0) {
        p->waiting_event = true;    /* causal_cb resumes us */
        return;
    }
    p->waiting_event = false;
    if (!(p->f = kvs_wait_version_async (p->h, p->causal_version))
        || canopy_future_then (p->f, -1, version_cb, p) < 0)
        fail (p, "kvs_wait_version");
}

static void causal_cb (canopy_t *h, canopy_msg_handler_t *mh,
                       const canopy_msg_t *msg, void *arg)
{
    struct part *p = arg;
    int version;

    if (canopy_event_unpack (msg, NULL, "{s:i}", "version", &version) < 0)
        return;
    if (p->causal_version < 0) {
        p->causal_version = version;
        if (p->waiting_event)
            wait_causal (p);
    }
}

static void publish_cb (canopy_future_t *f, void *arg)
{
    struct part *p = arg;

    if (canopy_future_get (f, NULL) < 0) {
        fail (p, "publishing the causal event");
        return;
    }
    canopy_future_destroy (f);
    p->f = NULL;
    if (kap_is_consumer (&p->c->cfg, p->rank))
        wait_causal (p);
    else
        sync_finished (p);
}

static void getroot_cb (canopy_future_t *f, void *arg)
{
    struct part *p = arg;
    char topic[NAME_MAX_LEN];
    int version;

    if (kvs_getroot_get (f, &version, NULL) < 0) {
        fail (p, "kvs_get_version");
        return;
    }
    canopy_future_destroy (f);
    kap_name (&p->c->cfg, "causal", topic, sizeof (topic));
    if (!(p->f = canopy_event_publish_pack (p->h, topic, 0, "{s:i}",
                                            "version", version))
        || canopy_future_then (p->f, -1, publish_cb, p) < 0)
        fail (p, "publishing the causal event");
}

static void fence_cb (canopy_future_t *f, void *arg)
{
    struct part *p = arg;
    const struct kap_config *cfg = &p->c->cfg;

    if (kvs_commit_get (f, NULL) < 0) {
        fail (p, "kvs_fence (sync)");
        return;
    }
    canopy_future_destroy (f);
    p->f = NULL;
    if (cfg->sync_type == KAP_SYNC_FENCE)
        sync_finished (p);
    else if (p->rank == 0) {
        if (!(p->f = kvs_getroot (p->h))
            || canopy_future_then (p->f, -1, getroot_cb, p) < 0)
            fail (p, "kvs_get_version");
    }
    else if (kap_is_consumer (cfg, p->rank))
        wait_causal (p);
    else
        sync_finished (p);
}

static void sync_start (struct part *p)
{
    const struct kap_config *cfg = &p->c->cfg;
    bool producer = kap_is_producer (cfg, p->rank);
    char name[NAME_MAX_LEN];

    p->t_phase = monotime ();
    if (cfg->sync_type == KAP_SYNC_FENCE) {
        kap_name (cfg, "sync", name, sizeof (name));
        if (!(p->f = kvs_fence_async (p->h, name, kap_nactors (cfg), 0))
            || canopy_future_then (p->f, -1, fence_cb, p) < 0)
            fail (p, "kvs_fence (sync)");
    }
    else if (producer) {
        kap_name (cfg, "psync", name, sizeof (name));
        if (!(p->f = kvs_fence_async (p->h, name, cfg->nproducers, 0))
            || canopy_future_then (p->f, -1, fence_cb, p) < 0)
            fail (p, "kvs_fence (sync)");
    }
    else
        wait_causal (p);
}

/* Producer */

static void produce_next (struct part *p);

static void commit_cb (canopy_future_t *f, void *arg)
{
    struct part *p = arg;

    if (kvs_commit_get (f, NULL) < 0) {
        fail (p, "intermediate commit");
        return;
    }
    tstat_push (&p->stat[KAP_COMMIT], monotime () - p->t_op);
    canopy_future_destroy (f);
    p->f = NULL;
    p->iter++;
    produce_next (p);
}

static void produce_next (struct part *p)
{
    struct crowd *c = p->c;
    const struct kap_config *cfg = &c->cfg;
    char key[NAME_MAX_LEN], name[NAME_MAX_LEN], what[64];

    for (; p->iter < cfg->iter_producer; p->iter++) {
        double a;
        for (int k = 0; k < cfg->keys_per_iter; k++) {
            kap_key (cfg, p->iter, p->rank, k, key, sizeof (key));
            kap_value_fill (cfg, p->iter, p->rank, k, c->buf);
            a = monotime ();
            if (kvs_put_raw (p->h, key, c->buf, cfg->value_size) < 0) {
                fail (p, "kvs_put");
                return;
            }
            tstat_push (&p->stat[KAP_PUT], monotime () - a);
        }
        if (cfg->iter_commit > 0 && (p->iter + 1) % cfg->iter_commit == 0) {
            p->t_op = monotime ();
            if (cfg->commit_type == KAP_COMMIT_FENCE) {
                snprintf (what, sizeof (what), "commit.%d", p->iter);
                kap_name (cfg, what, name, sizeof (name));
                p->f = kvs_fence_async (p->h, name, cfg->nproducers, 0);
            }
            else
                p->f = kvs_commit_async (p->h, 0);
            if (!p->f || canopy_future_then (p->f, -1, commit_cb, p) < 0)
                fail (p, "intermediate commit");
            return;     /* commit_cb goes on */
        }
    }
    phase_finished (p, KAP_PHASE_PRODUCER);
    sync_start (p);
}

static void start (struct part *p)
{
    const struct kap_config *cfg = &p->c->cfg;

    p->t0 = p->t_phase = monotime ();
    p->iter = 0;
    if (kap_is_producer (cfg, p->rank))
        produce_next (p);
    else if (kap_is_consumer (cfg, p->rank))
        sync_start (p);
}

/* --straggler: the last participant starts late. */
static void straggler_cb (canopy_reactor_t *r, canopy_watcher_t *w,
                          int revents, void *arg)
{
    start (arg);
}

/* Set-up */

static char *xstrdup (const char *s)
{
    char *d = strdup (s);
    if (!d)
        die ("out of memory");
    return d;
}

/* Broker URIs: the lines of --uri-file, or every rank's local-uri. */
static void find_brokers (struct crowd *c)
{
    if (c->cfg.uri_file) {
        FILE *f = fopen (c->cfg.uri_file, "r");
        char line[4096];
        if (!f)
            die ("cannot open --uri-file %s: %s", c->cfg.uri_file,
                 strerror (errno));
        while (fgets (line, sizeof (line), f)) {
            char *s = line + strspn (line, " \t");
            s[strcspn (s, " \t\r\n")] = '\0';
            if (*s == '\0' || *s == '#')
                continue;
            if (!(c->uris = realloc (c->uris, sizeof (char *) * (c->nbrokers + 1))))
                die ("out of memory");
            c->uris[c->nbrokers++] = xstrdup (s);
        }
        fclose (f);
        if (c->nbrokers == 0)
            die ("--uri-file %s holds no URI", c->cfg.uri_file);
        return;
    }
    if (!getenv ("CANOPY_URI"))
        die ("no instance: run inside one (CANOPY_URI) or give --uri-file");
    canopy_error_t error;
    canopy_t *h = canopy_open (NULL, 0, &error);
    uint32_t size;
    if (!h)
        die ("cannot connect to the instance: %s", error.text);
    if (canopy_get_size (h, &size) < 0)
        die ("cannot get the instance size: %s", strerror (errno));
    canopy_future_t **fs = calloc (size, sizeof (*fs));
    if (!fs || !(c->uris = calloc (size, sizeof (char *))))
        die ("out of memory");
    for (uint32_t r = 0; r < size; r++) {
        if (!(fs[r] = canopy_rpc_pack (h, "attr.get", r, 0, "{s:s}", "name",
                                       "local-uri")))
            die ("asking rank %u for its URI: %s", r, strerror (errno));
    }
    for (uint32_t r = 0; r < size; r++) {
        const char *uri;
        if (canopy_rpc_get_unpack (fs[r], "{s:s}", "value", &uri) < 0)
            die ("rank %u has no local-uri: %s", r,
                 canopy_future_error_string (fs[r]));
        c->uris[r] = xstrdup (uri);
        canopy_future_destroy (fs[r]);
    }
    free (fs);
    canopy_close (h);
    c->nbrokers = size;
}

static void connect_all (struct crowd *c)
{
    canopy_error_t error;

    /* a handle: socket, epoll, KVS channel; best effort */
    unsigned long want = 3ul * c->nparts + 64, limit;
    if (fd_raise_limit (want, &limit) == 0 && limit < want)
        fprintf (stderr, "kap-crowd: warning: %d participants need about %lu"
                 " descriptors, the limit is %lu: the last handles may not"
                 " connect, or may reach the KVS through the broker (raise"
                 " the hard limit, ulimit -Hn)\n", c->nparts, want, limit);
    for (int i = 0; i < c->nparts; i++) {
        struct part *p = &c->parts[i];
        p->c = c;
        p->rank = i;
        p->causal_version = -1;
        p->broker = kap_crowd_broker_of (c->cc.placement, i, c->nparts,
                                         c->nused);
        for (int m = 0; m < KAP_NMETRICS; m++)
            tstat_init (&p->stat[m]);
        for (int ph = 0; ph < KAP_NPHASES; ph++)
            p->wall[ph] = -1;
        if (!(p->h = canopy_open (c->uris[p->broker], 0, &error)))
            die ("participant %d: cannot connect to %s: %s%s", i,
                 c->uris[p->broker], error.text,
                 errno == EMFILE ? " (raise the open file limit: ulimit -n)"
                                 : "");
        if (canopy_set_reactor (p->h, c->r) < 0)
            die ("participant %d: %s", i, strerror (errno));
    }
    if (c->cc.progress)
        fprintf (stderr, "kap-crowd: %d participants connected to %d"
                 " broker%s (client CPU %.1f ms)\n", c->nparts, c->nused,
                 c->nused == 1 ? "" : "s", cpu_ms ());
}

static void setup (struct crowd *c)
{
    const struct kap_config *cfg = &c->cfg;
    canopy_t *h0 = c->parts[0].h;
    char key[NAME_MAX_LEN];
    int version;

    for (int it = 0; it < cfg->iter_producer; it++) {
        for (int d = 0; d < cfg->ndirs; d++) {
            kap_dir_key (cfg, it, d, key, sizeof (key));
            if (kvs_mkdir (h0, key) < 0)
                die ("kvs_mkdir %s: %s", key, kvs_error (h0));
        }
    }
    if (kvs_commit (h0, 0) < 0)
        die ("kvs_commit (directories): %s", kvs_error (h0));
    if (kvs_get_version (h0, &version) < 0)
        die ("kvs_get_version: %s", kvs_error (h0));
    /* every broker in use reaches that version (one handle per broker) */
    bool *seen = calloc (c->nused, sizeof (bool));
    if (!seen)
        die ("out of memory");
    for (int i = 0; i < c->nparts; i++) {
        struct part *p = &c->parts[i];
        if (seen[p->broker])
            continue;
        seen[p->broker] = true;
        if (kvs_wait_version (p->h, version) < 0)
            die ("kvs_wait_version %d: %s", version, kvs_error (p->h));
    }
    free (seen);
    if (cfg->read_rank >= 0) {
        for (int i = 0; i < c->nparts; i++) {
            if (kap_is_consumer (cfg, i)
                && kvs_set_rank (c->parts[i].h, cfg->read_rank) < 0)
                die ("participant %d: kvs_set_rank %d: %s", i, cfg->read_rank,
                     strerror (errno));
        }
    }
    if (cfg->sync_type == KAP_SYNC_CAUSAL) {
        char topic[NAME_MAX_LEN];
        struct canopy_match match = CANOPY_MATCH_EVENT;
        kap_name (cfg, "causal", topic, sizeof (topic));
        match.topic_glob = topic;
        for (int i = 0; i < c->nparts; i++) {
            struct part *p = &c->parts[i];
            if (!kap_is_consumer (cfg, i))
                continue;
            if (canopy_event_subscribe (p->h, topic) < 0
                || !(p->mh = canopy_msg_handler_create (p->h, match, causal_cb, p)))
                die ("participant %d: subscribing to %s: %s", i, topic,
                     strerror (errno));
            canopy_msg_handler_start (p->mh);
        }
    }
}

/* The sync fence's record at rank 0 (kvs.fence-status), which splits the
 * KVS's part of the timeline.  Its times are CLOCK_REALTIME; the
 * timeline's are monotime (): the offset between the two clocks is read
 * now.  Best effort: without it the timeline keeps its three spans.
 */
static void sync_fence_record (struct crowd *c, struct kap_result *res)
{
    char name[NAME_MAX_LEN];
    canopy_future_t *f;
    const char *s;
    double offset = walltime () - monotime ();
    kap_name (&c->cfg, "sync", name, sizeof (name));
    if (!(f = canopy_rpc_pack (c->parts[0].h, "kvs.fence-status", 0, 0, "{s:s}",
                               "name", name))
        || canopy_rpc_get (f, &s) < 0
        || kap_timeline_set_kvs (res, s, offset) < 0)
        fprintf (stderr, "kap-crowd: warning: no record of fence %s at rank 0: %s\n",
                 name, f && canopy_future_error_string (f)
                       ? canopy_future_error_string (f) : strerror (errno));
    canopy_future_destroy (f);
}

static void gather (struct crowd *c, struct kap_result *res)
{
    double merged[KAP_NMETRICS][KAP_VAC_LEN];
    double vac[KAP_VAC_LEN];

    memset (merged, 0, sizeof (merged));
    for (int ph = 0; ph < KAP_NPHASES; ph++) {
        res->wall_max[ph] = 0;
        res->wall_min[ph] = DBL_MAX;
    }
    for (int i = 0; i < c->nparts; i++) {
        struct part *p = &c->parts[i];
        for (int m = 0; m < KAP_NMETRICS; m++) {
            kap_vac_from_tstat (&p->stat[m], vac);
            kap_vac_merge (vac, merged[m]);
        }
        if (p->wall[KAP_PHASE_SYNC] >= 0)     /* one process: one clock */
            kap_timeline_add (res, p->t1 - p->wall[KAP_PHASE_SYNC], p->t1);
        for (int ph = 0; ph < KAP_NPHASES; ph++) {
            if (p->wall[ph] < 0)
                continue;
            if (p->wall[ph] > res->wall_max[ph])
                res->wall_max[ph] = p->wall[ph];
            if (p->wall[ph] < res->wall_min[ph])
                res->wall_min[ph] = p->wall[ph];
        }
    }
    for (int m = 0; m < KAP_NMETRICS; m++)
        kap_vac_summary (merged[m], &res->metric[m]);
    for (int ph = 0; ph < KAP_NPHASES; ph++) {
        if (res->wall_min[ph] == DBL_MAX)
            res->wall_min[ph] = 0;
    }
    res->brokers = c->nbrokers;
    res->nuris = c->nused;
    res->errors = c->errors;
    if (res->sync_ranks > 0 && c->cfg.sync_type == KAP_SYNC_FENCE)
        sync_fence_record (c, res);
}

int main (int argc, char *argv[])
{
    struct crowd c;
    struct kap_result res;
    char errbuf[256];
    canopy_watcher_t *straggler = NULL;
    int rc = 1;

    memset (&c, 0, sizeof (c));
    memset (&res, 0, sizeof (res));
    if (kap_crowd_opts_parse (&c.cc, argc, argv, errbuf, sizeof (errbuf)) < 0)
        die ("%s", errbuf);
    if (c.cc.help) {
        fputs (kap_crowd_usage (), stdout);
        fputs (strchr (kap_opts_usage (), '\n') + 1, stdout);
        kap_crowd_opts_free (&c.cc);
        return 0;
    }
    /* the job size is needed to parse KAP's options: find the brokers
     * first unless -N says it
     */
    struct kap_config probe;
    if (kap_opts_parse (&probe, c.cc.kap_argc, c.cc.kap_argv,
                        c.cc.participants ? c.cc.participants : 1 << 24,
                        errbuf, sizeof (errbuf)) < 0)
        die ("%s", errbuf);
    c.cfg.uri_file = probe.uri_file ? xstrdup (probe.uri_file) : NULL;
    kap_opts_free (&probe);
    find_brokers (&c);
    free (c.cfg.uri_file);
    c.nused = c.cc.brokers > 0 && c.cc.brokers < c.nbrokers ? c.cc.brokers
                                                             : c.nbrokers;
    c.nparts = c.cc.participants ? c.cc.participants : c.nused;
    if (kap_opts_parse (&c.cfg, c.cc.kap_argc, c.cc.kap_argv, c.nparts, errbuf,
                        sizeof (errbuf)) < 0)
        die ("%s", errbuf);
    if (c.cfg.inject_corruption)
        die ("--inject-corruption is only supported by kap");
    if (c.cfg.list_config) {
        kap_config_print (stdout, &c.cfg);
        fflush (stdout);
    }
    if (c.cfg.json_file) {
        char ebuf[512];
        if (!(out = kap_out_open (c.cfg.json_file, ebuf, sizeof (ebuf))))
            die ("%s", ebuf);
        atexit (out_atexit);
    }
    if (!(c.parts = calloc (c.nparts, sizeof (*c.parts)))
        || !(c.buf = malloc (c.cfg.value_size > 0 ? c.cfg.value_size : 1))
        || !(c.r = canopy_reactor_create ()))
        die ("out of memory");

    connect_all (&c);
    setup (&c);

    /* every participant that takes part starts; the reactor runs them */
    for (int i = 0; i < c.cfg.nprocs && i < c.nparts; i++) {
        if (kap_is_producer (&c.cfg, i) || kap_is_consumer (&c.cfg, i))
            c.running++;
    }
    int last = kap_last_actor (&c.cfg);
    if (last >= 0 && last < c.nparts && c.cfg.straggler_ms > 0) {
        /* it starts on a timer */
        if (!(straggler = canopy_timer_watcher_create (c.r,
                                                       c.cfg.straggler_ms / 1e3,
                                                       0., straggler_cb,
                                                       &c.parts[last])))
            die ("out of memory");
        canopy_watcher_start (straggler);
    }
    for (int i = 0; i < c.cfg.nprocs && i < c.nparts && !c.failed; i++) {
        if ((kap_is_producer (&c.cfg, i) || kap_is_consumer (&c.cfg, i))
            && !(straggler && i == last))
            start (&c.parts[i]);
    }
    if (c.running > 0 && !c.failed && canopy_reactor_run (c.r, 0) < 0)
        die ("reactor: %s", strerror (errno));
    if (c.failed)
        goto done;

    gather (&c, &res);
    kap_report_print (stdout, &c.cfg, &res);
    fflush (stdout);
    rc = res.errors > 0 ? 1 : 0;
    if (c.cfg.json_file) {
        json_t *doc = kap_report_json (&c.cfg, &res);
        char errbuf[512];
        kap_out_t *o = out;
        out = NULL;
        if (!doc || json_object_set_new (doc, "driver", json_string ("crowd")) < 0) {
            fprintf (stderr, "kap-crowd: building the JSON report: out of memory\n");
            kap_out_abandon (o);
            rc = 1;
        }
        else if (kap_out_commit (o, doc, errbuf, sizeof (errbuf)) < 0) {
            fprintf (stderr, "kap-crowd: %s\n", errbuf);
            rc = 1;
        }
        json_decref (doc);
    }
done:
    for (int i = 0; i < c.nparts; i++) {
        canopy_msg_handler_destroy (c.parts[i].mh);
        canopy_future_destroy (c.parts[i].f);
        canopy_close (c.parts[i].h);
    }
    for (int i = 0; i < c.nbrokers; i++)
        free (c.uris[i]);
    free (c.uris);
    free (c.parts);
    free (c.buf);
    canopy_watcher_destroy (straggler);
    canopy_reactor_destroy (c.r);
    kap_opts_free (&c.cfg);
    kap_crowd_opts_free (&c.cc);
    return rc;
}
