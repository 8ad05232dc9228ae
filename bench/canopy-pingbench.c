/* canopy-pingbench.c - time canopy ping RPCs, one at a time.
 *
 * Connects to the broker named by CANOPY_URI and times COUNT synchronous
 * "SERVICE.ping" RPCs to RANK, each carrying SIZE bytes of padding in its
 * JSON payload ({"pad": "ppp..."}); the broker echoes the payload back.
 * Only one request is ever in flight, so each sample is a full round trip:
 * client encode -> broker(s) -> service -> back, as an application sees it
 * through the public API (canopy_rpc + canopy_future_get).
 *
 * The JSON text of the request is built once, as zmq-pingpong builds its
 * buffer once, so the samples compare transport and routing rather than
 * the client's JSON encoder; --pack builds it with canopy_rpc_pack on
 * every call instead, to see what an application that packs pays.
 *
 * Prints one benchstat line (bench/benchstat.h), the same format as
 * zmq-pingpong, so the scripts can put the two side by side.  WARMUP
 * pings are made first and not counted.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <canopy/canopy.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/monotime.h"
#include "benchstat.h"

static const char *usage_text =
"Usage: canopy-pingbench [OPTIONS] [SERVICE]\n"
"\n"
"Time synchronous SERVICE.ping round trips (default service: broker) from\n"
"this client to a rank of the instance named by CANOPY_URI.\n"
"\n"
"  -r, --rank=R       rank to ping (default: the local broker)\n"
"  -n, --count=N      round trips to time (default 10000)\n"
"  -s, --size=BYTES   padding carried by each ping (default 0)\n"
"  -w, --warmup=N     untimed round trips first (default 200)\n"
"  -l, --label=TEXT   label of the summary line (default canopy)\n"
"  -P, --pack         build each request with canopy_rpc_pack\n"
"  -h, --help         show this help\n";

static long parse_long (const char *s, const char *what, long min, long max)
{
    char *end;
    long v;
    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        log_msg_exit ("invalid %s '%s' (expected %ld..%ld)", what, s, min, max);
    return v;
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "count", required_argument, NULL, 'n' },
        { "size", required_argument, NULL, 's' },
        { "warmup", required_argument, NULL, 'w' },
        { "label", required_argument, NULL, 'l' },
        { "pack", no_argument, NULL, 'P' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    long count = 10000, size = 0, warmup = 200;
    const char *label = "canopy";
    const char *service = "broker";
    bool pack = false;
    char topic[128];
    canopy_error_t error;
    canopy_t *h;
    int opt;

    log_init ("canopy-pingbench");
    while ((opt = getopt_long (argc, argv, "r:n:s:w:l:Ph", longopts, NULL)) != -1) {
        switch (opt) {
            case 'r':
                rank = parse_long (optarg, "rank", 0, CANOPY_NODEID_UPSTREAM - 1);
                break;
            case 'n':
                count = parse_long (optarg, "count", 1, 100000000);
                break;
            case 's':
                size = parse_long (optarg, "size", 0, 64 * 1024 * 1024);
                break;
            case 'w':
                warmup = parse_long (optarg, "warmup", 0, 100000000);
                break;
            case 'l':
                label = optarg;
                break;
            case 'P':
                pack = true;
                break;
            case 'h':
                fputs (usage_text, stdout);
                return 0;
            default:
                fputs (usage_text, stderr);
                return 1;
        }
    }
    if (optind < argc)
        service = argv[optind++];
    if (optind != argc) {
        fputs (usage_text, stderr);
        return 1;
    }
    snprintf (topic, sizeof (topic), "%s.ping", service);
    if (!(h = canopy_open (NULL, 0, &error)))
        log_msg_exit ("%s", error.text);

    char *pad = xzmalloc (size + 1);
    char *json = xzmalloc (size + 16);
    struct benchstat *bs = benchstat_create ();
    struct benchstat_summary sum;
    memset (pad, 'p', size);
    sprintf (json, "{\"pad\":\"%s\"}", pad);
    if (!bs)
        log_err_exit ("benchstat");
    for (long i = 0; i < warmup + count; i++) {
        double t0 = monotime ();
        canopy_future_t *f;
        if (pack)
            f = canopy_rpc_pack (h, topic, rank, 0, "{s:s}", "pad", pad);
        else
            f = canopy_rpc (h, topic, json, rank, 0);
        if (!f)
            log_err_exit ("%s", topic);
        if (canopy_future_get (f, NULL) < 0) {
            const char *s = canopy_future_error_string (f);
            log_msg_exit ("%s: %s", topic, s ? s : strerror (errno));
        }
        canopy_future_destroy (f);
        double us = (monotime () - t0) * 1e6;
        if (i >= warmup && benchstat_push (bs, us) < 0)
            log_err_exit ("benchstat");
    }
    benchstat_summary (bs, &sum);
    benchstat_print (stdout, label, size, &sum);

    benchstat_destroy (bs);
    free (pad);
    free (json);
    canopy_close (h);
    return 0;
}
