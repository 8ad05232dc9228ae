/* hash-bench - canopy's batched SHA-256 (sha256_many) beside libsodium's
 * crypto_hash_sha256, one message at a time, on the batches canopy hashes.
 *
 *   hash-bench [-r ROUNDS] [-n REPS]
 *
 * Batches: the 16 values of one KAP rank's fence (64 B, 1 KiB, 4 KiB and
 * 64 KiB each: a client hashes them at its fence, its broker checks them
 * against their refs), and the 512 one-KiB values a leaf relays for a
 * 32-rank fence.  Each round times REPS batches with each path, in
 * alternating order from round to round; the table gives the median
 * microseconds per batch, the throughput, and the ratio batched/libsodium
 * (below 1: faster).  Before timing, every digest is checked to be the
 * same both ways.  The batched path is what this CPU has (its first
 * line says which): sixteen lanes with AVX-512F, else one message at a
 * time with the SHA instructions (SHA-NI), else libsodium (ratio about 1).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>
#include "src/common/libutil/sha256.h"
#include "src/common/libutil/monotime.h"
#include "benchstat.h"

struct batch {
    const char *name;
    int n;
    size_t size;
    const void **data;
    size_t *len;
    uint8_t (*out)[SHA256_BYTES];
};

static void die (const char *what)
{
    fprintf (stderr, "hash-bench: %s\n", what);
    exit (1);
}

static void batch_init (struct batch *b)
{
    uint32_t x = (uint32_t)b->size;
    if (!(b->data = calloc (b->n, sizeof (*b->data)))
        || !(b->len = calloc (b->n, sizeof (*b->len)))
        || !(b->out = calloc (b->n, sizeof (*b->out))))
        die ("out of memory");
    for (int i = 0; i < b->n; i++) {
        uint8_t *p = malloc (b->size);
        if (!p)
            die ("out of memory");
        for (size_t k = 0; k < b->size; k++) {
            x = x * 1103515245 + 12345;
            p[k] = (uint8_t)(x >> 16);
        }
        b->data[i] = p;
        b->len[i] = b->size;
    }
}

static double time_batches (struct batch *b, bool batched, int reps)
{
    double t0;
    sha256_set_generic (!batched);
    t0 = monotime ();
    for (int r = 0; r < reps; r++) {
        if (sha256_many (b->n, b->data, b->len, b->out) < 0)
            die ("sha256_many failed");
    }
    t0 = (monotime () - t0) * 1e6 / reps;
    sha256_set_generic (false);
    return t0;
}

int main (int argc, char **argv)
{
    int rounds = 7, reps = 200, opt;
    struct batch batches[] = {
        { "16 x 64 B", 16, 64 },
        { "16 x 1 KiB", 16, 1024 },
        { "16 x 4 KiB", 16, 4096 },
        { "16 x 64 KiB", 16, 65536 },
        { "512 x 1 KiB", 512, 1024 },
    };
    int nb = sizeof (batches) / sizeof (batches[0]);

    while ((opt = getopt (argc, argv, "r:n:h")) != -1) {
        switch (opt) {
            case 'r': rounds = atoi (optarg); break;
            case 'n': reps = atoi (optarg); break;
            default:
                fprintf (stderr, "Usage: hash-bench [-r ROUNDS] [-n REPS]\n");
                return opt == 'h' ? 0 : 1;
        }
    }
    if (rounds < 1 || reps < 1)
        die ("-r and -n must be positive");
    if (sodium_init () < 0)
        die ("cannot initialise libsodium");
    printf ("SHA-256, %d lanes (batched: %s)\n", sha256_lanes (), sha256_impl ());
    printf ("%-14s %12s %12s %10s %10s %7s\n", "batch", "sodium us", "batched us",
            "sodium MB/s", "batch MB/s", "ratio");
    for (int i = 0; i < nb; i++) {
        struct batch *b = &batches[i];
        struct benchstat *ss = benchstat_create ();
        struct benchstat *bs = benchstat_create ();
        struct benchstat_summary ssum, bsum;
        double mb = b->n * (double)b->size / 1e6;
        int breps = reps;

        if (!ss || !bs)
            die ("out of memory");
        batch_init (b);
        /* the same digests both ways */
        uint8_t (*want)[SHA256_BYTES] = calloc (b->n, sizeof (*want));
        if (!want)
            die ("out of memory");
        for (int m = 0; m < b->n; m++)
            crypto_hash_sha256 (want[m], b->data[m], b->len[m]);
        if (sha256_many (b->n, b->data, b->len, b->out) < 0
            || memcmp (want, b->out, b->n * sizeof (*want)) != 0)
            die ("sha256_many and libsodium disagree");
        free (want);
        if (b->n * b->size > 256 * 1024)
            breps = reps / 8 > 0 ? reps / 8 : 1;
        for (int r = 0; r < rounds; r++) {
            bool batched_first = r % 2;
            benchstat_push (batched_first ? bs : ss,
                            time_batches (b, batched_first, breps));
            benchstat_push (batched_first ? ss : bs,
                            time_batches (b, !batched_first, breps));
        }
        benchstat_summary (ss, &ssum);
        benchstat_summary (bs, &bsum);
        printf ("%-14s %12.1f %12.1f %10.0f %10.0f %7.2f\n", b->name, ssum.median,
                bsum.median, mb / ssum.median * 1e6, mb / bsum.median * 1e6,
                bsum.median / ssum.median);
        benchstat_destroy (ss);
        benchstat_destroy (bs);
        for (int m = 0; m < b->n; m++)
            free ((void *)b->data[m]);
        free (b->data);
        free (b->len);
        free (b->out);
    }
    return 0;
}

/*
 * vi:tabstop=4 shiftwidth=4 expandtab
 */
