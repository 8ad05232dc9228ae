/* pmi_server.c - PMI-1 simple wire protocol server engine (pmi_server.h).
 *
 * Design notes:
 * - One struct task per served rank, sorted by rank (binary search when a
 *   rank list was given, direct index otherwise).  A task is IDLE, waiting
 *   for a get result, waiting in the barrier, or inside a multi-line spawn
 *   request.  Only an IDLE task may send a request.
 * - Split-phase calls set the task's state BEFORE calling the owner, so the
 *   owner may answer from inside the callback; after the callback returns
 *   the engine looks at the state again instead of assuming anything.
 * - The barrier counts tasks that entered; when all served tasks are in,
 *   it is "pending" until the owner calls pmi_server_barrier_done().
 * - Every answer is formatted into one bounded buffer.  The maxima are
 *   checked at creation so that any valid put request and any get answer
 *   fit in PMI_WIRE_LINE_MAX; values handed back by the owner are checked
 *   again before they are sent.
 */
#include <stdlib.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <errno.h>
#include "pmi_wire.h"
#include "pmi_server.h"

#define KEYLEN_LIMIT 256        /* largest keylen_max accepted */
#define KVSNAME_LIMIT 256       /* largest kvsname_max accepted */
#define SPAWN_LINES_MAX 4096    /* lines in one spawn block */

enum task_state {
    TASK_IDLE,
    TASK_WAIT_GET,
    TASK_WAIT_BARRIER,
    TASK_SPAWN,
};

struct task {
    int rank;
    enum task_state state;
    bool initialized;           /* sent any request */
    bool finalized;
    bool closed;
    int spawn_lines;
    int spawn_total;            /* totspawns / spawnssofar of this block */
    int spawn_sofar;
    char key[KEYLEN_LIMIT];     /* key of the outstanding get */
};

struct pmi_server {
    struct pmi_server_config cfg;
    char *kvsname;
    char *mapping;
    struct pmi_server_ops ops;
    void *arg;
    struct task *tasks;
    int ntasks;
    bool all_ranks;             /* tasks[i].rank == i */
    int barrier_count;
    bool barrier_pending;
};

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

void pmi_server_destroy (pmi_server_t *srv)
{
    if (srv) {
        int saved_errno = errno;
        free (srv->tasks);
        free (srv->kvsname);
        free (srv->mapping);
        free (srv);
        errno = saved_errno;
    }
}

static bool config_valid (const struct pmi_server_config *cfg)
{
    if (cfg->size < 1 || cfg->nlocal < 0 || (cfg->local_ranks && cfg->nlocal < 1)
        || (cfg->local_ranks && cfg->nlocal > cfg->size))
        return false;
    if (cfg->kvsname_max < 16 || cfg->kvsname_max > KVSNAME_LIMIT
        || cfg->keylen_max < 16 || cfg->keylen_max > KEYLEN_LIMIT
        || cfg->vallen_max < 16)
        return false;
    /* "cmd=put kvsname=K key=K value=V\n" must fit in a line */
    if (cfg->kvsname_max + cfg->keylen_max + cfg->vallen_max + 32 > PMI_WIRE_LINE_MAX)
        return false;
    if (!pmi_wire_token_valid (cfg->kvsname)
        || strlen (cfg->kvsname) >= (size_t)cfg->kvsname_max)
        return false;
    if (cfg->process_mapping
        && (!pmi_wire_value_valid (cfg->process_mapping)
            || strlen (cfg->process_mapping) >= (size_t)cfg->vallen_max))
        return false;
    if (cfg->universe_size < 0)
        return false;
    return true;
}

