/* canopy-kvs.c - the KVS from the command line.
 *
 * Each subcommand is a small function over the C API in canopy/kvs.h.
 * put/fence take KEY=VALUE words (all of one command form one atomic
 * transaction); get prints values; ls/dir walk directories.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy kvs [--rank=R] COMMAND [OPTIONS] [ARGS...]\n"
"\n"
"Commands:\n"
"  put [-j|-r] [-s] KEY=VALUE...     store values (one atomic commit)\n"
"  get [-j|-r] KEY...                print values\n"
"  ls [-R] [-l] [KEY...]             list directory entries (subdirectories end in '.')\n"
"  dir [-R] [KEY]                    print KEY = VALUE for a directory's entries\n"
"  unlink [-R] [-f] KEY...           remove keys\n"
"  mkdir KEY...                      make empty directories\n"
"  link TARGET NAME                  make NAME a symlink to TARGET\n"
"  readlink KEY...                   print symlink targets\n"
"  watch [-c N] [-n] KEY             print the value (a directory: its listing,\n"
"                                    JSON) each time it changes\n"
"  version                           print the KVS version this broker has\n"
"  wait VERSION                      wait until this broker has VERSION\n"
"  fence NAME NPROCS [KEY=VALUE...]  join a collective commit of NPROCS callers\n"
"  fence-status [-j] NAME            rank 0's record of a fence: how many have\n"
"                                    joined, or when it became complete and\n"
"                                    was decided (kept 5 minutes after)\n"
"  dropcache [--all]                 drop cached objects\n"
"  stats                             print the KVS module's counters (JSON)\n"
"\n"
"Options (--rank may also follow COMMAND):\n"
"  -r, --rank=R       talk to rank R's KVS (default: the local broker)\n"
"  -h, --help         show this help\n"
"Options of put and get (after the command; there -r means --raw):\n"
"  -j, --json         put: VALUE is JSON; get: print values as indented JSON;\n"
"                     fence-status: print the record as JSON\n"
"  -r, --raw          put: a VALUE of '-' is read from stdin; get: raw bytes\n"
"  -s, --sync         put: return once the commit is durable\n"
"Options of ls, dir and unlink:\n"
"  -R, --recursive    descend into directories (unlink: remove them too)\n"
"  -l, --long         ls: print full key names\n"
"  -f, --force        unlink: ignore keys that do not exist\n"
"Options of watch and dropcache:\n"
"  -c, --count=N      watch: exit after N values\n"
"  -n, --no-initial   watch: report changes only, not the current value\n"
"      --all          dropcache: on every broker\n";

static canopy_t *h;

static void die_kvs (const char *what, const char *key)
{
    int saved_errno = errno;
    const char *s = kvs_errstr (h);
    errno = saved_errno;
    if (key)
        log_msg_exit ("%s %.100s%s: %s", what, key, strlen (key) > 100 ? "..." : "",
                      s ? s : strerror (errno));
    log_msg_exit ("%s: %s", what, s ? s : strerror (errno));
}

static void usage_err (void)
{
    cmd_usage (usage_text, 1);
}

/* A command that takes no such argument: say which, rather than ignore it
 * ('stats -r 3' once printed the local broker's counters: --rank is the
 * only option that may follow those commands).
 */
static void extra_args (const char *cmd, const char *arg)
{
    log_msg ("%s: unexpected argument '%s'%s", cmd, arg,
             !strcmp (arg, "-r") ? " (use --rank=R to choose the broker)" : "");
    usage_err ();
}

/* mkdir, link and readlink take no options: a word that looks like one is
 * refused, not made a key ('mkdir -r 1 a' made keys '-r' and '1' on the
 * local broker).  A leading '--' lets keys that start with '-' through.
 * Returns the index of the first key.
 */
static int no_options (int argc, char **argv)
{
    if (argc > 1 && !strcmp (argv[1], "--"))
        return 2;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            extra_args (argv[0], argv[i]);
    }
    return 1;
}

