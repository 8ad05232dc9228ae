/* exec.c - the exec service: start and signal the tasks of parallel jobs
 * on this broker (issue: 'canopy run').
 *
 *   exec.start  (streaming) start a job's local tasks; see job.h for the
 *               stream; the request's sender owns the job
 *   exec.signal {jobid, signum}   signal a job's local tasks
 *   exec.jobid  (rank 0) a new job id {jobid}
 *   exec.list   {jobs: [{jobid, tasks, owner}]}
 *   exec.disconnect  the owner went away: kill its jobs here
 *
 * Tasks are children of the broker process, watched with pidfds
 * (procwatch), so the broker's other threads are not disturbed.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <canopy/canopy.h>
#include "src/common/libutil/installpaths.h"
#include "src/common/libutil/cpulist.h"
#include "exec_ctx.h"
#include "job.h"

CANOPY_MOD_NAME ("exec");

struct jobnode {
    struct list_node node;
    struct job *job;
    bool dead;
};

static struct jobnode *find_job (struct exec_ctx *ctx, int jobid)
{
    struct list_node *pos;
    list_for_each (pos, &ctx->jobs) {
        struct jobnode *jn = list_entry (pos, struct jobnode, node);
        if (!jn->dead && job_id (jn->job) == jobid)
            return jn;
    }
    return NULL;
}

void exec_job_finished (struct exec_ctx *ctx, struct job *job)
{
    struct list_node *pos;
    list_for_each (pos, &ctx->jobs) {
        struct jobnode *jn = list_entry (pos, struct jobnode, node);
        if (jn->job == job)
            jn->dead = true;
    }
    canopy_watcher_start (ctx->reaper);     /* free it outside its callbacks */
}

static void reaper_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct exec_ctx *ctx = arg;
    struct list_node *pos, *tmp;
    list_for_each_safe (pos, tmp, &ctx->jobs) {
        struct jobnode *jn = list_entry (pos, struct jobnode, node);
        if (jn->dead) {
            list_del (&jn->node);
            job_destroy (jn->job);
            free (jn);
            ctx->njobs--;
        }
    }
    canopy_watcher_stop (w);
}

static void start_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct exec_ctx *ctx = arg;
    canopy_error_t error;
    struct job *job;
    struct jobnode *jn;

    if (!canopy_msg_has_flag (msg, CANOPY_MSGFLAG_STREAMING)) {
        canopy_respond_error (h, msg, EPROTO, "exec.start must be streaming");
        return;
    }
    if (!(job = job_create (ctx, msg, &error))) {
        canopy_respond_error (h, msg, errno, error.text);
        return;
    }
    if (find_job (ctx, job_id (job))) {
        canopy_respond_error (h, msg, EEXIST, "job id already running here");
        job_destroy (job);
        return;
    }
    if (!(jn = calloc (1, sizeof (*jn)))) {
        canopy_respond_error (h, msg, ENOMEM, NULL);
        job_destroy (job);
        return;
    }
    jn->job = job;
    list_add_tail (&ctx->jobs, &jn->node);
    ctx->njobs++;
    /* On failure the job reports it and the exits of the tasks that did
     * start end the stream (job_start handles the ones that did not).
     */
    (void)job_start (job, &error);
}

static void signal_cb (canopy_t *h, canopy_msg_handler_t *mh,
                       const canopy_msg_t *msg, void *arg)
{
    struct exec_ctx *ctx = arg;
    int jobid, signum;
    struct jobnode *jn;

    if (canopy_msg_unpack (msg, "{s:i s:i}", "jobid", &jobid, "signum", &signum) < 0
        || signum < 1 || signum >= NSIG) {
        canopy_respond_error (h, msg, EPROTO, "malformed exec.signal");
        return;
    }
    if (!(jn = find_job (ctx, jobid))) {
        canopy_respond_error (h, msg, ENOENT, "no such job here");
        return;
    }
    job_signal (jn->job, signum);
    canopy_respond (h, msg, NULL);
}

