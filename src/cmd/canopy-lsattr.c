/* canopy-lsattr.c - list broker attributes. */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy lsattr [--rank=R] [--values]\n"
"\n"
"List the attributes of a broker.\n"
"\n"
"  -r, --rank=R   list rank R's (default: the local broker)\n"
"  -v, --values   print values too\n"
"  -h, --help     show this help\n";

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "values", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    bool values = false;
    json_t *attrs;
    const char *name;
    json_t *val;
    int c;

    log_init ("canopy-lsattr");
    while ((c = getopt_long (argc, argv, "r:vh", longopts, NULL)) != -1) {
        if (c == 'r')
            rank = cmd_parse_rank (optarg);
        else if (c == 'v')
            values = true;
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    if (optind != argc)
        cmd_usage (usage_text, 1);
    canopy_t *h = cmd_open ();
    canopy_future_t *f = canopy_rpc (h, "attr.list", "{}", rank, 0);
    if (!f || canopy_rpc_get_unpack (f, "{s:o}", "attrs", &attrs) < 0)
        cmd_future_check (f, "attr.list");
    json_object_foreach (attrs, name, val) {
        if (values)
            printf ("%-24s %s\n", name, json_string_value (val));
        else
            printf ("%s\n", name);
    }
    canopy_future_destroy (f);
    canopy_close (h);
    return 0;
}
