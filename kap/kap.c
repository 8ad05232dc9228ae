/* kap.c - KAP, the KVS Access Patterns tester: main and the phases.
 *
 * An MPI program.  MPI only assigns roles, separates the phases and
 * gathers the statistics; the canopy KVS is what is measured.  Each rank
 * opens its own handle to a broker: the one in CANOPY_URI (what 'canopy
 * run' gives each task), or with --uri-file line (rank mod lines) of the
 * file, so that a job started by mpirun spreads over an instance.
 *
 * Phases, after a setup barrier (rank 0 creates the directories first;
 * each node's ranks leave it together through a futex gate, kap_gate.h):
 *   producer  every producer puts one value per iteration (timed: put),
 *             committing every --iter-commit iterations (timed: commit)
 *   sync      fence: every actor joins one fence; causal: producers fence,
 *             rank 0 publishes the version as an event and consumers
 *             kvs_wait_version for it (timed per rank: sync)
 *   consumer  each consumer gets --cons-acc-count values per iteration
 *             from other producers and checks every byte (timed: get)
 * Per-rank tstat figures are merged on rank 0 with a custom MPI reduction
 * of 12-double records (kap_stats.h); wall times of each phase with
 * MPI_MAX/MPI_MIN.  All MPI calls are in this file, so the rest of KAP is
 * unit-tested without MPI.
 *
 * Exit status (every rank): 0 if each value read back was right, 1 if
 * any was wrong or missing or setup failed.  A failing KVS write or sync
 * leaves the collective phases unable to finish, so it aborts the job.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdarg.h>
#include <float.h>
#include <unistd.h>
#include <time.h>
#include <canopy/canopy.h>
#include "kap_opts.h"
#include "kap_roles.h"
#include "kap_stats.h"
#include "kap_report.h"
#include "kap_gate.h"
#include "kap_out.h"
#include "src/common/libutil/monotime.h"

enum {
    KAP_NAME_MAX = 512,
    KAP_OPEN_TRIES = 5,
    KAP_MAX_REPORTED = 5,   /* wrong values printed per rank */
};

/* This rank's node: its ranks share the gate of quiet_barrier. */
struct kap_node {
    MPI_Comm comm;
    MPI_Comm leaders;       /* MPI_COMM_NULL except on node rank 0 */
    int nleaders;           /* on leaders: the number of nodes */
    MPI_Win win;
    struct kap_gate *gate;
    int rank;
    int size;
};

struct kap_ctx {
    kap_out_t *out;             /* rank 0: the --json file, open from the start */
    struct kap_config cfg;
    struct kap_node node;
    int rank;
    int size;
    canopy_t *h;
    char *uri;
    int nuris;
    struct tstat stat[KAP_NMETRICS];
    double wall[KAP_NPHASES];       /* seconds; -1: no part in the phase */
    double sync_enter, sync_answer; /* CLOCK_REALTIME; -1: no sync */
    long errors;
    unsigned char *buf;
};

static void vsay (struct kap_ctx *ctx, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 2, 0)));
static void vsay (struct kap_ctx *ctx, const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf (msg, sizeof (msg), fmt, ap);
    fprintf (stderr, "kap: rank %d: %s\n", ctx->rank, msg);
}

static void say (struct kap_ctx *ctx, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void say (struct kap_ctx *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    vsay (ctx, fmt, ap);
    va_end (ap);
}

static void die (struct kap_ctx *ctx, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3), noreturn));
static void die (struct kap_ctx *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    vsay (ctx, fmt, ap);
    va_end (ap);
    fflush (stderr);
    kap_out_abandon (ctx->out);
    ctx->out = NULL;
    MPI_Abort (MPI_COMM_WORLD, 1);
    exit (1);
}

static const char *kvs_error (struct kap_ctx *ctx)
{
    const char *s = ctx->h ? kvs_errstr (ctx->h) : NULL;
    return s ? s : strerror (errno);
}

/* Line (rank mod lines) of the URI file; blank lines and '#' comments
 * are skipped.  NULL with a message in errbuf on failure.
 */
