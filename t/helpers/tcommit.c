/* tcommit - N threads, each with its own handle, each doing COUNT
 * iterations of put + commit (or put + fence across all threads).
 * Usage: tcommit [--fence] [--stats] NTHREADS COUNT PREFIX
 * Thread t writes PREFIX.t.i = i; with --fence, iteration i is fence
 * "PREFIX.fence.i" over NTHREADS participants (on this process).
 * --stats prints latency statistics and throughput.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <canopy/canopy.h>

static int nthreads, count;
static const char *prefix;
static int use_fence;
static int failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double total_time, max_time;

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *thread (void *arg)
{
    int t = (int)(long)arg;
    canopy_error_t error;
    canopy_t *h = canopy_open (NULL, 0, &error);
    char key[256], name[256];
    double tsum = 0, tmax = 0;

    if (!h) {
        fprintf (stderr, "thread %d: %s\n", t, error.text);
        pthread_mutex_lock (&lock);
        failures++;
        pthread_mutex_unlock (&lock);
        return NULL;
    }
    for (int i = 0; i < count; i++) {
        snprintf (key, sizeof (key), "%s.%d.%d", prefix, t, i);
        double t0 = now ();
        int rc;
        if (kvs_put_int (h, key, i) < 0)
            rc = -1;
        else if (use_fence) {
            snprintf (name, sizeof (name), "%s.fence.%d", prefix, i);
            rc = kvs_fence (h, name, nthreads, 0);
        }
        else
            rc = kvs_commit (h, 0);
        double dt = now () - t0;
        tsum += dt;
        if (dt > tmax)
            tmax = dt;
        if (rc < 0) {
            fprintf (stderr, "thread %d iteration %d: %s\n", t, i,
                     kvs_errstr (h) ? kvs_errstr (h) : strerror (errno));
            pthread_mutex_lock (&lock);
            failures++;
            pthread_mutex_unlock (&lock);
            break;
        }
    }
    pthread_mutex_lock (&lock);
    total_time += tsum;
    if (tmax > max_time)
        max_time = tmax;
    pthread_mutex_unlock (&lock);
    canopy_close (h);
    return NULL;
}

int main (int argc, char *argv[])
{
    int i = 1, stats = 0;
    while (i < argc && argv[i][0] == '-') {
        if (!strcmp (argv[i], "--fence"))
            use_fence = 1;
        else if (!strcmp (argv[i], "--stats"))
            stats = 1;
        else {
            fprintf (stderr, "unknown option %s\n", argv[i]);
            return 1;
        }
        i++;
    }
    if (argc - i != 3) {
        fprintf (stderr, "Usage: tcommit [--fence] [--stats] NTHREADS COUNT PREFIX\n");
        return 1;
    }
    nthreads = atoi (argv[i]);
    count = atoi (argv[i + 1]);
    prefix = argv[i + 2];
    pthread_t *tid = calloc (nthreads, sizeof (pthread_t));
    double t0 = now ();
    for (int t = 0; t < nthreads; t++)
        pthread_create (&tid[t], NULL, thread, (void *)(long)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join (tid[t], NULL);
    double wall = now () - t0;
    if (stats)
        printf ("{\"threads\":%d,\"count\":%d,\"fence\":%d,\"wall\":%.6f,"
                "\"ops_per_sec\":%.1f,\"mean_latency\":%.6f,\"max_latency\":%.6f}\n",
                nthreads, count, use_fence, wall, nthreads * count / wall,
                total_time / (nthreads * count), max_time);
    free (tid);
    return failures ? 1 : 0;
}