static void put_pairs (int argc, char **argv, bool json, bool raw)
{
    for (int i = 0; i < argc; i++) {
        char *eq = strchr (argv[i], '=');
        if (!eq || eq == argv[i])
            log_msg_exit ("expected KEY=VALUE, got '%s'", argv[i]);
        *eq = '\0';
        const char *key = argv[i];
        const char *val = eq + 1;
        if (raw && !strcmp (val, "-")) {
            size_t cap = 65536, len = 0;
            char *buf = xzmalloc (cap);
            ssize_t n;
            while ((n = read (0, buf + len, cap - len)) > 0) {
                len += n;
                if (len == cap)
                    buf = xrealloc (buf, cap *= 2);
            }
            if (n < 0)
                log_err_exit ("reading stdin");
            if (kvs_put_raw (h, key, buf, len) < 0)
                log_err_exit ("put %.100s", key);
            free (buf);
        }
        else if (json) {
            json_error_t jerr;
            json_t *o = json_loads (val, JSON_DECODE_ANY, &jerr);
            if (!o)
                log_msg_exit ("%s: value is not JSON: %s", key, jerr.text);
            if (kvs_put (h, key, o) < 0)
                log_err_exit ("put %.100s", key);
            json_decref (o);
        }
        else if (kvs_put_string (h, key, val) < 0)
            log_err_exit ("put %.100s", key);
        *eq = '=';
    }
}

