/* canopy-run.c - run a parallel job across brokers, with PMI.
 *
 * Each broker's exec service forks its share of the tasks and serves
 * their PMI-1 requests from the KVS.  This front end lays the tasks out,
 * records the job in the KVS (job.<id>.info, then .exit and .timing),
 * relays output (optionally labelled with the task rank), forwards
 * SIGINT/SIGTERM/SIGHUP to every task (a second SIGINT within a second
 * sends SIGKILL), and exits with the worst task status.  A task that
 * dies by a signal, calls PMI abort, or leaves PMI without finalize ends
 * the whole job with a message saying so.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/signalfd.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/base64.h"
#include "src/common/libpmi/pmi_mapping.h"
#include "cmdutil.h"

extern char **environ;

static const char *usage_text =
"Usage: canopy run -n NTASKS [OPTIONS] [--] COMMAND [ARGS...]\n"
"\n"
"Run NTASKS copies of COMMAND spread over the instance's brokers, each\n"
"with a PMI-1 server (PMI_FD, PMI_RANK, PMI_SIZE) so MPI programs start\n"
"unmodified.  Exits with the worst task status.\n"
"\n"
"  -n, --ntasks=N            number of tasks (required)\n"
"  -N, --nbrokers=B          use brokers 0..B-1 (default: all, at most N)\n"
"      --ranks=LIST          use these brokers, e.g. 0-3,7\n"
"      --tasks-per-broker=K  K tasks on each broker (fills brokers in order)\n"
"  -l, --label               prefix each output line with the task rank\n"
"      --bind=core|none      pin each task to a core (default none)\n"
"  -e, --env=NAME=VALUE      set a variable in the tasks' environment\n"
"      --test-clique=MODE    what MPI sees as a node: per-host (default: the\n"
"                            tasks of brokers on one host), per-broker, or\n"
"                            single (every task on one node)\n"
"  -v, --verbose             report the layout and timing on stderr\n"
"  -h, --help                show this help\n"
"\n"
"Standard input of the tasks is /dev/null.\n";

struct broker_part {
    uint32_t rank;
    int ntasks;
    int first;              /* first task rank */
    canopy_future_t *f;
    bool ended;
};

struct run {
    canopy_t *h;
    int jobid;
    int ntasks;
    struct broker_part *parts;
    int nparts;
    int nended;
    bool label;
    bool verbose;
    int *status;            /* per task wait status, -1 = running */
    int nexited;
    bool terminating;
    int abort_code;
    bool aborted;
    int fail_status;        /* status of the task that ended the job */
    bool failed;
    char **linebuf[2];      /* per task, per stream, partial line (label mode) */
    double t0;
    double last_int;
};

static void send_signal (struct run *run, int signum)
{
    for (int i = 0; i < run->nparts; i++) {
        if (run->parts[i].ended)
            continue;
        canopy_future_t *f = canopy_rpc_pack (run->h, "exec.signal", run->parts[i].rank,
                                              CANOPY_RPC_NORESPONSE, "{s:i s:i}",
                                              "jobid", run->jobid, "signum", signum);
        canopy_future_destroy (f);
    }
}

