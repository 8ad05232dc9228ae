/* exec_ctx.h - the exec module's context (exec.c owns it). */
#ifndef CANOPY_EXEC_CTX_H
#define CANOPY_EXEC_CTX_H

#include <stdint.h>
#include <stdbool.h>
#include <sched.h>
#include <canopy/canopy.h>
#include "src/common/libutil/list.h"

struct job;

struct exec_ctx {
    canopy_t *h;
    canopy_reactor_t *r;
    uint32_t rank;
    char *local_uri;
    const char *pmi_library;
    struct list_node jobs;
    int njobs;
    int next_jobid;         /* rank 0 */
    canopy_watcher_t *reaper;
    cpu_set_t task_cpus;    /* the broker's broker.cpus-inherited */
    bool have_task_cpus;
};

/* exec.c: a job has finished; free it from outside its callbacks. */
void exec_job_finished (struct exec_ctx *ctx, struct job *job);

#endif
