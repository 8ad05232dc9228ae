/* task.c - see task.h.
 *
 * Start-up protocol with the child: after fork the child waits on a "go"
 * pipe while the parent binds it to a core or gives it the broker's
 * original CPUs (so the binding is in place
 * before the program runs), then execs; a close-on-exec "error" pipe
 * carries errno back if exec fails, and reads as EOF if it succeeded.
 * The parent never waits for any of this synchronously.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "src/common/libutil/fdutil.h"
#include "src/common/libutil/sched_slice.h"
#include "src/common/libcanopy/procwatch.h"
#include "src/common/libhw/hwinfo.h"
#include "task.h"

#define PMI_LINE_MAX 4096
#define DRAIN_GRACE 1.0

struct task {
    canopy_reactor_t *r;
    int rank;
    const struct task_ops *ops;
    void *arg;
    pid_t pid;
    int out_fd, err_fd, pmi_fd, errpipe_fd;
    canopy_watcher_t *out_w, *err_w, *pmi_w, *errpipe_w, *grace_w;
    struct procwatch *pw;
    char pmibuf[PMI_LINE_MAX + 1];
    size_t pmilen;
    bool pmi_overflow;
    char *outq;             /* PMI responses not yet written */
    size_t outq_len;
    bool exited;
    int status;
    int exec_errnum;
    bool reported;
};

struct task *task_create (canopy_reactor_t *r, int rank,
                          const struct task_ops *ops, void *arg)
{
    struct task *t = calloc (1, sizeof (*t));
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    t->r = r;
    t->rank = rank;
    t->ops = ops;
    t->arg = arg;
    t->out_fd = t->err_fd = t->pmi_fd = t->errpipe_fd = -1;
    return t;
}

static void close_watch (canopy_watcher_t **w, int *fd)
{
    canopy_watcher_destroy (*w);
    *w = NULL;
    if (*fd >= 0)
        close (*fd);
    *fd = -1;
}

void task_destroy (struct task *t)
{
    if (t) {
        int saved_errno = errno;
        if (t->pid > 0 && !t->exited)
            kill (-t->pid, SIGKILL);
        close_watch (&t->out_w, &t->out_fd);
        close_watch (&t->err_w, &t->err_fd);
        close_watch (&t->pmi_w, &t->pmi_fd);
        close_watch (&t->errpipe_w, &t->errpipe_fd);
        canopy_watcher_destroy (t->grace_w);
        procwatch_destroy (t->pw);
        free (t->outq);
        free (t);
        errno = saved_errno;
    }
}

int task_rank (const struct task *t)
{
    return t->rank;
}

pid_t task_pid (const struct task *t)
{
    return t->pid;
}

bool task_exited (const struct task *t)
{
    return t->reported;
}

/* Report the exit once the process is gone and the pipes are drained. */
static void maybe_report (struct task *t)
{
    if (t->reported || !t->exited || t->errpipe_fd >= 0)
        return;
    if ((t->out_fd >= 0 || t->err_fd >= 0) && !t->grace_w)
        return;     /* still draining, grace timer not fired */
    t->reported = true;
    close_watch (&t->out_w, &t->out_fd);
    close_watch (&t->err_w, &t->err_fd);
    t->ops->exit (t, t->status, t->exec_errnum, t->arg);
}

static void grace_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    maybe_report (arg);
}

static void output_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct task *t = arg;
    bool is_out = (w == t->out_w);
    int *fd = is_out ? &t->out_fd : &t->err_fd;
    char buf[16384];
    ssize_t n = read (*fd, buf, sizeof (buf));

    if (n > 0) {
        t->ops->output (t, is_out ? TASK_STDOUT : TASK_STDERR, buf, n, t->arg);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (is_out)
        close_watch (&t->out_w, &t->out_fd);
    else
        close_watch (&t->err_w, &t->err_fd);
    maybe_report (t);
}

