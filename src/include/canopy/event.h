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
