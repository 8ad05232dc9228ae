/* kap_model.c - kap-model: predict a KAP run on a canopy tree of any size
 * with the discrete-event model of kvsim.h.
 *
 * The command line is kap-crowd's (participants, placement, brokers and
 * every KAP option), plus the model's own:
 *   -k, --fanout=K          tree fan-out (default 2)
 *   --costs=FILE            per-message costs (JSON, see costs.h)
 *   --cores=M               cores shared by everything (0: one per thread)
 *   --clients=crowd|mpi     one client process, or one per participant
 *   --prime=BYTES[,BUDGET]  the setroot event carries new directories up to
 *                           BYTES each, BUDGET in all (default 16384,524288;
 *                           0 turns it off, as canopy's kvs.prime-max=0)
 *   --hdir-threshold=N      entries before a directory is hashed (128)
 *   --hdir-bytes=N          ... or bytes of a plain one (16384; 0: off)
 *   --direct=0|1            clients reach their KVS without the broker thread
 *                           (1, canopy's direct channel) or through it (0)
 *   --hold=0|1              a broker relays a fence once its subtree's
 *                           participants are in (1, canopy's relay-hold after
 *                           the first fence of a layout) or self-clocked (0)
 *   --load-batch=0|1        content modules load from their parent in batches
 *                           (1, canopy's content.load-batch) or one object
 *                           per request (0)
 *   --shm=0|1               with --clients=mpi, gets whose path the broker
 *                           holds are read from its shared read cache (1,
 *                           canopy's kvs_get) or asked of the KVS (0)
 * Output: KAP's JSON shape (metrics.sync, metrics.get, wallclock) with the
 * model's counters, as a table and with --json=FILE.
 */
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <jansson.h>
#include "kap/kap_opts.h"
#include "kap/kap_crowd_opts.h"
#include "costs.h"
#include "kvsim.h"

static const char *usage_text =
"Usage: kap-model [MODEL OPTIONS] [-N PARTICIPANTS] [--brokers=N]\n"
"                 [--placement=cyclic|block] [KAP OPTIONS]\n"
"\n"
"Predict the latencies of a KAP run on a canopy tree with a discrete-event\n"
"model that charges measured per-message costs (kap/model/calibrate.sh).\n"
"\n"
"Model options:\n"
"  -k, --fanout=K           tree fan-out (default 2)\n"
"      --costs=FILE         per-message costs, JSON (default: built in)\n"
"      --cores=M            cores shared by all brokers and clients; 0: every\n"
"                           thread has its own, as on a cluster (default:\n"
"                           the costs file's, else 0)\n"
"      --clients=crowd|mpi  one client process (kap-crowd) or one per\n"
"                           participant (kap under MPI; default mpi)\n"
"      --prime=MAX[,BUDGET] setroot carries new directories up to MAX bytes\n"
"                           each, BUDGET in all (default 16384,524288; 0: off)\n"
"      --hdir-threshold=N   entries before a directory is hashed (128)\n"
"      --hdir-bytes=N       ... or bytes of a plain one (16384; 0: off)\n"
"      --direct=0|1         clients reach their KVS on its own socket (1,\n"
"                           default, as canopy does) or through the broker\n"
"                           thread (0, canopy with CANOPY_DIRECT=0)\n"
"      --hold=0|1           a broker relays a fence once its subtree's\n"
"                           participants are in (1, default: canopy's\n"
"                           kvs.relay-hold once it knows the layout) or one\n"
"                           relay in flight, self-clocked (0)\n"
"      --load-batch=0|1     content modules load from their parent in\n"
"                           batches, at most 2 in flight (1, default, as\n"
"                           canopy does) or one object per request (0)\n"
"      --shm=0|1            with --clients=mpi, a get whose objects the\n"
"                           broker holds is read from its shared read cache\n"
"                           (1, default, as canopy's kvs_get does) or asked\n"
"                           of the KVS (0, CANOPY_KVS_SHM=0); kap-crowd's\n"
"                           asynchronous gets always ask\n"
"      --json=FILE          write the prediction as JSON\n"
"\n"
"Job options: -N/--participants (default: one per broker), --brokers=N\n"
"(default 1), --placement, and KAP's -P -C -p -c -a -K -d -e (see kap --help).\n";

