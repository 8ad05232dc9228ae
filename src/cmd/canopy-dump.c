/* canopy-dump.c - write one KVS snapshot to a tar archive.
 *
 * The snapshot is the root rank 0 has now (or, with --checkpoint, the
 * newest checkpoint), walked blob by blob from the content service, so it
 * is consistent even while others commit.  Archive members are named by
 * their full dotted keys, in key order: values are regular files,
 * symlinks are symlinks, empty directories are directories.  Member times
 * are 0, so the same snapshot always gives the same archive.  canopy restore reads it back.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/monotime.h"
#include "cmdutil.h"
#include "tarball.h"
#include "kvswalk.h"
#include "snapshot.h"

static const char *usage_text =
"Usage: canopy dump [OPTIONS] FILE\n"
"\n"
"Write a snapshot of the KVS to FILE, a tar archive ('-' for standard\n"
"output).  Members are named by their keys; 'canopy restore' loads it.\n"
"\n"
"      --checkpoint         dump the newest checkpoint, not the current root\n"
"      --ignore-missing     skip values whose blobs are missing (reported)\n"
"                           rather than fail\n"
"  -v, --verbose            report what was written\n"
"  -h, --help               show this help\n";

struct dump {
    tar_writer_t *tw;
    time_t mtime;
    bool ignore_missing;
    uint64_t missing;
};

static int on_value (const char *key, const void *data, size_t len, void *arg)
{
    struct dump *d = arg;
    if (tar_write_file (d->tw, key, data, len, d->mtime) < 0)
        log_msg_exit ("writing %s: %s", key, tar_writer_error (d->tw));
    return 0;
}

static int on_dir (const char *key, int count, void *arg)
{
    struct dump *d = arg;
    if (*key && count == 0 && tar_write_dir (d->tw, key, d->mtime) < 0)
        log_msg_exit ("writing %s: %s", key, tar_writer_error (d->tw));
    return 0;
}

static int on_symlink (const char *key, const char *target, void *arg)
{
    struct dump *d = arg;
    if (tar_write_symlink (d->tw, key, target, d->mtime) < 0)
        log_msg_exit ("writing %s: %s", key, tar_writer_error (d->tw));
    return 0;
}

static void on_problem (const char *key, const char *ref, int errnum, const char *what,
                        void *arg)
{
    struct dump *d = arg;
    d->missing++;
    if (!d->ignore_missing)
        log_msg_exit ("%s%s%s: %s (%s); use --ignore-missing to skip it",
                      *key ? key : "(root)", ref ? " " : "", ref ? ref : "", what,
                      strerror (errnum));
    log_msg ("skipping %s%s%s: %s (%s)", *key ? key : "(root)", ref ? " " : "",
             ref ? ref : "", what, strerror (errnum));
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "checkpoint", no_argument, NULL, 'c' },
        { "ignore-missing", no_argument, NULL, 'i' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool checkpoint = false, verbose = false;
    struct dump d = { 0 };
    struct snapshot_root root;
    struct kvswalk_stats st;
    const struct kvswalk_ops ops = {
        .load = snapshot_load,
        .value = on_value,
        .dir = on_dir,
        .symlink = on_symlink,
        .problem = on_problem,
    };
    int c, fd;
    const char *path;
    double t0 = monotime ();

    log_init ("canopy-dump");
    while ((c = getopt_long (argc, argv, "vh", longopts, NULL)) != -1) {
        switch (c) {
            case 'c': checkpoint = true; break;
            case 'i': d.ignore_missing = true; break;
            case 'v': verbose = true; break;
            case 'h': cmd_usage (usage_text, 0);
            default: cmd_usage (usage_text, 1);
        }
    }
    if (optind != argc - 1)
        cmd_usage (usage_text, 1);
    path = argv[optind];
    canopy_t *h = cmd_open ();
    snapshot_root (h, checkpoint, &root);
    if (!strcmp (path, "-"))
        fd = STDOUT_FILENO;
    else if ((fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
        log_err_exit ("cannot create %s", path);
    if (!(d.tw = tar_writer_create (fd)))
        log_err_exit ("tar writer");
    if (kvswalk (root.rootref, &ops, h, &d, &st) < 0)
        log_err_exit ("dump");
    if (tar_writer_finish (d.tw) < 0)
        log_err_exit ("writing %s", path);
    if (fd != STDOUT_FILENO && (fsync (fd) < 0 || close (fd) < 0))
        log_err_exit ("writing %s", path);
    if (verbose)
        log_msg ("version %d: %llu values, %llu symlinks, %llu directories, "
                 "%llu blobs (%.1f MB) in %.2fs%s",
                 root.version, (unsigned long long)st.values,
                 (unsigned long long)st.symlinks, (unsigned long long)st.dirs,
                 (unsigned long long)st.blobs, st.bytes / 1e6, monotime () - t0,
                 d.missing ? " (some values skipped)" : "");
    canopy_close (h);
    return 0;
}