static void terminate (struct run *run, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void terminate (struct run *run, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (run->terminating)
        return;
    run->terminating = true;
    log_msg ("%s; ending the job", buf);
    send_signal (run, SIGKILL);
}

static void emit (struct run *run, int rank, int stream, const char *data, size_t len)
{
    FILE *out = stream == 0 ? stdout : stderr;
    if (!run->label) {
        fwrite (data, 1, len, out);
        fflush (out);
        return;
    }
    char **buf = &run->linebuf[stream][rank];
    size_t have = *buf ? strlen (*buf) : 0;
    char *s = xzmalloc (have + len + 1);
    if (have)
        memcpy (s, *buf, have);
    memcpy (s + have, data, len);
    s[have + len] = '\0';
    free (*buf);
    char *p = s, *nl;
    while ((nl = strchr (p, '\n'))) {
        fprintf (out, "%d: %.*s\n", rank, (int)(nl - p), p);
        p = nl + 1;
    }
    *buf = *p ? xstrdup (p) : NULL;
    free (s);
    fflush (out);
}

static void flush_labels (struct run *run)
{
    for (int st = 0; st < 2 && run->label; st++) {
        for (int r = 0; r < run->ntasks; r++) {
            if (run->linebuf[st][r]) {
                fprintf (st == 0 ? stdout : stderr, "%d: %s\n", r, run->linebuf[st][r]);
                free (run->linebuf[st][r]);
                run->linebuf[st][r] = NULL;
            }
        }
    }
}

static const char *signame (int sig)
{
    const char *s = sigabbrev_np (sig);
    return s ? s : "?";
}

static void stream_cb (canopy_future_t *f, void *arg)
{
    struct broker_part *part = canopy_future_aux_get (f, "part");
    struct run *run = arg;
    json_t *o;
    const char *type;

    if (canopy_rpc_get_unpack (f, "o", &o) < 0) {
        if (errno != ENODATA) {
            const char *s = canopy_future_error_string (f);
            log_msg ("broker %u: %s", part->rank, s ? s : strerror (errno));
            if (!run->failed) {
                run->failed = true;
                run->fail_status = 1 << 8;
            }
            terminate (run, "broker %u failed the job", part->rank);
        }
        part->ended = true;
        if (++run->nended == run->nparts)
            canopy_reactor_stop (canopy_get_reactor (run->h));
        return;
    }
    if (!(type = json_string_value (json_object_get (o, "type"))))
        goto next;
    if (!strcmp (type, "output")) {
        int rank;
        const char *stream, *data;
        if (json_unpack (o, "{s:i s:s s:s}", "rank", &rank, "stream", &stream,
                         "data", &data) == 0 && rank >= 0 && rank < run->ntasks) {
            size_t len;
            char *bytes = base64_decode (data, strlen (data), &len);
            if (bytes) {
                emit (run, rank, strcmp (stream, "stdout") ? 1 : 0, bytes, len);
                free (bytes);
            }
        }
    }
    else if (!strcmp (type, "exit")) {
        int rank, status, errnum = 0;
        const char *pmi = "none";
        if (json_unpack (o, "{s:i s:i s?i s?s}", "rank", &rank, "status", &status,
                         "errnum", &errnum, "pmi", &pmi) < 0
            || rank < 0 || rank >= run->ntasks)
            goto next;
        run->status[rank] = status;
        run->nexited++;
        if (errnum)
            log_msg ("task %d: cannot run the command: %s", rank, strerror (errnum));
        if (!run->terminating) {
            if (WIFSIGNALED (status)) {
                run->failed = true;
                run->fail_status = status;
                terminate (run, "task %d (on broker %u) was killed by signal %s",
                           rank, part->rank, signame (WTERMSIG (status)));
            }
            else if (!strcmp (pmi, "died")) {
                run->failed = true;
                run->fail_status = status ? status : 1 << 8;
                terminate (run, "task %d (on broker %u) exited with status %d without "
                           "finishing MPI/PMI", rank, part->rank, WEXITSTATUS (status));
            }
        }
    }
    else if (!strcmp (type, "abort")) {
        int rank, code;
        const char *msg = "";
        if (json_unpack (o, "{s:i s:i s?s}", "rank", &rank, "code", &code, "msg", &msg) == 0) {
            if (!run->aborted) {
                run->aborted = true;
                run->abort_code = code;
            }
            terminate (run, "task %d called abort with exit code %d%s%s", rank, code,
                       *msg ? ": " : "", msg);
        }
    }
    else if (!strcmp (type, "error")) {
        const char *msg = "?";
        (void)json_unpack (o, "{s:s}", "msg", &msg);
        if (run->terminating)
            goto next;      /* a consequence of ending the job */
        log_msg ("broker %u: %s", part->rank, msg);
        if (!run->failed) {
            run->failed = true;
            run->fail_status = 1 << 8;
        }
        terminate (run, "the job cannot go on");
    }
next:
    canopy_future_reset (f);
}

static void signal_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct run *run = arg;
    struct signalfd_siginfo si;
    int fd = *(int *)canopy_aux_get (run->h, "sigfd");

    while (read (fd, &si, sizeof (si)) == sizeof (si)) {
        int sig = si.ssi_signo;
        if (sig == SIGINT) {
            if (monotime () - run->last_int < 1.0) {
                log_msg ("killing the job");
                send_signal (run, SIGKILL);
                continue;
            }
            run->last_int = monotime ();
            log_msg ("interrupt: forwarding SIGINT to the tasks (again within 1 s to kill)");
        }
        send_signal (run, sig);
    }
}

