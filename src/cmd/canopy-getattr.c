/* canopy-getattr.c - print one broker attribute. */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy getattr [--rank=R] NAME\n"
"\n"
"Print the value of broker attribute NAME (see 'canopy lsattr').\n"
"\n"
"  -r, --rank=R   ask rank R (default: the local broker)\n"
"  -h, --help     show this help\n";

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    const char *value;
    int c;

    log_init ("canopy-getattr");
    while ((c = getopt_long (argc, argv, "r:h", longopts, NULL)) != -1) {
        if (c == 'r')
            rank = cmd_parse_rank (optarg);
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    if (optind != argc - 1)
        cmd_usage (usage_text, 1);
    canopy_t *h = cmd_open ();
    canopy_future_t *f = canopy_rpc_pack (h, "attr.get", rank, 0, "{s:s}",
                                          "name", argv[optind]);
    if (!f || canopy_rpc_get_unpack (f, "{s:s}", "value", &value) < 0) {
        const char *s = canopy_future_error_string (f);
        log_msg_exit ("%s: %s", argv[optind], s ? s : strerror (errno));
    }
    printf ("%s\n", value);
    canopy_future_destroy (f);
    canopy_close (h);
    return 0;
}