static void flush_pmi (struct task *t)
{
    while (t->outq_len > 0 && t->pmi_fd >= 0) {
        ssize_t n = send (t->pmi_fd, t->outq, t->outq_len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                break;
            t->outq_len = 0;   /* the task went away: EOF will follow */
            break;
        }
        memmove (t->outq, t->outq + n, t->outq_len - n);
        t->outq_len -= n;
    }
    if (t->pmi_w)
        canopy_watcher_set_events (t->pmi_w, CANOPY_POLLIN
                                   | (t->outq_len ? CANOPY_POLLOUT : 0));
}

int task_pmi_send (struct task *t, const char *line, size_t len)
{
    char *q;
    if (t->pmi_fd < 0) {
        errno = ENOTCONN;
        return -1;
    }
    if (t->outq_len + len > 1024 * 1024) {
        errno = ENOBUFS;    /* the task does not read its answers */
        return -1;
    }
    if (!(q = realloc (t->outq, t->outq_len + len))) {
        errno = ENOMEM;
        return -1;
    }
    t->outq = q;
    memcpy (t->outq + t->outq_len, line, len);
    t->outq_len += len;
    flush_pmi (t);
    return 0;
}

static void pmi_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct task *t = arg;

    if (revents & CANOPY_POLLOUT)
        flush_pmi (t);
    if (!(revents & (CANOPY_POLLIN | CANOPY_POLLERR)))
        return;
    ssize_t n = recv (t->pmi_fd, t->pmibuf + t->pmilen, PMI_LINE_MAX - t->pmilen,
                      MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        close_watch (&t->pmi_w, &t->pmi_fd);
        t->ops->pmi_eof (t, t->arg);
        return;
    }
    t->pmilen += n;
    char *start = t->pmibuf;
    char *nl;
    while ((nl = memchr (start, '\n', t->pmilen - (start - t->pmibuf)))) {
        *nl = '\0';
        t->ops->pmi_line (t, start, nl - start, t->arg);
        if (t->pmi_fd < 0)
            return;     /* callback dropped the task */
        start = nl + 1;
    }
    size_t rest = t->pmilen - (start - t->pmibuf);
    memmove (t->pmibuf, start, rest);
    t->pmilen = rest;
    if (t->pmilen == PMI_LINE_MAX) {
        /* a line longer than any PMI line: hand it over as is; the
         * protocol engine rejects it (EMSGSIZE) and the job ends
         */
        t->pmibuf[PMI_LINE_MAX] = '\0';
        t->ops->pmi_line (t, t->pmibuf, PMI_LINE_MAX, t->arg);
        t->pmilen = 0;
    }
}

static void errpipe_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct task *t = arg;
    int e = 0;
    ssize_t n = read (t->errpipe_fd, &e, sizeof (e));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n == sizeof (e))
        t->exec_errnum = e;
    close_watch (&t->errpipe_w, &t->errpipe_fd);
    maybe_report (t);
}

static void exit_cb (struct procwatch *pw, pid_t pid, int status, void *arg)
{
    struct task *t = arg;
    t->exited = true;
    t->status = status;
    if ((t->grace_w = canopy_timer_watcher_create (t->r, DRAIN_GRACE, 0, grace_cb, t)))
        canopy_watcher_start (t->grace_w);
    maybe_report (t);
}

static int watch_fd (struct task *t, int fd, int events, canopy_watcher_f cb,
                     canopy_watcher_t **w)
{
    if (fd_set_nonblocking (fd) < 0
        || !(*w = canopy_fd_watcher_create (t->r, fd, events, cb, t)))
        return -1;
    canopy_watcher_start (*w);
    return 0;
}

