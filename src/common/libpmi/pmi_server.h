/* pmi_server.h - PMI-1 simple wire protocol server engine.
 *
 * The engine knows the protocol and nothing else: no sockets, no event
 * loop, no storage.  Its owner moves bytes and keeps the key-value data:
 *
 *   - the owner reads complete lines from each task's connection and hands
 *     them to pmi_server_request (srv, rank, line, len);
 *   - the engine answers through ops->send (arg, rank, line, len), and
 *     calls ops->put / get / barrier / finalize / abort when the protocol
 *     needs the owner;
 *   - get and barrier are split-phase: the owner answers them when it is
 *     ready, from inside the callback or any time later, with
 *     pmi_server_get_respond() and pmi_server_barrier_done().
 *
 * Tasks are named by their rank in the job (0 .. size-1).  One engine
 * serves the tasks listed in cfg.local_ranks (all ranks if NULL); several
 * engines (one per broker, say) can serve one job between them, the owner
 * joining their barriers (see ops->barrier).
 *
 * Protocol rules the engine enforces (details in doc/internals.md,
 * "9.2 The wire protocol as implemented" and "9.3 The server engine"):
 *   - a task has at most one request outstanding: a line arriving while
 *     the task waits for a get result or barrier_out is a protocol error;
 *   - put/get must name this job's kvsname; keys and values must respect
 *     the advertised maxima (key shorter than keylen_max, value shorter
 *     than vallen_max); violations get rc=-1, not a dropped task;
 *   - gets of "PMI_process_mapping" are answered by the engine itself from
 *     cfg.process_mapping when that is set; the owner never sees them;
 *   - publish_name, unpublish_name, lookup_name, spawn and getbyidx are
 *     answered with rc=-1 (not supported); unknown commands with
 *     "cmd=<name>_result rc=-1";
 *   - "cmd=initack pmiid=I" (PMI_PORT + PMI_ID clients) is answered with
 *     initack, set size, set rank, set debug.
 *
 * Threads: none.  Call everything from one thread; callbacks run in that
 * thread, inside the pmi_server_* call that caused them.  Callbacks may
 * call pmi_server_get_respond() and pmi_server_barrier_done() (that is how
 * synchronous owners answer), but must not call pmi_server_request() or
 * pmi_server_destroy().
 */
#ifndef CANOPY_PMI_SERVER_H
#define CANOPY_PMI_SERVER_H

#include <stddef.h>
#include <stdbool.h>

typedef struct pmi_server pmi_server_t;

/* Default maxima advertised in "cmd=maxes" (those of MPICH's hydra). */
enum {
    PMI_SERVER_KVSNAME_MAX = 256,
    PMI_SERVER_KEYLEN_MAX = 64,
    PMI_SERVER_VALLEN_MAX = 1024,
};

struct pmi_server_config {
    int size;                   /* tasks in the job (>= 1) */
    const int *local_ranks;     /* ranks served by this engine (copied); */
    int nlocal;                 /*   NULL/0 = all ranks 0 .. size-1 */
    const char *kvsname;        /* the job's kvsname; NULL = "kvs_0" */
    int appnum;                 /* answered to get_appnum (usually 0) */
    int universe_size;          /* answered to get_universe_size; 0 = size */
    int kvsname_max;            /* advertised maxima; 0 = the defaults */
    int keylen_max;
    int vallen_max;
    const char *process_mapping;  /* PMI_process_mapping value (copied), */
                                  /*   e.g. "(vector,(0,1,4))"; NULL = none */
    int debug;                  /* sent as "set debug=" in the initack */
};

struct pmi_server_ops {
    /* Required.  Deliver one response line (ends in '\n', NUL-terminated,
     * len excludes the NUL) to task 'rank'.  Must not block: queue the
     * line, or drop a task that does not read its answers.  The engine
     * does not learn of failures: if the connection is broken the owner
     * should later call pmi_server_disconnect().
     */
    void (*send)(void *arg, int rank, const char *line, size_t len);

    /* Required.  Store key=value for the job on behalf of 'rank'.  Return
     * 0, or -1 with errno (the task gets "put_result rc=-1").  Must not
     * block.  A put must be visible to every task of the job once the
     * next barrier has completed (it may be visible earlier).
     */
    int (*put)(void *arg, int rank, const char *key, const char *value);

