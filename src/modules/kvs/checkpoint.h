/* checkpoint.h - the KVS root on disk (rank 0): restore at start,
 * periodic checkpoints, the checkpoint of a SYNC commit, and a last one at
 * unload.
 *
 * A checkpoint is (rootref, version, timestamp), written through the
 * content service (content.checkpoint-put), which first waits until every
 * blob stored before the request is in the backing store, then has the
 * backing store make the blobs and the checkpoint durable.  So a
 * checkpoint never names a blob that is not on disk.
 *
 * Restore: the backing store keeps the last few checkpoints; the newest
 * one whose root object loads and decodes as a directory is used, and the
 * choice is logged (with the reasons any newer ones were skipped).  No
 * backing store (ENOSYS) or no checkpoint: a fresh, empty KVS.  Only
 * unusable checkpoints: the KVS refuses to start (the reason logged at
 * LOG_CRIT) and asks the instance to stop, rather than start empty.
 *
 * Without SYNC, the loss window after a crash of rank 0 is the commits
 * since the last checkpoint: at most one checkpoint period (kvs module
 * option checkpoint-period, seconds, default 10; 0 = only SYNC commits and
 * the unload write checkpoints) plus the time the checkpoint takes.
 */
#ifndef CANOPY_KVS_CHECKPOINT_H
#define CANOPY_KVS_CHECKPOINT_H

#include <stdbool.h>
#include <jansson.h>
#include "kvs_ctx.h"

struct checkpointer;

/* Called when an asynchronous checkpoint is durable (errnum 0) or failed. */
typedef void (*checkpoint_done_f)(int errnum, const char *errstr, void *arg);

struct checkpointer *checkpointer_create (struct kvs_ctx *ctx, double period);
/* In-flight writes are dropped: their callbacks are not called. */
void checkpointer_destroy (struct checkpointer *cp);

/* Start-up (synchronous): set ctx->rootref/version from the newest usable
 * checkpoint.  Returns 1 if restored, 0 if there is none (the caller makes
 * an empty root), -1 if the KVS must not start (logged).
 */
int checkpoint_restore (struct checkpointer *cp);

/* Write a checkpoint of (rootref, version); cb may be NULL. */
int checkpointer_write (struct checkpointer *cp, const char *rootref, int version,
                        checkpoint_done_f cb, void *arg);

/* Unload: checkpoint the current root if it changed since the last one
 * (synchronously; logged on failure).
 */
void checkpointer_final (struct checkpointer *cp);

/* {period, version, timestamp, written, failed, restored-version, ...} */
json_t *checkpointer_stats (struct checkpointer *cp);

#endif
