/* canopy-fsck.c - check that every blob a KVS snapshot refers to exists
 * and decodes: walks the tree from the current root (or the newest
 * checkpoint, or a given root) through the content service.  Problems go
 * to standard error, one line each with the key, the blob and what is
 * wrong; the exit status is 1 if there were any.  Nothing is printed for
 * a clean store unless --verbose.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/monotime.h"
#include "cmdutil.h"
#include "kvswalk.h"
#include "snapshot.h"

static const char *usage_text =
"Usage: canopy fsck [OPTIONS]\n"
"\n"
"Check the KVS for dangling references: every blob the snapshot refers to\n"
"must load from the content store and decode.  Exits 1 if any does not.\n"
"\n"
"      --checkpoint     check the newest checkpoint, not the current root\n"
"      --rootref=REF    check the snapshot with root REF\n"
"  -v, --verbose        report what was checked\n"
"  -h, --help           show this help\n";

static void on_problem (const char *key, const char *ref, int errnum, const char *what,
                        void *arg)
{
    fprintf (stderr, "%s: %s%s%s (%s)\n", *key ? key : "(root)", what,
             ref ? " " : "", ref ? ref : "", strerror (errnum));
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "checkpoint", no_argument, NULL, 'c' },
        { "rootref", required_argument, NULL, 'r' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool checkpoint = false, verbose = false;
    const char *rootref = NULL;
    struct snapshot_root root;
    struct kvswalk_stats st;
    const struct kvswalk_ops ops = {
        .load = snapshot_load,
        .problem = on_problem,
    };
    int c;
    double t0 = monotime ();

    log_init ("canopy-fsck");
    while ((c = getopt_long (argc, argv, "vh", longopts, NULL)) != -1) {
        switch (c) {
            case 'c': checkpoint = true; break;
            case 'r': rootref = optarg; break;
            case 'v': verbose = true; break;
            case 'h': cmd_usage (usage_text, 0);
            default: cmd_usage (usage_text, 1);
        }
    }
    if (optind != argc)
        cmd_usage (usage_text, 1);
    if (checkpoint && rootref)
        log_msg_exit ("--checkpoint and --rootref go separately");
    canopy_t *h = cmd_open ();
    if (rootref) {
        if (blobref_validate (rootref) < 0)
            log_msg_exit ("'%s' is not a blob reference", rootref);
        memset (&root, 0, sizeof (root));
        root.version = -1;
        snprintf (root.rootref, sizeof (root.rootref), "%s", rootref);
    }
    else
        snapshot_root (h, checkpoint, &root);
    if (kvswalk (root.rootref, &ops, h, NULL, &st) < 0)
        log_err_exit ("fsck");
    if (verbose || st.problems)
        log_msg ("version %d (%s): %llu values, %llu directories, %llu symlinks, "
                 "%llu blobs (%.1f MB) checked in %.2fs; %llu problem%s",
                 root.version, root.rootref, (unsigned long long)st.values,
                 (unsigned long long)st.dirs, (unsigned long long)st.symlinks,
                 (unsigned long long)st.blobs, st.bytes / 1e6, monotime () - t0,
                 (unsigned long long)st.problems, st.problems == 1 ? "" : "s");
    canopy_close (h);
    return st.problems ? 1 : 0;
}