static void jobid_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct exec_ctx *ctx = arg;
    if (ctx->rank != 0) {
        canopy_respond_error (h, msg, EINVAL, "job ids come from rank 0");
        return;
    }
    canopy_respond_pack (h, msg, "{s:i}", "jobid", ctx->next_jobid++);
}

static void list_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    struct exec_ctx *ctx = arg;
    json_t *a = json_array ();
    struct list_node *pos;
    list_for_each (pos, &ctx->jobs) {
        struct jobnode *jn = list_entry (pos, struct jobnode, node);
        if (jn->dead)
            continue;
        json_array_append_new (a, json_pack ("{s:i s:i s:s}", "jobid", job_id (jn->job),
                                             "tasks", job_ntasks (jn->job),
                                             "owner", job_owner (jn->job)));
    }
    canopy_respond_pack (h, msg, "{s:o}", "jobs", a);
}

static void disconnect_cb (canopy_t *h, canopy_msg_handler_t *mh,
                           const canopy_msg_t *msg, void *arg)
{
    struct exec_ctx *ctx = arg;
    const char *sender = canopy_msg_route_last (msg);
    struct list_node *pos;
    if (!sender)
        return;
    list_for_each (pos, &ctx->jobs) {
        struct jobnode *jn = list_entry (pos, struct jobnode, node);
        if (!jn->dead && !strcmp (job_owner (jn->job), sender)) {
            canopy_log (h, LOG_INFO, "job %d: its launcher went away; killing it",
                        job_id (jn->job));
            job_signal (jn->job, SIGKILL);
        }
    }
}

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "exec.start", start_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "exec.signal", signal_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "exec.jobid", jobid_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "exec.list", list_cb, CANOPY_ROLE_USER },
    { CANOPY_MSGTYPE_REQUEST, "exec.disconnect", disconnect_cb, CANOPY_ROLE_ALL },
    CANOPY_MSGHANDLER_TABLE_END,
};

int mod_main (canopy_t *h, int argc, char **argv)
{
    struct exec_ctx ctx;
    canopy_msg_handler_t **handlers = NULL;
    const char *uri, *s;
    int rc = -1;

    memset (&ctx, 0, sizeof (ctx));
    ctx.h = h;
    list_init (&ctx.jobs);
    ctx.next_jobid = 1;
    if (!(ctx.r = canopy_get_reactor (h)) || canopy_get_rank (h, &ctx.rank) < 0
        || !(uri = canopy_attr_get (h, "local-uri")) || !(ctx.local_uri = strdup (uri)))
        goto done;
    /* tasks run on the CPUs the broker was started with, not on the ones
     * broker.cpu-affinity gave its threads (an older broker: inherit)
     */
    if ((s = canopy_attr_get (h, "broker.cpus-inherited"))
        && cpulist_parse (s, &ctx.task_cpus) == 0)
        ctx.have_task_cpus = true;
    ctx.pmi_library = getenv ("CANOPY_PMI_LIBRARY_PATH");
    if (!ctx.pmi_library)
        ctx.pmi_library = canopy_path (CANOPY_PATH_PMI_LIBRARY);
    if (!(ctx.reaper = canopy_idle_watcher_create (ctx.r, reaper_cb, &ctx)))
        goto done;
    canopy_watcher_unref (ctx.reaper);
    if (canopy_msg_handler_addvec (h, htab, &ctx, &handlers) < 0)
        goto done;
    rc = canopy_reactor_run (ctx.r, 0);
done:
    canopy_msg_handler_delvec (handlers);
    while (!list_empty (&ctx.jobs)) {
        struct jobnode *jn = list_entry (ctx.jobs.next, struct jobnode, node);
        list_del (&jn->node);
        if (!jn->dead)
            job_abandon (jn->job);  /* ends its stream with an error */
        job_destroy (jn->job);      /* kills remaining tasks */
        free (jn);
    }
    canopy_watcher_destroy (ctx.reaper);
    free (ctx.local_uri);
    return rc;
}
