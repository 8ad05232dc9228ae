/* pmi-launch - run N tasks under canopy's PMI-1 server engine (test-only).
 *
 * Usage: pmi-launch -n N [OPTIONS] [--] PROGRAM [ARGS...]
 *
 * Forks N copies of PROGRAM, each with PMI_RANK, PMI_SIZE and PMI_FD (one
 * end of a socketpair; or PMI_PORT on 127.0.0.1 with --port), and serves
 * them with pmi_server backed by an in-memory map: no broker, no KVS.  It
 * proves the wire protocol against real MPI libraries.
 *
 * Exit status: the first PMI abort's exit code if a task aborted;
 * otherwise the worst task status (128+signal for a signal), ignoring
 * tasks this program killed.  A task that aborts, dies of a signal, or
 * closes its PMI connection without finalize ends the job:
 * the others get SIGTERM, then SIGKILL 3 s later.  Tasks run in their
 * own sessions (like hydra's) and die with us (PR_SET_PDEATHSIG).  Put a
 * 'timeout' around it in tests.
 *
 * Design notes: one poll() loop over a signalfd (SIGCHLD, SIGTERM, SIGINT,
 * SIGHUP), the PMI_PORT listener, and the connections.  The engine's
 * callbacks answer synchronously (gets from the map, barriers at once),
 * which is exactly what pmi_server allows.  --trace writes every line
 * both ways with a timestamp (the protocol: doc/internals.md, "9.2 The
 * wire protocol as implemented").
 */
#include <stdlib.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <fcntl.h>
#include <errno.h>
#include <unistd.h>
#include <getopt.h>
#include <signal.h>
#include <poll.h>
#include <limits.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libpmi/pmi_server.h"
#include "src/common/libpmi/pmi_mapping.h"
#include "src/common/libpmi/pmi_wire.h"

static const char *usage_text =
"Usage: pmi-launch -n N [OPTIONS] [--] PROGRAM [ARGS...]\n"
"\n"
"Run N tasks of PROGRAM under canopy's PMI-1 server (test helper).\n"
"\n"
"  -n, --ntasks=N          number of tasks (required)\n"
"      --vallen-max=V      advertise vallen_max V (default 1024)\n"
"      --clique[=LAYOUT]   PMI_process_mapping: LAYOUT is a comma-separated\n"
"                          list of tasks per node (default: all on one node),\n"
"                          or 'none' for no mapping at all\n"
"      --port[=noid]       serve PMI_PORT on 127.0.0.1 with PMI_ID (or with\n"
"                          PMI_RANK/PMI_SIZE for 'noid') instead of PMI_FD\n"
"      --trace=FILE        write every PMI line to FILE\n"
"  -v, --verbose           report job events on stderr\n"
"  -h, --help              show this help\n";

#define KILL_GRACE 3.0

struct conn {
    int fd;
    int rank;               /* -1 until known (PMI_PORT mode) */
    bool broken;            /* a send failed: close after this request */
    char buf[PMI_WIRE_LINE_MAX * 2];
    size_t len;
};

struct task {
    pid_t pid;
    int status;
    bool exited;
    bool killed;            /* we signalled it */
    struct conn *conn;
};

struct launch {
    int ntasks;
    struct task *tasks;
    struct conn *conns;     /* ntasks slots */
    int listen_fd;
    bool port_mode;
    bool port_noid;
    pmi_server_t *srv;
    hashmap_t *kvs;
    FILE *trace;
    double t0;
    bool verbose;
    int running;
    bool ending;            /* job being torn down */
    double kill_deadline;
    bool aborted;
    int abort_code;
    bool failed;            /* torn down for a reason other than abort */
    int barriers;
};

static void trace (struct launch *l, int rank, const char *dir, const char *line,
                   size_t len)
{
    if (!l->trace)
        return;
    if (len > 0 && line[len - 1] == '\n')
        len--;
    fprintf (l->trace, "%10.3fms r%-6d %s %.*s\n", (monotime () - l->t0) * 1e3,
             rank, dir, (int)len, line);
}

static void trace_server (struct launch *l, const char *fmt, ...)
{
    va_list ap;
    if (!l->trace)
        return;
    fprintf (l->trace, "%10.3fms server  ** ", (monotime () - l->t0) * 1e3);
    va_start (ap, fmt);
    vfprintf (l->trace, fmt, ap);
    va_end (ap);
    fputc ('\n', l->trace);
}

