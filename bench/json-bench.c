/* json-bench - canopy's JSON codec (json_fast_loadb, json_fast_dumps)
 * beside jansson's json_loadb and json_dumps, on the texts a broker and a
 * client handle most.
 *
 *   json-bench [-r ROUNDS] [-n REPS]
 *
 * Texts: a KVS directory of 32 and of 512 small values (what a setroot
 * event primes and a fault brings in), a kvs.lookup request, a lookup
 * answer carrying a value, a fence request's JSON header, and the
 * operations of a 16-put transaction (what kvs_fence encodes and a
 * leaf broker re-encodes for its relay).  Two tables: decoding each text,
 * and encoding its value compactly.  Each round times REPS of every text
 * with each codec, the two in alternating order from round to round; the
 * tables give the median microseconds per call over the rounds and the
 * ratio fast/jansson (below 1: faster).  Before timing, each text is
 * checked to decode to equal values both ways and to encode to the same
 * bytes both ways.
 *
 * A third table: finding the last entry of a directory, as a get reads
 * a directory in the KVS's shared cache for the first time
 * (treeobj_dir_scan, one pass over the text, no allocation) beside
 * decoding the directory and looking the name up (json_fast_loadb), for
 * directories of values and of dirrefs (blobrefs: long strings).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libcanopy/json_fast_dump.h"
#include "src/common/libkvs/treeobj_scan.h"
#include "src/common/libutil/monotime.h"
#include "benchstat.h"

struct text {
    const char *name;
    char *text;
    size_t len;
    json_t *value;
};

/* The encoding of a directory of n entries, p0.. each a val
 * of 8 bytes or (dirrefs) d0.. each a dirref.
 */
static char *dir_text_of (int n, bool dirrefs)
{
    json_t *data = json_object ();
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf (name, sizeof (name), "%s%d", dirrefs ? "d" : "p", i);
        json_object_set_new (data, name, dirrefs
            ? json_pack ("{s:[s] s:s s:i}", "data",
                         "sha256-0123456789abcdef0123456789abcdef"
                         "0123456789abcdef0123456789abcdef",
                         "type", "dirref", "ver", 1)
            : json_pack ("{s:s s:s s:i}", "data", "AAAAAAAAAAA=", "type", "val",
                         "ver", 1));
    }
    json_t *dir = json_pack ("{s:o s:s s:i}", "data", data, "type", "dir", "ver", 1);
    char *s = json_dumps (dir, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (dir);
    return s;
}

static char *txn_text (void)
{
    json_t *ops = json_array ();
    char key[64];
    for (int i = 0; i < 16; i++) {
        snprintf (key, sizeof (key), "kap.1.%d.0.17", i);
        json_array_append_new (ops, json_pack ("[s,{s:i s:s s:s}]", key, "ver", 1,
                                               "type", "val", "data", "AAAAAAAAAAA="));
    }
    json_t *f = json_pack ("[{s:s s:i s:i s:i s:o}]", "name", "kap.1.sync", "nprocs", 32,
                           "flags", 0, "count", 1, "ops", ops);
    char *s = json_dumps (f, JSON_COMPACT);
    json_decref (f);
    return s;
}

static void die (const char *what, const char *name)
{
    fprintf (stderr, "json-bench: %s %s\n", what, name);
    exit (1);
}

/* Microseconds per call of one codec (fast or jansson) in one direction
 * (*(bool *)arg: encode).
 */
static double time_calls (bool fast, const struct text *t, const void *arg, int reps)
{
    bool encode = *(const bool *)arg;
    double t0 = monotime ();
    for (int i = 0; i < reps; i++) {
        if (encode) {
            char *s = fast ? json_fast_dumps (t->value, JSON_COMPACT)
                           : json_dumps (t->value, JSON_COMPACT);
            if (!s)
                die ("cannot encode", t->name);
            free (s);
        }
        else {
            json_t *o = fast ? json_fast_loadb (t->text, t->len, 0, NULL)
                             : json_loadb (t->text, t->len, 0, NULL);
            if (!o)
                die ("cannot decode", t->name);
            json_decref (o);
        }
    }
    return (monotime () - t0) * 1e6 / reps;
}

/* The two ways one row compares: the first (jansson, a decode) or the
 * second (fast, the scan); microseconds per call.
 */
typedef double (*timer_f) (bool second, const struct text *t, const void *arg,
                           int reps);

/* One table row: both ways timed 'rounds' times, alternating which goes
 * first, then their medians and ratio second/first.
 */
static void row (timer_f fn, const struct text *t, const void *arg, int rounds,
                 int reps)
{
    struct benchstat *a = benchstat_create ();
    struct benchstat *b = benchstat_create ();
    struct benchstat_summary asum, bsum;

    if (!a || !b)
        die ("out of memory", "");
    for (int r = 0; r < rounds; r++) {
        bool second_first = r % 2;
        benchstat_push (second_first ? b : a, fn (second_first, t, arg, reps));
        benchstat_push (second_first ? a : b, fn (!second_first, t, arg, reps));
    }
    benchstat_summary (a, &asum);
    benchstat_summary (b, &bsum);
    printf ("%-20s %7zu %12.2f %12.2f %7.2f\n", t->name, t->len,
            asum.median, bsum.median, bsum.median / asum.median);
    benchstat_destroy (a);
    benchstat_destroy (b);
}