static int cmd_put (int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "raw", no_argument, NULL, 'r' },
        { "sync", no_argument, NULL, 's' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false, raw = false;
    int flags = 0, c;
    optind = 0;
    while ((c = getopt_long (argc, argv, "+jrs", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'r')
            raw = true;
        else if (c == 's')
            flags |= KVS_SYNC;
        else
            usage_err ();
    }
    if (optind >= argc)
        usage_err ();
    put_pairs (argc - optind, argv + optind, json, raw);
    if (kvs_commit (h, flags) < 0)
        die_kvs ("commit", NULL);
    return 0;
}

static void print_value (const char *key, bool json, bool raw, bool label)
{
    void *data;
    size_t len;
    if (kvs_get_raw (h, key, &data, &len) < 0)
        die_kvs ("get", key);
    if (label)
        printf ("%s = ", key);
    if (raw) {
        fwrite (data, 1, len, stdout);
    }
    else if (json) {
        json_t *o = json_loadb (data, len, JSON_DECODE_ANY, NULL);
        if (!o)
            log_msg_exit ("%s: value is not JSON", key);
        char *s = json_dumps (o, JSON_INDENT (2) | JSON_ENCODE_ANY);
        printf ("%s\n", s);
        free (s);
        json_decref (o);
    }
    else {
        fwrite (data, 1, len, stdout);
        putchar ('\n');
    }
    free (data);
}

static int cmd_get (int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "raw", no_argument, NULL, 'r' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false, raw = false;
    int c;
    optind = 0;
    while ((c = getopt_long (argc, argv, "+jr", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'r')
            raw = true;
        else
            usage_err ();
    }
    if (optind >= argc)
        usage_err ();
    for (int i = optind; i < argc; i++)
        print_value (argv[i], json, raw, false);
    return 0;
}

static void list_dir (const char *key, bool recursive, bool values, bool longfmt, int depth)
{
    kvsdir_t *dir;
    kvsitr_t *itr;
    const char *name;

    if (kvs_get_dir (h, key, &dir) < 0)
        die_kvs ("ls", key);
    if (!(itr = kvsitr_create (dir)))
        log_err_exit ("iterate %s", key);
    while ((name = kvsitr_next (itr))) {
        char *full = kvsdir_key_at (dir, name);
        if (kvsdir_isdir (dir, name)) {
            if (!values)
                printf ("%*s%s.\n", longfmt ? 0 : depth * 2, "", longfmt ? full : name);
            if (recursive)
                list_dir (full, recursive, values, longfmt, depth + 1);
        }
        else if (kvsdir_issymlink (dir, name)) {
            char *target;
            if (kvs_readlink (h, full, &target) < 0)
                die_kvs ("readlink", full);
            if (values)
                printf ("%s -> %s\n", full, target);
            else
                printf ("%*s%s -> %s\n", longfmt ? 0 : depth * 2, "",
                        longfmt ? full : name, target);
            free (target);
        }
        else if (values)
            print_value (full, false, false, true);
        else
            printf ("%*s%s\n", longfmt ? 0 : depth * 2, "", longfmt ? full : name);
        free (full);
    }
    kvsitr_destroy (itr);
    kvsdir_destroy (dir);
}

static int cmd_ls (int argc, char **argv, bool values)
{
    static const struct option opts[] = {
        { "recursive", no_argument, NULL, 'R' },
        { "long", no_argument, NULL, 'l' },
        { NULL, 0, NULL, 0 },
    };
    bool recursive = false, longfmt = values;
    int c;
    optind = 0;
    while ((c = getopt_long (argc, argv, "+Rl", opts, NULL)) != -1) {
        if (c == 'R')
            recursive = true;
        else if (c == 'l')
            longfmt = true;
        else
            usage_err ();
    }
    if (optind == argc)
        list_dir (".", recursive, values, longfmt, 0);
    for (int i = optind; i < argc; i++) {
        if (argc - optind > 1 && !values)
            printf ("%s:\n", argv[i]);
        list_dir (argv[i], recursive, values, longfmt, 0);
    }
    return 0;
}

static int cmd_unlink (int argc, char **argv)
{
    static const struct option opts[] = {
        { "recursive", no_argument, NULL, 'R' },
        { "force", no_argument, NULL, 'f' },
        { NULL, 0, NULL, 0 },
    };
    bool recursive = false, force = false;
    int c;
    optind = 0;
    while ((c = getopt_long (argc, argv, "+Rf", opts, NULL)) != -1) {
        if (c == 'R')
            recursive = true;
        else if (c == 'f')
            force = true;
        else
            usage_err ();
    }
    if (optind >= argc)
        usage_err ();
    for (int i = optind; i < argc; i++) {
        canopy_future_t *f = kvs_lookup (h, argv[i], KVS_TREEOBJ | KVS_READLINK);
        json_t *o;
        if (!f || kvs_lookup_get_treeobj (f, &o) < 0) {
            if (errno == ENOENT && force) {
                canopy_future_destroy (f);
                continue;
            }
            const char *s = f ? canopy_future_error_string (f) : NULL;
            log_msg_exit ("unlink %s: %s", argv[i], s ? s : strerror (errno));
        }
        const char *type = json_string_value (json_object_get (o, "type"));
        if (!recursive && type && (!strcmp (type, "dir") || !strcmp (type, "dirref")
                                   || !strcmp (type, "hdir"))) {
            kvsdir_t *d;
            if (kvs_get_dir (h, argv[i], &d) == 0 && kvsdir_count (d) > 0)
                log_msg_exit ("unlink %s: directory not empty (use -R)", argv[i]);
            kvsdir_destroy (d);
        }
        canopy_future_destroy (f);
        if (kvs_unlink (h, argv[i]) < 0)
            log_err_exit ("unlink %s", argv[i]);
    }
    if (kvs_commit (h, 0) < 0)
        die_kvs ("commit", NULL);
    return 0;
}

static int cmd_mkdir (int argc, char **argv)
{
    int first = no_options (argc, argv);
    if (first >= argc)
        usage_err ();
    for (int i = first; i < argc; i++) {
        if (kvs_mkdir (h, argv[i]) < 0)
            log_err_exit ("mkdir %s", argv[i]);
    }
    if (kvs_commit (h, 0) < 0)
        die_kvs ("commit", NULL);
    return 0;
}

static int cmd_link (int argc, char **argv)
{
    int first = no_options (argc, argv);
    if (argc - first != 2)
        usage_err ();
    if (kvs_symlink (h, argv[first + 1], argv[first]) < 0)
        log_err_exit ("link %s", argv[first + 1]);
    if (kvs_commit (h, 0) < 0)
        die_kvs ("commit", NULL);
    return 0;
}

static int cmd_readlink (int argc, char **argv)
{
    int first = no_options (argc, argv);
    if (first >= argc)
        usage_err ();
    for (int i = first; i < argc; i++) {
        char *target;
        if (kvs_readlink (h, argv[i], &target) < 0)
            die_kvs ("readlink", argv[i]);
        printf ("%s\n", target);
        free (target);
    }
    return 0;
}

static int cmd_watch (int argc, char **argv)
{
    static const struct option opts[] = {
        { "count", required_argument, NULL, 'c' },
        { "no-initial", no_argument, NULL, 'n' },
        { NULL, 0, NULL, 0 },
    };
    long count = -1, seen = 0;
    int c, flags = KVS_WATCH_INITIAL;
    optind = 0;
    while ((c = getopt_long (argc, argv, "+c:n", opts, NULL)) != -1) {
        if (c == 'c')
            count = cmd_parse_long (optarg, "count", 1, 1L << 40);
        else if (c == 'n')
            flags &= ~KVS_WATCH_INITIAL;
        else
            usage_err ();
    }
    if (optind != argc - 1)
        usage_err ();
    canopy_future_t *f = kvs_watch_start (h, argv[optind], flags);
    if (!f)
        log_err_exit ("watch %s", argv[optind]);
    while (count < 0 || seen < count) {
        const void *data;
        size_t len;
        bool exists;
        if (kvs_watch_get_raw (f, &data, &len, &exists) < 0) {
            const char *s = canopy_future_error_string (f);
            log_msg_exit ("watch %s: %s", argv[optind], s ? s : strerror (errno));
        }
        if (exists) {
            fwrite (data, 1, len, stdout);
            putchar ('\n');
        }
        else
            printf ("(absent)\n");
        fflush (stdout);
        seen++;
        canopy_future_reset (f);
    }
    (void)kvs_watch_cancel (f);
    canopy_future_destroy (f);
    return 0;
}

static int cmd_fence (int argc, char **argv)
{
    if (argc < 3)
        usage_err ();
    long nprocs = cmd_parse_long (argv[2], "nprocs", 1, 1L << 30);
    put_pairs (argc - 3, argv + 3, false, false);
    if (kvs_fence (h, argv[1], (int)nprocs, 0) < 0)
        die_kvs ("fence", argv[1]);
    return 0;
}

/* Rank 0's record of one fence (kvs.fence-status), in words or as JSON. */
static int cmd_fence_status (int argc, char **argv)
{
    bool json = false;
    const char *name, *s, *state, *errstr = "";
    int nprocs = 0, count = -1, errnum = 0;
    double first = 0, ready = 0, decided = 0;

    if (argc == 3 && (!strcmp (argv[1], "-j") || !strcmp (argv[1], "--json")))
        json = true;
    else if (argc != 2)
        usage_err ();
    name = argv[argc - 1];
    canopy_future_t *f = canopy_rpc_pack (h, "kvs.fence-status", 0, 0, "{s:s}",
                                          "name", name);
    if (!f || canopy_rpc_get (f, &s) < 0)
        cmd_future_check (f, name);
    json_t *o = json_loads (s, 0, NULL);
    if (!o || json_unpack (o, "{s:s s:i s:F s:F s?i s?i s?s s?F}", "state", &state,
                           "nprocs", &nprocs, "first", &first, "ready", &ready,
                           "count", &count, "errnum", &errnum, "errstr", &errstr,
                           "decided", &decided) < 0)
        log_msg_exit ("%s: malformed kvs.fence-status response", name);
    if (json) {
        char *pretty = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);
        printf ("%s\n", pretty ? pretty : s);
        free (pretty);
    }
    else if (!strcmp (state, "open"))
        printf ("%s: open, %d of %d joined\n", name, count, nprocs);
    else if (!strcmp (state, "failed"))
        printf ("%s: failed: %s (%s)\n", name, errstr, strerror (errnum));
    else {
        printf ("%s: %s, %d participant%s\n", name,
                !strcmp (state, "applying") ? "complete, being applied" : state,
                nprocs, nprocs == 1 ? "" : "s");
        if (first > 0 && ready >= first)
            printf ("  complete %.3f ms after the first contribution reached rank 0\n",
                    (ready - first) * 1e3);
        if (ready > 0 && decided >= ready)
            printf ("  applied and published %.3f ms after that\n", (decided - ready) * 1e3);
    }
    json_decref (o);
    canopy_future_destroy (f);
    return 0;
}

static int cmd_stats (int argc, char **argv, uint32_t rank)
{
    if (argc != 1)
        extra_args (argv[0], argv[1]);
    canopy_future_t *f = canopy_rpc (h, "kvs.stats", "{}", rank, 0);
    const char *s;
    if (!f || canopy_rpc_get (f, &s) < 0)
        cmd_future_check (f, "kvs.stats");
    json_t *o = json_loads (s, 0, NULL);
    char *pretty = o ? json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS) : NULL;
    printf ("%s\n", pretty ? pretty : s);
    free (pretty);
    json_decref (o);
    canopy_future_destroy (f);
    return 0;
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    int c, rc = 0;

    log_init ("canopy-kvs");
    while ((c = getopt_long (argc, argv, "+r:h", longopts, NULL)) != -1) {
        if (c == 'r')
            rank = cmd_parse_rank (optarg);
        else
            cmd_usage (usage_text, c == 'h' ? 0 : 1);
    }
    if (optind >= argc)
        usage_err ();
    const char *sub = argv[optind];
    int sargc = argc - optind;
    char **sargv = argv + optind;
    /* --rank may also follow the subcommand */
    for (int i = 1; i < sargc; i++) {
        if (!strcmp (sargv[i], "--rank") && i + 1 == sargc) {
            log_msg ("option '--rank' requires an argument");
            usage_err ();
        }
        if (!strncmp (sargv[i], "--rank=", 7) || !strcmp (sargv[i], "--rank")) {
            const char *v = sargv[i][6] == '=' ? sargv[i] + 7 : sargv[i + 1];
            int drop = sargv[i][6] == '=' ? 1 : 2;
            rank = cmd_parse_rank (v);
            memmove (&sargv[i], &sargv[i + drop], (sargc - i - drop + 1) * sizeof (char *));
            sargc -= drop;
            i--;
        }
    }
    h = cmd_open ();
    if (rank != CANOPY_NODEID_ANY && kvs_set_rank (h, rank) < 0)
        log_err_exit ("--rank");
    if (!strcmp (sub, "put"))
        rc = cmd_put (sargc, sargv);
    else if (!strcmp (sub, "get"))
        rc = cmd_get (sargc, sargv);
    else if (!strcmp (sub, "ls"))
        rc = cmd_ls (sargc, sargv, false);
    else if (!strcmp (sub, "dir"))
        rc = cmd_ls (sargc, sargv, true);
    else if (!strcmp (sub, "unlink"))
        rc = cmd_unlink (sargc, sargv);
    else if (!strcmp (sub, "mkdir"))
        rc = cmd_mkdir (sargc, sargv);
    else if (!strcmp (sub, "link"))
        rc = cmd_link (sargc, sargv);
    else if (!strcmp (sub, "readlink"))
        rc = cmd_readlink (sargc, sargv);
    else if (!strcmp (sub, "watch"))
        rc = cmd_watch (sargc, sargv);
    else if (!strcmp (sub, "version")) {
        int v;
        if (sargc != 1)
            extra_args (sub, sargv[1]);
        if (kvs_get_version (h, &v) < 0)
            die_kvs ("version", NULL);
        printf ("%d\n", v);
    }
    else if (!strcmp (sub, "wait")) {
        if (sargc != 2)
            usage_err ();
        if (kvs_wait_version (h, (int)cmd_parse_long (sargv[1], "version", 0, 1L << 30)) < 0)
            die_kvs ("wait", NULL);
    }
    else if (!strcmp (sub, "fence"))
        rc = cmd_fence (sargc, sargv);
    else if (!strcmp (sub, "fence-status"))
        rc = cmd_fence_status (sargc, sargv);
    else if (!strcmp (sub, "dropcache")) {
        bool all = sargc > 1 && !strcmp (sargv[1], "--all");
        if (sargc > (all ? 2 : 1))
            extra_args (sub, sargv[all ? 2 : 1]);
        if (kvs_dropcache (h, all) < 0)
            die_kvs ("dropcache", NULL);
    }
    else if (!strcmp (sub, "stats"))
        rc = cmd_stats (sargc, sargv, rank);
    else {
        log_msg ("unknown kvs command '%s'", sub);
        usage_err ();
    }
    canopy_close (h);
    return rc;
}
