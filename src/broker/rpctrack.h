/* rpctrack.h - requests in flight on one overlay link.
 *
 * The overlay keeps one tracker per child (requests sent down to it) and
 * one for the parent (requests sent up).  A request is identified by its
 * route stack as it was when sent plus its matchtag; the response that
 * comes back over the same link carries the same stack, so it finds the
 * entry.  When the link is lost every entry still here is handed to a
 * callback, which answers it with an error: no client waits for a
 * response that can no longer come.
 *
 * Requests with NORESPONSE are not tracked.  A streaming request stays
 * tracked until an error response (ENODATA ends a stream) comes back.
 * The same key may be tracked more than once (a client reusing a
 * matchtag); each response then removes one.
 *
 * Ownership: the tracker keeps a payload-less copy of each request.
 * Not thread safe (the broker's reactor thread only).
 */
#ifndef CANOPY_BROKER_RPCTRACK_H
#define CANOPY_BROKER_RPCTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <canopy/message.h>

typedef struct rpctrack rpctrack_t;

/* Called for each pending request by rpctrack_purge (req is a copy
 * without payload, valid during the call).
 */
typedef void (*rpctrack_purge_f)(const canopy_msg_t *req, void *arg);

rpctrack_t *rpctrack_create (void);
void rpctrack_destroy (rpctrack_t *t);

/* Remember a request about to be sent.  Messages that are not requests,
 * or are NORESPONSE, are ignored (returns 0).  -1 with ENOMEM or EPROTO.
 */
int rpctrack_add (rpctrack_t *t, const canopy_msg_t *req);

/* Forget the request that 'rsp' answers (a response that came back over
 * the link).  Returns true if it was tracked, false if not (a late or
 * stray response, or not a response at all).
 */
bool rpctrack_match (rpctrack_t *t, const canopy_msg_t *rsp);

/* Forget a request whose send failed after rpctrack_add. */
void rpctrack_remove (rpctrack_t *t, const canopy_msg_t *req);

/* Hand every pending request to fn (may be NULL), then forget them all. */
void rpctrack_purge (rpctrack_t *t, rpctrack_purge_f fn, void *arg);

/* Decides which pending requests rpctrack_purge_if hands over. */
typedef bool (*rpctrack_pred_f)(const canopy_msg_t *req, void *arg);

/* Hand every pending request for which pred is true to fn (may be NULL),
 * then forget those; the others stay tracked.  Returns how many were
 * purged.  Used when only part of a link's traffic is dead (requests that
 * came from a parent that forgot us).
 */
size_t rpctrack_purge_if (rpctrack_t *t, rpctrack_pred_f pred, void *pred_arg,
                          rpctrack_purge_f fn, void *arg);

size_t rpctrack_count (const rpctrack_t *t);

#endif
