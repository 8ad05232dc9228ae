/* persist-writer - crash-test helper for the persistence tests.
 *
 *   persist-writer write [--sync] [--count N] PREFIX LOG
 *       commit PREFIX.i = i for i = 0, 1, ... (one commit each, with
 *       KVS_SYNC if --sync) until N commits or the first error; after each
 *       acknowledged commit append "i version\n" to LOG (one write(2) per
 *       line, so the log is exact whenever this process stops).
 *   persist-writer check [--upto VERSION] PREFIX LOG
 *       for every commit in LOG (with version <= VERSION if given), check
 *       that PREFIX.i reads back as i; print "checked N lost M beyond K"
 *       (K: commits in LOG newer than VERSION that are missing) and exit 1
 *       if M > 0.
 *   persist-writer fence [--sync] NAME NPROCS KEY
 *       put KEY = 1 and join fence NAME of NPROCS (with KVS_SYNC if --sync);
 *       print the version it completed with.
 *   persist-writer ckpt
 *       print the version of rank 0's newest durable checkpoint and the
 *       version it restored at start ("VERSION RESTORED").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <canopy/canopy.h>

static canopy_t *open_handle (void)
{
    canopy_error_t error;
    canopy_t *h = canopy_open (NULL, 0, &error);
    if (!h) {
        fprintf (stderr, "persist-writer: %s\n", error.text);
        exit (1);
    }
    return h;
}

static int do_write (int argc, char **argv)
{
    int flags = 0;
    long count = -1;
    int i = 0;
    while (i < argc && argv[i][0] == '-') {
        if (!strcmp (argv[i], "--sync"))
            flags |= KVS_SYNC;
        else if (!strcmp (argv[i], "--count") && i + 1 < argc)
            count = strtol (argv[++i], NULL, 10);
        else
            return -1;
        i++;
    }
    if (argc - i != 2)
        return -1;
    const char *prefix = argv[i], *logpath = argv[i + 1];
    int fd = open (logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
        perror (logpath);
        return 1;
    }
    canopy_t *h = open_handle ();
    for (long n = 0; count < 0 || n < count; n++) {
        char key[256], line[64];
        int version;
        canopy_future_t *f;
        snprintf (key, sizeof (key), "%s.%ld", prefix, n);
        if (kvs_put_int (h, key, (int)n) < 0
            || !(f = kvs_commit_async (h, flags))) {
            perror ("put");
            return 1;
        }
        if (kvs_commit_get (f, &version) < 0) {
            fprintf (stderr, "persist-writer: commit %ld: %s\n", n, strerror (errno));
            canopy_future_destroy (f);
            return 1;
        }
        canopy_future_destroy (f);
        int len = snprintf (line, sizeof (line), "%ld %d\n", n, version);
        if (write (fd, line, len) != len) {
            perror ("write");
            return 1;
        }
    }
    close (fd);
    canopy_close (h);
    return 0;
}

static int do_check (int argc, char **argv)
{
    long upto = -1;
    int i = 0;
    if (i < argc && !strcmp (argv[i], "--upto") && i + 1 < argc) {
        upto = strtol (argv[i + 1], NULL, 10);
        i += 2;
    }
    if (argc - i != 2)
        return -1;
    const char *prefix = argv[i], *logpath = argv[i + 1];
    FILE *fp = fopen (logpath, "r");
    if (!fp) {
        perror (logpath);
        return 1;
    }
    canopy_t *h = open_handle ();
    long n, checked = 0, lost = 0, beyond = 0;
    int version;
    while (fscanf (fp, "%ld %d", &n, &version) == 2) {
        char key[256];
        int val = -1;
        snprintf (key, sizeof (key), "%s.%ld", prefix, n);
        int ok = kvs_get_int (h, key, &val) == 0 && val == n;
        if (upto >= 0 && version > upto) {
            if (!ok)
                beyond++;
            continue;
        }
        checked++;
        if (!ok) {
            fprintf (stderr, "lost: %s (version %d)\n", key, version);
            lost++;
        }
    }
    fclose (fp);
    canopy_close (h);
    printf ("checked %ld lost %ld beyond %ld\n", checked, lost, beyond);
    return lost > 0 ? 1 : 0;
}

static int do_fence (int argc, char **argv)
{
    int flags = 0, i = 0, version;
    if (i < argc && !strcmp (argv[i], "--sync")) {
        flags |= KVS_SYNC;
        i++;
    }
    if (argc - i != 3)
        return -1;
    canopy_t *h = open_handle ();
    canopy_future_t *f;
    if (kvs_put_int (h, argv[i + 2], 1) < 0
        || !(f = kvs_fence_async (h, argv[i], atoi (argv[i + 1]), flags))
        || kvs_commit_get (f, &version) < 0) {
        fprintf (stderr, "persist-writer: fence: %s\n", strerror (errno));
        return 1;
    }
    printf ("%d\n", version);
    canopy_future_destroy (f);
    canopy_close (h);
    return 0;
}

static int do_ckpt (void)
{
    canopy_t *h = open_handle ();
    canopy_future_t *f = canopy_rpc (h, "kvs.stats", "{}", 0, 0);
    int version, restored;
    if (!f || canopy_rpc_get_unpack (f, "{s:{s:i s:i}}", "checkpoint", "version", &version,
                                     "restored-version", &restored) < 0) {
        fprintf (stderr, "persist-writer: kvs.stats: %s\n",
                 f ? canopy_future_error_string (f) : strerror (errno));
        return 1;
    }
    printf ("%d %d\n", version, restored);
    canopy_future_destroy (f);
    canopy_close (h);
    return 0;
}

int main (int argc, char *argv[])
{
    int rc = -1;
    if (argc >= 2 && !strcmp (argv[1], "write"))
        rc = do_write (argc - 2, argv + 2);
    else if (argc >= 2 && !strcmp (argv[1], "check"))
        rc = do_check (argc - 2, argv + 2);
    else if (argc >= 2 && !strcmp (argv[1], "fence"))
        rc = do_fence (argc - 2, argv + 2);
    else if (argc == 2 && !strcmp (argv[1], "ckpt"))
        rc = do_ckpt ();
    if (rc < 0) {
        fprintf (stderr, "Usage: persist-writer write [--sync] [--count N] PREFIX LOG\n"
                         "       persist-writer check [--upto VERSION] PREFIX LOG\n"
                         "       persist-writer fence [--sync] NAME NPROCS KEY\n"
                         "       persist-writer ckpt\n");
        return 1;
    }
    return rc;
}
