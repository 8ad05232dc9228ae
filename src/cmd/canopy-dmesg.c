/* canopy-dmesg.c - print (or clear) a broker's log ring buffer. */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <time.h>
#include "src/common/libutil/log.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy dmesg [--rank=R] [--clear] [--level=N]\n"
"\n"
"Print the log records kept by a broker.\n"
"\n"
"  -r, --rank=R    read rank R's buffer (default: the local broker)\n"
"  -C, --clear     empty the buffer after printing\n"
"  -l, --level=N   only records at syslog level N or more severe (0-7)\n"
"  -h, --help      show this help\n";

static const char *levels[] = { "emerg", "alert", "crit", "err",
                                "warning", "notice", "info", "debug" };

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "clear", no_argument, NULL, 'C' },
        { "level", required_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    bool clear = false;
    long maxlevel = 7;
    json_t *entries, *e;
    size_t i;
    int c;

    log_init ("canopy-dmesg");
    while ((c = getopt_long (argc, argv, "r:Cl:h", longopts, NULL)) != -1) {
        switch (c) {
            case 'r':
                rank = cmd_parse_rank (optarg);
                break;
            case 'C':
                clear = true;
                break;
            case 'l':
                maxlevel = cmd_parse_long (optarg, "level", 0, 7);
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    if (optind != argc)
        cmd_usage (usage_text, 1);
    canopy_t *h = cmd_open ();
    canopy_future_t *f = canopy_rpc (h, "log.dmesg", "{}", rank, 0);
    if (!f || canopy_rpc_get_unpack (f, "{s:o}", "entries", &entries) < 0)
        cmd_future_check (f, "log.dmesg");
    json_array_foreach (entries, i, e) {
        double t;
        int level, r;
        const char *name, *text;
        char tbuf[32];
        if (json_unpack (e, "{s:F s:i s:i s:s s:s}", "time", &t, "level", &level,
                         "rank", &r, "name", &name, "text", &text) < 0)
            continue;
        if (level > maxlevel)
            continue;
        time_t secs = (time_t)t;
        strftime (tbuf, sizeof (tbuf), "%Y-%m-%dT%H:%M:%S", localtime (&secs));
        printf ("%s.%06d %d %s.%s: %s\n", tbuf, (int)((t - secs) * 1e6), r, name,
                level >= 0 && level <= 7 ? levels[level] : "?", text);
    }
    canopy_future_destroy (f);
    if (clear) {
        f = canopy_rpc (h, "log.clear", "{}", rank, 0);
        cmd_future_check (f, "log.clear");
        canopy_future_destroy (f);
    }
    canopy_close (h);
    return 0;
}
