/* connector_zmq.c - a module's connection to its broker: a ZeroMQ DEALER
 * on an inproc endpoint, owned by the module thread.  Messages cross it as
 * pointers to private copies (msg_handoff.c), not encoded.
 */
#include <stdlib.h>
#include <errno.h>
#include <zmq.h>
#include "handle_private.h"
#include "msg_handoff.h"

struct zmq_conn {
    void *sock;
};

void *connector_zmq_create (void *zsock)
{
    struct zmq_conn *c;
    if (!zsock) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        errno = ENOMEM;
        return NULL;
    }
    c->sock = zsock;
    return c;
}

static int zmq_conn_send (void *impl, const canopy_msg_t *msg, bool nonblock)
{
    struct zmq_conn *c = impl;
    return msg_handoff_send (c->sock, NULL, msg, nonblock);
}

static int zmq_conn_send_owned (void *impl, canopy_msg_t *msg, bool nonblock)
{
    struct zmq_conn *c = impl;
    return msg_handoff_send_owned (c->sock, NULL, msg, nonblock);
}

static canopy_msg_t *zmq_conn_recv (void *impl, bool nonblock)
{
    struct zmq_conn *c = impl;
    canopy_msg_t *msg;

    for (;;) {
        if ((msg = msg_handoff_recv (c->sock, NULL, nonblock)))
            return msg;
        if (errno == EPROTO)
            continue;       /* not a hand-off: the broker never sends one */
        if (errno == ETERM)
            errno = ECONNRESET;
        return NULL;
    }
}

static int zmq_conn_pollfd (void *impl)
{
    return -1;
}

static void *zmq_conn_pollzsock (void *impl)
{
    return ((struct zmq_conn *)impl)->sock;
}

static bool zmq_conn_pending (void *impl)
{
    return false;       /* zmq_poll is level-triggered on the socket */
}

static void zmq_conn_close (void *impl)
{
    struct zmq_conn *c = impl;
    if (c) {
        int linger = 5000;
        (void)zmq_setsockopt (c->sock, ZMQ_LINGER, &linger, sizeof (linger));
        zmq_close (c->sock);
        free (c);
    }
}

const struct connector_ops connector_zmq_ops = {
    .send = zmq_conn_send,
    .send_owned = zmq_conn_send_owned,
    .recv = zmq_conn_recv,
    .pollfd = zmq_conn_pollfd,
    .pollzsock = zmq_conn_pollzsock,
    .pending = zmq_conn_pending,
    .close = zmq_conn_close,
};
