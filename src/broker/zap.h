/* zap.h - a ZeroMQ authentication (ZAP, RFC 27) handler with an
 * allow-list of CURVE public keys.
 *
 * libzmq asks the handler bound at inproc://zeromq.zap.01 in the same
 * context about every connection to a CURVE server socket.  We answer
 * 200 only for mechanism CURVE with a 32-byte client key that is on the
 * allow-list; everything else gets 400 and the connection is dropped
 * before a single message is delivered.  The handler must exist before
 * a CURVE server socket binds: without a handler libzmq admits anyone who
 * knows the server key.
 *
 * The handler is a REP socket; the owner watches zap_socket() for input
 * and calls zap_handle(), which answers every pending request without
 * blocking.  One handler per ZeroMQ context (EADDRINUSE otherwise).
 */
#ifndef CANOPY_BROKER_ZAP_H
#define CANOPY_BROKER_ZAP_H

#include <stdint.h>

typedef struct zap zap_t;

/* Called for each decision: allowed is 0 or 1; pubkey is Z85 text (or
 * "-" if the peer offered none); mechanism is e.g. "CURVE" or "NULL".
 */
typedef void (*zap_log_f)(int allowed, const char *mechanism, const char *pubkey,
                          const char *address, void *arg);

zap_t *zap_create (void *zctx);
void zap_destroy (zap_t *z);

/* Add a Z85 public key to the allow-list (EINVAL if malformed). */
int zap_authorize (zap_t *z, const char *pubkey);

void *zap_socket (zap_t *z);
/* Answer every pending request.  Returns the number answered, or -1 on a
 * socket error (not EAGAIN).
 */
int zap_handle (zap_t *z);
void zap_set_log (zap_t *z, zap_log_f fn, void *arg);

uint64_t zap_allowed_count (const zap_t *z);
uint64_t zap_denied_count (const zap_t *z);

#endif
