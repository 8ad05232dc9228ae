/* procwatch.c - see procwatch.h */
#include <stdlib.h>
#include <errno.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include "procwatch.h"

struct procwatch {
    pid_t pid;
    int pidfd;
    canopy_watcher_t *w;
    procwatch_f cb;
    void *arg;
    bool done;
};

static void check (struct procwatch *pw)
{
    int status;
    pid_t rc;

    if (pw->done)
        return;
    do {
        rc = waitpid (pw->pid, &status, WNOHANG);
    } while (rc < 0 && errno == EINTR);
    if (rc == pw->pid || (rc < 0 && errno == ECHILD)) {
        pw->done = true;
        canopy_watcher_stop (pw->w);
        if (rc < 0)
            status = 0;
        pw->cb (pw, pw->pid, status, pw->arg);
    }
}

static void watch_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    check (arg);
}

struct procwatch *procwatch_create (canopy_reactor_t *r, pid_t pid,
                                    procwatch_f cb, void *arg)
{
    struct procwatch *pw;

    if (!r || pid <= 0 || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(pw = calloc (1, sizeof (*pw)))) {
        errno = ENOMEM;
        return NULL;
    }
    pw->pid = pid;
    pw->cb = cb;
    pw->arg = arg;
    pw->pidfd = syscall (SYS_pidfd_open, pid, 0);
    if (pw->pidfd >= 0)
        pw->w = canopy_fd_watcher_create (r, pw->pidfd, CANOPY_POLLIN, watch_cb, pw);
    else
        pw->w = canopy_timer_watcher_create (r, 0.02, 0.02, watch_cb, pw);
    if (!pw->w) {
        procwatch_destroy (pw);
        return NULL;
    }
    canopy_watcher_start (pw->w);
    return pw;
}

void procwatch_destroy (struct procwatch *pw)
{
    if (pw) {
        int saved_errno = errno;
        canopy_watcher_destroy (pw->w);
        if (pw->pidfd >= 0)
            close (pw->pidfd);
        free (pw);
        errno = saved_errno;
    }
}