static int status_code (int status)
{
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    if (WIFEXITED (status))
        return WEXITSTATUS (status);
    return 1;
}

static json_t *env_json (char **extra, int nextra)
{
    json_t *o = json_object ();
    for (char **e = environ; e && *e; e++) {
        char *eq = strchr (*e, '=');
        if (!eq)
            continue;
        char *name = xzmalloc (eq - *e + 1);
        memcpy (name, *e, eq - *e);
        json_t *v = json_string (eq + 1);
        if (v)
            json_object_set_new (o, name, v);
        free (name);
    }
    for (int i = 0; i < nextra; i++) {
        char *eq = strchr (extra[i], '=');
        char *name = xzmalloc (eq - extra[i] + 1);
        memcpy (name, extra[i], eq - extra[i]);
        json_object_set_new (o, name, json_string (eq + 1));
        free (name);
    }
    return o;
}

/* What MPI sees as nodes by default: the tasks of neighbouring parts
 * whose brokers run on the same host (attribute "hostname", asked of
 * every broker at once) form one node.  Telling MPI that two brokers on
 * one host are two nodes makes OpenMPI's shared-memory transport fail
 * (it sees the peers as local anyway): a test instance runs all its
 * brokers on one machine.  Fills per_node, returns the node count.  A
 * broker that cannot say is its own node.
 */