pmi_server_t *pmi_server_create (const struct pmi_server_config *cfg_in,
                                 const struct pmi_server_ops *ops, void *arg)
{
    struct pmi_server_config cfg;
    pmi_server_t *srv;

    if (!cfg_in || !ops || !ops->send || !ops->put || !ops->get || !ops->barrier) {
        errno = EINVAL;
        return NULL;
    }
    cfg = *cfg_in;
    if (!cfg.kvsname)
        cfg.kvsname = "kvs_0";
    if (cfg.kvsname_max == 0)
        cfg.kvsname_max = PMI_SERVER_KVSNAME_MAX;
    if (cfg.keylen_max == 0)
        cfg.keylen_max = PMI_SERVER_KEYLEN_MAX;
    if (cfg.vallen_max == 0)
        cfg.vallen_max = PMI_SERVER_VALLEN_MAX;
    if (cfg.universe_size == 0)
        cfg.universe_size = cfg.size;
    if (!cfg.local_ranks)
        cfg.nlocal = 0;
    if (!config_valid (&cfg)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(srv = calloc (1, sizeof (*srv))))
        goto nomem;
    srv->ops = *ops;
    srv->arg = arg;
    srv->ntasks = cfg.local_ranks ? cfg.nlocal : cfg.size;
    srv->all_ranks = cfg.local_ranks == NULL;
    if (!(srv->tasks = calloc (srv->ntasks, sizeof (struct task)))
        || !(srv->kvsname = strdup (cfg.kvsname))
        || (cfg.process_mapping && !(srv->mapping = strdup (cfg.process_mapping))))
        goto nomem;
    if (cfg.local_ranks) {
        int *sorted = malloc (sizeof (int) * cfg.nlocal);
        if (!sorted)
            goto nomem;
        memcpy (sorted, cfg.local_ranks, sizeof (int) * cfg.nlocal);
        qsort (sorted, cfg.nlocal, sizeof (int), cmp_int);
        for (int i = 0; i < cfg.nlocal; i++) {
            if (sorted[i] < 0 || sorted[i] >= cfg.size
                || (i > 0 && sorted[i] == sorted[i - 1])) {
                free (sorted);
                pmi_server_destroy (srv);
                errno = EINVAL;
                return NULL;
            }
            srv->tasks[i].rank = sorted[i];
        }
        free (sorted);
    }
    else {
        for (int i = 0; i < srv->ntasks; i++)
            srv->tasks[i].rank = i;
    }
    cfg.kvsname = srv->kvsname;
    cfg.process_mapping = srv->mapping;
    cfg.local_ranks = NULL;     /* not kept: the tasks array holds them */
    srv->cfg = cfg;
    return srv;
nomem:
    pmi_server_destroy (srv);
    errno = ENOMEM;
    return NULL;
}

static struct task *task_lookup (pmi_server_t *srv, int rank)
{
    int lo = 0, hi;