/* End the job: SIGTERM to every task still running (SIGKILL later),
 * except 'spare' (a task that is exiting on its own: its status counts).
 */
static void end_job (struct launch *l, const char *why, int spare)
{
    if (l->ending)
        return;
    l->ending = true;
    l->kill_deadline = monotime () + KILL_GRACE;
    if (l->verbose || l->running > 0)
        log_msg ("%s; ending the job", why);
    trace_server (l, "ending the job: %s", why);
    for (int i = 0; i < l->ntasks; i++) {
        if (l->tasks[i].pid > 0 && !l->tasks[i].exited && i != spare) {
            l->tasks[i].killed = true;
            kill (l->tasks[i].pid, SIGTERM);
        }
    }
}

/* pmi_server callbacks */

static void cb_send (void *arg, int rank, const char *line, size_t len)
{
    struct launch *l = arg;
    struct conn *c = l->tasks[rank].conn;
    size_t done = 0;

    trace (l, rank, "<-", line, len);
    if (!c || c->fd < 0)
        return;
    /* never block: a task that does not read its answers is dropped */
    while (done < len && !c->broken) {
        ssize_t n = send (c->fd, line + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            c->broken = true;   /* conn_read() closes it */
            return;
        }
        done += n;
    }
}

static int cb_put (void *arg, int rank, const char *key, const char *value)
{
    struct launch *l = arg;
    char *v = strdup (value);
    if (!v || hashmap_update (l->kvs, key, v) < 0) {
        free (v);
        return -1;
    }
    return 0;
}

static int cb_get (void *arg, int rank, const char *key)
{
    struct launch *l = arg;
    const char *v = hashmap_lookup (l->kvs, key);
    return pmi_server_get_respond (l->srv, rank, v ? 0 : ENOENT, v);
}

static int cb_barrier (void *arg)
{
    struct launch *l = arg;
    trace_server (l, "barrier %d complete (%d)", ++l->barriers, l->ntasks);
    return pmi_server_barrier_done (l->srv, 0);
}

static void cb_abort (void *arg, int rank, int exitcode, const char *msg)
{
    struct launch *l = arg;
    char why[128];

    if (!l->aborted) {
        l->aborted = true;
        l->abort_code = exitcode;
    }
    snprintf (why, sizeof (why), "rank %d called abort with exit code %d", rank, exitcode);
    end_job (l, why, -1);
}

static const struct pmi_server_ops ops = {
    .send = cb_send,
    .put = cb_put,
    .get = cb_get,
    .barrier = cb_barrier,
    .abort = cb_abort,
};

static void conn_close (struct launch *l, struct conn *c)
{
    int rank = c->rank;

    close (c->fd);
    c->fd = -1;
    c->len = 0;
    c->broken = false;
    if (rank < 0)
        return;
    trace (l, rank, "--", "EOF", 3);
    if (pmi_server_disconnect (l->srv, rank) == 0
        && pmi_server_task_initialized (l->srv, rank)) {
        char why[128];
        snprintf (why, sizeof (why),
                  "rank %d closed its PMI connection without finalize", rank);
        l->failed = true;
        end_job (l, why, rank);
    }
}

/* PMI_PORT: the first line of a connection tells (or we choose) the rank. */
static int conn_bind (struct launch *l, struct conn *c, const char *line, size_t len)
{
    int rank = pmi_server_initack_rank (line, len);

    if (rank < 0) {
        /* no PMI_ID: any free rank will do */
        for (int i = 0; i < l->ntasks && rank < 0; i++) {
            if (!l->tasks[i].conn)
                rank = i;
        }
    }
    if (rank < 0 || rank >= l->ntasks || l->tasks[rank].conn) {
        log_msg ("refusing a PMI connection announcing rank %d", rank);
        return -1;
    }
    c->rank = rank;
    l->tasks[rank].conn = c;
    return 0;
}

