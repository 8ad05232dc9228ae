/* ovsock.c - overlay socket construction (ovsock.h).
 *
 * Design notes:
 * - Options are set before bind/connect, as libzmq requires for most of
 *   them; a failure closes the socket and keeps errno.
 * - Monitor endpoints are inproc names made unique with a process-wide
 *   counter (one ZeroMQ context may monitor several sockets).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <zmq.h>
#include "ovsock.h"

void ovsock_opts_default (struct ovsock_opts *o)
{
    o->maxmsgsize = -1;
    o->sndhwm = 0;
    o->rcvhwm = 0;
    o->tcp_maxrt_ms = 0;
    o->reconnect_ivl_ms = 20;
    o->reconnect_max_ms = 2000;
    o->connect_timeout_ms = 0;
}

static int setopt_int (void *sock, int opt, int val)
{
    return zmq_setsockopt (sock, opt, &val, sizeof (val));
}

static int set_common (void *sock, const struct ovsock_opts *o, const char *uri)
{
    int64_t max = o->maxmsgsize;
    if (zmq_setsockopt (sock, ZMQ_MAXMSGSIZE, &max, sizeof (max)) < 0
        || setopt_int (sock, ZMQ_SNDHWM, o->sndhwm) < 0
        || setopt_int (sock, ZMQ_RCVHWM, o->rcvhwm) < 0
        || setopt_int (sock, ZMQ_LINGER, 1000) < 0)
        return -1;
    if (o->tcp_maxrt_ms > 0 && !strncmp (uri, "tcp://", 6)
        && setopt_int (sock, ZMQ_TCP_MAXRT, o->tcp_maxrt_ms) < 0)
        return -1;
    return 0;
}

static void close_keep_errno (void *sock)
{
    int saved_errno = errno;
    zmq_close (sock);
    errno = saved_errno;
}

void *ovsock_router (void *zctx, const struct ovsock_opts *o, const cert_t *cert,
                     const char *uri)
{
    void *s;

    if (!zctx || !o || !uri) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = zmq_socket (zctx, ZMQ_ROUTER)))
        return NULL;
    if (set_common (s, o, uri) < 0
        || setopt_int (s, ZMQ_ROUTER_MANDATORY, 1) < 0
        || setopt_int (s, ZMQ_ROUTER_HANDOVER, 1) < 0)
        goto error;
    if (cert) {
        if (zmq_setsockopt (s, ZMQ_ZAP_DOMAIN, "canopy", 6) < 0
            || setopt_int (s, ZMQ_CURVE_SERVER, 1) < 0
            || zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, cert_secret (cert), 40) < 0
            || zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, cert_public (cert), 40) < 0)
            goto error;
    }
    if (zmq_bind (s, uri) < 0)
        goto error;
    return s;
error:
    close_keep_errno (s);
    return NULL;
}

void *ovsock_dealer (void *zctx, const struct ovsock_opts *o, const char *identity,
                     const cert_t *cert, const char *server_pubkey, const char *uri)
{
    void *s;

    if (!zctx || !o || !identity || !*identity || !uri
        || (cert != NULL) != (server_pubkey != NULL)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = zmq_socket (zctx, ZMQ_DEALER)))
        return NULL;
    if (set_common (s, o, uri) < 0
        || zmq_setsockopt (s, ZMQ_ROUTING_ID, identity, strlen (identity)) < 0
        || setopt_int (s, ZMQ_IMMEDIATE, 1) < 0
        || setopt_int (s, ZMQ_RECONNECT_IVL, o->reconnect_ivl_ms) < 0
        || setopt_int (s, ZMQ_RECONNECT_IVL_MAX, o->reconnect_max_ms) < 0)
        goto error;
    if (o->connect_timeout_ms > 0 && !strncmp (uri, "tcp://", 6)
        && setopt_int (s, ZMQ_CONNECT_TIMEOUT, o->connect_timeout_ms) < 0)
        goto error;
    if (cert) {
        if (zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, server_pubkey,
                            strlen (server_pubkey)) < 0
            || zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, cert_secret (cert), 40) < 0
            || zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, cert_public (cert), 40) < 0)
            goto error;
    }
    if (zmq_connect (s, uri) < 0)
        goto error;
    return s;
error:
    close_keep_errno (s);
    return NULL;
}

void *ovsock_monitor (void *zctx, void *sock, int events)
{
    static unsigned long counter;
    char uri[64];
    void *pair;

    snprintf (uri, sizeof (uri), "inproc://canopy-monitor-%lu", ++counter);
    if (zmq_socket_monitor (sock, uri, events) < 0)
        return NULL;
    if (!(pair = zmq_socket (zctx, ZMQ_PAIR)))
        goto error;
    if (setopt_int (pair, ZMQ_LINGER, 0) < 0 || zmq_connect (pair, uri) < 0) {
        close_keep_errno (pair);
        goto error;
    }
    return pair;
error:
    {
        int saved_errno = errno;
        (void)zmq_socket_monitor (sock, NULL, 0);
        errno = saved_errno;
    }
    return NULL;
}

int ovsock_monitor_recv (void *mon, int *event, int *value)
{
    zmq_msg_t f;
    int more = 0;
    size_t len = sizeof (more);
    int rc = -1;

    zmq_msg_init (&f);
    if (zmq_msg_recv (&f, mon, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&f);
        return -1;
    }
    if (zmq_msg_size (&f) >= 6) {
        uint16_t ev;
        uint32_t val;
        memcpy (&ev, zmq_msg_data (&f), 2);
        memcpy (&val, (char *)zmq_msg_data (&f) + 2, 4);
        *event = ev;
        *value = (int)val;
        rc = 0;
    }
    else
        errno = EPROTO;
    /* drop the address frame(s) */
    while (zmq_getsockopt (mon, ZMQ_RCVMORE, &more, &len) == 0 && more) {
        zmq_msg_close (&f);
        zmq_msg_init (&f);
        if (zmq_msg_recv (&f, mon, 0) < 0)
            break;
    }
    zmq_msg_close (&f);
    return rc;
}
