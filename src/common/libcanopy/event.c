/* event.c - event subscription and publication (event.h).
 *
 * Publication is a request to rank 0's broker, "event.pub", whose raw
 * payload is the event topic, a NUL byte, then the event payload, so the
 * event body is never re-encoded.  The request's RAW flag tells the broker
 * whether the event payload itself is raw bytes (CANOPY_MSGFLAG_RAW in
 * 'flags') or JSON.  The request's payload is built in a shared buffer
 * (message_private.h), so that the RPC's copy of it and the event the
 * broker makes of it (canopy_msg_share_payload) all use the one copy of
 * the bytes: a 512 KiB event was copied three times on its way out.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdarg.h>
#include <canopy/event.h>
#include <canopy/rpc.h>
#include "json_fast_dump.h"
#include "message_private.h"

static int subscription_rpc (canopy_t *h, const char *topic_name, const char *topic)
{
    canopy_future_t *f;
    int rc;

    if (!h || !topic) {
        errno = EINVAL;
        return -1;
    }
    if (!(f = canopy_rpc_pack (h, topic_name, CANOPY_NODEID_ANY, 0,
                               "{s:s}", "topic", topic)))
        return -1;
    rc = canopy_future_get (f, NULL);
    canopy_future_destroy (f);
    return rc;
}

int canopy_event_subscribe (canopy_t *h, const char *topic)
{
    return subscription_rpc (h, "event.subscribe", topic);
}

int canopy_event_unsubscribe (canopy_t *h, const char *topic)
{
    return subscription_rpc (h, "event.unsubscribe", topic);
}

/* The bytes are written once, into a shared buffer: the RPC's copy of
 * the request and the event the broker makes of it share that buffer.
 */
canopy_msg_t *canopy_event_pub_create (const char *topic, int flags, size_t size,
                                       void **bufp, size_t *offp)
{
    size_t tlen;
    char *buf;
    canopy_msg_t *msg;

    if (!topic || (tlen = strlen (topic)) == 0 || tlen > CANOPY_MSG_MAX_TOPIC_LEN
        || (flags & ~CANOPY_MSGFLAG_RAW) || !bufp || !offp) {
        errno = EINVAL;
        return NULL;
    }
    if (size > CANOPY_MSG_SIZE_MAX - tlen - 1) {
        errno = EMSGSIZE;
        return NULL;
    }
    if (!(msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST))
        || canopy_msg_set_topic (msg, "event.pub") < 0
        || !(buf = msg_payload_alloc (msg, tlen + 1 + size)))
        goto nomem;
    msg->flags |= CANOPY_MSGFLAG_PAYLOAD;
    memcpy (buf, topic, tlen + 1);
    /* RAW on the request marks a raw event payload */
    if ((flags & CANOPY_MSGFLAG_RAW)
        && canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true) < 0)
        goto nomem;
    *bufp = buf + tlen + 1;
    *offp = tlen + 1;
    return msg;
nomem:
    canopy_msg_decref (msg);
    errno = ENOMEM;
    return NULL;
}

canopy_future_t *canopy_event_pub_send (canopy_t *h, const canopy_msg_t *request)
{
    if (!h || !request) {
        errno = EINVAL;
        return NULL;
    }
    return canopy_rpc_message (h, request, 0, 0);
}

canopy_future_t *canopy_event_publish_raw (canopy_t *h,
                                           const char *topic,
                                           int flags,
                                           const void *data,
                                           size_t size)
{
    canopy_msg_t *msg;
    canopy_future_t *f;
    void *buf;
    size_t off;

    if (!h || (size > 0 && !data)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = canopy_event_pub_create (topic, flags, size, &buf, &off)))
        return NULL;
    if (size > 0)
        memcpy (buf, data, size);
    f = canopy_event_pub_send (h, msg);
    canopy_msg_decref (msg);
    return f;
}

canopy_future_t *canopy_event_publish (canopy_t *h,
                                       const char *topic,
                                       int flags,
                                       const char *json_str)
{
    return canopy_event_publish_raw (h, topic, flags & ~CANOPY_MSGFLAG_RAW,
                                     json_str,
                                     json_str ? strlen (json_str) : 0);
}

canopy_future_t *canopy_event_publish_pack (canopy_t *h,
                                            const char *topic,
                                            int flags,
                                            const char *fmt,
                                            ...)
{
    json_t *o;
    char *s;
    va_list ap;
    canopy_future_t *f;

    if (!fmt) {
        errno = EINVAL;
        return NULL;
    }
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o) {
        errno = EINVAL;
        return NULL;
    }
    s = json_fast_dumps (o, JSON_COMPACT);
    json_decref (o);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    f = canopy_event_publish (h, topic, flags, s);
    free (s);
    return f;
}

int canopy_event_publish_get_seq (canopy_future_t *f, uint32_t *seq)
{
    int s;
    if (canopy_rpc_get_unpack (f, "{s:i}", "seq", &s) < 0)
        return -1;
    if (seq)
        *seq = s;
    return 0;
}

int canopy_event_decode (const canopy_msg_t *msg,
                         const char **topic,
                         const char **json_str)
{
    if (!msg || canopy_msg_get_type (msg) != CANOPY_MSGTYPE_EVENT) {
        errno = EINVAL;
        return -1;
    }
    if (topic && !(*topic = canopy_msg_get_topic (msg)))
        return -1;
    if (json_str && canopy_msg_get_string (msg, json_str) < 0)
        return -1;
    return 0;
}

int canopy_event_unpack (const canopy_msg_t *msg,
                         const char **topic,
                         const char *fmt,
                         ...)
{
    json_t *o;
    va_list ap;
    int rc;

    if (!msg || !fmt || canopy_msg_get_type (msg) != CANOPY_MSGTYPE_EVENT) {
        errno = EINVAL;
        return -1;
    }
    if (topic && !(*topic = canopy_msg_get_topic (msg)))
        return -1;
    if (canopy_msg_get_json (msg, &o) < 0)
        return -1;
    va_start (ap, fmt);
    rc = json_vunpack_ex (o, NULL, 0, fmt, ap);
    va_end (ap);
    if (rc < 0) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}
