/* job.c - see job.h.
 *
 * PMI storage is the KVS, under the job's directory "job.<id>.pmi":
 * - put: into this job's pending transaction (no message);
 * - barrier (all local tasks entered): the transaction is this broker's
 *   contribution to the KVS fence "job.<id>.pmi.barrier.<n>" over the
 *   job's brokers, so every broker sends its local tasks' puts as one
 *   message, merged on the way up; when the fence returns, this broker
 *   has the new root and the tasks get barrier_out;
 * - get: a KVS lookup on this broker; a missing key is ENOENT at once.
 *   Between two barriers an answer cannot change, so the broker's tasks
 *   share lookups (pmicache.c): one lookup per key per epoch, however many
 *   tasks ask (an MPI start-up has every task read every card).
 * PMI keys may contain '.', which the KVS uses as a separator: '%' and
 * '.' are escaped as %25 and %2E.
 * If the job ends with a barrier fence still open, the fence is aborted
 * so that no other broker waits for it.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <sched.h>
#include <unistd.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <canopy/canopy.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/base64.h"
#include "src/common/libkvs/kvs_txn.h"
#include "src/common/libpmi/pmi_server.h"
#include "exec_ctx.h"
#include "task.h"
#include "pmicache.h"
#include "job.h"

struct pending_get {           /* one KVS lookup, for every task waiting */
    struct job *job;
    char *key;                  /* the KVS key (the cache's key too) */
    canopy_future_t *f;
    struct list_node node;
};

struct job {
    struct exec_ctx *ctx;
    struct list_node node;      /* on ctx->jobs (exec.c) */
    canopy_msg_t *req;
    char owner[CANOPY_MSG_MAX_ROUTE_LEN + 1];
    int jobid;
    int size;
    int nbrokers;
    char **argv;
    char **envp;
    char *cwd;
    bool bind;
    char *mapping;
    int ntasks;
    int *ranks;
    struct task **tasks;
    char *pmistate;             /* per local task: 'n'one, 'f'inalized, 'd'ied */
    int nexited;
    pmi_server_t *pmi;
    kvs_txn_t *txn;
    int barrier_seq;
    canopy_future_t *barrier_f;
    char barrier_name[128];
    struct list_node gets;
    pmicache_t *cache;
    bool finished;
};

static int local_index (struct job *job, int rank)
{
    for (int i = 0; i < job->ntasks; i++) {
        if (job->ranks[i] == rank)
            return i;
    }
    return -1;
}

static void stream (struct job *job, const char *fmt, ...)
{
    /* responses to a vanished requester are dropped by the broker */
    va_list ap;
    json_t *o;
    char *s;
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o || !(s = json_dumps (o, JSON_COMPACT))) {
        json_decref (o);
        return;
    }
    json_decref (o);
    (void)canopy_respond (job->ctx->h, job->req, s);
    free (s);
}

static void kill_all (struct job *job, int signum)
{
    for (int i = 0; i < job->ntasks; i++) {
        if (job->tasks[i] && !task_exited (job->tasks[i]))
            (void)task_kill (job->tasks[i], signum);
    }
}

