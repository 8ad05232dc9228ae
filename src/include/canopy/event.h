/* canopy/event.h - events: published by rank 0, delivered to every broker.
 *
 * Subscriptions are topic prefixes ("kvs." matches "kvs.setroot"); the
 * empty string matches everything.  Events reach each subscriber in
 * sequence order; brokers detect and log gaps.
 *
 * canopy_event_publish() asks rank 0 to publish; the future is fulfilled
 * with the event's sequence number once rank 0 has sent it.
 */
#ifndef CANOPY_EVENT_H
#define CANOPY_EVENT_H

#include "handle.h"
#include "future.h"

#ifdef __cplusplus
extern "C" {
#endif

int canopy_event_subscribe (canopy_t *h, const char *topic);
int canopy_event_unsubscribe (canopy_t *h, const char *topic);

canopy_future_t *canopy_event_publish (canopy_t *h,
                                       const char *topic,
                                       int flags,
                                       const char *json_str);
canopy_future_t *canopy_event_publish_pack (canopy_t *h,
                                            const char *topic,
                                            int flags,
                                            const char *fmt,
                                            ...);
canopy_future_t *canopy_event_publish_raw (canopy_t *h,
                                           const char *topic,
                                           int flags,
                                           const void *data,
                                           size_t size);
int canopy_event_publish_get_seq (canopy_future_t *f, uint32_t *seq);

/* A raw or JSON event (flags as canopy_event_publish_raw) whose payload
 * of 'size' bytes the caller writes in place instead of having it
 * copied: canopy_event_pub_create returns the event.pub request (the
 * caller's reference) with *bufp the payload's first byte and *offp its
 * offset in the request's payload; the caller fills the size bytes, then
 * canopy_event_pub_send sends the request (the bytes must not change
 * after that).  The event shares the request's buffer, and so does a
 * message the caller makes with canopy_msg_share_payload (msg, request,
 * *offp), to keep pointers into the payload as the event carries it.
 * Errors: NULL or -1 with EINVAL (bad arguments), EMSGSIZE (too large),
 * ENOMEM.
 */
canopy_msg_t *canopy_event_pub_create (const char *topic, int flags, size_t size,
                                       void **bufp, size_t *offp);
canopy_future_t *canopy_event_pub_send (canopy_t *h, const canopy_msg_t *request);

int canopy_event_decode (const canopy_msg_t *msg,
                         const char **topic,
                         const char **json_str);
int canopy_event_unpack (const canopy_msg_t *msg,
                         const char **topic,
                         const char *fmt,
                         ...);

#ifdef __cplusplus
}
#endif
#endif
