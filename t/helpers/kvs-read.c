/* kvs-read - gets through the KVS C API on one handle, then that handle's
 * read counters (kvs_read_stats), for the tests of the shared read cache.
 *
 * Usage:
 *   kvs-read [--until FILE] KEY...   get each KEY, print "KEY=VALUE" (or
 *                                    "KEY: error text"); with --until,
 *                                    go on getting them until FILE exists
 *                                    (a line "round N attaches=A" after
 *                                    each round; their errors are
 *                                    printed, not counted), then once more
 *   kvs-read --rw N KEY              N times: put KEY=i, commit, get KEY;
 *                                    each get must give i
 *   kvs-read --attach [KEY...]       kvs_read_attach first: prints
 *                                    "attach: ok" or "attach: ERRNO TEXT"
 * Then the line "hits=H misses=M retries=R rpc=C attaches=A attached=B".
 * Exits 1 if any get failed or gave the wrong value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <canopy/canopy.h>

static int get_all (canopy_t *h, char **keys, int n, bool print)
{
    int errors = 0;
    for (int i = 0; i < n; i++) {
        void *data;
        size_t len;
        if (kvs_get_raw (h, keys[i], &data, &len) < 0) {
            printf ("%s: %s\n", keys[i], kvs_errstr (h) ? kvs_errstr (h)
                                                       : strerror (errno));
            errors++;
            continue;
        }
        if (print)
            printf ("%s=%.*s\n", keys[i], (int)len, (char *)data);
        free (data);
    }
    return errors;
}

static int read_write (canopy_t *h, int count, const char *key)
{
    for (int i = 1; i <= count; i++) {
        int v = -1;
        if (kvs_put_int (h, key, i) < 0 || kvs_commit (h, 0) < 0
            || kvs_get_int (h, key, &v) < 0) {
            fprintf (stderr, "kvs-read: round %d: %s\n", i, strerror (errno));
            return 1;
        }
        if (v != i) {
            fprintf (stderr, "kvs-read: round %d read %d: not our write\n", i, v);
            return 1;
        }
    }
    return 0;
}

int main (int argc, char **argv)
{
    canopy_error_t error;
    canopy_t *h;
    struct kvs_read_stats st;
    const char *until = NULL;
    int rw = 0, errors = 0;
    bool early = false;
    int i = 1;

    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp (argv[i], "--until") && i + 1 < argc)
            until = argv[++i];
        else if (!strcmp (argv[i], "--rw") && i + 1 < argc)
            rw = atoi (argv[++i]);
        else if (!strcmp (argv[i], "--attach"))
            early = true;
        else {
            fprintf (stderr, "kvs-read: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if ((i == argc && !early) || (rw && argc - i != 1)) {
        fprintf (stderr, "Usage: kvs-read [--attach] [--until FILE] KEY..."
                 " | --rw N KEY\n");
        return 2;
    }
    if (!(h = canopy_open (NULL, 0, &error))) {
        fprintf (stderr, "kvs-read: %s\n", error.text);
        return 1;
    }
    if (early) {
        if (kvs_read_attach (h) < 0)
            printf ("attach: %d %s\n", errno, strerror (errno));
        else
            printf ("attach: ok\n");
    }
    if (rw)
        errors = read_write (h, rw, argv[i]);
    else if (until) {
        for (int round = 1; access (until, F_OK) < 0; round++) {
            (void)get_all (h, argv + i, argc - i, false);   /* may fail */
            (void)kvs_read_stats (h, &st);
            printf ("round %d attaches=%ju\n", round, (uintmax_t)st.attaches);
            fflush (stdout);
            usleep (20 * 1000);
        }
        errors += get_all (h, argv + i, argc - i, true);
    }
    else
        errors = get_all (h, argv + i, argc - i, true);
    if (kvs_read_stats (h, &st) < 0) {
        fprintf (stderr, "kvs-read: kvs_read_stats: %s\n", strerror (errno));
        errors++;
    }
    printf ("hits=%ju misses=%ju retries=%ju rpc=%ju attaches=%ju attached=%d\n",
            (uintmax_t)st.shm_hits, (uintmax_t)st.shm_misses,
            (uintmax_t)st.shm_retries, (uintmax_t)st.rpc_gets,
            (uintmax_t)st.attaches, st.attached ? 1 : 0);
    canopy_close (h);
    return errors ? 1 : 0;
}