    if (!srv || rank < 0)
        return NULL;
    if (srv->all_ranks)
        return rank < srv->ntasks ? &srv->tasks[rank] : NULL;
    hi = srv->ntasks - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (srv->tasks[mid].rank == rank)
            return &srv->tasks[mid];
        if (srv->tasks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static void sendf (pmi_server_t *srv, struct task *t, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void sendf (pmi_server_t *srv, struct task *t, const char *fmt, ...)
{
    char buf[PMI_WIRE_LINE_MAX + 1];
    va_list ap;
    int n;

    if (t->closed)
        return;
    va_start (ap, fmt);
    n = vsnprintf (buf, sizeof (buf) - 1, fmt, ap);
    va_end (ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof (buf) - 1)
        n = sizeof (buf) - 2;   /* cannot happen: inputs are bounded */
    buf[n++] = '\n';
    buf[n] = '\0';
    srv->ops.send (srv->arg, t->rank, buf, n);
}

/* A short reason for an errno, usable as a msg= token. */
static const char *reason (char *buf, size_t size, int errnum)
{
    return pmi_wire_sanitize (buf, size, strerror (errnum));
}

/* Checks shared by put and get.  Returns the key, or NULL after sending
 * an error answer built from 'result'.
 */
static const char *check_kvs_request (pmi_server_t *srv, struct task *t,
                                      const struct pmi_wire_msg *msg,
                                      const char *result)
{
    const char *kvsname = pmi_wire_get (msg, "kvsname");
    const char *key = pmi_wire_get (msg, "key");

    if (!kvsname || !key) {
        sendf (srv, t, "cmd=%s rc=-1 msg=missing_kvsname_or_key", result);
        return NULL;
    }
    if (strcmp (kvsname, srv->kvsname) != 0) {
        sendf (srv, t, "cmd=%s rc=-1 msg=unknown_kvsname", result);
        return NULL;
    }
    if (!pmi_wire_token_valid (key)) {
        sendf (srv, t, "cmd=%s rc=-1 msg=invalid_key", result);
        return NULL;
    }
    if (strlen (key) >= (size_t)srv->cfg.keylen_max) {
        sendf (srv, t, "cmd=%s rc=-1 msg=key_too_long", result);
        return NULL;
    }
    return key;
}

static void handle_put (pmi_server_t *srv, struct task *t,
                        const struct pmi_wire_msg *msg)
{
    const char *key, *value;
    char why[64];

    if (!(key = check_kvs_request (srv, t, msg, "put_result")))
        return;
    if (!(value = pmi_wire_get (msg, "value"))) {
        sendf (srv, t, "cmd=put_result rc=-1 msg=missing_value");
        return;
    }
    if (strlen (value) >= (size_t)srv->cfg.vallen_max) {
        sendf (srv, t, "cmd=put_result rc=-1 msg=value_too_long");
        return;
    }
    if (srv->ops.put (srv->arg, t->rank, key, value) < 0) {
        sendf (srv, t, "cmd=put_result rc=-1 msg=%s", reason (why, sizeof (why), errno));
        return;
    }
    sendf (srv, t, "cmd=put_result rc=0 msg=success");
}

static void get_answer (pmi_server_t *srv, struct task *t, int errnum)
{
    char why[64];
    if (errnum == ENOENT)
        sendf (srv, t, "cmd=get_result rc=-1 msg=key_%s_not_found", t->key);
    else
        sendf (srv, t, "cmd=get_result rc=-1 msg=%s", reason (why, sizeof (why), errnum));
}

static void handle_get (pmi_server_t *srv, struct task *t,
                        const struct pmi_wire_msg *msg)
{
    const char *key;

    if (!(key = check_kvs_request (srv, t, msg, "get_result")))
        return;
    if (srv->mapping && !strcmp (key, "PMI_process_mapping")) {
        sendf (srv, t, "cmd=get_result rc=0 msg=success value=%s", srv->mapping);
        return;
    }
    snprintf (t->key, sizeof (t->key), "%s", key);
    t->state = TASK_WAIT_GET;
    if (srv->ops.get (srv->arg, t->rank, t->key) < 0 && t->state == TASK_WAIT_GET) {
        t->state = TASK_IDLE;
        get_answer (srv, t, errno);
    }
}

int pmi_server_get_respond (pmi_server_t *srv, int rank, int errnum,
                            const char *value)
{
    struct task *t = task_lookup (srv, rank);

    if (!t) {
        errno = EINVAL;
        return -1;
    }
    if (t->closed) {
        errno = ENOTCONN;
        return -1;
    }
    if (t->state != TASK_WAIT_GET) {
        errno = EINVAL;
        return -1;
    }
    t->state = TASK_IDLE;
    if (errnum != 0) {
        get_answer (srv, t, errnum);
        return 0;
    }
    if (!value || !pmi_wire_value_valid (value)
        || strlen (value) >= (size_t)srv->cfg.vallen_max) {
        sendf (srv, t, "cmd=get_result rc=-1 msg=invalid_value");
        errno = EINVAL;
        return -1;
    }
    sendf (srv, t, "cmd=get_result rc=0 msg=success value=%s", value);
    return 0;
}

static void handle_barrier (pmi_server_t *srv, struct task *t)
{
    t->state = TASK_WAIT_BARRIER;
    if (++srv->barrier_count < srv->ntasks)
        return;
    srv->barrier_pending = true;
    if (srv->ops.barrier (srv->arg) < 0 && srv->barrier_pending)
        (void)pmi_server_barrier_done (srv, errno ? errno : EIO);
}

int pmi_server_barrier_done (pmi_server_t *srv, int errnum)
{
    char why[64];

    if (!srv || !srv->barrier_pending) {
        errno = EINVAL;
        return -1;
    }
    srv->barrier_pending = false;
    srv->barrier_count = 0;
    for (int i = 0; i < srv->ntasks; i++) {
        struct task *t = &srv->tasks[i];
        if (t->state != TASK_WAIT_BARRIER)
            continue;
        t->state = TASK_IDLE;
        if (errnum == 0)
            sendf (srv, t, "cmd=barrier_out rc=0");
        else
            sendf (srv, t, "cmd=barrier_out rc=-1 msg=%s",
                   reason (why, sizeof (why), errnum));
    }
    return 0;
}

static void handle_init (pmi_server_t *srv, struct task *t,
                         const struct pmi_wire_msg *msg)
{
    int version = 1;

    if (pmi_wire_get (msg, "pmi_version")
        && pmi_wire_get_int (msg, "pmi_version", &version) < 0)
        version = -1;
    sendf (srv, t, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=%d",
           version == 1 ? 0 : -1);
}

static int handle_initack (pmi_server_t *srv, struct task *t,
                           const struct pmi_wire_msg *msg)
{
    int id;

    if (pmi_wire_get_int (msg, "pmiid", &id) < 0 || id != t->rank) {
        errno = EPROTO;
        return -1;
    }
    sendf (srv, t, "cmd=initack");
    sendf (srv, t, "cmd=set size=%d", srv->cfg.size);
    sendf (srv, t, "cmd=set rank=%d", t->rank);
    sendf (srv, t, "cmd=set debug=%d", srv->cfg.debug);
    return 0;
}

static void handle_abort (pmi_server_t *srv, struct task *t,
                          const struct pmi_wire_msg *msg)
{
    int code = 1;
    const char *text = pmi_wire_get (msg, "error_msg");

    if (!text)
        text = pmi_wire_get (msg, "msg");
    if (pmi_wire_get_int (msg, "exitcode", &code) < 0)
        code = 1;
    if (srv->ops.abort)
        srv->ops.abort (srv->arg, t->rank, code, text);
}

static void handle_finalize (pmi_server_t *srv, struct task *t)
{
    t->finalized = true;
    sendf (srv, t, "cmd=finalize_ack");
    if (srv->ops.finalize)
        srv->ops.finalize (srv->arg, t->rank);
}

/* A line inside "mcmd=spawn" ... "endcmd".  Arguments may contain spaces,
 * so these lines are not parsed as tokens; only the counters matter.
 */
static int spawn_line (pmi_server_t *srv, struct task *t, const char *line, size_t len)
{
    char buf[64];

    if (len > PMI_WIRE_LINE_MAX || memchr (line, '\0', len)
        || ++t->spawn_lines > SPAWN_LINES_MAX) {
        errno = len > PMI_WIRE_LINE_MAX ? EMSGSIZE : EPROTO;
        return -1;
    }
    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len >= sizeof (buf))
        return 0;               /* a long argument: nothing we need */
    memcpy (buf, line, len);
    buf[len] = '\0';
    if (!strncmp (buf, "totspawns=", 10))
        t->spawn_total = atoi (buf + 10);
    else if (!strncmp (buf, "spawnssofar=", 12))
        t->spawn_sofar = atoi (buf + 12);
    else if (!strcmp (buf, "endcmd")) {
        t->state = TASK_IDLE;
        /* the client sends totspawns blocks, then waits for one answer */
        if (t->spawn_sofar >= t->spawn_total)
            sendf (srv, t, "cmd=spawn_result rc=-1 msg=spawn_is_not_supported");
    }
    return 0;
}

int pmi_server_request (pmi_server_t *srv, int rank, const char *line, size_t len)
{
    struct pmi_wire_msg msg;
    struct task *t = task_lookup (srv, rank);
    const char *cmd;

    if (!t || !line) {
        errno = EINVAL;
        return -1;
    }
    if (t->closed) {
        errno = ENOTCONN;
        return -1;
    }
    if (t->state == TASK_SPAWN)
        return spawn_line (srv, t, line, len);
    if (t->state != TASK_IDLE) {
        errno = EPROTO;         /* a second request in flight */
        return -1;
    }
    if (pmi_wire_parse (&msg, line, len) < 0)
        return -1;
    if (!(cmd = pmi_wire_cmd (&msg))) {
        errno = EPROTO;
        return -1;
    }
    t->initialized = true;
    if (!strcmp (msg.fields[0].key, "mcmd")) {
        if (strcmp (cmd, "spawn") != 0 || msg.nfields != 1) {
            errno = EPROTO;
            return -1;
        }
        t->state = TASK_SPAWN;
        t->spawn_lines = 0;
        t->spawn_total = t->spawn_sofar = 0;
        return 0;
    }
    if (!strcmp (cmd, "init"))
        handle_init (srv, t, &msg);
    else if (!strcmp (cmd, "get_maxes"))
        sendf (srv, t, "cmd=maxes kvsname_max=%d keylen_max=%d vallen_max=%d",
               srv->cfg.kvsname_max, srv->cfg.keylen_max, srv->cfg.vallen_max);
    else if (!strcmp (cmd, "get_appnum"))
        sendf (srv, t, "cmd=appnum appnum=%d", srv->cfg.appnum);
    else if (!strcmp (cmd, "get_my_kvsname"))
        sendf (srv, t, "cmd=my_kvsname kvsname=%s", srv->kvsname);
    else if (!strcmp (cmd, "get_universe_size"))
        sendf (srv, t, "cmd=universe_size size=%d", srv->cfg.universe_size);
    else if (!strcmp (cmd, "put"))
        handle_put (srv, t, &msg);
    else if (!strcmp (cmd, "get"))
        handle_get (srv, t, &msg);
    else if (!strcmp (cmd, "barrier_in"))
        handle_barrier (srv, t);
    else if (!strcmp (cmd, "finalize"))
        handle_finalize (srv, t);
    else if (!strcmp (cmd, "abort"))
        handle_abort (srv, t, &msg);
    else if (!strcmp (cmd, "initack"))
        return handle_initack (srv, t, &msg);
    else if (!strcmp (cmd, "publish_name"))
        sendf (srv, t, "cmd=publish_result rc=-1 info=not_supported "
               "msg=publish_name_is_not_supported");
    else if (!strcmp (cmd, "unpublish_name"))
        sendf (srv, t, "cmd=unpublish_result rc=-1 info=not_supported "
               "msg=unpublish_name_is_not_supported");
    else if (!strcmp (cmd, "lookup_name"))
        sendf (srv, t, "cmd=lookup_result rc=-1 info=not_supported "
               "msg=lookup_name_is_not_supported");
    else if (!strcmp (cmd, "getbyidx"))
        sendf (srv, t, "cmd=getbyidx_results rc=-1 reason=not_supported "
               "msg=getbyidx_is_not_supported");
    else
        sendf (srv, t, "cmd=%.64s_result rc=-1 msg=unknown_command", cmd);
    return 0;
}

int pmi_server_disconnect (pmi_server_t *srv, int rank)
{
    struct task *t = task_lookup (srv, rank);

    if (!t) {
        errno = EINVAL;
        return -1;
    }
    t->closed = true;
    if (t->state == TASK_WAIT_GET || t->state == TASK_SPAWN)
        t->state = TASK_IDLE;
    return t->finalized ? 1 : 0;
}

bool pmi_server_task_initialized (pmi_server_t *srv, int rank)
{
    struct task *t = task_lookup (srv, rank);
    return t ? t->initialized : false;
}

int pmi_server_initack_rank (const char *line, size_t len)
{
    struct pmi_wire_msg msg;
    const char *cmd;
    int id;

    if (!line || pmi_wire_parse (&msg, line, len) < 0
        || !(cmd = pmi_wire_cmd (&msg)) || strcmp (cmd, "initack") != 0
        || pmi_wire_get_int (&msg, "pmiid", &id) < 0 || id < 0) {
        errno = EPROTO;
        return -1;
    }
    return id;
}
