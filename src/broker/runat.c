/* runat.c - initial program (runat.h).
 *
 * The program gets SIGHUP if the broker dies (PR_SET_PDEATHSIG), so a
 * dead rank 0 never leaves it running on its own.
 *
 * The broker has many threads: between fork and exec the child may only
 * make async-signal-safe calls (another thread may hold the allocator's
 * lock at the fork, and the child would wait for it for ever).  So its
 * environment is built before the fork (runat_environ), and the child
 * only resets signals and execs.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <signal.h>
#include <syslog.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include "broker.h"
#include "src/common/libcanopy/procwatch.h"
#include "src/common/libutil/sched_slice.h"
#include "runat.h"

struct runat {
    struct broker *b;
    char **argv;
    pid_t pid;
    runat_exit_f exited;
    struct procwatch *pw;
};

struct runat *runat_create (struct broker *b, char **argv, runat_exit_f exited)
{
    struct runat *ra = calloc (1, sizeof (*ra));
    if (!ra) {
        errno = ENOMEM;
        return NULL;
    }
    ra->b = b;
    ra->argv = argv;
    ra->exited = exited;
    return ra;
}

void runat_destroy (struct runat *ra)
{
    if (ra) {
        int saved_errno = errno;
        if (ra->pid > 0)
            kill (ra->pid, SIGKILL);
        procwatch_destroy (ra->pw);
        free (ra);
        errno = saved_errno;
    }
}

static void child_exit_cb (struct procwatch *pw, pid_t pid, int status, void *arg)
{
    struct runat *ra = arg;
    ra->pid = 0;
    if (ra->exited)
        ra->exited (ra->b, status);
}

char **runat_environ (char **env, const char *uri)
{
    size_t n = 0, k = 0;
    char **v;

    while (env && env[n])
        n++;
    if (!(v = calloc (n + 2, sizeof (char *)))
        || asprintf (&v[0], "CANOPY_URI=%s", uri ? uri : "") < 0) {
        free (v);
        errno = ENOMEM;
        return NULL;
    }
    k = 1;
    for (size_t i = 0; i < n; i++) {
        if (strncmp (env[i], "CANOPY_URI=", 11) != 0)
            v[k++] = env[i];
    }
    v[k] = NULL;
    return v;
}

void runat_environ_free (char **v)
{
    if (v) {
        int saved_errno = errno;
        free (v[0]);
        free (v);
        errno = saved_errno;
    }
}

int runat_start (struct runat *ra, const char *uri)
{
    extern char **environ;
    char **env;
    pid_t pid;

    if (!ra->argv || !ra->argv[0]) {
        errno = EINVAL;
        return -1;
    }
    /* everything the child needs is made here, before the fork */
    if (!(env = runat_environ (environ, uri)))
        return -1;
    if ((pid = fork ()) < 0) {
        runat_environ_free (env);
        return -1;
    }
    if (pid == 0) {
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        signal (SIGINT, SIG_DFL);
        signal (SIGPIPE, SIG_DFL);
        /* if rank 0 dies, its program hears a hangup, as from a terminal */
        (void)prctl (PR_SET_PDEATHSIG, SIGHUP);
        (void)sched_slice_set (0);      /* the broker's slice is its own */
        /* and so are its CPUs (broker.cpu-affinity) */
        (void)sched_setaffinity (0, sizeof (ra->b->task_cpus), &ra->b->task_cpus);
        environ = env;
        execvp (ra->argv[0], ra->argv);
        int e = errno;
        const char *name = strerrorname_np (e);
        const char *part[] = { "canopy: ", ra->argv[0], ": cannot execute it (",
                               name ? name : "?", ")\n" };
        /* write(2) piece by piece: printf is not async-signal-safe */
        for (size_t i = 0; i < sizeof (part) / sizeof (part[0]); i++)
            (void)write (STDERR_FILENO, part[i], strlen (part[i]));
        _exit (e == ENOENT ? 127 : 126);
    }
    runat_environ_free (env);
    ra->pid = pid;
    if (!(ra->pw = procwatch_create (ra->b->r, pid, child_exit_cb, ra))) {
        int saved_errno = errno;
        kill (pid, SIGKILL);
        ra->pid = 0;
        errno = saved_errno;
        return -1;
    }
    return 0;
}

int runat_kill (struct runat *ra, int signum)
{
    if (!ra || ra->pid <= 0) {
        errno = ESRCH;
        return -1;
    }
    return kill (ra->pid, signum);
}

pid_t runat_pid (struct runat *ra)
{
    return ra ? ra->pid : 0;
}
