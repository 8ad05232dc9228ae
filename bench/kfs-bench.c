/* kfs-bench - the KFS experiment on canopy's blob store (sqlstore, the
 * SQLite layer under the content-sqlite module), without a broker.
 *
 *   kfs-bench run --dir DIR --shards N --trial T [--sizes 8,16,...]
 *                 [--chunk BYTES] [--grow MIB]
 *       One trial: for each size (MiB), write a value of that size as
 *       CHUNK-byte blobs (default 64 KiB, batches of 64 per transaction)
 *       and sync; read every chunk back (cold: the store is closed, its
 *       files dropped from the page cache with posix_fadvise, and reopened,
 *       unless --warm); unlink (delete) them and sync.
 *       Then leave GROW MiB of other blobs behind (default 64), so the
 *       store grows from trial to trial as KFS's did.  Prints one line
 *       per size and operation:
 *         kfs shards=N trial=T size=MIB op=write|read|unlink seconds=S mbps=X
 *   kfs-bench fill --dir DIR --blobs N [--size BYTES] [--shards N]
 *       Store N random blobs (for recovery measurements) and sync.
 *
 * Timing covers the store calls only (sqlstore_put/get/delete/sync):
 * making the random data and hashing it are outside the clock, so the two
 * layouts are compared on storage alone.  Data is random (incompressible)
 * and unique per trial, size and chunk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <getopt.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>
#include <sodium.h>
#include "src/common/libutil/monotime.h"
#include "src/modules/content-sqlite/sqlstore.h"

#define BATCH 64

static void usage (void)
{
    fprintf (stderr,
"Usage: kfs-bench run --dir DIR --shards N --trial T [--sizes LIST] [--chunk B] [--grow MIB]\n"
"                     [--warm]\n"
"       kfs-bench fill --dir DIR --blobs N [--size BYTES] [--shards N]\n");
    exit (1);
}

static void die (const char *what, canopy_error_t *error)
{
    fprintf (stderr, "kfs-bench: %s: %s\n", what, error ? error->text : strerror (errno));
    exit (1);
}

/* xorshift64*: fast deterministic random bytes */
static void fill_random (uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    if (!x)
        x = 1;
    for (size_t i = 0; i < len; i += 8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        uint64_t v = x * 0x2545F4914F6CDD1DULL;
        size_t n = len - i < 8 ? len - i : 8;
        memcpy (buf + i, &v, n);
    }
}

struct ctx {
    sqlstore_t *st;
    size_t chunk;
    uint8_t *data;          /* BATCH chunks */
    uint8_t *digests;       /* all chunks of the current value */
    size_t ndigests;
};

/* Write nchunks chunks (seeded by base); returns seconds spent in the store. */
static double write_value (struct ctx *c, uint64_t base, size_t nchunks)
{
    struct sqlstore_blob v[BATCH];
    canopy_error_t error;
    double t = 0, t0;

    c->digests = realloc (c->digests, nchunks * BLOBREF_HASHLEN);
    if (!c->digests)
        die ("out of memory", NULL);
    c->ndigests = nchunks;
    for (size_t i = 0; i < nchunks; i += BATCH) {
        int n = nchunks - i < BATCH ? nchunks - i : BATCH;
        for (int k = 0; k < n; k++) {
            uint8_t *p = c->data + k * c->chunk;
            uint8_t *d = c->digests + (i + k) * BLOBREF_HASHLEN;
            fill_random (p, c->chunk, base + i + k);
            crypto_hash_sha256 (d, p, c->chunk);
            v[k].digest = d;
            v[k].data = p;
            v[k].len = c->chunk;
        }
        t0 = monotime ();
        if (sqlstore_put (c->st, v, n, NULL, &error) < 0)
            die ("put", &error);
        t += monotime () - t0;
    }
    t0 = monotime ();
    if (sqlstore_sync (c->st, &error) < 0)
        die ("sync", &error);
    return t + monotime () - t0;
}

static double read_value (struct ctx *c)
{
    canopy_error_t error;
    double t0 = monotime ();
    for (size_t i = 0; i < c->ndigests; i++) {
        void *data;
        size_t len;
        if (sqlstore_get (c->st, c->digests + i * BLOBREF_HASHLEN, &data, &len,
                          &error) < 0)
            die ("get", &error);
        if (len != c->chunk) {
            fprintf (stderr, "kfs-bench: a chunk came back with %zu bytes\n", len);
            exit (1);
        }
        free (data);
    }
    return monotime () - t0;
}

static double unlink_value (struct ctx *c)
{
    canopy_error_t error;
    int deleted;
    double t0 = monotime ();
    for (size_t i = 0; i < c->ndigests; i += BATCH) {
        int n = c->ndigests - i < BATCH ? c->ndigests - i : BATCH;
        if (sqlstore_delete (c->st, c->digests + i * BLOBREF_HASHLEN, n, &deleted,
                             &error) < 0)
            die ("delete", &error);
    }
    if (sqlstore_sync (c->st, &error) < 0)
        die ("sync", &error);
    return monotime () - t0;
}

