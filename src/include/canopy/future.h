/* canopy/future.h - futures: a value (or an error) that arrives later.
 *
 * For users:
 *   canopy_future_then() registers a continuation called from the reactor
 *   once the future is ready (or the timeout passes: the future then holds
 *   ETIMEDOUT).  canopy_future_wait_for() blocks the calling thread instead;
 *   while it waits, other messages arriving on the handle are kept for the
 *   reactor, and other RPCs' responses are still delivered to their futures.
 *   canopy_future_get() returns 0 and the result, or -1 with errno set to the
 *   error the future was fulfilled with.  A streaming future is fulfilled
 *   many times: canopy_future_reset() consumes the current result so the
 *   next one can arrive.  canopy_future_destroy() accepts NULL, keeps errno,
 *   and may be called from the continuation.
 *
 * For implementors:
 *   canopy_future_create() makes an empty future; fulfill/fulfill_error
 *   supply results (queued if the current one is not consumed yet).  The
 *   init callback, if any, runs once when the future is first waited on or
 *   given a continuation, with the context (reactor, handle) it will run in.
 *
 * Per-request state rides on the future with canopy_future_aux_set().
 */
#ifndef CANOPY_FUTURE_H
#define CANOPY_FUTURE_H

#include <stdbool.h>
#include "types.h"
#include "reactor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_future canopy_future_t;
typedef struct canopy_handle canopy_t;

typedef void (*canopy_continuation_f)(canopy_future_t *f, void *arg);
typedef void (*canopy_future_init_f)(canopy_future_t *f, void *arg);

canopy_future_t *canopy_future_create (canopy_future_init_f init, void *arg);
void canopy_future_destroy (canopy_future_t *f);

/* timeout < 0 means none. */
int canopy_future_then (canopy_future_t *f,
                        double timeout,
                        canopy_continuation_f cb,
                        void *arg);
int canopy_future_wait_for (canopy_future_t *f, double timeout);
bool canopy_future_is_ready (canopy_future_t *f);
void canopy_future_reset (canopy_future_t *f);

int canopy_future_get (canopy_future_t *f, const void **result);
/* Error text of a failed future, or the strerror of its errnum, or NULL. */
const char *canopy_future_error_string (canopy_future_t *f);

void canopy_future_fulfill (canopy_future_t *f, void *result, canopy_free_f free_fn);
void canopy_future_fulfill_error (canopy_future_t *f, int errnum, const char *errstr);

int canopy_future_aux_set (canopy_future_t *f,
                           const char *name,
                           void *aux,
                           canopy_free_f destroy);
void *canopy_future_aux_get (canopy_future_t *f, const char *name);

void canopy_future_set_reactor (canopy_future_t *f, canopy_reactor_t *r);
canopy_reactor_t *canopy_future_get_reactor (canopy_future_t *f);
void canopy_future_set_handle (canopy_future_t *f, canopy_t *h);
canopy_t *canopy_future_get_handle (canopy_future_t *f);

/* Composite: ready when every child is ready ("wait all").  Children are
 * added by name and owned by the composite.
 */
canopy_future_t *canopy_future_wait_all_create (void);
int canopy_future_push (canopy_future_t *composite,
                        const char *name,
                        canopy_future_t *child);
canopy_future_t *canopy_future_get_child (canopy_future_t *composite,
                                          const char *name);

#ifdef __cplusplus
}
#endif
#endif