static void table (bool encode, struct text *texts, int ntexts, int rounds, int reps)
{
    printf ("%s\n%-20s %7s %12s %12s %7s\n", encode ? "encoding (JSON_COMPACT)"
            : "decoding", "text", "bytes", "jansson us", "fast us", "ratio");
    for (int t = 0; t < ntexts; t++)
        row (time_calls, &texts[t], &encode, rounds, reps);
}

/* Microseconds per lookup of the name arg in the directory text t:
 * scanned, or decoded and looked up.
 */
static double time_find (bool scan, const struct text *t, const void *arg, int reps)
{
    const char *name = arg;
    double t0 = monotime ();
    for (int i = 0; i < reps; i++) {
        if (scan) {
            size_t off, vlen;
            if (treeobj_dir_scan (t->text, t->len, name, &off, &vlen) != 1)
                die ("cannot scan", t->name);
        }
        else {
            json_t *o = json_fast_loadb (t->text, t->len, 0, NULL);
            if (!o || !json_object_get (json_object_get (o, "data"), name))
                die ("cannot find in", t->name);
            json_decref (o);
        }
    }
    return (monotime () - t0) * 1e6 / reps;
}

static void find_table (struct text *dirs, const char **names, int ndirs,
                        int rounds, int reps)
{
    printf ("finding the last entry of a directory\n%-20s %7s %12s %12s %7s\n",
            "text", "bytes", "decode us", "scan us", "ratio");
    for (int t = 0; t < ndirs; t++)
        row (time_find, &dirs[t], names[t], rounds, reps);
}

int main (int argc, char **argv)
{
    int rounds = 7, reps = 2000, opt;
    struct text texts[] = {
        { "dir of 32 values", dir_text_of (32, false) },
        { "dir of 512 values", dir_text_of (512, false) },
        { "kvs.lookup request", strdup ("{\"key\":\"kap.0.dir3.p17.k4\",\"flags\":0}") },
        { "lookup answer", strdup ("{\"data\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\","
                                   "\"type\":\"val\",\"ver\":1}") },
        { "fence header", strdup ("{\"fences\":[{\"name\":\"kap.sync.1\",\"nprocs\":32,"
                                  "\"flags\":0,\"count\":4}],\"blobs\":[]}") },
        { "16-put transaction", txn_text () },
    };
    int ntexts = sizeof (texts) / sizeof (texts[0]);

    while ((opt = getopt (argc, argv, "r:n:h")) != -1) {
        switch (opt) {
            case 'r': rounds = atoi (optarg); break;
            case 'n': reps = atoi (optarg); break;
            default:
                fprintf (stderr, "Usage: json-bench [-r ROUNDS] [-n REPS]\n");
                return opt == 'h' ? 0 : 1;
        }
    }
    if (rounds < 1 || reps < 1) {
        fprintf (stderr, "json-bench: -r and -n must be positive\n");
        return 1;
    }
    for (int t = 0; t < ntexts; t++) {
        struct text *x = &texts[t];
        if (!x->text)
            die ("out of memory", "");
        x->len = strlen (x->text);
        x->value = json_loadb (x->text, x->len, 0, NULL);
        json_t *b = json_fast_loadb (x->text, x->len, 0, NULL);
        if (!x->value || !b || !json_equal (x->value, b))
            die ("the decoders disagree on", x->name);
        json_decref (b);
        char *ea = json_dumps (x->value, JSON_COMPACT);
        char *eb = json_fast_dumps (x->value, JSON_COMPACT);
        if (!ea || !eb || strcmp (ea, eb) != 0)
            die ("the encoders disagree on", x->name);
        free (ea);
        free (eb);
    }
    table (false, texts, ntexts, rounds, reps);
    printf ("\n");
    table (true, texts, ntexts, rounds, reps);
    struct text dirs[] = {
        { "dir of 32 values", texts[0].text, texts[0].len },
        { "dir of 512 values", texts[1].text, texts[1].len },
        { "dir of 32 dirrefs", dir_text_of (32, true) },
    };
    const char *names[] = { "p31", "p511", "d31" };
    if (!dirs[2].text)
        die ("out of memory", "");
    dirs[2].len = strlen (dirs[2].text);
    printf ("\n");
    find_table (dirs, names, 3, rounds, reps);
    free (dirs[2].text);
    for (int t = 0; t < ntexts; t++) {
        free (texts[t].text);
        json_decref (texts[t].value);
    }
    return 0;
}

/*
 * vi:tabstop=4 shiftwidth=4 expandtab
 */