static sqlstore_t *open_store (const char *dir, int shards)
{
    canopy_error_t error;
    struct sqlstore_config cfg = {
        .dir = dir,
        .shards = shards,
        .compress_threshold = 256,
        .keep_checkpoints = 5,
        .durability = SQLSTORE_DURABLE,
    };
    sqlstore_t *st = sqlstore_open (&cfg, &error);
    if (!st)
        die (dir, &error);
    return st;
}

/* Drop the store's files from the page cache (they are clean: synced). */
static void drop_cache (const char *dir)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    char path[4096];
    if (!d)
        return;
    while ((e = readdir (d))) {
        if (strncmp (e->d_name, "content", 7) != 0)
            continue;
        snprintf (path, sizeof (path), "%s/%s", dir, e->d_name);
        int fd = open (path, O_RDONLY);
        if (fd >= 0) {
            (void)fdatasync (fd);
            (void)posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);
            close (fd);
        }
    }
    closedir (d);
}

static void report (int shards, int trial, int size, const char *op, double s)
{
    printf ("kfs shards=%d trial=%d size=%d op=%s seconds=%.4f mbps=%.1f\n",
            shards, trial, size, op, s, s > 0 ? size * 1.048576 / s : 0);
    fflush (stdout);
}

static int cmd_run (const char *dir, int shards, int trial, const char *sizes,
                    size_t chunk, int grow, int warm)
{
    struct ctx c = { .chunk = chunk };
    char *list = strdup (sizes), *save = NULL, *tok;

    c.st = open_store (dir, shards);
    shards = sqlstore_shards (c.st);
    if (!(c.data = malloc (BATCH * chunk)) || !list)
        die ("out of memory", NULL);
    int si = 0;
    for (tok = strtok_r (list, ",", &save); tok; tok = strtok_r (NULL, ",", &save), si++) {
        int mib = atoi (tok);
        size_t nchunks = ((size_t)mib << 20) / chunk;
        uint64_t base = ((uint64_t)trial << 40) | ((uint64_t)si << 32);
        if (mib <= 0 || nchunks == 0)
            usage ();
        report (shards, trial, mib, "write", write_value (&c, base, nchunks));
        if (!warm) {
            sqlstore_close (c.st);
            drop_cache (dir);
            c.st = open_store (dir, shards);
        }
        report (shards, trial, mib, "read", read_value (&c));
        report (shards, trial, mib, "unlink", unlink_value (&c));
    }
    if (grow > 0) {     /* ballast: the store grows from trial to trial */
        uint64_t base = ((uint64_t)trial << 40) | (0xffULL << 32);
        (void)write_value (&c, base, ((size_t)grow << 20) / chunk);
    }
    free (list);
    free (c.data);
    free (c.digests);
    sqlstore_close (c.st);
    return 0;
}

static int cmd_fill (const char *dir, int shards, long blobs, size_t size)
{
    struct ctx c = { .chunk = size };
    struct sqlstore_stats stats;
    canopy_error_t error;
    uint64_t base;

    c.st = open_store (dir, shards);
    if (!(c.data = malloc (BATCH * size)))
        die ("out of memory", NULL);
    if (sqlstore_stats (c.st, &stats, &error) < 0)
        die ("stats", &error);
    base = (0xfeULL << 40) + (uint64_t)stats.blobs;    /* new blobs each fill */
    double t = write_value (&c, base, blobs);
    if (sqlstore_stats (c.st, &stats, &error) < 0)
        die ("stats", &error);
    printf ("fill blobs=%ld size=%zu seconds=%.3f total-blobs=%lld file-bytes=%lld\n",
            blobs, size, t, (long long)stats.blobs, (long long)stats.file_bytes);
    free (c.data);
    free (c.digests);
    sqlstore_close (c.st);
    return 0;
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "dir", required_argument, NULL, 'd' },
        { "shards", required_argument, NULL, 's' },
        { "trial", required_argument, NULL, 't' },
        { "sizes", required_argument, NULL, 'z' },
        { "chunk", required_argument, NULL, 'c' },
        { "grow", required_argument, NULL, 'g' },
        { "blobs", required_argument, NULL, 'b' },
        { "size", required_argument, NULL, 'S' },
        { "warm", no_argument, NULL, 'w' },
        { NULL, 0, NULL, 0 },
    };
    const char *dir = NULL, *sizes = "8,16,32,64,128";
    int shards = 1, trial = 1, grow = 64, warm = 0, c;
    long blobs = 0;
    size_t chunk = 65536, size = 1024;

    if (argc < 2)
        usage ();
    const char *cmd = argv[1];
    optind = 2;
    while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
            case 'd': dir = optarg; break;
            case 's': shards = atoi (optarg); break;
            case 't': trial = atoi (optarg); break;
            case 'z': sizes = optarg; break;
            case 'c': chunk = strtoul (optarg, NULL, 10); break;
            case 'g': grow = atoi (optarg); break;
            case 'b': blobs = atol (optarg); break;
            case 'S': size = strtoul (optarg, NULL, 10); break;
            case 'w': warm = 1; break;
            default: usage ();
        }
    }
    if (!dir || chunk == 0 || size == 0 || sodium_init () < 0)
        usage ();
    if (!strcmp (cmd, "run"))
        return cmd_run (dir, shards, trial, sizes, chunk, grow, warm);
    if (!strcmp (cmd, "fill") && blobs > 0)
        return cmd_fill (dir, shards, blobs, size);
    usage ();
}
