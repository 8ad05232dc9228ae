/* kvs-bench - KVS client throughput, one measurement per invocation.
 *
 *   kvs-bench seqget N            N sequential kvs_get of one cached key
 *   kvs-bench inflight N DEPTH    N lookups, DEPTH in flight all the time
 *   kvs-bench commit N DIRSIZE    N one-key commits into a DIRSIZE-key dir
 *   kvs-bench commitpar N DIRSIZE THREADS   the same from THREADS clients
 *   kvs-bench bulk R              R times: 1000 puts, one commit
 * Prints one JSON object: {"mode":..., "ops":..., "seconds":..., "rate":...}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <canopy/canopy.h>
#include "src/common/libutil/monotime.h"

static canopy_t *open_or_die (void)
{
    canopy_error_t error;
    canopy_t *h = canopy_open (NULL, 0, &error);
    if (!h) {
        fprintf (stderr, "kvs-bench: %s\n", error.text);
        exit (1);
    }
    return h;
}

static void die (canopy_t *h, const char *what)
{
    const char *s = h ? kvs_errstr (h) : NULL;
    fprintf (stderr, "kvs-bench: %s: %s\n", what, s ? s : strerror (errno));
    exit (1);
}

static void prefill (canopy_t *h, const char *dir, int n)
{
    char key[128];
    for (int i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "%s.k%d", dir, i);
        if (kvs_put_int (h, key, i) < 0)
            die (h, "put");
    }
    if (kvs_commit (h, 0) < 0)
        die (h, "commit");
}

static void report (const char *mode, long ops, double secs)
{
    printf ("{\"mode\":\"%s\",\"ops\":%ld,\"seconds\":%.6f,\"rate\":%.1f}\n",
            mode, ops, secs, ops / secs);
}

struct par {
    const char *dir;
    int dirsize;
    int count;
    int id;
};

static void *committer (void *arg)
{
    struct par *p = arg;
    canopy_t *h = open_or_die ();
    char key[128];
    for (int i = 0; i < p->count; i++) {
        snprintf (key, sizeof (key), "%s.k%d", p->dir, (p->id * 7919 + i) % p->dirsize);
        if (kvs_put_int (h, key, i) < 0 || kvs_commit (h, 0) < 0)
            die (h, "commit");
    }
    canopy_close (h);
    return NULL;
}

int main (int argc, char *argv[])
{
    if (argc < 3) {
        fprintf (stderr, "Usage: kvs-bench seqget N | inflight N DEPTH | commit N DIRSIZE"
                 " | commitpar N DIRSIZE THREADS | bulk R\n");
        return 1;
    }
    const char *mode = argv[1];
    long n = atol (argv[2]);
    canopy_t *h = open_or_die ();
    double t0;

    if (!strcmp (mode, "seqget")) {
        if (kvs_put_string (h, "bench.get", "12345678") < 0 || kvs_commit (h, 0) < 0)
            die (h, "setup");
        void *d;
        size_t l;
        if (kvs_get_raw (h, "bench.get", &d, &l) < 0)   /* warm the cache */
            die (h, "get");
        free (d);
        t0 = monotime ();
        for (long i = 0; i < n; i++) {
            if (kvs_get_raw (h, "bench.get", &d, &l) < 0)
                die (h, "get");
            free (d);
        }
        report (mode, n, monotime () - t0);
    }
    else if (!strcmp (mode, "inflight") && argc == 4) {
        int depth = atoi (argv[3]);
        canopy_future_t **fs = calloc (depth, sizeof (*fs));
        if (kvs_put_string (h, "bench.get", "12345678") < 0 || kvs_commit (h, 0) < 0)
            die (h, "setup");
        /* A sliding window, as redis-benchmark's clients keep theirs: the
         * oldest lookup is awaited, and a new one takes its slot at once,
         * so DEPTH stay in flight the whole time.
         */
        t0 = monotime ();
        long sent = 0;
        for (; sent < depth && sent < n; sent++)
            if (!(fs[sent] = kvs_lookup (h, "bench.get", 0)))
                die (h, "lookup");
        for (long done = 0; done < n; done++) {
            int slot = done % depth;
            const void *d;
            size_t l;
            if (kvs_lookup_get_raw (fs[slot], &d, &l) < 0)
                die (h, "lookup");
            canopy_future_destroy (fs[slot]);
            fs[slot] = NULL;
            if (sent < n) {
                if (!(fs[slot] = kvs_lookup (h, "bench.get", 0)))
                    die (h, "lookup");
                sent++;
            }
        }
        report (mode, n, monotime () - t0);
        free (fs);
    }
    else if (!strcmp (mode, "commit") && argc == 4) {
        int dirsize = atoi (argv[3]);
        char key[128];
        prefill (h, "bench.c", dirsize);
        t0 = monotime ();
        for (long i = 0; i < n; i++) {
            snprintf (key, sizeof (key), "bench.c.k%ld", i % dirsize);
            if (kvs_put_int (h, key, i) < 0 || kvs_commit (h, 0) < 0)
                die (h, "commit");
        }
        report (mode, n, monotime () - t0);
    }
    else if (!strcmp (mode, "commitpar") && argc == 5) {
        int dirsize = atoi (argv[3]);
        int threads = atoi (argv[4]);
        pthread_t *tid = calloc (threads, sizeof (*tid));
        struct par *p = calloc (threads, sizeof (*p));
        prefill (h, "bench.p", dirsize);
        t0 = monotime ();
        for (int t = 0; t < threads; t++) {
            p[t] = (struct par){ .dir = "bench.p", .dirsize = dirsize,
                                 .count = n / threads, .id = t };
            pthread_create (&tid[t], NULL, committer, &p[t]);
        }
        for (int t = 0; t < threads; t++)
            pthread_join (tid[t], NULL);
        report (mode, (n / threads) * threads, monotime () - t0);
        free (tid);
        free (p);
    }
    else if (!strcmp (mode, "bulk")) {
        char key[128];
        double total = 0;
        for (long r = 0; r < n; r++) {
            t0 = monotime ();
            for (int i = 0; i < 1000; i++) {
                snprintf (key, sizeof (key), "bench.bulk%ld.k%d", r, i);
                if (kvs_put_int (h, key, i) < 0)
                    die (h, "put");
            }
            if (kvs_commit (h, 0) < 0)
                die (h, "commit");
            total += monotime () - t0;
        }
        /* rate: puts per second including the commit */
        report (mode, n * 1000, total);
    }
    else {
        fprintf (stderr, "kvs-bench: bad arguments\n");
        return 1;
    }
    canopy_close (h);
    return 0;
}
