/* canopy/handle.h - a connection to a broker.
 *
 * canopy_open() connects to the broker named by a URI (default: the
 * CANOPY_URI environment variable).  URIs:
 *   local:///path/to/socket    UNIX-domain socket of a broker
 * Modules receive a handle already connected to their broker.
 *
 * A handle is used by one thread at a time.  Messages can be received
 * directly with canopy_recv(), or dispatched from the handle's reactor to
 * message handlers (msg_handler.h) and RPC futures (rpc.h).  Messages that
 * arrive while a future is waited on synchronously are requeued and later
 * dispatched in order.
 *
 * Errors: canopy_open fails with ENOENT/ECONNREFUSED if no broker listens,
 * EINVAL for a bad URI.  canopy_send fails with EMSGSIZE, EPIPE (broker
 * gone), EAGAIN (CANOPY_O_NONBLOCK and the socket is full).
 */
#ifndef CANOPY_HANDLE_H
#define CANOPY_HANDLE_H

#include <stdint.h>
#include "types.h"
#include "message.h"
#include "reactor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_handle canopy_t;

enum canopy_open_flags {
    CANOPY_O_NONBLOCK = 1,
    CANOPY_O_TRACE = 2,     /* print every message to stderr */
};

canopy_t *canopy_open (const char *uri, int flags, canopy_error_t *error);
void canopy_close (canopy_t *h);

int canopy_send (canopy_t *h, const canopy_msg_t *msg, int flags);
/* Receive the next message matching 'match'; others are requeued.
 * With CANOPY_O_NONBLOCK in flags, fails with EAGAIN if none is ready.
 */
canopy_msg_t *canopy_recv (canopy_t *h, struct canopy_match match, int flags);
/* Wait up to 'timeout' seconds (< 0: forever) for any message.  Returns it,
 * or NULL with ETIMEDOUT.
 */
canopy_msg_t *canopy_recv_timeout (canopy_t *h, double timeout);
/* Put a message back: head (next to be received) or tail. */
enum { CANOPY_RQ_HEAD = 1, CANOPY_RQ_TAIL = 2 };
int canopy_requeue (canopy_t *h, const canopy_msg_t *msg, int where);

/* The reactor this handle dispatches from (created on first use). */
canopy_reactor_t *canopy_get_reactor (canopy_t *h);
int canopy_set_reactor (canopy_t *h, canopy_reactor_t *r);

int canopy_aux_set (canopy_t *h, const char *name, void *aux, canopy_free_f destroy);
void *canopy_aux_get (canopy_t *h, const char *name);

int canopy_get_flags (canopy_t *h);
void canopy_set_flags (canopy_t *h, int flags);

/* Matchtags for RPCs.  0 is never allocated. */
uint32_t canopy_matchtag_alloc (canopy_t *h);
void canopy_matchtag_free (canopy_t *h, uint32_t matchtag);
uint32_t canopy_matchtag_avail (canopy_t *h);

/* Attributes of the broker the handle is connected to.  Values of
 * immutable attributes (rank, size, ...) are cached.  NULL with ENOENT if
 * there is no such attribute.
 */
const char *canopy_attr_get (canopy_t *h, const char *name);
int canopy_attr_set (canopy_t *h, const char *name, const char *value);
int canopy_get_rank (canopy_t *h, uint32_t *rank);
int canopy_get_size (canopy_t *h, uint32_t *size);

/* Statistics about traffic on this handle. */
struct canopy_handle_stats {
    uint64_t tx_msgs;
    uint64_t rx_msgs;
    uint64_t tx_bytes;
    uint64_t rx_bytes;
};
void canopy_get_stats (canopy_t *h, struct canopy_handle_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