static char *uri_from_file (const char *path, int rank, int *nuris,
                            char *errbuf, size_t errlen)
{
    FILE *f = fopen (path, "r");
    char line[4096];
    char **uris = NULL;
    int n = 0;
    char *result = NULL;

    if (!f) {
        snprintf (errbuf, errlen, "cannot open --uri-file %s: %s", path,
                  strerror (errno));
        return NULL;
    }
    while (fgets (line, sizeof (line), f)) {
        char *s = line + strspn (line, " \t");
        s[strcspn (s, " \t\r\n")] = '\0';
        if (*s == '\0' || *s == '#')
            continue;
        char **nu = realloc (uris, sizeof (char *) * (n + 1));
        if (!nu || !(nu[n] = strdup (s))) {
            if (nu)
                uris = nu;
            snprintf (errbuf, errlen, "out of memory");
            goto done;
        }
        uris = nu;
        n++;
    }
    if (n == 0) {
        snprintf (errbuf, errlen, "--uri-file %s holds no URI", path);
        goto done;
    }
    if (!(result = strdup (uris[rank % n])))
        snprintf (errbuf, errlen, "out of memory");
    *nuris = n;
done:
    for (int i = 0; i < n; i++)
        free (uris[i]);
    free (uris);
    fclose (f);
    return result;
}

/* Connect this rank's handle.  Returns 0, or -1 after printing why. */
static int connect_broker (struct kap_ctx *ctx)
{
    char errbuf[256];
    canopy_error_t error = { .text = "" };

    if (ctx->cfg.uri_file) {
        ctx->uri = uri_from_file (ctx->cfg.uri_file, ctx->rank, &ctx->nuris,
                                  errbuf, sizeof (errbuf));
        if (!ctx->uri) {
            say (ctx, "%s", errbuf);
            return -1;
        }
    }
    else if (!getenv ("CANOPY_URI")) {
        say (ctx, "no broker to connect to: run under 'canopy run', inside"
             " an instance (CANOPY_URI), or give --uri-file");
        return -1;
    }
    for (int i = 0; i < KAP_OPEN_TRIES; i++) {
        if ((ctx->h = canopy_open (ctx->uri, 0, &error)))
            return 0;
        if (errno != ENOENT && errno != ECONNREFUSED)
            break;
        sleep (1);
    }
    say (ctx, "cannot connect to %s: %s",
         ctx->uri ? ctx->uri : getenv ("CANOPY_URI"),
         error.text[0] ? error.text : strerror (errno));
    return -1;
}

/* The leaders' part of quiet_barrier: an MPI barrier of one rank per
 * node that sleeps between tests instead of spinning, backing off from
 * 20 us to 5 ms.
 */
static void leaders_barrier (struct kap_node *nd)
{
    MPI_Request req;
    int done = 0;
    long ns = 20 * 1000;

    if (nd->nleaders < 2)
        return;
    MPI_Ibarrier (nd->leaders, &req);
    for (;;) {
        MPI_Test (&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };
        nanosleep (&ts, NULL);
        if (ns < 5 * 1000 * 1000)
            ns *= 2;
    }
}

/* A barrier of all ranks that sleeps instead of spinning, used wherever
 * some ranks may still be timing, and as the setup barrier whose release
 * starts the timed phases.  MPI libraries busy-poll in blocking
 * collectives (OpenMPI, oversubscribed, calls sched_yield on each idle
 * progress pass), stealing the CPU the ranks still measured and their
 * brokers need; an MPI_Ibarrier tested between naps polled less, but
 * still woke every waiting rank 10-20 times in its first 5 ms (a KAP run
 * of 32 ranks made 18-26 thousand sched_yield calls then, 10-11 thousand
 * now, MPI_Init and MPI_Finalize's).  Here the ranks of a node
 * sleep at their node's gate (kap_gate.h); the leader, woken by the last
 * of them, meets the other nodes' leaders, then opens the gate: one futex
 * wake-up for the whole node.  An MPI_Barrier release let 32 ranks on 2
 * cores go over 5-10 ms, one scheduler slice at a time, and a canopy event
 * over 5-8 ms; that spread, not the KVS, had been most of the worst fence.
 */
