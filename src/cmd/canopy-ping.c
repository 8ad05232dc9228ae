/* canopy-ping.c - round trips to SERVICE.ping on a rank.
 *
 * Prints each reply's route (the hops it took) and time, then a summary.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include <signal.h>
#include <time.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/tstat.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy ping [OPTIONS] [SERVICE]\n"
"\n"
"Send SERVICE.ping (default service: broker) to a rank and print each\n"
"reply's route and round-trip time.\n"
"\n"
"  -r, --rank=R        rank to ping (default: the local broker)\n"
"  -c, --count=N       stop after N replies (default: until interrupted)\n"
"  -p, --pad=BYTES     add BYTES of padding to each request\n"
"  -i, --interval=SEC  wait SEC between pings (default 1.0; 0 = flood)\n"
"  -b, --batch         send all COUNT requests at once, then wait\n"
"  -q, --quiet         print only the summary\n"
"  -h, --help          show this help\n";

static volatile sig_atomic_t stop;
static void on_sigint (int sig)
{
    stop = 1;
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "count", required_argument, NULL, 'c' },
        { "pad", required_argument, NULL, 'p' },
        { "interval", required_argument, NULL, 'i' },
        { "batch", no_argument, NULL, 'b' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    long count = -1;
    long pad = 0;
    double interval = 1.0;
    bool batch = false, quiet = false, interval_set = false;
    const char *service = "broker";
    char topic[128];
    char *padding;
    struct tstat ts;
    int c;

    log_init ("canopy-ping");
    while ((c = getopt_long (argc, argv, "r:c:p:i:bqh", longopts, NULL)) != -1) {
        switch (c) {
            case 'r':
                rank = cmd_parse_rank (optarg);
                break;
            case 'c':
                count = cmd_parse_long (optarg, "count", 1, 100000000);
                break;
            case 'p':
                pad = cmd_parse_long (optarg, "pad", 0, 64 * 1024 * 1024);
                break;
            case 'i':
                interval = cmd_parse_double (optarg, "interval");
                if (interval > 86400)
                    log_msg_exit ("invalid interval '%s': at most a day (86400 s)", optarg);
                interval_set = true;
                break;
            case 'b':
                batch = true;
                break;
            case 'q':
                quiet = true;
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    if (optind < argc)
        service = argv[optind++];
    if (optind < argc)
        cmd_usage (usage_text, 1);
    if (batch && count < 0)
        log_msg_exit ("--batch needs --count");
    if (batch && interval_set)
        log_msg_exit ("--batch sends at once: --interval does not go with it");
    snprintf (topic, sizeof (topic), "%s.ping", service);
    padding = xzmalloc (pad + 1);
    memset (padding, 'p', pad);
    signal (SIGINT, on_sigint);

    canopy_t *h = cmd_open ();
    tstat_init (&ts);
    if (batch) {
        canopy_future_t **fs = xzmalloc (sizeof (*fs) * count);
        double t0 = monotime ();
        for (long i = 0; i < count; i++) {
            if (!(fs[i] = canopy_rpc_pack (h, topic, rank, 0, "{s:i s:s}",
                                           "seq", (int)i, "pad", padding)))
                log_err_exit ("%s", topic);
        }
        for (long i = 0; i < count; i++) {
            cmd_future_check (fs[i], topic);
            canopy_future_destroy (fs[i]);
        }
        double dt = monotime () - t0;
        printf ("%s: %ld pings in %.3f ms: %.0f/s, %.3f ms each\n", topic, count,
                dt * 1e3, count / dt, dt * 1e3 / count);
        /* Free everything so that leak checkers (ASan, valgrind) stay
         * quiet at exit: a leak report here would hide real ones.
         */
        free (fs);
        free (padding);
        canopy_close (h);
        return 0;
    }
    for (long i = 0; (count < 0 || i < count) && !stop; i++) {
        const char *route, *rrank;
        int hops;
        double t0 = monotime ();
        canopy_future_t *f = canopy_rpc_pack (h, topic, rank, 0, "{s:i s:s}",
                                              "seq", (int)i, "pad", padding);
        if (!f)
            log_err_exit ("%s", topic);
        if (canopy_rpc_get_unpack (f, "{s:s s:i s:s}", "route", &route,
                                   "hops", &hops, "rank", &rrank) < 0) {
            const char *s = canopy_future_error_string (f);
            log_msg_exit ("%s: %s", topic, s ? s : strerror (errno));
        }
        double ms = (monotime () - t0) * 1e3;
        tstat_push (&ts, ms);
        if (!quiet)
            printf ("%s!%s seq=%ld pad=%ld hops=%d time=%.3f ms route=%s\n",
                    rrank, topic, i, pad, hops, ms, route);
        canopy_future_destroy (f);
        if (interval > 0 && (count < 0 || i + 1 < count) && !stop) {
            struct timespec nap = { .tv_sec = (time_t)interval,
                                    .tv_nsec = (long)((interval - (time_t)interval) * 1e9) };
            (void)nanosleep (&nap, NULL);   /* a signal ends it: 'stop' */
        }
    }
    if (ts.count > 0)
        printf ("%s: %.0f replies, min/avg/max/stddev = %.3f/%.3f/%.3f/%.3f ms\n",
                topic, ts.count, ts.min, tstat_mean (&ts), ts.max, tstat_stddev (&ts));
    canopy_close (h);
    free (padding);
    return 0;
}