struct model_opts {
    int k;
    char *costs_file;
    int cores;              /* -1: from the costs */
    int clients;
    int prime_max, prime_budget;
    int hdir_threshold, hdir_bytes;
    int direct;
    int hold;
    int load_batch;
    int shm;
    char *json_file;
    int argc;
    char **argv;            /* what is left (array owned, strings borrowed) */
};

static void die (const char *fmt, ...) __attribute__ ((format (printf, 1, 2), noreturn));
static void die (const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "kap-model: ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "\n");
    exit (1);
}

static int to_int (const char *s, int min)
{
    char *end;
    long v;
    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || end == s || *end || v < min || v > 1 << 30)
        return -1;
    return (int)v;
}

/* "--name=V" or "--name V" (or -x V for 'shortopt'). */
static const char *opt_value (int argc, char **argv, int *i, const char *name,
                              char shortopt)
{
    size_t n = strlen (name);
    const char *a = argv[*i];
    if (!strncmp (a, "--", 2) && !strncmp (a + 2, name, n)) {
        if (a[2 + n] == '=')
            return a + 3 + n;
        if (a[2 + n] == '\0') {
            if (*i + 1 >= argc)
                die ("--%s needs a value", name);
            return argv[++(*i)];
        }
        return NULL;
    }
    if (shortopt && a[0] == '-' && a[1] == shortopt && a[2] == '\0') {
        if (*i + 1 >= argc)
            die ("-%c needs a value", shortopt);
        return argv[++(*i)];
    }
    return NULL;
}

static void parse_model_opts (struct model_opts *mo, int argc, char **argv)
{
    const char *v;

    memset (mo, 0, sizeof (*mo));
    mo->k = 2;
    mo->cores = -1;
    mo->clients = KVSIM_MPI;
    mo->prime_max = 16384;      /* canopy's kvs.prime-max, kvs.hdir-bytes */
    mo->prime_budget = 524288;
    mo->hdir_threshold = 128;
    mo->hdir_bytes = 16384;
    mo->direct = 1;
    mo->hold = 1;
    mo->load_batch = 1;
    mo->shm = 1;
    if (!(mo->argv = calloc (argc + 1, sizeof (char *))))
        die ("out of memory");
    mo->argv[mo->argc++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "-h") || !strcmp (argv[i], "--help")) {
            fputs (usage_text, stdout);
            exit (0);
        }
        if ((v = opt_value (argc, argv, &i, "fanout", 'k'))) {
            if ((mo->k = to_int (v, 1)) < 0)
                die ("the fan-out must be at least 1");
        }
        else if ((v = opt_value (argc, argv, &i, "costs", 0)))
            mo->costs_file = (char *)v;
        else if ((v = opt_value (argc, argv, &i, "cores", 0))) {
            if ((mo->cores = to_int (v, 0)) < 0)
                die ("--cores must be 0 or more");
        }
        else if ((v = opt_value (argc, argv, &i, "clients", 0))) {
            if (!strcmp (v, "crowd"))
                mo->clients = KVSIM_CROWD;
            else if (!strcmp (v, "mpi"))
                mo->clients = KVSIM_MPI;
            else
                die ("--clients is crowd or mpi");
        }
        else if ((v = opt_value (argc, argv, &i, "prime", 0))) {
            char *end;
            long a = strtol (v, &end, 10), b = 65536;
            if (*end == ',')
                b = strtol (end + 1, &end, 10);
            if (*end || a < 0 || b < 0 || a > 1 << 30 || b > 1 << 30)
                die ("--prime is MAX[,BUDGET] in bytes");
            mo->prime_max = (int)a;
            mo->prime_budget = a > 0 ? (int)b : 0;
        }
        else if ((v = opt_value (argc, argv, &i, "direct", 0))) {
            if (strcmp (v, "0") != 0 && strcmp (v, "1") != 0)
                die ("--direct is 0 or 1");
            mo->direct = v[0] == '1';
        }
        else if ((v = opt_value (argc, argv, &i, "hold", 0))) {
            if (strcmp (v, "0") != 0 && strcmp (v, "1") != 0)
                die ("--hold is 0 or 1");
            mo->hold = v[0] == '1';
        }
        else if ((v = opt_value (argc, argv, &i, "load-batch", 0))) {
            if (strcmp (v, "0") != 0 && strcmp (v, "1") != 0)
                die ("--load-batch is 0 or 1");
            mo->load_batch = v[0] == '1';
        }
        else if ((v = opt_value (argc, argv, &i, "shm", 0))) {
            if (strcmp (v, "0") != 0 && strcmp (v, "1") != 0)
                die ("--shm is 0 or 1");
            mo->shm = v[0] == '1';
        }
        else if ((v = opt_value (argc, argv, &i, "hdir-threshold", 0))) {
            if ((mo->hdir_threshold = to_int (v, 2)) < 0)
                die ("--hdir-threshold must be at least 2");
        }
        else if ((v = opt_value (argc, argv, &i, "hdir-bytes", 0))) {
            if ((mo->hdir_bytes = to_int (v, 0)) < 0)
                die ("--hdir-bytes must be 0 or more");
        }
        else if ((v = opt_value (argc, argv, &i, "json", 0)))
            mo->json_file = (char *)v;
        else
            mo->argv[mo->argc++] = argv[i];
    }
}

