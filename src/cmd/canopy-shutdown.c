/* canopy-shutdown.c - shut the whole instance down (children first). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy shutdown [--exit-code=N]\n"
"\n"
"Stop every broker of the instance, leaves first, rank 0 last.\n"
"\n"
"  -e, --exit-code=N  status rank 0 exits with (default 0)\n"
"  -h, --help         show this help\n";

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "exit-code", required_argument, NULL, 'e' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long code = 0;
    int c;

    log_init ("canopy-shutdown");
    while ((c = getopt_long (argc, argv, "e:h", longopts, NULL)) != -1) {
        if (c == 'e')
            code = cmd_parse_long (optarg, "exit code", 0, 255);
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    if (optind != argc)
        cmd_usage (usage_text, 1);
    canopy_t *h = cmd_open ();
    canopy_future_t *f = canopy_rpc_pack (h, "broker.shutdown", 0, 0,
                                          "{s:i}", "exitcode", (int)code);
    cmd_future_check (f, "shutdown");
    canopy_future_destroy (f);
    canopy_close (h);
    return 0;
}
