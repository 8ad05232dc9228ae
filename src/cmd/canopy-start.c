/* canopy-start.c - start N brokers on this machine and run a command.
 *
 * Forks N canopy-broker processes sharing a fresh run directory (ipc://
 * sockets there), passes COMMAND (or an interactive shell) to rank 0, and
 * waits.  Rank 0 runs the command once every broker has joined, shuts the
 * instance down when it exits, and exits with its status; that status is
 * ours.  If any other broker dies first, the instance is reported and torn
 * down and we exit non-zero rather than hang.  Brokers die with us
 * (PR_SET_PDEATHSIG, armed by CANOPY_START_PID).
 *
 * --wrap=CMD,ARG,... runs each broker under another program (valgrind in
 * t/t5000-valgrind.t); --exit-timeout gives slow (wrapped) brokers longer
 * to exit before they are killed.  Everything main allocates is freed
 * before it returns, so leak checkers report only real leaks.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include <signal.h>
#include <dirent.h>
#include <limits.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <fcntl.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/monotime.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy start [OPTIONS] [--] [COMMAND [ARGS...]]\n"
"\n"
"Start a canopy instance of N brokers on this machine, run COMMAND in it\n"
"(default: an interactive shell) with CANOPY_URI set to rank 0, then shut\n"
"the instance down.  Exits with COMMAND's status.\n"
"\n"
"  -n, --size=N            number of brokers (default 1)\n"
"  -k, --k-ary=K           tree fan-out (default 2)\n"
"  -S, --setattr=NAME=VAL  set a broker attribute on every broker\n"
"  -o, --broker-opts=OPT   pass an option to every broker\n"
"      --rundir=DIR        use DIR for sockets (default: a new temporary one)\n"
"      --exit-mode=MODE    'any' (default): any broker dying ends the instance;\n"
"                          'leader': only rank 0 does (for fault tests)\n"
"      --exit-timeout=S    seconds brokers get to exit after rank 0 (or a\n"
"                          failed broker) before they are killed (default 5)\n"
"      --wrap=CMD[,ARG...] run each broker under CMD ARGS (e.g. valgrind)\n"
"  -v, --verbose           report start-up and brokers' informational logs\n"
"  -h, --help              show this help\n";

static volatile sig_atomic_t got_signal;

static void sig_handler (int sig)
{
    got_signal = sig;
}

static void cleanup_rundir (const char *dir)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir (d))) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
            continue;
        char *p = xasprintf ("%s/%s", dir, e->d_name);
        (void)unlink (p);
        free (p);
    }
    closedir (d);
    (void)rmdir (dir);
}

static const char *signame (int sig)
{
    const char *s = sigabbrev_np (sig);
    return s ? s : "?";
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "size", required_argument, NULL, 'n' },
        { "k-ary", required_argument, NULL, 'k' },
        { "setattr", required_argument, NULL, 'S' },
        { "broker-opts", required_argument, NULL, 'o' },
        { "rundir", required_argument, NULL, 'd' },
        { "exit-mode", required_argument, NULL, 'x' },
        { "exit-timeout", required_argument, NULL, 't' },
        { "wrap", required_argument, NULL, 'w' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long size = 1, k = 2;
    char **bopts = xzmalloc (sizeof (char *) * (2 * argc + 1));
    int nbopts = 0;
    char *rundir = NULL;
    bool temp_rundir = false;
    bool exit_any = true;
    bool verbose = false;
    double exit_timeout = 5;
    char *wrap = NULL;
    char **wrapv = NULL;
    int nwrap = 0;
    const char *broker;
    pid_t *pids;
    int c;
    char buf[PATH_MAX];
    struct timespec t0;

    log_init ("canopy-start");
    monotime_ts (&t0);
    while ((c = getopt_long (argc, argv, "+n:k:S:o:vh", longopts, NULL)) != -1) {
        switch (c) {
            case 'n':
                size = cmd_parse_long (optarg, "size", 1, 100000);
                break;
            case 'k':
                k = cmd_parse_long (optarg, "k-ary", 1, 100000);
                break;
            case 'S':
                bopts[nbopts++] = xasprintf ("--setattr=%s", optarg);
                break;
            case 'o':
                bopts[nbopts++] = xstrdup (optarg);
                break;
            case 'd':
                rundir = xstrdup (optarg);
                break;
            case 'x':
                if (!strcmp (optarg, "any"))
                    exit_any = true;
                else if (!strcmp (optarg, "leader"))
                    exit_any = false;
                else
                    log_msg_exit ("--exit-mode must be 'any' or 'leader'");
                break;
            case 't':
                exit_timeout = cmd_parse_long (optarg, "exit-timeout", 1, 86400);
                break;
            case 'w':
                free (wrap);
                wrap = xstrdup (optarg);
                break;
            case 'v':
                verbose = true;
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    if (verbose)
        bopts[nbopts++] = xstrdup ("--verbose");
    if (!(broker = getenv ("CANOPY_BROKER_PATH")))
        log_msg_exit ("CANOPY_BROKER_PATH is not set (run as 'canopy start')");
    if (!rundir) {
        const char *tmp = getenv ("TMPDIR");
        snprintf (buf, sizeof (buf), "%s/canopy-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp (buf))
            log_err_exit ("cannot create run directory %s", buf);
        rundir = xstrdup (buf);
        temp_rundir = true;
    }
    else if (mkdir (rundir, 0700) < 0 && errno != EEXIST)
        log_err_exit ("mkdir %s", rundir);
    if (strlen (rundir) > 80)
        log_msg_exit ("run directory path too long for UNIX sockets: %s", rundir);
    if (wrap) {
        /* split CMD,ARG,... in place: wrapv points into 'wrap' */
        wrapv = xzmalloc (sizeof (char *) * (strlen (wrap) + 2));
        for (char *tok, *save = NULL, *p = wrap;
             (tok = strtok_r (p, ",", &save)); p = NULL)
            wrapv[nwrap++] = tok;
        if (nwrap == 0)
            log_msg_exit ("--wrap needs a command");
    }

    /* the initial program */
    char **cmd;
    int ncmd = argc - optind;
    char *shell_argv[2] = { NULL, NULL };
    if (ncmd > 0)
        cmd = &argv[optind];
    else {
        const char *sh = getenv ("SHELL");
        shell_argv[0] = (char *)(sh && *sh ? sh : "/bin/sh");
        cmd = shell_argv;
        ncmd = 1;
    }

    snprintf (buf, sizeof (buf), "%d", (int)getpid ());
    setenv ("CANOPY_START_PID", buf, 1);
    struct sigaction sa = { .sa_handler = sig_handler };
    sigemptyset (&sa.sa_mask);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGHUP, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);

    pids = xzmalloc (sizeof (pid_t) * size);
    for (long r = 0; r < size; r++) {
        int n = 0;
        char **av = xzmalloc (sizeof (char *) * (nwrap + nbopts + ncmd + 8));
        for (int i = 0; i < nwrap; i++)
            av[n++] = wrapv[i];
        av[n++] = (char *)broker;
        int first_alloc = n;
        av[n++] = xasprintf ("--rank=%ld", r);
        av[n++] = xasprintf ("--size=%ld", size);
        av[n++] = xasprintf ("--k-ary=%ld", k);
        av[n++] = xasprintf ("--rundir=%s", rundir);
        for (int i = 0; i < nbopts; i++)
            av[n++] = bopts[i];
        if (r == 0) {
            av[n++] = "--";
            for (int i = 0; i < ncmd; i++)
                av[n++] = cmd[i];
        }
        av[n] = NULL;
        pid_t pid = fork ();
        if (pid < 0)
            log_err_exit ("fork");
        if (pid == 0) {
            if (r > 0) {
                /* only rank 0 (and its command) reads the terminal */
                int fd = open ("/dev/null", 0);
                if (fd >= 0) {
                    dup2 (fd, 0);
                    close (fd);
                }
            }
            if (nwrap > 0)
                execvp (av[0], av);
            else
                execv (broker, av);
            fprintf (stderr, "canopy-start: exec %s: %s\n", av[0], strerror (errno));
            _exit (127);
        }
        pids[r] = pid;
        for (int i = first_alloc; i < first_alloc + 4; i++)
            free (av[i]);
        free (av);
    }
    if (verbose)
        log_msg ("started %ld brokers in %.1f ms", size, monotime_since_ms (&t0));

    /* wait */
    long alive = size;
    int rc = 0;
    bool leader_done = false;
    bool failed = false;
    double deadline = 0;
    while (alive > 0) {
        int status;
        pid_t pid = waitpid (-1, &status, leader_done || failed ? WNOHANG : 0);
        if (pid < 0) {
            if (errno == EINTR) {
                if (got_signal == SIGTERM || got_signal == SIGHUP) {
                    if (pids[0] > 0)
                        kill (pids[0], got_signal);
                }
                got_signal = 0;     /* SIGINT: the shell gets it from the tty */
                continue;
            }
            break;
        }
        if (pid == 0) {
            if (monotime () > deadline) {
                for (long r = 0; r < size; r++) {
                    if (pids[r] > 0) {
                        log_msg ("broker rank %ld (pid %d) did not exit; killing it",
                                 r, (int)pids[r]);
                        kill (pids[r], SIGKILL);
                    }
                }
                deadline = monotime () + exit_timeout;
            }
            usleep (10000);
            continue;
        }
        long rank = -1;
        for (long r = 0; r < size; r++) {
            if (pids[r] == pid)
                rank = r;
        }
        if (rank < 0)
            continue;
        pids[rank] = 0;
        alive--;
        if (rank == 0) {
            if (WIFEXITED (status))
                rc = WEXITSTATUS (status);
            else {
                rc = 128 + WTERMSIG (status);
                log_msg ("broker rank 0 (pid %d) died: signal %s", (int)pid,
                         signame (WTERMSIG (status)));
            }
            leader_done = true;
            deadline = monotime () + exit_timeout;
            continue;
        }
        if (!leader_done && !failed && exit_any
            && (WIFSIGNALED (status) || WEXITSTATUS (status) != 0)) {
            if (WIFSIGNALED (status))
                log_msg ("broker rank %ld (pid %d) died: signal %s; stopping the instance",
                         rank, (int)pid, signame (WTERMSIG (status)));
            else
                log_msg ("broker rank %ld (pid %d) exited with status %d; "
                         "stopping the instance", rank, (int)pid, WEXITSTATUS (status));
            failed = true;
            for (long r = 0; r < size; r++) {
                if (pids[r] > 0)
                    kill (pids[r], SIGTERM);
            }
            deadline = monotime () + exit_timeout;
        }
    }
    if (temp_rundir)
        cleanup_rundir (rundir);
    if (verbose)
        log_msg ("instance of %ld brokers ran for %.1f ms", size, monotime_since_ms (&t0));
    if (failed)
        rc = 1;     /* the instance failed, whatever the command said */
    for (int i = 0; i < nbopts; i++)
        free (bopts[i]);
    free (bopts);
    free (pids);
    free (rundir);
    free (wrapv);
    free (wrap);
    return rc;
}