static void child (char **argv, char **envp, const char *cwd, int outw, int errw,
                   int pmifd, int gofd, int errpipe)
{
    char c;
    int e;
    int devnull = open ("/dev/null", O_RDONLY);

    (void)setsid ();
    /* wait for the parent to finish setting us up (binding) */
    while (read (gofd, &c, 1) < 0 && errno == EINTR)
        ;
    if (devnull >= 0)
        dup2 (devnull, 0);
    dup2 (outw, 1);
    dup2 (errw, 2);
    if (pmifd >= 0 && dup2 (pmifd, 3) < 0)
        goto fail;
    dup2 (errpipe, pmifd >= 0 ? 4 : 3);
    errpipe = pmifd >= 0 ? 4 : 3;
    (void)fcntl (errpipe, F_SETFD, FD_CLOEXEC);
    (void)close_range (errpipe + 1, ~0U, 0);
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        signal (s, SIG_DFL);
    (void)sched_slice_set (0);          /* the broker's slice is its own */
    if (cwd && chdir (cwd) < 0)
        goto fail;
    environ = envp;
    execvp (argv[0], argv);
fail:
    e = errno;
    (void)write (errpipe, &e, sizeof (e));
    _exit (e == ENOENT ? 127 : 126);
}

int task_start (struct task *t, char **argv, char **envp, const char *cwd,
                bool pmi, int bind_core, const cpu_set_t *cpus)
{
    int out[2] = { -1, -1 }, err[2] = { -1, -1 }, pmis[2] = { -1, -1 };
    int go[2] = { -1, -1 }, ep[2] = { -1, -1 };
    pid_t pid;

    if (!argv || !argv[0] || !envp) {
        errno = EINVAL;
        return -1;
    }
    if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (err, O_CLOEXEC) < 0
        || pipe2 (go, O_CLOEXEC) < 0 || pipe2 (ep, O_CLOEXEC) < 0
        || (pmi && socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pmis) < 0))
        goto error;
    if ((pid = fork ()) < 0)
        goto error;
    if (pid == 0)
        child (argv, envp, cwd, out[1], err[1], pmi ? pmis[1] : -1, go[0], ep[1]);
    t->pid = pid;
    close (out[1]);
    close (err[1]);
    close (go[0]);
    close (ep[1]);
    if (pmi)
        close (pmis[1]);
    t->out_fd = out[0];
    t->err_fd = err[0];
    t->errpipe_fd = ep[0];
    t->pmi_fd = pmi ? pmis[0] : -1;
    if (bind_core >= 0)
        (void)hwinfo_bind_core (pid, bind_core);
    else if (cpus)
        (void)sched_setaffinity (pid, sizeof (*cpus), cpus);
    (void)write (go[1], "g", 1);
    close (go[1]);
    if (watch_fd (t, t->out_fd, CANOPY_POLLIN, output_cb, &t->out_w) < 0
        || watch_fd (t, t->err_fd, CANOPY_POLLIN, output_cb, &t->err_w) < 0
        || watch_fd (t, t->errpipe_fd, CANOPY_POLLIN, errpipe_cb, &t->errpipe_w) < 0
        || (pmi && watch_fd (t, t->pmi_fd, CANOPY_POLLIN, pmi_cb, &t->pmi_w) < 0)
        || !(t->pw = procwatch_create (t->r, pid, exit_cb, t))) {
        kill (-pid, SIGKILL);
        return -1;  /* task_destroy cleans up */
    }
    return 0;
error:
    {
        int saved_errno = errno;
        int fds[] = { out[0], out[1], err[0], err[1], pmis[0], pmis[1],
                      go[0], go[1], ep[0], ep[1] };
        for (size_t i = 0; i < sizeof (fds) / sizeof (fds[0]); i++)
            if (fds[i] >= 0)
                close (fds[i]);
        errno = saved_errno;
    }
    return -1;
}

int task_kill (struct task *t, int signum)
{
    if (t->pid <= 0 || t->exited) {
        errno = ESRCH;
        return -1;
    }
    /* the whole session's process group; fall back to the task alone */
    if (kill (-t->pid, signum) < 0)
        return kill (t->pid, signum);
    return 0;
}
