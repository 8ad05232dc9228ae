/* ovsock.h - ZeroMQ sockets for overlay links, with every option the
 * overlay relies on set in one place (and testable without a broker).
 *
 * ROUTER (the parent's end): ROUTER_MANDATORY (sending to an absent peer
 * is EHOSTUNREACH, not a silent drop), ROUTER_HANDOVER (a restarted child
 * takes over its identity), and, with a certificate, CURVE server with
 * ZAP domain "canopy" (a ZAP handler must already be bound, see zap.h).
 * DEALER (the child's end): its routing id, IMMEDIATE (messages are only
 * queued on a finished handshake, so a send while disconnected fails with
 * EAGAIN at once), reconnect backoff, a bound on each TCP connect attempt
 * (a parent behind a dead link is retried promptly once the link is back),
 * and, with a certificate and the server's public key, CURVE client.
 * Both: MAXMSGSIZE (a peer sending more is disconnected), send and
 * receive high-water marks (0 = unlimited), linger, and for tcp://
 * TCP_MAXRT (bounds how long unacknowledged data keeps a dead link open).
 *
 * Monitor: ovsock_monitor() returns a PAIR socket carrying the socket's
 * connection events; ovsock_monitor_recv() decodes one.
 *
 * Errors: NULL/-1 with errno from libzmq (EINVAL for bad options,
 * EADDRINUSE, ...).
 */
#ifndef CANOPY_BROKER_OVSOCK_H
#define CANOPY_BROKER_OVSOCK_H

#include <stdint.h>
#include "cert.h"

struct ovsock_opts {
    int64_t maxmsgsize;     /* bytes; -1 = unlimited */
    int sndhwm;             /* messages; 0 = unlimited */
    int rcvhwm;
    int tcp_maxrt_ms;       /* 0 = the kernel's default */
    int reconnect_ivl_ms;   /* DEALER: first reconnect delay */
    int reconnect_max_ms;   /* DEALER: backoff ceiling */
    int connect_timeout_ms; /* DEALER, tcp://: give up a connect attempt
                             * (then retry) after this long; 0 = the kernel's
                             * SYN retries (minutes) */
};

void ovsock_opts_default (struct ovsock_opts *o);

/* cert may be NULL (no security: for ipc:// links inside one machine). */
void *ovsock_router (void *zctx, const struct ovsock_opts *o, const cert_t *cert,
                     const char *uri);
/* cert and server_pubkey both NULL, or both set (CURVE). */
void *ovsock_dealer (void *zctx, const struct ovsock_opts *o, const char *identity,
                     const cert_t *cert, const char *server_pubkey, const char *uri);

/* Events: a mask of ZMQ_EVENT_* bits.  The returned PAIR socket belongs to
 * the caller (close it before the monitored socket).
 */
void *ovsock_monitor (void *zctx, void *sock, int events);
/* Receive one event (nonblocking: EAGAIN when none).  value is the event's
 * number (an errno, a handshake status code, ...).
 */
int ovsock_monitor_recv (void *mon, int *event, int *value);

#endif