static int per_host (canopy_t *h, const struct broker_part *parts, int n,
                     int *per_node)
{
    canopy_future_t **f = xzmalloc (sizeof (*f) * n);
    char **host = xzmalloc (sizeof (*host) * n);
    int nnodes = 0;

    for (int i = 0; i < n; i++)
        f[i] = canopy_rpc_pack (h, "attr.get", parts[i].rank, 0, "{s:s}",
                                "name", "hostname");
    for (int i = 0; i < n; i++) {
        const char *v;
        if (f[i] && canopy_rpc_get_unpack (f[i], "{s:s}", "value", &v) == 0)
            host[i] = xstrdup (v);
        canopy_future_destroy (f[i]);
    }
    for (int i = 0; i < n; i++) {
        if (nnodes > 0 && host[i] && host[i - 1] && !strcmp (host[i], host[i - 1]))
            per_node[nnodes - 1] += parts[i].ntasks;
        else
            per_node[nnodes++] = parts[i].ntasks;
    }
    for (int i = 0; i < n; i++)
        free (host[i]);
    free (host);
    free (f);
    return nnodes;
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "ntasks", required_argument, NULL, 'n' },
        { "nbrokers", required_argument, NULL, 'N' },
        { "ranks", required_argument, NULL, 'R' },
        { "tasks-per-broker", required_argument, NULL, 'K' },
        { "label", no_argument, NULL, 'l' },
        { "bind", required_argument, NULL, 'B' },
        { "env", required_argument, NULL, 'e' },
        { "test-clique", required_argument, NULL, 'C' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct run run;
    long ntasks = 0, nbrokers = 0, per = 0;
    const char *ranklist = NULL, *bind = "none", *clique = "per-host";
    char **extra = xzmalloc (sizeof (char *) * argc);
    int nextra = 0;
    int c;

    log_init ("canopy-run");
    memset (&run, 0, sizeof (run));
    while ((c = getopt_long (argc, argv, "+n:N:le:vh", longopts, NULL)) != -1) {
        switch (c) {
            case 'n':
                ntasks = cmd_parse_long (optarg, "ntasks", 1, 1 << 24);
                break;
            case 'N':
                nbrokers = cmd_parse_long (optarg, "nbrokers", 1, 1 << 24);
                break;
            case 'R':
                ranklist = optarg;
                break;
            case 'K':
                per = cmd_parse_long (optarg, "tasks-per-broker", 1, 1 << 24);
                break;
            case 'l':
                run.label = true;
                break;
            case 'B':
                if (strcmp (optarg, "core") && strcmp (optarg, "none"))
                    log_msg_exit ("--bind must be 'core' or 'none'");
                bind = optarg;
                break;
            case 'e':
                if (!strchr (optarg, '=') || optarg[0] == '=')
                    log_msg_exit ("--env expects NAME=VALUE");
                extra[nextra++] = optarg;
                break;
            case 'C':
                if (strcmp (optarg, "per-host") && strcmp (optarg, "per-broker")
                    && strcmp (optarg, "single"))
                    log_msg_exit ("--test-clique must be 'per-host', 'per-broker'"
                                  " or 'single'");
                clique = optarg;
                break;
            case 'v':
                run.verbose = true;
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    if (optind >= argc)
        cmd_usage (usage_text, 1);
    if (ntasks < 1)
        log_msg_exit ("-n NTASKS is required");
    if (nbrokers && ranklist)
        log_msg_exit ("--nbrokers and --ranks go separately");
    run.t0 = monotime ();
    run.h = cmd_open ();
    run.ntasks = ntasks;
    uint32_t size = cmd_get_size (run.h);

    /* which brokers */
    uint32_t *ranks = NULL;
    int nranks;
    if (ranklist)
        nranks = cmd_parse_ranks (ranklist, size, &ranks);
    else {
        if (nbrokers > (long)size)
            log_msg_exit ("asked for %ld brokers; the instance has %u", nbrokers, size);
        nranks = nbrokers ? nbrokers : (ntasks < (long)size ? ntasks : size);
        ranks = xzmalloc (sizeof (uint32_t) * nranks);
        for (int i = 0; i < nranks; i++)
            ranks[i] = i;
    }
    if (per) {
        int need = (ntasks + per - 1) / per;
        if (need > nranks)
            log_msg_exit ("%ld tasks at %ld per broker need %d brokers; %d available",
                          ntasks, per, need, nranks);
        nranks = need;
    }
    run.nparts = nranks < ntasks ? nranks : ntasks;
    run.parts = xzmalloc (sizeof (*run.parts) * run.nparts);
    int first = 0;
    for (int i = 0; i < run.nparts; i++) {
        run.parts[i].rank = ranks[i];
        run.parts[i].ntasks = per ? (ntasks - first < per ? ntasks - first : per)
                                  : ntasks / run.nparts + (i < ntasks % run.nparts);
        run.parts[i].first = first;
        first += run.parts[i].ntasks;
    }
    free (ranks);

    /* what MPI sees as nodes */
    char mapping[4096];
    int *per_node = xzmalloc (sizeof (int) * run.nparts);
    int nnodes = run.nparts;
    if (!strcmp (clique, "single")) {
        per_node[0] = ntasks;
        nnodes = 1;
    }
    else if (!strcmp (clique, "per-host"))
        nnodes = per_host (run.h, run.parts, run.nparts, per_node);
    else {
        for (int i = 0; i < run.nparts; i++)
            per_node[i] = run.parts[i].ntasks;
    }
    if (pmi_mapping_encode (per_node, nnodes, mapping, sizeof (mapping)) < 0)
        mapping[0] = '\0';  /* too many nodes to describe: MPI falls back */
    free (per_node);

    /* job id and record */
    canopy_future_t *f = canopy_rpc (run.h, "exec.jobid", "{}", 0, 0);
    if (!f || canopy_rpc_get_unpack (f, "{s:i}", "jobid", &run.jobid) < 0)
        cmd_future_check (f, "exec.jobid");
    canopy_future_destroy (f);
    json_t *cmd = json_array ();
    for (int i = optind; i < argc; i++)
        json_array_append_new (cmd, json_string (argv[i]));
    json_t *layout = json_array ();
    for (int i = 0; i < run.nparts; i++)
        json_array_append_new (layout, json_pack ("{s:i s:i s:i}", "broker",
                                                  (int)run.parts[i].rank, "first",
                                                  run.parts[i].first, "ntasks",
                                                  run.parts[i].ntasks));
    char key[128];
    snprintf (key, sizeof (key), "job.%d.info", run.jobid);
    json_t *info = json_pack ("{s:O s:i s:O s:s s:f}", "command", cmd, "ntasks", (int)ntasks,
                              "layout", layout, "mapping", mapping, "submit", walltime ());
    if (kvs_put (run.h, key, info) < 0 || kvs_commit (run.h, 0) < 0)
        log_err_exit ("recording the job in the KVS");
    json_decref (info);
    if (run.verbose)
        log_msg ("job %d: %ld tasks on %d brokers, mapping %s", run.jobid, ntasks,
                 run.nparts, mapping[0] ? mapping : "(none)");

    /* signals */
    sigset_t set;
    sigemptyset (&set);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGTERM);
    sigaddset (&set, SIGHUP);
    sigprocmask (SIG_BLOCK, &set, NULL);
    int *sigfd = xzmalloc (sizeof (int));
    if ((*sigfd = signalfd (-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        log_err_exit ("signalfd");
    canopy_aux_set (run.h, "sigfd", sigfd, free);
    canopy_reactor_t *r = canopy_get_reactor (run.h);
    canopy_watcher_t *sw = canopy_fd_watcher_create (r, *sigfd, CANOPY_POLLIN,
                                                     signal_cb, &run);
    canopy_watcher_unref (sw);
    canopy_watcher_start (sw);

    /* start */
    run.status = xzmalloc (sizeof (int) * ntasks);
    for (long i = 0; i < ntasks; i++)
        run.status[i] = -1;
    if (run.label) {
        run.linebuf[0] = xzmalloc (sizeof (char *) * ntasks);
        run.linebuf[1] = xzmalloc (sizeof (char *) * ntasks);
    }
    char cwd[4096];
    if (!getcwd (cwd, sizeof (cwd)))
        strcpy (cwd, "/");
    json_t *env = env_json (extra, nextra);
    for (int i = 0; i < run.nparts; i++) {
        struct broker_part *p = &run.parts[i];
        json_t *tr = json_array ();
        for (int t = 0; t < p->ntasks; t++)
            json_array_append_new (tr, json_integer (p->first + t));
        json_t *req = json_pack ("{s:i s:i s:i s:o s:O s:O s:s s:s s:s}",
                                 "jobid", run.jobid, "size", (int)ntasks,
                                 "nbrokers", run.nparts, "ranks", tr, "argv", cmd,
                                 "env", env, "cwd", cwd, "mapping", mapping,
                                 "bind", bind);
        char *s = json_dumps (req, JSON_COMPACT);
        json_decref (req);
        if (!(p->f = canopy_rpc (run.h, "exec.start", s, p->rank, CANOPY_RPC_STREAMING))
            || canopy_future_aux_set (p->f, "part", p, NULL) < 0
            || canopy_future_then (p->f, -1, stream_cb, &run) < 0)
            log_err_exit ("exec.start on broker %u", p->rank);
        free (s);
    }
    json_decref (env);
    if (canopy_reactor_run (r, 0) < 0 && run.nended < run.nparts)
        log_msg ("lost the connection to the broker");
    flush_labels (&run);

    /* outcome */
    int worst = 0;
    json_t *codes = json_array ();
    for (long i = 0; i < ntasks; i++) {
        int code = run.status[i] < 0 ? 255 : status_code (run.status[i]);
        json_array_append_new (codes, json_integer (code));
        if (code > worst)
            worst = code;
    }
    int rc = run.aborted ? run.abort_code
           : run.failed ? status_code (run.fail_status) : worst;
    if (rc == 0 && (run.failed || run.nexited < ntasks))
        rc = 1;
    double elapsed = monotime () - run.t0;
    snprintf (key, sizeof (key), "job.%d.exit", run.jobid);
    (void)kvs_put (run.h, key, codes);
    snprintf (key, sizeof (key), "job.%d.timing", run.jobid);
    json_t *timing = json_pack ("{s:f s:i}", "elapsed", elapsed, "status", rc);
    (void)kvs_put (run.h, key, timing);
    if (kvs_commit (run.h, 0) < 0)
        log_msg ("could not record the job's end in the KVS");
    json_decref (timing);
    json_decref (codes);
    if (run.verbose)
        log_msg ("job %d: done in %.3f s, status %d", run.jobid, elapsed, rc);
    for (int i = 0; i < run.nparts; i++)
        canopy_future_destroy (run.parts[i].f);
    canopy_watcher_destroy (sw);
    json_decref (cmd);
    json_decref (layout);
    canopy_close (run.h);
    /* Free everything so that leak checkers (ASan, valgrind) stay quiet. */
    free (run.linebuf[0]);
    free (run.linebuf[1]);
    free (run.status);
    free (run.parts);
    free (extra);
    return rc;
}