static void fail (struct job *job, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void fail (struct job *job, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    stream (job, "{s:s s:s}", "type", "error", "msg", buf);
    kill_all (job, SIGKILL);
}

/* PMI keys in the KVS */

static char *pmi_key (struct job *job, const char *key)
{
    size_t len = strlen (key);
    char *buf = malloc (len * 3 + 64);
    char *p;
    if (!buf)
        return NULL;
    p = buf + sprintf (buf, "job.%d.pmi.", job->jobid);
    for (const char *s = key; *s; s++) {
        if (*s == '.' || *s == '%')
            p += sprintf (p, "%%%02X", (unsigned char)*s);
        else
            *p++ = *s;
    }
    *p = '\0';
    return buf;
}

/* PMI engine callbacks */

static void pmi_send (void *arg, int rank, const char *line, size_t len)
{
    struct job *job = arg;
    int i = local_index (job, rank);
    if (i >= 0 && task_pmi_send (job->tasks[i], line, len) < 0 && errno == ENOBUFS)
        fail (job, "task %d does not read its PMI answers", rank);
}

static int pmi_put (void *arg, int rank, const char *key, const char *value)
{
    struct job *job = arg;
    char *k = pmi_key (job, key);
    int rc;
    if (!k)
        return -1;
    rc = kvs_txn_put_raw (job->txn, k, value, strlen (value));
    free (k);
    return rc;
}

static void deliver (int rank, int errnum, const char *value, void *arg)
{
    struct job *job = arg;
    (void)pmi_server_get_respond (job->pmi, rank, errnum, value);
}

static void pending_get_free (struct pending_get *pg)
{
    if (pg) {
        canopy_future_destroy (pg->f);
        free (pg->key);
        free (pg);
    }
}

static void get_continuation (canopy_future_t *f, void *arg)
{
    struct pending_get *pg = arg;
    struct job *job = pg->job;
    const void *data;
    size_t len;
    char *s = NULL;
    int errnum = 0;

    if (kvs_lookup_get_raw (f, &data, &len) < 0)
        errnum = errno;
    else if (!(s = malloc (len + 1)))
        errnum = ENOMEM;
    else {
        memcpy (s, data, len);
        s[len] = '\0';
    }
    list_del (&pg->node);
    (void)pmicache_fill (job->cache, pg->key, errnum, s, deliver, job);
    free (s);
    pending_get_free (pg);
}

static int pmi_get (void *arg, int rank, const char *key)
{
    struct job *job = arg;
    struct pending_get *pg;
    const char *value;
    int errnum;
    char *k = pmi_key (job, key);
    int rc;

    if (!k)
        return -1;
    if ((rc = pmicache_get (job->cache, k, rank, &errnum, &value)) < 0) {
        free (k);
        return -1;
    }
    if (rc == PMICACHE_HIT) {
        free (k);
        (void)pmi_server_get_respond (job->pmi, rank, errnum, value);
        return 0;
    }
    if (rc == PMICACHE_WAIT) {
        free (k);
        return 0;
    }
    /* a miss: this rank waits in the cache for the lookup started here */
    if (!(pg = calloc (1, sizeof (*pg)))) {
        errnum = ENOMEM;
        goto fail;
    }
    pg->job = job;
    pg->key = k;
    k = NULL;
    list_node_init (&pg->node);
    if (!(pg->f = kvs_lookup (job->ctx->h, pg->key, 0))
        || canopy_future_then (pg->f, -1, get_continuation, pg) < 0) {
        errnum = errno ? errno : ENOMEM;
        k = pg->key;
        pg->key = NULL;
        pending_get_free (pg);
        goto fail;
    }
    list_add_tail (&job->gets, &pg->node);
    return 0;
fail:
    /* answer everyone waiting for this key (only this rank, in fact) */
    (void)pmicache_fill (job->cache, k, errnum, NULL, deliver, job);
    free (k);
    return 0;
}

static void barrier_continuation (canopy_future_t *f, void *arg)
{
    struct job *job = arg;
    int errnum = 0;
    if (canopy_future_get (f, NULL) < 0) {
        errnum = errno;
        const char *s = canopy_future_error_string (f);
        fail (job, "PMI barrier failed: %s", s ? s : strerror (errnum));
    }
    job->barrier_f = NULL;
    canopy_future_destroy (f);
    pmicache_clear (job->cache);    /* what the barrier published is visible */
    (void)pmi_server_barrier_done (job->pmi, errnum);
}

static int pmi_barrier (void *arg)
{
    struct job *job = arg;
    void *buf;
    size_t len;
    kvs_txn_t *next;

    if (!(next = kvs_txn_create ()))
        return -1;
    snprintf (job->barrier_name, sizeof (job->barrier_name),
              "job.%d.pmi.barrier.%d", job->jobid, job->barrier_seq++);
    if (kvs_txn_encode (job->txn, job->barrier_name, job->nbrokers, 0, &buf, &len) < 0) {
        kvs_txn_destroy (next);
        return -1;
    }
    job->barrier_f = canopy_rpc_raw (job->ctx->h, "kvs.fence", buf, len,
                                     CANOPY_NODEID_ANY, 0);
    free (buf);
    if (!job->barrier_f
        || canopy_future_then (job->barrier_f, -1, barrier_continuation, job) < 0) {
        int saved_errno = errno;
        canopy_future_destroy (job->barrier_f);
        job->barrier_f = NULL;
        kvs_txn_destroy (next);
        errno = saved_errno;
        return -1;
    }
    kvs_txn_destroy (job->txn);
    job->txn = next;
    return 0;
}

static void pmi_abort (void *arg, int rank, int exitcode, const char *msg)
{
    struct job *job = arg;
    stream (job, "{s:s s:i s:i s:s}", "type", "abort", "rank", rank,
            "code", exitcode, "msg", msg ? msg : "");
    kill_all (job, SIGKILL);
}

static void pmi_finalize (void *arg, int rank)
{
    struct job *job = arg;
    int i = local_index (job, rank);
    if (i >= 0)
        job->pmistate[i] = 'f';
}

static const struct pmi_server_ops pmi_ops = {
    .send = pmi_send,
    .put = pmi_put,
    .get = pmi_get,
    .barrier = pmi_barrier,
    .finalize = pmi_finalize,
    .abort = pmi_abort,
};

/* Task callbacks */

static void task_output (struct task *t, int stream_id, const void *data, size_t len,
                         void *arg)
{
    struct job *job = arg;
    char *s = base64_encode (data, len);
    if (!s)
        return;
    stream (job, "{s:s s:i s:s s:s}", "type", "output", "rank", task_rank (t),
            "stream", stream_id == TASK_STDOUT ? "stdout" : "stderr", "data", s);
    free (s);
}

static void task_pmi_line (struct task *t, const char *line, size_t len, void *arg)
{
    struct job *job = arg;
    if (pmi_server_request (job->pmi, task_rank (t), line, len) < 0) {
        fail (job, "task %d sent a bad PMI request (%s)", task_rank (t),
              errno == EMSGSIZE ? "line too long" : "protocol error");
    }
}

static void task_pmi_eof (struct task *t, void *arg)
{
    struct job *job = arg;
    int i = local_index (job, task_rank (t));
    int rc = pmi_server_disconnect (job->pmi, task_rank (t));
    if (i >= 0 && rc == 0 && pmi_server_task_initialized (job->pmi, task_rank (t)))
        job->pmistate[i] = 'd';
}

static void task_exit (struct task *t, int status, int exec_errnum, void *arg)
{
    struct job *job = arg;
    int i = local_index (job, task_rank (t));
    const char *pmi = "none";
    if (i >= 0 && job->pmistate[i] == 'f')
        pmi = "finalized";
    else if (i >= 0 && job->pmistate[i] == 'd')
        pmi = "died";
    stream (job, "{s:s s:i s:i s:i s:s}", "type", "exit", "rank", task_rank (t),
            "status", status, "errnum", exec_errnum, "pmi", pmi);
    if (++job->nexited == job->ntasks) {
        job->finished = true;
        (void)canopy_respond_error (job->ctx->h, job->req, ENODATA, NULL);
        exec_job_finished (job->ctx, job);
    }
}

static const struct task_ops task_ops = {
    .output = task_output,
    .pmi_line = task_pmi_line,
    .pmi_eof = task_pmi_eof,
    .exit = task_exit,
};

/* Construction */

static char **argv_from_json (json_t *a)
{
    size_t i;
    json_t *v;
    char **argv;
    if (!json_is_array (a) || json_array_size (a) == 0)
        return NULL;
    if (!(argv = calloc (json_array_size (a) + 1, sizeof (char *))))
        return NULL;
    json_array_foreach (a, i, v) {
        if (!json_is_string (v) || !(argv[i] = strdup (json_string_value (v)))) {
            for (size_t j = 0; j < i; j++)
                free (argv[j]);
            free (argv);
            return NULL;
        }
    }
    return argv;
}

static void strv_free (char **v)
{
    if (v) {
        for (int i = 0; v[i]; i++)
            free (v[i]);
        free (v);
    }
}

static bool is_ours (const char *name)
{
    return !strncmp (name, "PMI_", 4) || !strcmp (name, "CANOPY_URI")
           || !strcmp (name, "CANOPY_JOB_ID") || !strcmp (name, "FLUX_JOB_ID")
           || !strcmp (name, "FLUX_PMI_LIBRARY_PATH");
}

/* CPUs this broker's tasks may run on (its affinity mask). */
static int cpus_available (void)
{
    cpu_set_t set;
    long n;

    CPU_ZERO (&set);
    if (sched_getaffinity (0, sizeof (set), &set) == 0 && CPU_COUNT (&set) > 0)
        return CPU_COUNT (&set);
    n = sysconf (_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Oversubscribed (more local tasks than CPUs): tell OpenMPI to yield the
 * CPU while it waits, as mpirun does when it sees oversubscription, unless
 * the user said otherwise.  Spinning tasks that share CPUs slow each other
 * down: an OpenMPI hello of 16 tasks on 2 CPUs took 0.45-0.50 s spinning
 * and 0.31-0.37 s yielding (mpirun: 0.36-0.46 s).
 */
static bool want_yield (struct job *job, json_t *env)
{
    return job->ntasks > cpus_available ()
        && !json_object_get (env, "OMPI_MCA_mpi_yield_when_idle");
}

/* The task environment: the requester's, without our variables, plus
 * ours (PMI_RANK differs per task: the slot is filled in at start).
 */
static char **env_build (struct job *job, json_t *env)
{
    size_t n = json_is_object (env) ? json_object_size (env) : 0;
    char **envp = calloc (n + 16, sizeof (char *));
    const char *name;
    json_t *v;
    int i = 0;

    if (!envp)
        return NULL;
    if (n > 0) {
        json_object_foreach (env, name, v) {
            if (!json_is_string (v) || is_ours (name) || strchr (name, '='))
                continue;
            if (asprintf (&envp[i], "%s=%s", name, json_string_value (v)) < 0)
                goto error;
            i++;
        }
    }
    if (asprintf (&envp[i++], "CANOPY_URI=%s", job->ctx->local_uri) < 0
        || asprintf (&envp[i++], "CANOPY_JOB_ID=%d", job->jobid) < 0
        || asprintf (&envp[i++], "FLUX_JOB_ID=%d", job->jobid) < 0
        || asprintf (&envp[i++], "FLUX_PMI_LIBRARY_PATH=%s", job->ctx->pmi_library) < 0
        || asprintf (&envp[i++], "PMI_FD=3") < 0
        || asprintf (&envp[i++], "PMI_SIZE=%d", job->size) < 0
        || asprintf (&envp[i++], "PMI_RANK=0") < 0)    /* slot rewritten per task */
        goto error;
    if (want_yield (job, env) && asprintf (&envp[i++], "OMPI_MCA_mpi_yield_when_idle=1") < 0)
        goto error;
    return envp;
error:
    strv_free (envp);
    return NULL;
}

struct job *job_create (struct exec_ctx *ctx, const canopy_msg_t *req,
                        canopy_error_t *error)
{
    struct job *job = NULL;
    json_t *argv = NULL, *env = NULL, *ranks = NULL;
    const char *cwd = NULL, *mapping = NULL, *bind = "none";
    int jobid, size, nbrokers;
    const char *sender = canopy_msg_route_last (req);

    if (canopy_msg_unpack (req, "{s:i s:i s:i s:o s:o s?o s?s s?s s?s}",
                           "jobid", &jobid, "size", &size, "nbrokers", &nbrokers,
                           "ranks", &ranks, "argv", &argv, "env", &env,
                           "cwd", &cwd, "mapping", &mapping, "bind", &bind) < 0
        || size < 1 || nbrokers < 1 || !json_is_array (ranks)
        || json_array_size (ranks) == 0 || json_array_size (ranks) > (size_t)size) {
        errno = EPROTO;
        errprintf (error, "malformed exec.start request");
        return NULL;
    }
    if (!(job = calloc (1, sizeof (*job))))
        goto nomem;
    job->ctx = ctx;
    list_node_init (&job->node);
    list_init (&job->gets);
    if (!(job->cache = pmicache_create ())) {
        free (job);
        job = NULL;
        goto nomem;
    }
    job->req = canopy_msg_incref ((canopy_msg_t *)req);
    snprintf (job->owner, sizeof (job->owner), "%s", sender ? sender : "");
    job->jobid = jobid;
    job->size = size;
    job->nbrokers = nbrokers;
    job->bind = !strcmp (bind, "core");
    job->ntasks = json_array_size (ranks);
    if (!(job->argv = argv_from_json (argv))) {
        errno = EINVAL;
        errprintf (error, "exec.start needs a command");
        goto error;
    }
    if ((cwd && !(job->cwd = strdup (cwd))) || (mapping && !(job->mapping = strdup (mapping)))
        || !(job->ranks = calloc (job->ntasks, sizeof (int)))
        || !(job->tasks = calloc (job->ntasks, sizeof (struct task *)))
        || !(job->pmistate = calloc (job->ntasks + 1, 1))
        || !(job->txn = kvs_txn_create ())
        || !(job->envp = env_build (job, env)))
        goto nomem;
    memset (job->pmistate, 'n', job->ntasks);
    for (int i = 0; i < job->ntasks; i++) {
        json_t *v = json_array_get (ranks, i);
        if (!json_is_integer (v) || json_integer_value (v) < 0
            || json_integer_value (v) >= size) {
            errno = EINVAL;
            errprintf (error, "task rank out of range");
            goto error;
        }
        job->ranks[i] = json_integer_value (v);
    }
    char kvsname[64];
    snprintf (kvsname, sizeof (kvsname), "canopy_job_%d", jobid);
    struct pmi_server_config cfg = {
        .size = size,
        .local_ranks = job->ranks,
        .nlocal = job->ntasks,
        .kvsname = kvsname,
        .process_mapping = job->mapping,
    };
    if (!(job->pmi = pmi_server_create (&cfg, &pmi_ops, job))) {
        errprintf (error, "cannot set up PMI for this job: %s", strerror (errno));
        goto error;
    }
    return job;
nomem:
    errno = ENOMEM;
    errprintf (error, "out of memory");
error:
    job_destroy (job);
    return NULL;
}

/* Tasks that could not be started count as exited with status 127. */
static void never_started (struct job *job, int from, int errnum)
{
    for (int i = from; i < job->ntasks; i++) {
        task_destroy (job->tasks[i]);
        job->tasks[i] = NULL;
        stream (job, "{s:s s:i s:i s:i s:s}", "type", "exit", "rank", job->ranks[i],
                "status", 127 << 8, "errnum", errnum, "pmi", "none");
        job->nexited++;
    }
    if (job->nexited == job->ntasks && !job->finished) {
        job->finished = true;
        (void)canopy_respond_error (job->ctx->h, job->req, ENODATA, NULL);
        exec_job_finished (job->ctx, job);
    }
}

int job_start (struct job *job, canopy_error_t *error)
{
    int rankslot = 0;
    while (job->envp[rankslot] && strncmp (job->envp[rankslot], "PMI_RANK=", 9))
        rankslot++;
    for (int i = 0; i < job->ntasks; i++) {
        char buf[32];
        snprintf (buf, sizeof (buf), "PMI_RANK=%d", job->ranks[i]);
        free (job->envp[rankslot]);
        if (!(job->envp[rankslot] = strdup (buf))
            || !(job->tasks[i] = task_create (job->ctx->r, job->ranks[i], &task_ops, job))
            || task_start (job->tasks[i], job->argv, job->envp, job->cwd, true,
                           job->bind ? i : -1,
                           job->ctx->have_task_cpus ? &job->ctx->task_cpus : NULL) < 0) {
            int errnum = errno;
            errprintf (error, "cannot start task %d: %s", job->ranks[i], strerror (errnum));
            stream (job, "{s:s s:s}", "type", "error", "msg", error->text);
            kill_all (job, SIGKILL);
            never_started (job, i, errnum);
            errno = errnum;
            return -1;
        }
    }
    return 0;
}

void job_abandon (struct job *job)
{
    if (!job->finished) {
        job->finished = true;
        (void)canopy_respond_error (job->ctx->h, job->req, ENOSYS,
                                    "exec service unloading");
    }
}

int job_signal (struct job *job, int signum)
{
    kill_all (job, signum);
    return 0;
}

int job_id (const struct job *job)
{
    return job->jobid;
}

const char *job_owner (const struct job *job)
{
    return job->owner;
}

bool job_done (const struct job *job)
{
    return job->finished;
}

int job_ntasks (const struct job *job)
{
    return job->ntasks;
}

void job_destroy (struct job *job)
{
    if (!job)
        return;
    int saved_errno = errno;
    if (job->barrier_f) {
        /* nobody else should wait for our part of this barrier */
        canopy_future_t *f = canopy_rpc_pack (job->ctx->h, "kvs.fence-abort", 0,
                                              CANOPY_RPC_NORESPONSE, "{s:s s:i}",
                                              "name", job->barrier_name,
                                              "errnum", ECONNRESET);
        canopy_future_destroy (f);
        canopy_future_destroy (job->barrier_f);
    }
    while (!list_empty (&job->gets)) {
        struct pending_get *pg = list_entry (job->gets.next, struct pending_get, node);
        list_del (&pg->node);
        pending_get_free (pg);
    }
    pmicache_destroy (job->cache);
    if (job->tasks) {
        for (int i = 0; i < job->ntasks; i++)
            task_destroy (job->tasks[i]);
    }
    pmi_server_destroy (job->pmi);
    kvs_txn_destroy (job->txn);
    strv_free (job->argv);
    strv_free (job->envp);
    free (job->tasks);
    free (job->ranks);
    free (job->pmistate);
    free (job->cwd);
    free (job->mapping);
    canopy_msg_decref (job->req);
    free (job);
    errno = saved_errno;
}
