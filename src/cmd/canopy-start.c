/* canopy-start.c - start N brokers on this machine and run a command.
 *
 * Forks N canopy-broker processes sharing a fresh run directory (ipc://
 * sockets there), passes COMMAND (or an interactive shell) to rank 0, and
 * waits.  Rank 0 runs the command once every broker has joined, shuts the
 * instance down when it exits, and exits with its status; that status is
 * ours.  If any other broker dies first, the instance is reported and torn
 * down and we exit non-zero rather than hang; with --exit-mode=leader
 * only rank 0 ends the instance, so fault tests can kill brokers.  When
 * rank 0 exits, brokers still running get SIGTERM, then SIGKILL after
 * 5 s.  Brokers die with us (PR_SET_PDEATHSIG, armed by CANOPY_START_PID).
 *
 * Restarting a broker (for fault tests): we keep every broker's argv.  For
 * each rank R > 0, RUNDIR/restart-R is a small script that appends R to
 * RUNDIR/restart-requests and sends us SIGUSR1; we then run broker R again
 * with the same arguments (same rank, same sockets), as our child, once
 * its previous process has exited.  Requests for rank 0 are ignored: its
 * death ends the instance.
 *
 * --statedir gives rank 0 a persistent content store (the "statedir"
 * attribute, set on rank 0 only): a later start with the same directory
 * resumes the KVS from its newest checkpoint.
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
"      --statedir=DIR      keep rank 0's content store and KVS checkpoints in DIR\n"
"                          (created if missing; default: a throwaway store)\n"
"      --exit-mode=MODE    'any' (default): any broker dying ends the instance;\n"
"                          'leader': only rank 0 does (for fault tests: the\n"
"                          script RUNDIR/restart-R runs rank R again)\n"
"      --exit-timeout=S    seconds brokers get to exit after rank 0 (or a\n"
"                          failed broker) before they are killed (default 5)\n"
"      --wrap=CMD[,ARG...] run each broker under CMD ARGS (e.g. valgrind)\n"
"  -v, --verbose           report start-up and brokers' informational logs\n"
"  -h, --help              show this help\n";

static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t got_restart;

static void sig_handler (int sig)
{
    if (sig == SIGUSR1)
        got_restart = 1;
    else
        got_signal = sig;
}

struct brokers {
    const char *path;       /* canopy-broker */
    long size;
    char ***argv;           /* per rank */
    pid_t *pids;            /* 0 = not running */
    bool *restart;          /* run again when it exits */
    long alive;
    bool verbose;
    int nwrap;              /* argv[r] starts with a wrapper command */
};

static pid_t spawn (struct brokers *bk, long r)
{
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
        if (bk->nwrap > 0)
            execvp (bk->argv[r][0], bk->argv[r]);
        else
            execv (bk->path, bk->argv[r]);
        fprintf (stderr, "canopy-start: exec %s: %s\n", bk->argv[r][0],
                 strerror (errno));
        _exit (127);
    }
    bk->pids[r] = pid;
    bk->alive++;
    return pid;
}

/* RUNDIR/restart-R: ask us (by signal) to run broker R again. */
static void write_restart_script (const char *dir, long rank)
{
    char *path = xasprintf ("%s/restart-%ld", dir, rank);
    FILE *f = fopen (path, "w");
    if (!f)
        log_err_exit ("cannot create %s", path);
    fprintf (f, "#!/bin/sh\n"
             "# Ask 'canopy start' to run broker rank %ld again with its arguments.\n"
             "echo %ld >>'%s/restart-requests' && exec kill -USR1 %d\n",
             rank, rank, dir, (int)getpid ());
    if (fclose (f) != 0 || chmod (path, 0700) < 0)
        log_err_exit ("cannot write %s", path);
    free (path);
}