static void conn_read (struct launch *l, struct conn *c)
{
    ssize_t n = read (c->fd, c->buf + c->len, sizeof (c->buf) - c->len);
    char *nl;

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        conn_close (l, c);
        return;
    }
    c->len += n;
    while (c->fd >= 0 && (nl = memchr (c->buf, '\n', c->len))) {
        size_t len = nl - c->buf + 1;
        if (c->rank < 0 && conn_bind (l, c, c->buf, len) < 0) {
            conn_close (l, c);
            return;
        }
        trace (l, c->rank, "->", c->buf, len);
        if (pmi_server_request (l->srv, c->rank, c->buf, len) < 0) {
            char why[128];
            snprintf (why, sizeof (why), "rank %d: bad PMI request: %s", c->rank,
                      strerror (errno));
            l->failed = true;
            end_job (l, why, -1);
            conn_close (l, c);
            return;
        }
        memmove (c->buf, c->buf + len, c->len - len);
        c->len -= len;
        if (c->broken) {
            char why[128];
            snprintf (why, sizeof (why), "rank %d does not read its PMI answers",
                      c->rank);
            l->failed = true;
            end_job (l, why, -1);
            conn_close (l, c);
            return;
        }
    }
    if (c->fd >= 0 && c->len >= PMI_WIRE_LINE_MAX) {
        char why[128];
        snprintf (why, sizeof (why), "rank %d: PMI line too long", c->rank);
        l->failed = true;
        end_job (l, why, -1);
        conn_close (l, c);
    }
}

static void conn_accept (struct launch *l)
{
    int fd = accept4 (l->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    for (int i = 0; i < l->ntasks; i++) {
        if (l->conns[i].fd < 0 && l->conns[i].rank < 0) {
            l->conns[i].fd = fd;
            return;
        }
    }
    log_msg ("too many PMI connections; refusing one");
    close (fd);
}

static void task_exited (struct launch *l, pid_t pid, int status)
{
    for (int i = 0; i < l->ntasks; i++) {
        struct task *t = &l->tasks[i];
        if (t->pid != pid)
            continue;
        t->exited = true;
        t->status = status;
        l->running--;
        if (t->killed)
            return;
        /* a non-zero exit alone does not end the job (it may come after
         * finalize); leaving PMI without finalize does, in conn_close() */
        if (WIFSIGNALED (status)) {
            char why[128];
            snprintf (why, sizeof (why), "rank %d was killed by signal %d", i,
                      WTERMSIG (status));
            end_job (l, why, -1);
        }
        return;
    }
}

static int exit_code (struct launch *l)
{
    int worst = 0;

    if (l->aborted)
        return l->abort_code;
    for (int i = 0; i < l->ntasks; i++) {
        struct task *t = &l->tasks[i];
        int code;
        if (!t->exited || t->killed)
            continue;
        code = WIFSIGNALED (t->status) ? 128 + WTERMSIG (t->status)
                                       : WEXITSTATUS (t->status);
        if (code > worst)
            worst = code;
    }
    if (worst == 0 && l->failed)
        worst = 1;
    return worst;
}

static char *parse_clique (const char *arg, int ntasks)
{
    char *mapping = xzmalloc (PMI_WIRE_LINE_MAX);
    int *tpn = xzmalloc (sizeof (int) * (ntasks + 1));
    int nnodes = 0, total = 0;

    if (!arg) {
        tpn[nnodes++] = ntasks;
        total = ntasks;
    }
    else if (!strcmp (arg, "none")) {
        free (tpn);
        free (mapping);
        return NULL;
    }
    else {
        char *cpy = xstrdup (arg), *saveptr = NULL, *tok;
        for (tok = strtok_r (cpy, ",", &saveptr); tok; tok = strtok_r (NULL, ",", &saveptr)) {
            char *end;
            long v = strtol (tok, &end, 10);
            if (*end || v < 0 || v > ntasks || nnodes == ntasks)
                log_msg_exit ("--clique: bad layout '%s'", arg);
            tpn[nnodes++] = v;
            total += v;
        }
        free (cpy);
    }
    if (total != ntasks)
        log_msg_exit ("--clique: the layout has %d tasks, not %d", total, ntasks);
    if (pmi_mapping_encode (tpn, nnodes, mapping, PMI_WIRE_LINE_MAX) < 0)
        log_err_exit ("--clique");
    free (tpn);
    return mapping;
}

static int listen_loopback (int *port)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    socklen_t len = sizeof (sin);
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (fd < 0 || bind (fd, (struct sockaddr *)&sin, sizeof (sin)) < 0
        || listen (fd, 1024) < 0
        || getsockname (fd, (struct sockaddr *)&sin, &len) < 0)
        log_err_exit ("PMI_PORT listener");
    *port = ntohs (sin.sin_port);
    return fd;
}

