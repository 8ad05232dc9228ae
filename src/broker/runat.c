/* runat.c - initial program (runat.h).
 *
 * The program gets SIGHUP if the broker dies (PR_SET_PDEATHSIG), so a
 * dead rank 0 never leaves it running on its own.
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

int runat_start (struct runat *ra, const char *uri)
{
    pid_t pid;

    if (!ra->argv || !ra->argv[0]) {
        errno = EINVAL;
        return -1;
    }
    if ((pid = fork ()) < 0)
        return -1;
    if (pid == 0) {
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        signal (SIGINT, SIG_DFL);
        signal (SIGPIPE, SIG_DFL);
        /* if rank 0 dies, its program hears a hangup, as from a terminal */
        (void)prctl (PR_SET_PDEATHSIG, SIGHUP);
        setenv ("CANOPY_URI", uri, 1);
        execvp (ra->argv[0], ra->argv);
        fprintf (stderr, "canopy: %s: %s\n", ra->argv[0], strerror (errno));
        _exit (errno == ENOENT ? 127 : 126);
    }
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
