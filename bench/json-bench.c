/* json-bench - canopy's JSON decoder (json_fast_loadb) beside jansson's
 * json_loadb, on the texts a broker decodes most.
 *
 *   json-bench [-r ROUNDS] [-n REPS]
 *
 * Texts: a KVS directory of 32 and of 512 small values (what a setroot
 * event primes and a fault brings in), a kvs.lookup request, a lookup
 * answer carrying a value, and a fence request's JSON header.  Each round
 * times REPS decodes of every text with each decoder, the two in
 * alternating order from round to round; the table gives the median
 * microseconds per decode over the rounds and the ratio fast/jansson
 * (below 1: faster).  Before timing, each text is checked to decode to
 * equal values both ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libutil/monotime.h"
#include "benchstat.h"

typedef json_t *(*decode_f)(const char *s, size_t len, size_t flags,
                            json_error_t *error);

static char *dir_text (int n)
{
    json_t *data = json_object ();
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf (name, sizeof (name), "p%d", i);
        json_object_set_new (data, name, json_pack ("{s:s s:s s:i}",
                             "data", "AAAAAAAAAAA=", "type", "val", "ver", 1));
    }
    json_t *dir = json_pack ("{s:o s:s s:i}", "data", data, "type", "dir", "ver", 1);
    char *s = json_dumps (dir, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (dir);
    return s;
}

static double time_decode (decode_f fn, const char *s, size_t len, int reps)
{
    double t0 = monotime ();
    for (int i = 0; i < reps; i++) {
        json_t *o = fn (s, len, JSON_DECODE_ANY, NULL);
        if (!o) {
            fprintf (stderr, "json-bench: a text failed to decode\n");
            exit (1);
        }
        json_decref (o);
    }
    return (monotime () - t0) * 1e6 / reps;
}

int main (int argc, char **argv)
{
    int rounds = 7, reps = 2000, opt;
    struct {
        const char *name;
        char *text;
    } texts[] = {
        { "dir of 32 values", dir_text (32) },
        { "dir of 512 values", dir_text (512) },
        { "kvs.lookup request", strdup ("{\"key\":\"kap.0.dir3.p17.k4\",\"flags\":0}") },
        { "lookup answer", strdup ("{\"data\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\","
                                   "\"type\":\"val\",\"ver\":1}") },
        { "fence header", strdup ("{\"fences\":[{\"name\":\"kap.sync.1\",\"nprocs\":32,"
                                  "\"flags\":0,\"count\":4}],\"blobs\":[]}") },
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
        size_t len = strlen (texts[t].text);
        json_t *a = json_loadb (texts[t].text, len, 0, NULL);
        json_t *b = json_fast_loadb (texts[t].text, len, 0, NULL);
        if (!a || !b || !json_equal (a, b)) {
            fprintf (stderr, "json-bench: the decoders disagree on %s\n",
                     texts[t].name);
            return 1;
        }
        json_decref (a);
        json_decref (b);
    }
    printf ("%-20s %7s %12s %12s %7s\n", "text", "bytes", "jansson us",
            "fast us", "ratio");
    for (int t = 0; t < ntexts; t++) {
        struct benchstat *js = benchstat_create ();
        struct benchstat *fs = benchstat_create ();
        struct benchstat_summary jsum, fsum;
        size_t len = strlen (texts[t].text);
        if (!js || !fs) {
            fprintf (stderr, "json-bench: out of memory\n");
            return 1;
        }
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                benchstat_push (js, time_decode (json_loadb, texts[t].text, len, reps));
                benchstat_push (fs, time_decode (json_fast_loadb, texts[t].text, len, reps));
            }
            else {
                benchstat_push (fs, time_decode (json_fast_loadb, texts[t].text, len, reps));
                benchstat_push (js, time_decode (json_loadb, texts[t].text, len, reps));
            }
        }
        benchstat_summary (js, &jsum);
        benchstat_summary (fs, &fsum);
        printf ("%-20s %7zu %12.2f %12.2f %7.2f\n", texts[t].name, len,
                jsum.median, fsum.median, fsum.median / jsum.median);
        benchstat_destroy (js);
        benchstat_destroy (fs);
        free (texts[t].text);
    }
    return 0;
}

/*
 * vi:tabstop=4 shiftwidth=4 expandtab
 */