    /* Required.  Look 'key' up for task 'rank'.  Return 0 and answer with
     * pmi_server_get_respond (srv, rank, ...), now or later; or return -1
     * with errno to fail the get at once (the engine answers rc=-1; do
     * not also respond).  A key that does not exist MUST be answered as
     * not found (ENOENT) promptly -- never wait for it to appear: MPICH
     * and OpenMPI probe keys that are not there yet and would hang.
     */
    int (*get)(void *arg, int rank, const char *key);

    /* Required.  Every task served here has entered the barrier (this is
     * the local part of a job-wide barrier).  The owner completes the
     * job-wide barrier (e.g. a KVS fence across engines, which also makes
     * all puts visible everywhere), then calls pmi_server_barrier_done(),
     * now or later.  Return 0, or -1 with errno to fail the barrier at
     * once (do not also call pmi_server_barrier_done()).
     */
    int (*barrier)(void *arg);

    /* Optional.  Task 'rank' sent finalize (it has been acknowledged). */
    void (*finalize)(void *arg, int rank);

    /* Optional.  Task 'rank' called abort with 'exitcode'; 'msg' is the
     * message it sent, or NULL.  No response is sent: the owner should end
     * the job (kill every task) and report exitcode.
     */
    void (*abort)(void *arg, int rank, int exitcode, const char *msg);
};

/* Create an engine.  ops and arg are borrowed; cfg is copied.  Returns
 * NULL with errno EINVAL (bad size, rank list with duplicates or ranks
 * out of range, maxima below 16 or above what a line can carry, missing
 * required op, kvsname not a valid token) or ENOMEM.
 */
pmi_server_t *pmi_server_create (const struct pmi_server_config *cfg,
                                 const struct pmi_server_ops *ops, void *arg);
void pmi_server_destroy (pmi_server_t *srv);

/* Handle one request line from task 'rank' ('len' bytes, one trailing
 * '\n' optional).  Returns 0 if the line was handled (whatever the
 * protocol answer was), or -1 with errno:
 *   EPROTO    garbage, or a request while one is outstanding: nothing was
 *             answered; the owner should drop the task (and end the job);
 *   EMSGSIZE  the line is longer than PMI_WIRE_LINE_MAX;
 *   EINVAL    rank not served here, or NULL arguments;
 *   ENOTCONN  the task was disconnected.
 */
int pmi_server_request (pmi_server_t *srv, int rank, const char *line, size_t len);

/* Answer task rank's outstanding get: errnum 0 and value (the value), or
 * errnum ENOENT (not found) or another errno (failure), value ignored.
 * Returns 0, or -1 with errno EINVAL (no get outstanding for that rank,
 * or a value that cannot be sent: too long or with control characters --
 * the task is then answered rc=-1) or ENOTCONN (task disconnected; the
 * answer is dropped).
 */
int pmi_server_get_respond (pmi_server_t *srv, int rank, int errnum,
                            const char *value);

/* Complete the barrier announced by ops->barrier: errnum 0 sends
 * "cmd=barrier_out rc=0" to every task in it; otherwise they get
 * "cmd=barrier_out rc=-1" (MPICH ignores rc: the owner should then end
 * the job).  Returns 0, or -1 with errno EINVAL if no barrier is pending.
 */
int pmi_server_barrier_done (pmi_server_t *srv, int errnum);

/* Task 'rank' closed its connection.  Its outstanding get (if any) is
 * forgotten; a barrier it had entered still counts.  Returns 1 if the task
 * had finalized (a normal exit), 0 if not (it died, or never spoke PMI:
 * see pmi_server_task_initialized), -1 with errno EINVAL (bad rank).
 */
int pmi_server_disconnect (pmi_server_t *srv, int rank);

/* Whether task 'rank' has sent any request yet (false also for a bad rank). */
bool pmi_server_task_initialized (pmi_server_t *srv, int rank);

/* For PMI_PORT servers: the rank a connection's first line announces.
 * Returns I for "cmd=initack pmiid=I", or -1 with errno EPROTO for any
 * other line (then the client did not set PMI_ID and the owner picks a
 * free rank itself; ranks only matter for reporting in that mode).
 */
int pmi_server_initack_rank (const char *line, size_t len);

#endif