static json_t *summary (const struct tstat *t)
{
    return json_pack ("{s:f s:f s:f s:f s:f}", "count", t->count,
                      "mean_us", tstat_mean (t),
                      "min_us", t->count > 0 ? t->min : 0.,
                      "max_us", t->count > 0 ? t->max : 0.,
                      "stddev_us", tstat_stddev (t));
}

int main (int argc, char *argv[])
{
    struct model_opts mo;
    struct kap_crowd_config cc;
    struct kap_config kc;
    struct kap_costs costs;
    struct kvsim_config cfg;
    struct kvsim_result res;
    char errbuf[256];

    parse_model_opts (&mo, argc, argv);
    if (kap_crowd_opts_parse (&cc, mo.argc, mo.argv, errbuf, sizeof (errbuf)) < 0)
        die ("%s", errbuf);
    int brokers = cc.brokers > 0 ? cc.brokers : 1;
    int nparts = cc.participants > 0 ? cc.participants : brokers;
    if (kap_opts_parse (&kc, cc.kap_argc, cc.kap_argv, nparts, errbuf,
                        sizeof (errbuf)) < 0)
        die ("%s", errbuf);
    if (kc.iter_producer != 1 || kc.iter_commit != 0
        || kc.sync_type != KAP_SYNC_FENCE)
        die ("the model covers one iteration, fence sync, no intermediate"
             " commits");

    kap_costs_default (&costs);
    if (mo.costs_file) {
        json_error_t jerr;
        json_t *o = json_load_file (mo.costs_file, 0, &jerr);
        if (!o)
            die ("%s: %s", mo.costs_file, jerr.text);
        if (kap_costs_from_json (&costs, o, errbuf, sizeof (errbuf)) < 0)
            die ("%s: %s", mo.costs_file, errbuf);
        json_decref (o);
    }
    if (mo.cores >= 0)
        costs.cores = mo.cores;

    kvsim_config_default (&cfg);
    cfg.brokers = brokers;
    cfg.k = mo.k;
    cfg.participants = kc.nprocs;
    cfg.block = cc.placement == KAP_PLACE_BLOCK;
    cfg.producers = kc.nproducers;
    cfg.consumers = kc.nconsumers;
    cfg.value_size = kc.value_size;
    cfg.access_count = kc.access_count;
    cfg.access_stride = kc.access_stride;
    cfg.keys_per_iter = kc.keys_per_iter;
    cfg.ndirs = kc.ndirs;
    cfg.redundant = kc.redundant;
    cfg.clients = mo.clients;
    cfg.hdir_threshold = mo.hdir_threshold;
    cfg.hdir_bytes = mo.hdir_bytes;
    cfg.direct = mo.direct != 0;
    cfg.hold = mo.hold != 0;
    cfg.load_batch = mo.load_batch != 0;
    cfg.shm = mo.shm != 0;
    cfg.prime_max = mo.prime_max;
    cfg.prime_budget = mo.prime_budget;
    if (kvsim_run (&cfg, &costs, &res) < 0)
        die ("the model failed: %s", strerror (errno));

    printf ("kap-model: %d participants (%d producers, %d consumers) on %d"
            " brokers, k=%d, %s clients, %s\n", cfg.participants, cfg.producers,
            cfg.consumers, cfg.brokers, cfg.k,
            cfg.clients == KVSIM_CROWD ? "crowd" : "mpi",
            costs.cores ? "shared cores" : "a core per thread");
    printf ("%-7s %8s %10s %10s %10s\n", "op", "count", "max(ms)", "min(ms)",
            "mean(ms)");
    const struct tstat *ts[] = { &res.sync, &res.get };
    const char *names[] = { "sync", "get" };
    for (int i = 0; i < 2; i++)
        printf ("%-7s %8.0f %10.3f %10.3f %10.3f\n", names[i], ts[i]->count,
                ts[i]->count ? ts[i]->max / 1000 : 0,
                ts[i]->count ? ts[i]->min / 1000 : 0, tstat_mean (ts[i]) / 1000);
    printf ("phases: sync %.3f ms, consumer %.3f ms, total %.3f ms\n",
            res.sync_wall / 1000, res.consumer_wall / 1000, res.total_wall / 1000);
    printf ("relays %llu (%.0f KiB), loads %llu (%.0f KiB, %llu batches),"
            " gets from shared caches %llu, messages %llu, CPU %.3f s\n",
            (unsigned long long)res.relays,
            res.relay_bytes / 1024.0, (unsigned long long)res.loads,
            res.load_bytes / 1024.0, (unsigned long long)res.load_batches,
            (unsigned long long)res.shm_gets,
            (unsigned long long)res.messages, res.cpu / 1e6);

    if (mo.json_file) {
        json_t *doc = json_pack ("{s:i s:o s:i s:i s:s s:i s:{s:o s:o}"
                                 " s:{s:{s:f} s:{s:f} s:{s:f}}"
                                 " s:{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:f s:f s:f s:f s:f s:f s:f}}",
                                 "model", 1,
                                 "config", kap_config_json (&kc),
                                 "brokers", cfg.brokers,
                                 "k", cfg.k,
                                 "clients", cfg.clients == KVSIM_CROWD ? "crowd" : "mpi",
                                 "cores", costs.cores,
                                 "metrics", "sync", summary (&res.sync),
                                            "get", summary (&res.get),
                                 "wallclock", "sync", "max_us", res.sync_wall,
                                              "consumer", "max_us", res.consumer_wall,
                                              "total", "max_us", res.total_wall,
                                 "counters", "relays", (json_int_t)res.relays,
                                   "relays_late", (json_int_t)res.relays_late,
                                   "late_acks", (json_int_t)res.late_acks,
                                   "relay_bytes", (json_int_t)res.relay_bytes,
                                   "loads", (json_int_t)res.loads,
                                   "load_bytes", (json_int_t)res.load_bytes,
                                   "load_batches", (json_int_t)res.load_batches,
                                   "shm_gets", (json_int_t)res.shm_gets,
                                   "messages", (json_int_t)res.messages,
                                   "events", (json_int_t)res.events,
                                   "cpu_us", res.cpu,
                                   "cpu_broker_us", res.cpu_thread[0],
                                   "cpu_kvs_us", res.cpu_thread[1],
                                   "cpu_content_us", res.cpu_thread[2],
                                   "cpu_client_us", res.cpu_thread[3],
                                   "bytes_broker", res.bytes_thread[0],
                                   "bytes_kvs", res.bytes_thread[1]);
        json_t *cj = kap_costs_to_json (&costs);
        if (!doc || !cj || json_object_set_new (doc, "costs", cj) < 0
            || json_dump_file (doc, mo.json_file, JSON_INDENT (2)) < 0)
            die ("cannot write %s", mo.json_file);
        json_decref (doc);
    }
    kap_opts_free (&kc);
    kap_crowd_opts_free (&cc);
    free (mo.argv);
    return 0;
}
