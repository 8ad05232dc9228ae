/* canopy-module.c - list, load and remove broker modules on one rank,
 * several ranks, or all of them (requests go out in parallel).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <time.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy module list   [--rank=RANKS]\n"
"       canopy module load   [--rank=RANKS] NAME|PATH [ARGS...]\n"
"       canopy module remove [--rank=RANKS] NAME\n"
"\n"
"Manage broker modules.  NAME is looked up in the module path\n"
"(canopy getattr module-path); a PATH containing '/' is loaded as is.\n"
"\n"
"  -r, --rank=RANKS   'all', a rank, or a list like 0-3,7 (default: local)\n"
"  -h, --help         show this help\n";

static int nranks_for (canopy_t *h, const char *spec, uint32_t **ranks)
{
    if (!spec) {
        *ranks = xzmalloc (sizeof (uint32_t));
        (*ranks)[0] = CANOPY_NODEID_ANY;
        return 1;
    }
    return cmd_parse_ranks (spec, cmd_get_size (h), ranks);
}

static int do_list (canopy_t *h, uint32_t *ranks, int n)
{
    canopy_future_t **fs = xzmalloc (sizeof (*fs) * n);
    int errors = 0;

    for (int i = 0; i < n; i++)
        fs[i] = canopy_rpc (h, "module.list", "{}", ranks[i], 0);
    if (n > 1)
        printf ("%-5s ", "RANK");
    printf ("%-12s %-8s %-19s %s\n", "MODULE", "STATE", "LOADED", "PATH");
    for (int i = 0; i < n; i++) {
        json_t *mods, *m;
        int rank;
        size_t j;
        if (!fs[i] || canopy_rpc_get_unpack (fs[i], "{s:i s:o}", "rank", &rank,
                                             "modules", &mods) < 0) {
            const char *s = canopy_future_error_string (fs[i]);
            if (ranks[i] == CANOPY_NODEID_ANY)
                log_msg ("%s", s ? s : strerror (errno));
            else
                log_msg ("rank %u: %s", ranks[i], s ? s : strerror (errno));
            errors++;
            canopy_future_destroy (fs[i]);      /* (was leaked) */
            continue;
        }
        json_array_foreach (mods, j, m) {
            const char *name, *state, *path;
            double loaded;
            char tbuf[32];
            if (json_unpack (m, "{s:s s:s s:s s:F}", "name", &name, "state", &state,
                             "path", &path, "loaded", &loaded) < 0)
                continue;
            time_t t = (time_t)loaded;
            strftime (tbuf, sizeof (tbuf), "%Y-%m-%dT%H:%M:%S", localtime (&t));
            if (n > 1)
                printf ("%-5d ", rank);
            printf ("%-12s %-8s %-19s %s\n", name, state, tbuf, path);
        }
        canopy_future_destroy (fs[i]);
    }
    free (fs);
    return errors ? 1 : 0;
}

static int do_each (canopy_t *h, uint32_t *ranks, int n, const char *topic,
                    json_t *payload, const char *what)
{
    canopy_future_t **fs = xzmalloc (sizeof (*fs) * n);
    char *s = json_dumps (payload, JSON_COMPACT);
    int errors = 0;

    for (int i = 0; i < n; i++)
        fs[i] = canopy_rpc (h, topic, s, ranks[i], 0);
    for (int i = 0; i < n; i++) {
        if (!fs[i] || canopy_future_get (fs[i], NULL) < 0) {
            const char *e = canopy_future_error_string (fs[i]);
            if (ranks[i] == CANOPY_NODEID_ANY)
                log_msg ("%s: %s", what, e ? e : strerror (errno));
            else
                log_msg ("rank %u: %s: %s", ranks[i], what, e ? e : strerror (errno));
            errors++;
        }
        canopy_future_destroy (fs[i]);
    }
    free (s);
    free (fs);
    return errors ? 1 : 0;
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *rankspec = NULL;
    uint32_t *ranks;
    int n, c, rc;

    log_init ("canopy-module");
    /* options may come before and after the subcommand */
    while ((c = getopt_long (argc, argv, "+r:h", longopts, NULL)) != -1) {
        if (c == 'r')
            rankspec = optarg;
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    if (optind >= argc)
        cmd_usage (usage_text, 1);
    int subidx = optind;
    const char *sub = argv[subidx];
    int sargc = argc - subidx;
    char **sargv = argv + subidx;
    optind = 0;
    while ((c = getopt_long (sargc, sargv, "+r:h", longopts, NULL)) != -1) {
        if (c == 'r')
            rankspec = optarg;
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    canopy_t *h = cmd_open ();
    n = nranks_for (h, rankspec, &ranks);
    if (!strcmp (sub, "list")) {
        if (optind != sargc)
            cmd_usage (usage_text, 1);
        rc = do_list (h, ranks, n);
    }
    else if (!strcmp (sub, "load")) {
        if (optind >= sargc)
            cmd_usage (usage_text, 1);
        json_t *args = json_array ();
        for (int i = optind + 1; i < sargc; i++)
            json_array_append_new (args, json_string (sargv[i]));
        json_t *o = json_pack ("{s:s s:o}", "name", sargv[optind], "args", args);
        rc = do_each (h, ranks, n, "module.load", o, sargv[optind]);
        json_decref (o);
    }
    else if (!strcmp (sub, "remove")) {
        if (optind != sargc - 1)
            cmd_usage (usage_text, 1);
        json_t *o = json_pack ("{s:s}", "name", sargv[optind]);
        rc = do_each (h, ranks, n, "module.remove", o, sargv[optind]);
        json_decref (o);
    }
    else {
        log_msg ("unknown subcommand '%s'", sub);
        cmd_usage (usage_text, 1);
    }
    free (ranks);
    canopy_close (h);
    return rc;
}
