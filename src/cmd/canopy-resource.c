/* canopy-resource.c - show the hardware of each broker (from the KVS). */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy resource list [--json]\n"
"\n"
"Print each broker's hardware as its resource module published it in the\n"
"KVS (resource.rank.<R>): host, sockets, cores, hardware threads, memory.\n"
"\n"
"  -j, --json   print the records as JSON, one per line\n"
"  -h, --help   show this help\n";

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false;
    int c;

    log_init ("canopy-resource");
    if (argc >= 2 && (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help")))
        cmd_usage (usage_text, 0);
    if (argc < 2 || strcmp (argv[1], "list") != 0)
        cmd_usage (usage_text, 1);
    optind = 2;
    while ((c = getopt_long (argc, argv, "jh", longopts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    if (optind != argc)
        cmd_usage (usage_text, 1);
    canopy_t *h = cmd_open ();
    uint32_t size = cmd_get_size (h);
    if (!json)
        printf ("%-5s %-20s %7s %5s %5s %10s\n", "RANK", "HOST", "SOCKETS", "CORES",
                "PUS", "MEMORY");
    int missing = 0;
    for (uint32_t r = 0; r < size; r++) {
        char key[64];
        json_t *o;
        snprintf (key, sizeof (key), "resource.rank.%u", r);
        if (kvs_get (h, key, &o) < 0) {
            log_msg ("rank %u: no resource record (%s)", r, strerror (errno));
            missing++;
            continue;
        }
        if (json) {
            char *s = json_dumps (o, JSON_COMPACT);
            printf ("%s\n", s);
            free (s);
        }
        else {
            const char *host = "?";
            int sockets = 0, cores = 0, pus = 0;
            json_int_t mem = 0;
            (void)json_unpack (o, "{s?s s?i s?i s?i s?I}", "hostname", &host,
                               "sockets", &sockets, "cores", &cores, "pus", &pus,
                               "memory", &mem);
            printf ("%-5u %-20s %7d %5d %5d %9.1fG\n", r, host, sockets, cores, pus,
                    mem / (1024.0 * 1024 * 1024));
        }
        json_decref (o);
    }
    canopy_close (h);
    return missing ? 1 : 0;
}