static void quiet_barrier (struct kap_ctx *ctx)
{
    struct kap_node *nd = &ctx->node;

    if (nd->rank != 0) {
        kap_gate_wait (nd->gate);
        return;
    }
    while (kap_gate_ready (nd->gate, 60.) < 0)
        say (ctx, "warning: a barrier waits for its node's ranks: %u of %d"
             " arrived in 60 s", __atomic_load_n (&nd->gate->arrived, __ATOMIC_SEQ_CST),
             nd->size - 1);
    leaders_barrier (nd);
    kap_gate_open (nd->gate);
}

/* The node's gate in an MPI-3 shared window; leaders are the node ranks
 * 0, one per node.  Collective; the gate is ready when it returns.
 */
static void node_init (struct kap_ctx *ctx)
{
    struct kap_node *nd = &ctx->node;
    MPI_Aint size;
    int disp;
    void *base;

    MPI_Comm_split_type (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                         &nd->comm);
    MPI_Comm_rank (nd->comm, &nd->rank);
    MPI_Comm_size (nd->comm, &nd->size);
    MPI_Comm_split (MPI_COMM_WORLD, nd->rank == 0 ? 0 : MPI_UNDEFINED,
                    ctx->rank, &nd->leaders);
    nd->nleaders = 0;
    if (nd->leaders != MPI_COMM_NULL)
        MPI_Comm_size (nd->leaders, &nd->nleaders);
    MPI_Win_allocate_shared (nd->rank == 0 ? sizeof (struct kap_gate) : 0, 1,
                             MPI_INFO_NULL, nd->comm, &base, &nd->win);
    MPI_Win_shared_query (nd->win, 0, &size, &disp, &nd->gate);
    if (nd->rank == 0)
        kap_gate_init (nd->gate, nd->size - 1);
    MPI_Barrier (MPI_COMM_WORLD);   /* nobody uses the gate before its init */
}

static void node_fini (struct kap_ctx *ctx)
{
    struct kap_node *nd = &ctx->node;

    MPI_Win_free (&nd->win);
    if (nd->leaders != MPI_COMM_NULL)
        MPI_Comm_free (&nd->leaders);
    MPI_Comm_free (&nd->comm);
}

/* Rank 0 makes every directory of every iteration, then every rank waits
 * until its broker has that version: the puts then land in existing
 * directories, as in the original tester.
 */
