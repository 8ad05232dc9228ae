/* loadbatch.h - content.load-batch: loading many blobs from the parent
 * in one request, and the queue of a content module's loads upstream.
 *
 * Why: with one content.load per blob, when many consumers below a
 * broker read different parts of a large directory (the buckets of an
 * hdir past the setroot's prime budget), the brokers near the root
 * handle one request and one response per blob per child, and their
 * threads' per-message cost becomes the get latency of the whole
 * instance (kap/model: 64-160 ms per get at 2 048-16 384 nodes, k=2;
 * 7-16 ms batched).  Batched, the same blobs cross each hop in a few
 * messages.
 *
 * The request's payload is its refs, each followed by '\n' (no NUL),
 * 1 to LOAD_BATCH_MAX of them.  The response is raw blob records
 * (blobrecs.h) of the blobs the parent has; a ref it could not answer
 * (unknown, or failed upstream) is left out, and the requester loads
 * that one alone with content.load, whose answer carries the error.
 *
 * The queue (loadq_t): a miss joins the queue; loadq_next hands out the
 * next request (up to LOAD_BATCH_MAX refs) while fewer than LOAD_WINDOW
 * are in flight, and loadq_done counts one back.  So a lone miss goes at
 * once, and misses that come while the window is full travel together.
 *
 * Ownership: the queue copies refs; loadq_next returns a malloc'd buffer
 * the caller frees.  Threads: the content module's only.
 */
#ifndef CANOPY_CONTENT_LOADBATCH_H
#define CANOPY_CONTENT_LOADBATCH_H

#include <stddef.h>
#include <canopy/types.h>

enum {
    LOAD_BATCH_MAX = 64,    /* refs per request */
    LOAD_WINDOW = 2,        /* requests in flight to the parent */
};

/* Check a request payload (buf, len bytes): 1 to LOAD_BATCH_MAX valid
 * refs, each followed by '\n', nothing else.  Only then call fn for each
 * ref (NUL-terminated, valid during the call), in order; fn may be NULL
 * (check only) and returns 0, or -1 with errno to stop.  Returns the
 * number of refs, or -1 with EPROTO and a sentence in error (may be
 * NULL), or with fn's errno.
 */
typedef int (*loadbatch_ref_f)(const char *ref, void *arg);
int loadbatch_foreach (const void *buf, size_t len, loadbatch_ref_f fn, void *arg,
                       canopy_error_t *error);

typedef struct loadq loadq_t;

/* NULL with ENOMEM. */
loadq_t *loadq_create (void);
/* Accepts NULL; keeps errno. */
void loadq_destroy (loadq_t *q);
/* Queue a copy of 'ref' (a valid blobref).  -1 with EINVAL or ENOMEM
 * (nothing queued).
 */
int loadq_push (loadq_t *q, const char *ref);
/* If a request may go (fewer than LOAD_WINDOW in flight) and refs wait:
 * the payload of the next one (the oldest refs, up to LOAD_BATCH_MAX;
 * *len bytes and a NUL after them, malloc'd, *count refs), now counted
 * in flight.  Else NULL (errno 0; ENOMEM if the buffer could not be
 * made: the refs stay queued).
 */
char *loadq_next (loadq_t *q, size_t *len, int *count);
/* Take the oldest queued ref into ref (BLOBREF_MAX bytes), not counted
 * in flight: for loading it some other way.  -1 (ENOENT) if none waits.
 */
int loadq_pop (loadq_t *q, char *ref);
/* One request in flight came back (answered or failed). */
void loadq_done (loadq_t *q);
int loadq_inflight (const loadq_t *q);
int loadq_waiting (const loadq_t *q);

#endif