static void take_restart_requests (struct brokers *bk, const char *dir)
{
    char *path = xasprintf ("%s/restart-requests", dir);
    char *tmp = xasprintf ("%s/restart-requests.taken", dir);
    FILE *f;
    long r;

    if (rename (path, tmp) == 0 && (f = fopen (tmp, "r"))) {
        while (fscanf (f, "%ld", &r) == 1) {
            if (r <= 0 || r >= bk->size)
                continue;
            if (bk->pids[r] > 0)
                bk->restart[r] = true;  /* when the old one is gone */
            else {
                pid_t pid = spawn (bk, r);
                if (bk->verbose)
                    log_msg ("restarted broker rank %ld (pid %d)", r, (int)pid);
            }
        }
        fclose (f);
        (void)unlink (tmp);
    }
    free (path);
    free (tmp);
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
        { "statedir", required_argument, NULL, 'D' },
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
    char *statedir = NULL;
    bool temp_rundir = false;
    bool exit_any = true;
    bool verbose = false;
    double exit_timeout = 5;
    char *wrap = NULL;
    char **wrapv = NULL;
    int nwrap = 0;
    const char *broker;
    struct brokers bk = { 0 };
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
            case 'D':
                free (statedir);
                statedir = xstrdup (optarg);
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
    if (wrap) {
        /* split CMD,ARG,... in place: wrapv points into 'wrap' */
        wrapv = xzmalloc (sizeof (char *) * (strlen (wrap) + 2));
        for (char *tok, *save = NULL, *p = wrap;
             (tok = strtok_r (p, ",", &save)); p = NULL)
            wrapv[nwrap++] = tok;
        if (nwrap == 0)
            log_msg_exit ("--wrap needs a command");
    }
    if (statedir) {
        char *abs;
        if (mkdir (statedir, 0700) < 0 && errno != EEXIST)
            log_err_exit ("cannot create the state directory %s", statedir);
        if (!(abs = realpath (statedir, NULL)))
            log_err_exit ("state directory %s", statedir);
        free (statedir);
        statedir = abs;
    }
    /* the run directory last: nothing that refuses to start leaves one */
    if (!rundir) {
        const char *tmp = getenv ("TMPDIR");
        snprintf (buf, sizeof (buf), "%s/canopy-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (strlen (buf) > 80)
            log_msg_exit ("run directory path too long for UNIX sockets: %s", buf);
        if (!mkdtemp (buf))
            log_err_exit ("cannot create run directory %s", buf);
        rundir = xstrdup (buf);
        temp_rundir = true;
    }
    else if (strlen (rundir) > 80)
        log_msg_exit ("run directory path too long for UNIX sockets: %s", rundir);
    else if (mkdir (rundir, 0700) < 0 && errno != EEXIST)
        log_err_exit ("mkdir %s", rundir);

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
    sigaction (SIGUSR1, &sa, NULL);

    bk.path = broker;
    bk.size = size;
    bk.verbose = verbose;
    bk.nwrap = nwrap;
    bk.argv = xzmalloc (sizeof (char **) * size);
    bk.pids = pids = xzmalloc (sizeof (pid_t) * size);
    bk.restart = xzmalloc (sizeof (bool) * size);
    char *stateopt = statedir ? xasprintf ("--setattr=statedir=%s", statedir) : NULL;
    for (long r = 0; r < size; r++) {
        int n = 0;
        char **av = xzmalloc (sizeof (char *) * (nwrap + nbopts + ncmd + 9));
        for (int i = 0; i < nwrap; i++)
            av[n++] = wrapv[i];
        av[n++] = (char *)broker;
        av[n++] = xasprintf ("--rank=%ld", r);
        av[n++] = xasprintf ("--size=%ld", size);
        av[n++] = xasprintf ("--k-ary=%ld", k);
        av[n++] = xasprintf ("--rundir=%s", rundir);
        for (int i = 0; i < nbopts; i++)
            av[n++] = bopts[i];
        if (r == 0 && stateopt)
            av[n++] = stateopt;
        if (r == 0) {
            av[n++] = "--";
            for (int i = 0; i < ncmd; i++)
                av[n++] = cmd[i];
        }
        av[n] = NULL;
        bk.argv[r] = av;
        if (r > 0)
            write_restart_script (rundir, r);
        (void)spawn (&bk, r);
    }
    if (verbose)
        log_msg ("started %ld brokers in %.1f ms", size, monotime_since_ms (&t0));

    /* wait */
    int rc = 0;
    bool leader_done = false;
    bool failed = false;
    double deadline = 0;
    while (bk.alive > 0) {
        int status;
        if (got_restart) {
            got_restart = 0;
            if (!leader_done && !failed)
                take_restart_requests (&bk, rundir);
        }
        if (got_signal) {
            if (got_signal == SIGTERM || got_signal == SIGHUP) {
                if (pids[0] > 0)
                    kill (pids[0], got_signal);
            }
            got_signal = 0;     /* SIGINT: the shell gets it from the tty */
        }
        /* poll, so that signals are never missed between check and wait */
        pid_t pid = waitpid (-1, &status, WNOHANG);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pid == 0) {
            if ((leader_done || failed) && monotime () > deadline) {
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
        bk.alive--;
        if (rank > 0 && bk.restart[rank] && !leader_done && !failed) {
            bk.restart[rank] = false;
            pid = spawn (&bk, rank);
            if (verbose)
                log_msg ("restarted broker rank %ld (pid %d)", rank, (int)pid);
            continue;
        }
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
            /* normally the others have left already; if rank 0 died, the
             * rest have nobody to answer to
             */
            for (long r = 1; r < size; r++) {
                if (pids[r] > 0)
                    kill (pids[r], SIGTERM);
            }
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
    for (long r = 0; r < size; r++) {
        for (int i = nwrap + 1; i < nwrap + 5; i++)
            free (bk.argv[r][i]);
        free (bk.argv[r]);
    }
    free (bk.argv);
    free (bk.restart);
    free (pids);
    for (int i = 0; i < nbopts; i++)
        free (bopts[i]);
    free (bopts);
    free (rundir);
    free (stateopt);
    free (statedir);
    free (wrapv);
    free (wrap);
    return rc;
}