static void setup_dirs (struct kap_ctx *ctx)
{
    const struct kap_config *cfg = &ctx->cfg;
    char key[KAP_NAME_MAX];
    int version = 0;

    if (ctx->rank == 0) {
        for (int it = 0; it < cfg->iter_producer; it++) {
            for (int d = 0; d < cfg->ndirs; d++) {
                kap_dir_key (cfg, it, d, key, sizeof (key));
                if (kvs_mkdir (ctx->h, key) < 0)
                    die (ctx, "kvs_mkdir %s: %s", key, kvs_error (ctx));
            }
        }
        if (kvs_commit (ctx->h, 0) < 0)
            die (ctx, "kvs_commit (directories): %s", kvs_error (ctx));
        if (kvs_get_version (ctx->h, &version) < 0)
            die (ctx, "kvs_get_version: %s", kvs_error (ctx));
    }
    quiet_barrier (ctx);
    MPI_Bcast (&version, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (kvs_wait_version (ctx->h, version) < 0)
        die (ctx, "kvs_wait_version %d: %s", version, kvs_error (ctx));
}

static void producer_phase (struct kap_ctx *ctx)
{
    const struct kap_config *cfg = &ctx->cfg;
    char key[KAP_NAME_MAX], name[KAP_NAME_MAX], what[64];
    double t0 = monotime (), a, b;

    for (int it = 0; it < cfg->iter_producer; it++) {
        for (int k = 0; k < cfg->keys_per_iter; k++) {
            kap_key (cfg, it, ctx->rank, k, key, sizeof (key));
            kap_value_fill (cfg, it, ctx->rank, k, ctx->buf);
            a = monotime ();
            if (kvs_put_raw (ctx->h, key, ctx->buf, cfg->value_size) < 0)
                die (ctx, "kvs_put %s: %s", key, kvs_error (ctx));
            b = monotime ();
            tstat_push (&ctx->stat[KAP_PUT], b - a);
        }
        if (cfg->iter_commit > 0 && (it + 1) % cfg->iter_commit == 0) {
            int rc;
            a = monotime ();
            if (cfg->commit_type == KAP_COMMIT_FENCE) {
                snprintf (what, sizeof (what), "commit.%d", it);
                kap_name (cfg, what, name, sizeof (name));
                rc = kvs_fence (ctx->h, name, cfg->nproducers, 0);
            }
            else
                rc = kvs_commit (ctx->h, 0);
            b = monotime ();
            if (rc < 0)
                die (ctx, "%s at iteration %d: %s",
                     cfg->commit_type == KAP_COMMIT_FENCE ? "kvs_fence"
                                                          : "kvs_commit",
                     it, kvs_error (ctx));
            tstat_push (&ctx->stat[KAP_COMMIT], b - a);
        }
    }
    ctx->wall[KAP_PHASE_PRODUCER] = monotime () - t0;
}

static int wait_causal_event (struct kap_ctx *ctx, const char *topic)
{
    struct canopy_match match = CANOPY_MATCH_EVENT;
    canopy_msg_t *msg;
    int version;

    match.topic_glob = topic;
    if (!(msg = canopy_recv (ctx->h, match, 0)))
        die (ctx, "receiving event %s: %s", topic, strerror (errno));
    if (canopy_event_unpack (msg, NULL, "{s:i}", "version", &version) < 0)
        die (ctx, "event %s has no version", topic);
    canopy_msg_decref (msg);
    return version;
}

static void sync_phase (struct kap_ctx *ctx)
{
    const struct kap_config *cfg = &ctx->cfg;
    bool producer = kap_is_producer (cfg, ctx->rank);
    bool consumer = kap_is_consumer (cfg, ctx->rank);
    char name[KAP_NAME_MAX];
    double t0 = monotime ();
    double enter = walltime ();     /* shared across nodes: sync_timeline */

    if (!producer && !consumer)
        return;
    if (cfg->sync_type == KAP_SYNC_FENCE) {
        kap_name (cfg, "sync", name, sizeof (name));
        if (kvs_fence (ctx->h, name, kap_nactors (cfg), 0) < 0)
            die (ctx, "kvs_fence %s: %s", name, kvs_error (ctx));
    }
    else {
        if (producer) {
            kap_name (cfg, "psync", name, sizeof (name));
            if (kvs_fence (ctx->h, name, cfg->nproducers, 0) < 0)
                die (ctx, "kvs_fence %s: %s", name, kvs_error (ctx));
        }
        kap_name (cfg, "causal", name, sizeof (name));
        if (ctx->rank == 0) {
            int version;
            canopy_future_t *f;
            if (kvs_get_version (ctx->h, &version) < 0)
                die (ctx, "kvs_get_version: %s", kvs_error (ctx));
            if (!(f = canopy_event_publish_pack (ctx->h, name, 0, "{s:i}",
                                                 "version", version))
                || canopy_future_get (f, NULL) < 0)
                die (ctx, "publishing event %s: %s", name, strerror (errno));
            canopy_future_destroy (f);
        }
        if (consumer) {
            int version = wait_causal_event (ctx, name);
            if (kvs_wait_version (ctx->h, version) < 0)
                die (ctx, "kvs_wait_version %d: %s", version, kvs_error (ctx));
        }
    }
    ctx->wall[KAP_PHASE_SYNC] = monotime () - t0;
    ctx->sync_answer = walltime ();
    ctx->sync_enter = enter;
    tstat_push (&ctx->stat[KAP_SYNC], ctx->wall[KAP_PHASE_SYNC]);
}

/* Test hook (--inject-corruption): rank 0 overwrites the first value the
 * first consumer will read, so the consumer phase must fail.
 */
static void inject_corruption (struct kap_ctx *ctx)
{
    const struct kap_config *cfg = &ctx->cfg;
    int version = 0;

    if (cfg->nconsumers == 0)
        return;
    quiet_barrier (ctx);
    if (ctx->rank == 0) {
        char key[KAP_NAME_MAX];
        int victim = kap_target (cfg, cfg->nprocs - cfg->nconsumers, 1);
        kap_key (cfg, 0, victim, 0, key, sizeof (key));
        kap_value_fill (cfg, 0, victim, 0, ctx->buf);
        ctx->buf[0] ^= 0x5a;
        if (kvs_put_raw (ctx->h, key, ctx->buf, cfg->value_size) < 0
            || kvs_commit (ctx->h, 0) < 0
            || kvs_get_version (ctx->h, &version) < 0)
            die (ctx, "injecting corruption into %s: %s", key, kvs_error (ctx));
        say (ctx, "injected a wrong value into %s", key);
    }
    quiet_barrier (ctx);
    MPI_Bcast (&version, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (kvs_wait_version (ctx->h, version) < 0)
        die (ctx, "kvs_wait_version %d: %s", version, kvs_error (ctx));
}

/* Get key k of producer p in iteration it, time it, check the value. */
static void consume_one (struct kap_ctx *ctx, int it, int p, int k)
{
    const struct kap_config *cfg = &ctx->cfg;
    char key[KAP_NAME_MAX];
    void *data = NULL;
    size_t len = 0;
    double a, b;
    int rc;

    kap_key (cfg, it, p, k, key, sizeof (key));
    a = monotime ();
    rc = kvs_get_raw (ctx->h, key, &data, &len);
    b = monotime ();
    tstat_push (&ctx->stat[KAP_GET], b - a);
    if (rc < 0) {
        if (ctx->errors++ < KAP_MAX_REPORTED)
            say (ctx, "get %s: %s", key, kvs_error (ctx));
    }
    else if (!kap_value_check (cfg, it, p, k, data, len)) {
        if (ctx->errors++ < KAP_MAX_REPORTED)
            say (ctx, "get %s: wrong value (%zu bytes, expected the %d bytes"
                 " producer %d wrote)", key, len, cfg->value_size, p);
    }
    free (data);
}

static void consumer_phase (struct kap_ctx *ctx)
{
    const struct kap_config *cfg = &ctx->cfg;
    double t0;

    if (cfg->read_rank >= 0 && kvs_set_rank (ctx->h, cfg->read_rank) < 0)
        die (ctx, "kvs_set_rank %d: %s", cfg->read_rank, strerror (errno));
    t0 = monotime ();

    for (int it = 0; it < cfg->iter_consumer; it++) {
        for (int i = 1; i <= cfg->access_count; i++) {
            int p = kap_target (cfg, ctx->rank, i);
            for (int k = 0; k < cfg->keys_per_iter; k++)
                consume_one (ctx, it, p, k);
        }
    }
    ctx->wall[KAP_PHASE_CONSUMER] = monotime () - t0;
}

static void vac_reduce_op (void *in, void *inout, int *len, MPI_Datatype *type)
{
    kap_vac_merge_n (in, inout, *len);
}

/* rank 0: the sync fence's record at rank 0 (kvs.fence-status), which
 * splits the KVS's part of the timeline.  Best effort: without it the
 * timeline keeps its three spans.
 */
static void sync_fence_record (struct kap_ctx *ctx, struct kap_result *res)
{
    char name[KAP_NAME_MAX];
    canopy_future_t *f;
    const char *s;

    kap_name (&ctx->cfg, "sync", name, sizeof (name));
    if (!(f = canopy_rpc_pack (ctx->h, "kvs.fence-status", 0, 0, "{s:s}",
                               "name", name))
        || canopy_rpc_get (f, &s) < 0
        || kap_timeline_set_kvs (res, s, 0.) < 0)
        say (ctx, "warning: no record of fence %s at rank 0: %s", name,
             f && canopy_future_error_string (f) ? canopy_future_error_string (f)
                                                 : strerror (errno));
    canopy_future_destroy (f);
}

/* Merge everything on rank 0 (res is only meaningful there); every rank
 * learns the total error count.
 */
static void gather_results (struct kap_ctx *ctx, struct kap_result *res)
{
    double vac[KAP_NMETRICS][KAP_VAC_LEN];
    double merged[KAP_NMETRICS][KAP_VAC_LEN];
    double wmax[KAP_NPHASES], wmin[KAP_NPHASES];
    MPI_Datatype vac_type;
    MPI_Op vac_op;
    long errors;

    quiet_barrier (ctx);   /* others may still be in the consumer phase */
    for (int m = 0; m < KAP_NMETRICS; m++)
        kap_vac_from_tstat (&ctx->stat[m], vac[m]);
    MPI_Type_contiguous (KAP_VAC_LEN, MPI_DOUBLE, &vac_type);
    MPI_Type_commit (&vac_type);
    MPI_Op_create (vac_reduce_op, 1, &vac_op);
    MPI_Reduce (vac, merged, KAP_NMETRICS, vac_type, vac_op, 0, MPI_COMM_WORLD);
    MPI_Op_free (&vac_op);
    MPI_Type_free (&vac_type);

    /* Ranks without a part in a phase count for neither max nor min. */
    for (int p = 0; p < KAP_NPHASES; p++) {
        wmax[p] = ctx->wall[p] < 0 ? 0 : ctx->wall[p];
        wmin[p] = ctx->wall[p] < 0 ? DBL_MAX : ctx->wall[p];
    }
    MPI_Reduce (wmax, res->wall_max, KAP_NPHASES, MPI_DOUBLE, MPI_MAX, 0,
                MPI_COMM_WORLD);
    MPI_Reduce (wmin, res->wall_min, KAP_NPHASES, MPI_DOUBLE, MPI_MIN, 0,
                MPI_COMM_WORLD);
    /* The sync timeline: [enter, -enter, answer, -answer] reduced by MAX
     * gives the last and first of each; ranks without a sync send -DBL_MAX.
     */
    bool synced = ctx->sync_enter >= 0;
    double tl[4] = { -DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX }, tlmax[4];
    int one = synced ? 1 : 0, nsynced = 0;
    if (synced) {
        tl[0] = ctx->sync_enter;
        tl[1] = -ctx->sync_enter;
        tl[2] = ctx->sync_answer;
        tl[3] = -ctx->sync_answer;
    }
    MPI_Reduce (tl, tlmax, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce (&one, &nsynced, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce (&ctx->errors, &errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    res->errors = errors;
    struct kvs_read_stats rs;
    long reads[2] = { 0, 0 }, sum[2];
    if (kvs_read_stats (ctx->h, &rs) == 0) {
        reads[0] = (long)rs.shm_hits;
        reads[1] = (long)rs.rpc_gets;
    }
    MPI_Reduce (reads, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ctx->rank == 0) {
        res->gets_shared = sum[0];
        res->gets_asked = sum[1];
    }
    if (ctx->rank == 0 && nsynced > 0) {
        res->sync_ranks = nsynced;
        res->sync_enter_last = tlmax[0];
        res->sync_enter_first = -tlmax[1];
        res->sync_answer_last = tlmax[2];
        res->sync_answer_first = -tlmax[3];
        if (ctx->cfg.sync_type == KAP_SYNC_FENCE)
            sync_fence_record (ctx, res);
    }
    if (ctx->rank == 0) {
        uint32_t size;
        for (int m = 0; m < KAP_NMETRICS; m++)
            kap_vac_summary (merged[m], &res->metric[m]);
        for (int p = 0; p < KAP_NPHASES; p++) {
            if (res->wall_min[p] == DBL_MAX)
                res->wall_min[p] = 0;
        }
        res->brokers = canopy_get_size (ctx->h, &size) == 0 ? (int)size : -1;
        res->nuris = ctx->nuris;
    }
}

static int write_json (struct kap_ctx *ctx, const struct kap_result *res)
{
    json_t *doc = kap_report_json (&ctx->cfg, res);
    kap_out_t *o = ctx->out;
    char errbuf[512];
    int rc = -1;

    ctx->out = NULL;
    if (!doc) {
        say (ctx, "building the JSON report: %s", strerror (errno));
        kap_out_abandon (o);
        return -1;
    }
    if (kap_out_commit (o, doc, errbuf, sizeof (errbuf)) < 0)
        say (ctx, "%s", errbuf);
    else
        rc = 0;
    json_decref (doc);
    return rc;
}

int main (int argc, char *argv[])
{
    struct kap_ctx ctx;
    struct kap_result res;
    char errbuf[256];
    int ok, all_ok;
    int rc = 1;

    memset (&ctx, 0, sizeof (ctx));
    memset (&res, 0, sizeof (res));
    MPI_Init (&argc, &argv);
    MPI_Comm_rank (MPI_COMM_WORLD, &ctx.rank);
    MPI_Comm_size (MPI_COMM_WORLD, &ctx.size);

    /* Every rank parses the same argv, so they agree on failure. */
    if (kap_opts_parse (&ctx.cfg, argc, argv, ctx.size, errbuf,
                        sizeof (errbuf)) < 0) {
        if (ctx.rank == 0)
            fprintf (stderr, "kap: %s\n", errbuf);
        goto done;
    }
    if (ctx.cfg.help) {
        if (ctx.rank == 0)
            fputs (kap_opts_usage (), stdout);
        rc = 0;
        goto done_opts;
    }
    if (ctx.rank == 0 && ctx.cfg.list_config) {
        kap_config_print (stdout, &ctx.cfg);
        fflush (stdout);
    }

    /* rank 0 opens the JSON file first: a bad path fails now */
    ok = 1;
    if (ctx.rank == 0 && ctx.cfg.json_file
        && !(ctx.out = kap_out_open (ctx.cfg.json_file, errbuf, sizeof (errbuf)))) {
        fprintf (stderr, "kap: %s\n", errbuf);
        ok = 0;
    }
    MPI_Bcast (&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        goto done_opts;
    ok = connect_broker (&ctx) == 0
         && (ctx.buf = malloc (ctx.cfg.value_size)) != NULL;
    MPI_Allreduce (&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {
        if (ctx.rank == 0)
            fprintf (stderr, "kap: not every rank could connect to a broker\n");
        goto done_opts;
    }
    for (int m = 0; m < KAP_NMETRICS; m++)
        tstat_init (&ctx.stat[m]);
    for (int p = 0; p < KAP_NPHASES; p++)
        ctx.wall[p] = -1;
    ctx.sync_enter = ctx.sync_answer = -1;

    /* Setup (untimed), then the setup barrier. */
    node_init (&ctx);
    setup_dirs (&ctx);
    /* attach to the broker's shared read cache now, not in the first
     * timed get (best effort: without one the gets ask the KVS)
     */
    if (kap_is_consumer (&ctx.cfg, ctx.rank) && ctx.cfg.read_rank < 0)
        (void)kvs_read_attach (ctx.h);
    if (ctx.cfg.sync_type == KAP_SYNC_CAUSAL
        && kap_is_consumer (&ctx.cfg, ctx.rank)) {
        char topic[KAP_NAME_MAX];
        kap_name (&ctx.cfg, "causal", topic, sizeof (topic));
        if (canopy_event_subscribe (ctx.h, topic) < 0)
            die (&ctx, "subscribing to %s: %s", topic, strerror (errno));
    }
    quiet_barrier (&ctx);     /* the setup barrier: the timed phases start */
    if (ctx.cfg.straggler_ms > 0 && ctx.rank == kap_last_actor (&ctx.cfg)) {
        struct timespec ts = { .tv_sec = ctx.cfg.straggler_ms / 1000,
                               .tv_nsec = (ctx.cfg.straggler_ms % 1000) * 1000000L };
        while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
            ;
    }

    double t0 = monotime ();
    if (kap_is_producer (&ctx.cfg, ctx.rank))
        producer_phase (&ctx);
    sync_phase (&ctx);
    double t1 = monotime ();
    if (ctx.cfg.inject_corruption)
        inject_corruption (&ctx);
    double t2 = monotime ();
    if (kap_is_consumer (&ctx.cfg, ctx.rank))
        consumer_phase (&ctx);
    if (ctx.rank < ctx.cfg.nprocs)
        ctx.wall[KAP_PHASE_TOTAL] = (monotime () - t2) + (t1 - t0);

    gather_results (&ctx, &res);
    node_fini (&ctx);
    rc = res.errors > 0 ? 1 : 0;
    if (ctx.rank == 0) {
        kap_report_print (stdout, &ctx.cfg, &res);
        fflush (stdout);
        if (ctx.cfg.json_file && write_json (&ctx, &res) < 0)
            rc = 1;
    }
    MPI_Bcast (&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
done_opts:
    kap_out_abandon (ctx.out);
    canopy_close (ctx.h);
    free (ctx.uri);
    free (ctx.buf);
    kap_opts_free (&ctx.cfg);
done:
    MPI_Finalize ();
    return rc;
}
