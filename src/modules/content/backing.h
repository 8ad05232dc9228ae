/* backing.h - rank 0's write-back of the content cache to a backing
 * store module (content-sqlite by default), and what rides on it: loads
 * of blobs the cache dropped, flush requests, and KVS checkpoints.
 *
 * Write-back: dirty cache entries are sent to "<name>.store" in batches
 * (many blobs per request; the backing store writes each batch in one
 * transaction), at most a few batches in flight; whatever became dirty
 * while a batch was being written goes in the next one (group commit); a
 * small backlog nobody waits for may wait a few milliseconds for more.
 * An entry is clean once its batch is acknowledged; clean entries may be
 * expired from the cache and are loaded back from the store on a miss.
 *
 * Ordering: a flush or checkpoint request waits until every blob that
 * became dirty before it arrived is clean (blobcache_clean_through), then
 * goes to the backing store ("<name>.sync", "<name>.checkpoint-put"),
 * which makes it durable.  Requests to the backing store are answered in
 * the order sent, so a checkpoint is never written before the blobs it
 * names.
 *
 * Failures: a failed batch puts its entries back (still dirty, retried on
 * the next flush/checkpoint request or every retry tick) and fails every
 * waiting flush/checkpoint request with the store's errno and text (e.g.
 * ENOSPC).  A backing store that does not exist (ENOSYS) disables the
 * write-back: entries then stay dirty in memory for the life of the
 * instance, and flush/checkpoint requests fail with ENOSYS.
 *
 * Every request handed to this code is answered exactly once, also at
 * destroy (ENOSYS).
 */
#ifndef CANOPY_CONTENT_BACKING_H
#define CANOPY_CONTENT_BACKING_H

#include <stdbool.h>
#include <jansson.h>
#include <canopy/canopy.h>
#include "blobcache.h"

struct backing;

/* A load finished: data (len bytes) or an errnum with text.  The entry is
 * still the cache's pending entry for ref, if it exists.
 */
typedef void (*backing_loaded_f)(const char *ref, const void *data, size_t len,
                                 int errnum, const char *errstr, void *arg);

/* delay: seconds a small backlog may wait to be batched with more (0: none) */
struct backing *backing_create (canopy_t *h, blobcache_t *cache, const char *name,
                                double delay, backing_loaded_f loaded, void *arg);
void backing_destroy (struct backing *b);

/* False once the backing store is known to be missing. */
bool backing_available (struct backing *b);
/* Dirty entries exist: write them back soon (after this reactor pass). */
void backing_kick (struct backing *b);
/* Load a blob the cache does not have; 'loaded' is called later. */
int backing_load (struct backing *b, const char *ref);

/* Requests (rank 0): content.flush, content.checkpoint-put, -get. */
void backing_flush_request (struct backing *b, const canopy_msg_t *msg);
void backing_checkpoint_put (struct backing *b, const canopy_msg_t *msg);
void backing_checkpoint_get (struct backing *b, const canopy_msg_t *msg);

/* Periodic tick: retry a write-back that failed. */
void backing_tick (struct backing *b);

/* {"name", "state", counters...} (new reference). */
json_t *backing_stats (struct backing *b);

#endif
