/* canopy-restore.c - load a KVS snapshot written by canopy dump.
 *
 * Every archive member becomes a key (its name): regular files are values,
 * symlinks are symlinks, directories are empty directories.  Keys are
 * committed in batches (so a large archive does not make one huge
 * transaction); the last commit is KVS_SYNC, so when restore returns the
 * whole snapshot is on disk (on an instance with a state directory).
 * Keys already in the KVS that the archive does not name are left alone:
 * restore into an empty KVS for an exact copy.
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

static const char *usage_text =
"Usage: canopy restore [OPTIONS] FILE\n"
"\n"
"Load the keys of a 'canopy dump' archive FILE ('-' for standard input)\n"
"into the KVS.  Returns once they are committed and durable.\n"
"\n"
"      --batch=N      keys per commit (default 5000)\n"
"      --no-sync      do not wait for the last commit to be on disk\n"
"  -v, --verbose      report what was loaded\n"
"  -h, --help         show this help\n";

static const char *errtext (canopy_t *h)
{
    const char *s = kvs_errstr (h);
    return s ? s : strerror (errno);
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "batch", required_argument, NULL, 'b' },
        { "no-sync", no_argument, NULL, 'n' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long batch = 5000;
    bool sync = true, verbose = false;
    int c, fd, rc;
    const char *path;
    tar_reader_t *tr;
    struct tar_entry e;
    uint64_t keys = 0, bytes = 0, skipped = 0, commits = 0;
    size_t pending_bytes = 0;
    long pending = 0;
    double t0 = monotime ();

    log_init ("canopy-restore");
    while ((c = getopt_long (argc, argv, "vh", longopts, NULL)) != -1) {
        switch (c) {
            case 'b': batch = cmd_parse_long (optarg, "batch", 1, 10000000); break;
            case 'n': sync = false; break;
            case 'v': verbose = true; break;
            case 'h': cmd_usage (usage_text, 0);
            default: cmd_usage (usage_text, 1);
        }
    }
    if (optind != argc - 1)
        cmd_usage (usage_text, 1);
    path = argv[optind];
    if (!strcmp (path, "-"))
        fd = STDIN_FILENO;
    else if ((fd = open (path, O_RDONLY)) < 0)
        log_err_exit ("cannot open %s", path);
    if (!(tr = tar_reader_create (fd)))
        log_err_exit ("tar reader");
    canopy_t *h = cmd_open ();
    while ((rc = tar_read_next (tr, &e)) == 1) {
        switch (e.type) {
            case TAR_FILE:
                rc = kvs_put_raw (h, e.name, e.data, e.size);
                break;
            case TAR_DIR:
                rc = kvs_mkdir (h, e.name);
                break;
            case TAR_SYMLINK:
                rc = kvs_symlink (h, e.name, e.linkname);
                break;
            default:
                log_msg ("skipping %s: not a file, directory or symlink", e.name);
                skipped++;
                continue;
        }
        if (rc < 0)
            log_msg_exit ("%s: cannot store key %s: %s", path, e.name, errtext (h));
        keys++;
        bytes += e.size;
        pending++;
        pending_bytes += e.size;
        if (pending >= batch || pending_bytes >= 64 * 1024 * 1024) {
            if (kvs_commit (h, 0) < 0)
                log_msg_exit ("commit: %s", errtext (h));
            commits++;
            pending = 0;
            pending_bytes = 0;
        }
    }
    if (rc < 0)
        log_msg_exit ("%s: %s", path, tar_reader_error (tr));
    if (kvs_commit (h, sync ? KVS_SYNC : 0) < 0)
        log_msg_exit ("commit: %s", errtext (h));
    commits++;
    tar_reader_destroy (tr);
    if (fd != STDIN_FILENO)
        close (fd);
    if (verbose)
        log_msg ("%llu keys (%.1f MB) in %llu commits in %.2fs%s",
                 (unsigned long long)keys, bytes / 1e6, (unsigned long long)commits,
                 monotime () - t0, skipped ? " (some members skipped)" : "");
    canopy_close (h);
    return 0;
}
