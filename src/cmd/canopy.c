/* canopy.c - the canopy front end: 'canopy COMMAND [ARGS]' runs
 * canopy-COMMAND from the command directory.
 *
 * It works the same from the build tree and from an installation: when
 * its own executable lives in the build tree it points CANOPY_EXEC_PATH,
 * CANOPY_BROKER_PATH, CANOPY_MODULE_PATH and CANOPY_PMI_LIBRARY_PATH at
 * the build tree, otherwise at the installed locations configured at build
 * time.  Variables the user set already are respected (the exec path is
 * prepended to).  Its own directory is put first in PATH so that programs
 * run inside an instance find the same 'canopy'.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <limits.h>
#include <dirent.h>
#include <libgen.h>
#include <stdbool.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/installpaths.h"

static const struct {
    const char *name;
    const char *desc;
} commands[] = {
    { "start", "start a local instance of N brokers and run a command in it" },
    { "ping", "measure round trips to a service on a rank" },
    { "getattr", "print a broker attribute" },
    { "setattr", "set a broker attribute" },
    { "lsattr", "list broker attributes" },
    { "module", "list, load and remove broker modules" },
    { "event", "publish and subscribe to events" },
    { "dmesg", "print a broker's log buffer" },
    { "overlay", "show the state of the tree of brokers" },
    { "shutdown", "shut the instance down" },
    { "kvs", "put, get, fence, watch ... keys in the KVS" },
    { "run", "run a parallel job with PMI across brokers" },
    { "resource", "show the hardware of each broker" },
    { "content", "inspect and flush the content store" },
    { "dump", "write a KVS snapshot to an archive" },
    { "restore", "load a KVS snapshot from an archive" },
    { "fsck", "check the KVS for dangling references" },
    { "keygen", "generate a CURVE certificate" },
    { NULL, NULL },
};

static const char *usage_text =
"Usage: canopy [OPTIONS] COMMAND [ARGS...]\n"
"\n"
"canopy is a key-value service for HPC clusters.\n"
"\n"
"  -h, --help       show this help, and the list of commands\n"
"  -V, --version    show the version\n"
"  -v, --verbose    show the paths canopy uses, then run COMMAND\n"
"\n"
"'canopy help COMMAND' or 'canopy COMMAND --help' describes a command.\n";

static void setenv_default (const char *name, const char *value)
{
    if (!getenv (name))
        setenv (name, value, 1);
}

static void prepend_path (const char *name, const char *dir)
{
    const char *old = getenv (name);
    if (old && *old) {
        char *s = xasprintf ("%s:%s", dir, old);
        setenv (name, s, 1);
        free (s);
    }
    else
        setenv (name, dir, 1);
}

static void setup_paths (bool verbose)
{
    char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof (exe) - 1);
    char *dir;

    if (n < 0)
        log_err_exit ("readlink /proc/self/exe");
    exe[n] = '\0';
    dir = xstrdup (exe);
    dir = dirname (dir);
    prepend_path ("CANOPY_EXEC_PATH", canopy_path (CANOPY_PATH_EXEC));
    setenv_default ("CANOPY_BROKER_PATH", canopy_path (CANOPY_PATH_BROKER));
    setenv_default ("CANOPY_MODULE_PATH", canopy_path (CANOPY_PATH_MODULES));
    setenv_default ("CANOPY_PMI_LIBRARY_PATH", canopy_path (CANOPY_PATH_PMI_LIBRARY));
    setenv_default ("CANOPY_KAP_PATH", canopy_path (CANOPY_PATH_KAP));
    prepend_path ("PATH", dir);
    if (verbose) {
        const char *vars[] = { "CANOPY_EXEC_PATH", "CANOPY_BROKER_PATH",
                               "CANOPY_MODULE_PATH", "CANOPY_PMI_LIBRARY_PATH",
                               "CANOPY_URI", NULL };
        for (int i = 0; vars[i]; i++) {
            const char *v = getenv (vars[i]);
            fprintf (stderr, "%s=%s\n", vars[i], v ? v : "(unset)");
        }
    }
    free (dir);
}

static char *find_command (const char *name)
{
    const char *path = getenv ("CANOPY_EXEC_PATH");
    char *cpy, *saveptr = NULL, *d;

    if (!path || strchr (name, '/'))
        return NULL;
    cpy = xstrdup (path);
    for (d = strtok_r (cpy, ":", &saveptr); d; d = strtok_r (NULL, ":", &saveptr)) {
        char *p = xasprintf ("%s/canopy-%s", d, name);
        if (access (p, X_OK) == 0) {
            free (cpy);
            return p;
        }
        free (p);
    }
    free (cpy);
    return NULL;
}

static void list_commands (void)
{
    fputs (usage_text, stdout);
    printf ("\nCommands:\n");
    for (int i = 0; commands[i].name; i++) {
        char *p = find_command (commands[i].name);
        if (p)
            printf ("  %-10s %s\n", commands[i].name, commands[i].desc);
        free (p);
    }
}

static void exec_command (const char *name, int argc, char **argv)
{
    char *path = find_command (name);
    char **av;

    if (!path) {
        log_msg ("'%s' is not a canopy command.  See 'canopy help'.", name);
        exit (1);
    }
    av = xzmalloc (sizeof (char *) * (argc + 1));
    av[0] = xasprintf ("canopy-%s", name);
    for (int i = 1; i < argc; i++)
        av[i] = argv[i];
    execv (path, av);
    log_err_exit ("exec %s", path);
}

int main (int argc, char *argv[])
{
    int i = 1;
    bool verbose = false;

    log_init ("canopy");
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp (argv[i], "-h") || !strcmp (argv[i], "--help")) {
            setup_paths (false);
            list_commands ();
            return 0;
        }
        else if (!strcmp (argv[i], "-V") || !strcmp (argv[i], "--version")) {
            printf ("canopy %s\n", PACKAGE_VERSION);
            return 0;
        }
        else if (!strcmp (argv[i], "-v") || !strcmp (argv[i], "--verbose"))
            verbose = true;
        else {
            log_msg ("unknown option '%s'", argv[i]);
            fputs (usage_text, stderr);
            return 1;
        }
    }
    setup_paths (verbose);
    if (i >= argc) {
        fputs (usage_text, stderr);
        return 1;
    }
    if (!strcmp (argv[i], "help")) {
        if (i + 1 >= argc) {
            list_commands ();
            return 0;
        }
        if (i + 2 < argc) {
            log_msg ("help: unexpected argument '%s'", argv[i + 2]);
            fputs (usage_text, stderr);
            return 1;
        }
        char *av[] = { argv[i + 1], "--help", NULL };
        exec_command (argv[i + 1], 2, av);
    }
    exec_command (argv[i], argc - i, &argv[i]);
    return 1;
}
