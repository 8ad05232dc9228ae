/* events.c - event publication and delivery (DESIGN.md section 3).
 *
 * Rank 0 numbers every event (sequence 1, 2, ...).  Each broker passes an
 * event to its children first, then to local subscribers (modules and
 * clients whose subscriptions prefix-match the topic), then acts on
 * the broker's own topics ("broker.shutdown").  A broker remembers the
 * last sequence it saw (learned from its parent's WELCOME at start):
 * a repeat is dropped, a gap is logged as lost events.
 *
 * Services: event.pub (rank 0; raw payload "topic\0body"), event.subscribe
 * and event.unsubscribe (local endpoints only).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <syslog.h>
#include <canopy/canopy.h>
#include "broker.h"
#include "overlay.h"

static void deliver_local (struct broker *b, const canopy_msg_t *msg)
{
    const char *topic = canopy_msg_get_topic (msg);
    void *val;

    if (!topic)
        return;
    for (const char *id = hashmap_first (b->endpoints, &val); id;
         id = hashmap_next (b->endpoints, &val)) {
        struct endpoint *ep = val;
        if (endpoint_subscribed (ep, topic))
            (void)ep->send (ep, msg);
    }
}

static void broker_event (struct broker *b, const canopy_msg_t *msg)
{
    const char *topic = canopy_msg_get_topic (msg);
    int code = 0;

    if (topic && !strcmp (topic, "broker.shutdown") && b->rank > 0) {
        (void)canopy_msg_unpack (msg, "{s?i}", "exitcode", &code);
        broker_shutdown_begin (b, 0, "instance shutdown");
    }
}

void events_deliver (struct broker *b, canopy_msg_t *msg)
{
    uint32_t seq = 0;

    (void)canopy_msg_get_seq (msg, &seq);
    if (b->rank > 0) {
        if (seq <= b->event_seq) {
            broker_log (b, LOG_DEBUG, "dropped duplicate event %u", seq);
            return;
        }
        if (seq != b->event_seq + 1)
            broker_log (b, LOG_ERR, "lost events %u-%u", b->event_seq + 1, seq - 1);
        b->event_seq = seq;
    }
    overlay_send_event_children (b->overlay, msg);
    deliver_local (b, msg);
    broker_event (b, msg);
}

/* Number the event, send it on, and drop our reference to it. */
static void publish (struct broker *b, canopy_msg_t *msg, uint32_t *seqp)
{
    uint32_t seq = ++b->event_seq;
    (void)canopy_msg_set_seq (msg, seq);
    (void)canopy_msg_set_userid (msg, b->owner);
    (void)canopy_msg_set_rolemask (msg, CANOPY_ROLE_OWNER);
    events_deliver (b, msg);
    canopy_msg_decref (msg);
    if (seqp)
        *seqp = seq;
}

/* A new event of 'topic' and, unless src is NULL, src's payload from
 * 'offset' on, sharing src's buffer (an event.pub request's body is the
 * event's, no copy); else 'size' bytes of 'data'.
 */
static canopy_msg_t *event_create (const char *topic, bool raw,
                                   const canopy_msg_t *src, size_t offset,
                                   const void *data, size_t size)
{
    canopy_msg_t *msg;

    if (!(msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT)))
        return NULL;
    if (canopy_msg_set_topic (msg, topic) < 0
        || (src ? canopy_msg_share_payload (msg, src, offset) < 0
                : size > 0 && canopy_msg_set_payload (msg, data, size) < 0)
        || (raw && canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true) < 0)) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return msg;
}

int events_publish (struct broker *b, const char *topic, bool raw,
                    const void *data, size_t size, uint32_t *seqp)
{
    canopy_msg_t *msg;

    if (b->rank != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg = event_create (topic, raw, NULL, 0, data, size)))
        return -1;
    publish (b, msg, seqp);
    return 0;
}

static void pub_cb (struct broker *b, const canopy_msg_t *msg)
{
    const void *data;
    size_t size;
    const char *topic;
    size_t tlen;
    uint32_t seq;

    if (b->rank != 0) {
        broker_respond_error (b, msg, EINVAL, "events are published on rank 0");
        return;
    }
    if (canopy_msg_get_payload (msg, &data, &size) < 0 || size == 0
        || !(topic = data) || (tlen = strnlen (topic, size)) == size
        || tlen == 0 || tlen > CANOPY_MSG_MAX_TOPIC_LEN) {
        broker_respond_error (b, msg, EPROTO, "malformed event.pub request");
        return;
    }
    canopy_msg_t *ev = event_create (topic, canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW),
                                     msg, tlen + 1, NULL, 0);
    if (!ev) {
        broker_respond_error (b, msg, errno, "publish failed");
        return;
    }
    publish (b, ev, &seq);
    broker_respond_pack (b, msg, "{s:i}", "seq", (int)seq);
}

static struct endpoint *sender_endpoint (struct broker *b, const canopy_msg_t *msg)
{
    const char *id = canopy_msg_route_last (msg);
    if (!id || canopy_msg_route_count (msg) != 1)
        return NULL;
    return hashmap_lookup (b->endpoints, id);
}

static void sub_cb (struct broker *b, const canopy_msg_t *msg)
{
    const char *topic;
    struct endpoint *ep;

    if (canopy_msg_unpack (msg, "{s:s}", "topic", &topic) < 0) {
        broker_respond_error (b, msg, EPROTO, "malformed event.subscribe request");
        return;
    }
    if (!(ep = sender_endpoint (b, msg))) {
        broker_respond_error (b, msg, EPROTO, "only local clients may subscribe");
        return;
    }
    if (endpoint_subscribe (ep, topic) < 0) {
        broker_respond_error (b, msg, errno, "too many subscriptions");
        return;
    }
    broker_respond (b, msg, NULL);
}

static void unsub_cb (struct broker *b, const canopy_msg_t *msg)
{
    const char *topic;
    struct endpoint *ep;

    if (canopy_msg_unpack (msg, "{s:s}", "topic", &topic) < 0) {
        broker_respond_error (b, msg, EPROTO, "malformed event.unsubscribe request");
        return;
    }
    if (!(ep = sender_endpoint (b, msg))) {
        broker_respond_error (b, msg, EPROTO, "only local clients may unsubscribe");
        return;
    }
    if (endpoint_unsubscribe (ep, topic) < 0) {
        broker_respond_error (b, msg, ENOENT, "not subscribed to '%s'", topic);
        return;
    }
    broker_respond (b, msg, NULL);
}

int events_init (struct broker *b)
{
    if (broker_register (b, "event.pub", pub_cb, 0) < 0
        || broker_register (b, "event.subscribe", sub_cb, CANOPY_ROLE_USER) < 0
        || broker_register (b, "event.unsubscribe", unsub_cb, CANOPY_ROLE_USER) < 0)
        return -1;
    return 0;
}
