/* canopy-setattr.c - set one broker attribute. */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy setattr [--rank=R] NAME VALUE\n"
"\n"
"Set broker attribute NAME to VALUE.  Immutable attributes (rank, size,\n"
"...) cannot be changed.\n"
"\n"
"  -r, --rank=R   set it on rank R (default: the local broker)\n"
"  -h, --help     show this help\n";

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    int c;

    log_init ("canopy-setattr");
    while ((c = getopt_long (argc, argv, "r:h", longopts, NULL)) != -1) {
        if (c == 'r')
            rank = cmd_parse_rank (optarg);
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    if (optind != argc - 2)
        cmd_usage (usage_text, 1);
    canopy_t *h = cmd_open ();
    canopy_future_t *f = canopy_rpc_pack (h, "attr.set", rank, 0, "{s:s s:s}",
                                          "name", argv[optind],
                                          "value", argv[optind + 1]);
    cmd_future_check (f, argv[optind]);
    canopy_future_destroy (f);
    canopy_close (h);
    return 0;
}
