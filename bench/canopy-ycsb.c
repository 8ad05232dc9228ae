/* canopy-ycsb - YCSB-style mixes of KVS gets and commits.
 *
 *   canopy-ycsb --load [--keys K] [--value-size B]
 *       write K keys ycsb.kI (I = 0..K-1) with B-byte random values, in
 *       commits of 500 keys, the last one with KVS_SYNC
 *   canopy-ycsb [--clients N] [--ops N] [--keys K] [--value-size B]
 *               [--read-pct P] [--sync] [--zipf THETA] [--broker-pid PID]
 *       N threads (each with its own handle) share N ops; each op is, with
 *       probability P%, a get of a key drawn from a scrambled zipfian
 *       distribution (THETA 0.99 as YCSB; 0 = uniform), otherwise a put of
 *       a fresh random value to such a key and a commit of it (KVS_SYNC
 *       with --sync).
 *
 * Output (one line):
 *   ycsb read-pct=P clients=N ops=N seconds=S ops/s=X read-p50=U read-p99=U
 *        write-p50=U write-p99=U committed-bytes=B blob-bytes=b disk-bytes=D
 *        wa-tree=T wa=R
 * Latencies in microseconds.  With --broker-pid, disk-bytes is the growth
 * of /proc/PID/io write_bytes (less cancelled_write_bytes) of the broker
 * (rank 0) over the run, after a
 * content flush so that written-back data is counted, and wa (write
 * amplification) is disk-bytes / committed-bytes (key + value bytes of the
 * writes).  blob-bytes is what rank 0's content service handed to the
 * backing store over the run (new values plus the new directory objects
 * of every version: wa-tree = blob-bytes / committed-bytes), so wa/wa-tree
 * is what SQLite adds (pages, WAL, checkpointing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <getopt.h>
#include <canopy/canopy.h>
#include "src/common/libutil/monotime.h"
#include "benchstat.h"

static int nclients = 1, keys = 10000, value_size = 1024, read_pct = 95;
static long nops = 10000;
static int sync_flag;
static double theta = 0.99;
static double *zipf_cdf;

struct client {
    pthread_t t;
    int id;
    long ops;
    double *rlat, *wlat;
    long nr, nw;
    uint64_t committed;
    int failed;
};

static uint64_t rnd (uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void fill_random (char *buf, size_t len, uint64_t *s)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = rnd (s);
        memcpy (buf + i, &v, len - i < 8 ? len - i : 8);
    }
}

static void zipf_init (void)
{
    double sum = 0;
    if (!(zipf_cdf = malloc (keys * sizeof (double)))) {
        perror ("malloc");
        exit (1);
    }
    for (int i = 0; i < keys; i++) {
        sum += theta > 0 ? 1.0 / pow (i + 1, theta) : 1.0;
        zipf_cdf[i] = sum;
    }
    for (int i = 0; i < keys; i++)
        zipf_cdf[i] /= sum;
}

/* A key index: zipfian rank, scrambled so hot keys are spread out. */
static int next_key (uint64_t *s)
{
    double u = (rnd (s) >> 11) * (1.0 / 9007199254740992.0);
    int lo = 0, hi = keys - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (zipf_cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t h = (uint64_t)lo * 0x9E3779B97F4A7C15ULL;
    return (int)((h >> 17) % (uint64_t)keys);
}

static canopy_t *open_handle (void)
{
    canopy_error_t error;
    canopy_t *h = canopy_open (NULL, 0, &error);
    if (!h) {
        fprintf (stderr, "canopy-ycsb: %s\n", error.text);
        exit (1);
    }
    return h;
}

static void *client_run (void *arg)
{
    struct client *c = arg;
    canopy_t *h = open_handle ();
    uint64_t s = 0x1234567ULL + c->id * 7919;
    char key[64];
    char *val = malloc (value_size + 8);

    for (long i = 0; i < c->ops; i++) {
        int k = next_key (&s);
        snprintf (key, sizeof (key), "ycsb.k%d", k);
        bool is_read = (int)(rnd (&s) % 100) < read_pct;
        double t0 = monotime ();
        if (is_read) {
            void *data;
            size_t len;
            if (kvs_get_raw (h, key, &data, &len) < 0) {
                fprintf (stderr, "get %s: %s\n", key, strerror (errno));
                c->failed++;
                continue;
            }
            free (data);
            c->rlat[c->nr++] = (monotime () - t0) * 1e6;
        }
        else {
            fill_random (val, value_size, &s);
            if (kvs_put_raw (h, key, val, value_size) < 0
                || kvs_commit (h, sync_flag ? KVS_SYNC : 0) < 0) {
                fprintf (stderr, "commit %s: %s\n", key, strerror (errno));
                c->failed++;
                continue;
            }
            c->wlat[c->nw++] = (monotime () - t0) * 1e6;
            c->committed += strlen (key) + value_size;
        }
    }
    free (val);
    canopy_close (h);
    return NULL;
}

/* Bytes the process sent to storage: write_bytes less the writes it
 * cancelled (truncated before they reached the disk).
 */
static long long write_bytes (int pid)
{
    char path[64], line[256];
    long long w = -1, c = 0, v;
    snprintf (path, sizeof (path), "/proc/%d/io", pid);
    FILE *fp = fopen (path, "r");
    if (!fp)
        return -1;
    while (fgets (line, sizeof (line), fp)) {
        if (sscanf (line, "write_bytes: %lld", &v) == 1)
            w = v;
        else if (sscanf (line, "cancelled_write_bytes: %lld", &v) == 1)
            c = v;
    }
    fclose (fp);
    return w < 0 ? -1 : w - c;
}

/* Flush rank 0's write-back; return the blob bytes it has written so far
 * (-1 if unknown).
 */
static long long flush_content (canopy_t *h)
{
    canopy_future_t *f = canopy_rpc (h, "content.flush", "{}", 0, 0);
    json_int_t bytes = -1;
    if (!f || canopy_future_get (f, NULL) < 0)
        fprintf (stderr, "canopy-ycsb: content flush: %s\n",
                 f ? canopy_future_error_string (f) : strerror (errno));
    canopy_future_destroy (f);
    if (!(f = canopy_rpc (h, "content.stats", "{}", 0, 0))
        || canopy_rpc_get_unpack (f, "{s:{s:I}}", "backing", "bytes-written", &bytes) < 0)
        bytes = -1;
    canopy_future_destroy (f);
    return bytes;
}

static int do_load (void)
{
    canopy_t *h = open_handle ();
    char key[64];
    char *val = malloc (value_size + 8);
    uint64_t s = 42;
    double t0 = monotime ();
    for (int i = 0; i < keys; i++) {
        snprintf (key, sizeof (key), "ycsb.k%d", i);
        fill_random (val, value_size, &s);
        if (kvs_put_raw (h, key, val, value_size) < 0)
            goto fail;
        if ((i + 1) % 500 == 0 || i == keys - 1) {
            if (kvs_commit (h, i == keys - 1 ? KVS_SYNC : 0) < 0)
                goto fail;
        }
    }
    printf ("load keys=%d value-size=%d seconds=%.3f\n", keys, value_size,
            monotime () - t0);
    free (val);
    canopy_close (h);
    return 0;
fail:
    fprintf (stderr, "canopy-ycsb: load: %s\n", strerror (errno));
    return 1;
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct (double *v, long n, double p)
{
    if (n == 0)
        return 0;
    qsort (v, n, sizeof (double), cmp_double);
    return benchstat_percentile (v, n, p);
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "load", no_argument, NULL, 'L' },
        { "clients", required_argument, NULL, 'c' },
        { "ops", required_argument, NULL, 'n' },
        { "keys", required_argument, NULL, 'k' },
        { "value-size", required_argument, NULL, 'v' },
        { "read-pct", required_argument, NULL, 'r' },
        { "sync", no_argument, NULL, 's' },
        { "zipf", required_argument, NULL, 'z' },
        { "broker-pid", required_argument, NULL, 'p' },
        { NULL, 0, NULL, 0 },
    };
    int load = 0, pid = 0, c;

    while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
            case 'L': load = 1; break;
            case 'c': nclients = atoi (optarg); break;
            case 'n': nops = atol (optarg); break;
            case 'k': keys = atoi (optarg); break;
            case 'v': value_size = atoi (optarg); break;
            case 'r': read_pct = atoi (optarg); break;
            case 's': sync_flag = 1; break;
            case 'z': theta = atof (optarg); break;
            case 'p': pid = atoi (optarg); break;
            default:
                fprintf (stderr, "Usage: canopy-ycsb [--load] [--clients N] [--ops N] "
                         "[--keys K] [--value-size B] [--read-pct P] [--sync] "
                         "[--zipf THETA] [--broker-pid PID]\n");
                return 1;
        }
    }
    if (nclients < 1 || keys < 1 || value_size < 1 || read_pct < 0 || read_pct > 100)
        return 1;
    if (load)
        return do_load ();
    zipf_init ();
    struct client *cl = calloc (nclients, sizeof (*cl));
    canopy_t *h = open_handle ();
    long long bb0 = flush_content (h);
    long long wb0 = pid ? write_bytes (pid) : -1;
    double t0 = monotime ();
    for (int i = 0; i < nclients; i++) {
        cl[i].id = i;
        cl[i].ops = nops / nclients;
        cl[i].rlat = calloc (cl[i].ops + 1, sizeof (double));
        cl[i].wlat = calloc (cl[i].ops + 1, sizeof (double));
        pthread_create (&cl[i].t, NULL, client_run, &cl[i]);
    }
    long nr = 0, nw = 0, failed = 0;
    uint64_t committed = 0;
    for (int i = 0; i < nclients; i++) {
        pthread_join (cl[i].t, NULL);
        nr += cl[i].nr;
        nw += cl[i].nw;
        failed += cl[i].failed;
        committed += cl[i].committed;
    }
    double secs = monotime () - t0;
    long long bb1 = flush_content (h);
    long long wb1 = pid ? write_bytes (pid) : -1;
    double *rl = malloc ((nr + 1) * sizeof (double));
    double *wl = malloc ((nw + 1) * sizeof (double));
    long ri = 0, wi = 0;
    for (int i = 0; i < nclients; i++) {
        memcpy (rl + ri, cl[i].rlat, cl[i].nr * sizeof (double));
        memcpy (wl + wi, cl[i].wlat, cl[i].nw * sizeof (double));
        ri += cl[i].nr;
        wi += cl[i].nw;
    }
    long long disk = wb0 >= 0 && wb1 >= 0 ? wb1 - wb0 : -1;
    long long blob = bb0 >= 0 && bb1 >= 0 ? bb1 - bb0 : -1;
    printf ("ycsb read-pct=%d clients=%d ops=%ld seconds=%.3f ops/s=%.0f "
            "read-p50=%.0f read-p99=%.0f write-p50=%.0f write-p99=%.0f "
            "committed-bytes=%llu blob-bytes=%lld disk-bytes=%lld wa-tree=%.2f "
            "wa=%.2f failed=%ld\n",
            read_pct, nclients, nr + nw, secs, (nr + nw) / secs,
            pct (rl, nr, 50), pct (rl, nr, 99), pct (wl, nw, 50), pct (wl, nw, 99),
            (unsigned long long)committed, blob, disk,
            blob >= 0 && committed > 0 ? (double)blob / committed : 0.0,
            disk >= 0 && committed > 0 ? (double)disk / committed : 0.0, failed);
    canopy_close (h);
    return failed ? 1 : 0;
}