static void spawn (struct launch *l, int rank, char **argv, int child_fd, int port)
{
    pid_t pid = fork ();
    char buf[64];

    if (pid < 0)
        log_err_exit ("fork");
    if (pid == 0) {
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        (void)prctl (PR_SET_PDEATHSIG, SIGKILL);
        /* Own session, as hydra does: with the kernel's autogroup
         * scheduling each task is then its own scheduling group, which
         * matters when the tasks oversubscribe a loaded machine (and
         * makes timing comparisons with hydra fair).  Terminal signals
         * reach the tasks through us (SIGINT/SIGTERM end the job).
         */
        (void)setsid ();
        unsetenv ("PMI_FD");
        unsetenv ("PMI_PORT");
        unsetenv ("PMI_ID");
        unsetenv ("PMI_SPAWNED");
        snprintf (buf, sizeof (buf), "%d", l->ntasks);
        setenv ("PMI_SIZE", buf, 1);
        snprintf (buf, sizeof (buf), "%d", rank);
        setenv ("PMI_RANK", buf, 1);
        if (l->port_mode) {
            snprintf (buf, sizeof (buf), "127.0.0.1:%d", port);
            setenv ("PMI_PORT", buf, 1);
            if (!l->port_noid) {
                snprintf (buf, sizeof (buf), "%d", rank);
                setenv ("PMI_ID", buf, 1);
                unsetenv ("PMI_RANK");
                unsetenv ("PMI_SIZE");
            }
        }
        else {
            int fl = fcntl (child_fd, F_GETFD);
            (void)fcntl (child_fd, F_SETFD, fl & ~FD_CLOEXEC);
            snprintf (buf, sizeof (buf), "%d", child_fd);
            setenv ("PMI_FD", buf, 1);
        }
        execvp (argv[0], argv);
        fprintf (stderr, "pmi-launch: %s: %s\n", argv[0], strerror (errno));
        _exit (errno == ENOENT ? 127 : 126);
    }
    l->tasks[rank].pid = pid;
    l->running++;
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "ntasks", required_argument, NULL, 'n' },
        { "vallen-max", required_argument, NULL, 'V' },
        { "clique", optional_argument, NULL, 'C' },
        { "port", optional_argument, NULL, 'P' },
        { "trace", required_argument, NULL, 'T' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct launch launch = { .listen_fd = -1 };
    struct launch *l = &launch;
    struct pmi_server_config cfg = { 0 };
    const char *clique_arg = NULL;
    char *mapping;
    char kvsname[64];
    sigset_t sigs;
    int sigfd, port = 0, c;
    long v;
    char *end;

    log_init ("pmi-launch");
    l->t0 = monotime ();
    while ((c = getopt_long (argc, argv, "+n:vh", longopts, NULL)) != -1) {
        switch (c) {
            case 'n':
                v = strtol (optarg, &end, 10);
                if (*end || v < 1 || v > 100000)
                    log_msg_exit ("-n must be a number of tasks from 1 to 100000");
                l->ntasks = v;
                break;
            case 'V':
                v = strtol (optarg, &end, 10);
                if (*end || v < 16 || v > 1600)
                    log_msg_exit ("--vallen-max must be from 16 to 1600");
                cfg.vallen_max = v;
                break;
            case 'C':
                clique_arg = optarg ? optarg : "";
                break;
            case 'P':
                l->port_mode = true;
                if (optarg && !strcmp (optarg, "noid"))
                    l->port_noid = true;
                else if (optarg)
                    log_msg_exit ("--port takes no value or 'noid'");
                break;
            case 'T':
                if (!(l->trace = fopen (optarg, "w")))
                    log_err_exit ("cannot open trace file %s", optarg);
                setvbuf (l->trace, NULL, _IOLBF, 0);
                break;
            case 'v':
                l->verbose = true;
                break;
            case 'h':
                fputs (usage_text, stdout);
                return 0;
            default:
                fputs (usage_text, stderr);
                return 1;
        }
    }
    if (l->ntasks == 0 || optind >= argc) {
        fputs (usage_text, stderr);
        return 1;
    }
    mapping = parse_clique (clique_arg && *clique_arg ? clique_arg : NULL, l->ntasks);

    snprintf (kvsname, sizeof (kvsname), "pmi_launch_%d", (int)getpid ());
    cfg.size = l->ntasks;
    cfg.kvsname = kvsname;
    cfg.process_mapping = mapping;
    if (!(l->kvs = hashmap_create (free)))
        log_err_exit ("hashmap");
    if (!(l->srv = pmi_server_create (&cfg, &ops, l)))
        log_err_exit ("PMI server");
    l->tasks = xzmalloc (sizeof (struct task) * l->ntasks);
    l->conns = xzmalloc (sizeof (struct conn) * l->ntasks);
    for (int i = 0; i < l->ntasks; i++) {
        l->conns[i].fd = -1;
        l->conns[i].rank = -1;
    }

    sigemptyset (&sigs);
    sigaddset (&sigs, SIGCHLD);
    sigaddset (&sigs, SIGTERM);
    sigaddset (&sigs, SIGINT);
    sigaddset (&sigs, SIGHUP);
    if (sigprocmask (SIG_BLOCK, &sigs, NULL) < 0
        || (sigfd = signalfd (-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        log_err_exit ("signalfd");
    signal (SIGPIPE, SIG_IGN);

    if (l->port_mode)
        l->listen_fd = listen_loopback (&port);
    for (int i = 0; i < l->ntasks; i++) {
        int sv[2] = { -1, -1 };
        if (!l->port_mode) {
            if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                log_err_exit ("socketpair");
            l->conns[i].fd = sv[0];
            l->conns[i].rank = i;
            l->tasks[i].conn = &l->conns[i];
        }
        spawn (l, i, &argv[optind], sv[1], port);
        if (sv[1] >= 0)
            close (sv[1]);
    }
    if (l->verbose)
        log_msg ("started %d tasks in %.1f ms", l->ntasks, (monotime () - l->t0) * 1e3);

    struct pollfd *pfd = xzmalloc (sizeof (struct pollfd) * (l->ntasks + 2));
    while (l->running > 0) {
        int n = 0, timeout = -1;
        pfd[n++] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
        pfd[n++] = (struct pollfd){ .fd = l->listen_fd, .events = POLLIN };
        for (int i = 0; i < l->ntasks; i++)
            pfd[n++] = (struct pollfd){ .fd = l->conns[i].fd, .events = POLLIN };
        if (l->ending) {
            double left = l->kill_deadline - monotime ();
            timeout = left > 0 ? (int)(left * 1000) + 1 : 0;
        }
        if (poll (pfd, n, timeout) < 0 && errno != EINTR)
            log_err_exit ("poll");
        /* PMI lines first: an abort explains the exit that follows it */
        if (pfd[1].revents)
            conn_accept (l);
        for (int i = 0; i < l->ntasks; i++) {
            if (pfd[i + 2].revents && l->conns[i].fd >= 0)
                conn_read (l, &l->conns[i]);
        }
        if (pfd[0].revents) {
            struct signalfd_siginfo si;
            while (read (sigfd, &si, sizeof (si)) == sizeof (si)) {
                if (si.ssi_signo == SIGCHLD) {
                    int status;
                    pid_t pid;
                    while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
                        task_exited (l, pid, status);
                }
                else {
                    l->failed = true;
                    end_job (l, "interrupted by a signal", -1);
                }
            }
        }
        if (l->ending && monotime () >= l->kill_deadline) {
            for (int i = 0; i < l->ntasks; i++) {
                if (l->tasks[i].pid > 0 && !l->tasks[i].exited) {
                    l->tasks[i].killed = true;
                    kill (l->tasks[i].pid, SIGKILL);
                }
            }
            l->kill_deadline = monotime () + 3600;
        }
    }
    int rc = exit_code (l);
    trace_server (l, "done: exit code %d, %d barriers, %zu keys, %.3f s", rc,
                  l->barriers, hashmap_size (l->kvs), monotime () - l->t0);
    if (l->verbose)
        log_msg ("done in %.1f ms: exit code %d", (monotime () - l->t0) * 1e3, rc);
    for (int i = 0; i < l->ntasks; i++) {
        if (l->conns[i].fd >= 0)
            close (l->conns[i].fd);
    }
    if (l->listen_fd >= 0)
        close (l->listen_fd);
    if (l->trace)
        fclose (l->trace);
    pmi_server_destroy (l->srv);
    hashmap_destroy (l->kvs);
    free (pfd);
    free (l->tasks);
    free (l->conns);
    free (mapping);
    close (sigfd);
    return rc;
}
