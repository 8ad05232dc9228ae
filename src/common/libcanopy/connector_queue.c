/* connector_queue.c - a module's connection to its broker: a pair of
 * message queues (msg_queue.h), one each way, shared with the broker's
 * module host.  Messages cross as pointers to private copies, never
 * encoded.  The handle waits on the inbound queue's descriptor.
 *
 * Closing the connector closes the inbound queue (the broker's further
 * sends fail at once) and drops this side's references; the outbound
 * queue stays open, so the broker still reads everything the module sent
 * before it closed (its exit status last).
 */
#include <stdlib.h>
#include <errno.h>
#include "handle_private.h"
#include "msg_queue.h"

struct queue_conn {
    msg_queue_t *in;        /* broker -> module */
    msg_queue_t *out;       /* module -> broker */
};

void *connector_queue_create (msg_queue_t *in, msg_queue_t *out)
{
    struct queue_conn *c;
    if (!in || !out) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        errno = ENOMEM;
        return NULL;
    }
    c->in = in;
    c->out = out;
    return c;
}

static int queue_conn_send (void *impl, const canopy_msg_t *msg, bool nonblock)
{
    struct queue_conn *c = impl;
    return msg_queue_send (c->out, msg);
}

static int queue_conn_send_owned (void *impl, canopy_msg_t *msg, bool nonblock)
{
    struct queue_conn *c = impl;
    return msg_queue_send_owned (c->out, msg);
}

static canopy_msg_t *queue_conn_recv (void *impl, bool nonblock)
{
    struct queue_conn *c = impl;
    canopy_msg_t *msg;

    for (;;) {
        if ((msg = msg_queue_recv (c->in)) || errno != EAGAIN || nonblock)
            return msg;
        if (msg_queue_wait (c->in, -1) < 0)
            return NULL;
    }
}

static int queue_conn_pollfd (void *impl)
{
    return msg_queue_pollfd (((struct queue_conn *)impl)->in);
}

static void *queue_conn_pollzsock (void *impl)
{
    return NULL;
}

static bool queue_conn_pending (void *impl)
{
    return false;       /* the descriptor stays readable while messages wait */
}

static void queue_conn_close (void *impl)
{
    struct queue_conn *c = impl;
    if (c) {
        msg_queue_close (c->in);
        msg_queue_decref (c->in);
        msg_queue_decref (c->out);
        free (c);
    }
}

const struct connector_ops connector_queue_ops = {
    .send = queue_conn_send,
    .send_owned = queue_conn_send_owned,
    .recv = queue_conn_recv,
    .pollfd = queue_conn_pollfd,
    .pollzsock = queue_conn_pollzsock,
    .pending = queue_conn_pending,
    .close = queue_conn_close,
};
