/* job.h - the part of a parallel job that runs on one broker.
 *
 * Created by an "exec.start" request (streaming) from 'canopy run'.  The
 * job starts its local tasks, serves their PMI-1 requests with a
 * pmi_server engine whose storage is the KVS (see job.c), and streams
 * back to the requester:
 *   {"type":"output","rank":r,"stream":"stdout"|"stderr","data":base64}
 *   {"type":"exit","rank":r,"status":wait-status,"errnum":e,"pmi":s}
 *       s: "none" (never used PMI), "finalized", or "died" (left without
 *       finalize: the job cannot go on)
 *   {"type":"abort","rank":r,"code":c,"msg":s}
 *   {"type":"error","msg":s}     (a protocol error: the job must end)
 * and ends the stream (ENODATA) once every local task has exited.
 */
#ifndef CANOPY_EXEC_JOB_H
#define CANOPY_EXEC_JOB_H

#include <stdbool.h>
#include <canopy/canopy.h>

struct exec_ctx;
struct job;

struct job *job_create (struct exec_ctx *ctx, const canopy_msg_t *req,
                        canopy_error_t *error);
void job_destroy (struct job *job);
int job_start (struct job *job, canopy_error_t *error);
int job_signal (struct job *job, int signum);
/* The module is going away: end the requester's stream with an error. */
void job_abandon (struct job *job);
int job_id (const struct job *job);
const char *job_owner (const struct job *job);
bool job_done (const struct job *job);
int job_ntasks (const struct job *job);

#endif
