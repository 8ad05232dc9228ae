/* endpoint.h - a local peer of the broker: a client on the UNIX socket or
 * a module thread.
 *
 * The router sees both the same way: an id used as the route hop
 * ("<rank>:c<n>" for clients, "<rank>:m<name>" for modules), the
 * credentials stamped on what it sends, its event subscriptions (topic
 * prefixes), and the services it has sent requests to, so that
 * "<service>.disconnect" can be sent to each when it goes away.
 * Ownership: the connector or module host that created an endpoint owns it.
 */
#ifndef CANOPY_BROKER_ENDPOINT_H
#define CANOPY_BROKER_ENDPOINT_H

#include <stdbool.h>
#include <stdint.h>
#include <canopy/message.h>
#include "src/common/libutil/hashmap.h"

struct endpoint;
typedef int (*endpoint_send_f)(struct endpoint *ep, const canopy_msg_t *msg);

enum endpoint_type {
    EP_CLIENT,
    EP_MODULE,
};

struct endpoint {
    char id[CANOPY_MSG_MAX_ROUTE_LEN + 1];
    enum endpoint_type type;
    uint32_t userid;
    uint32_t rolemask;
    char **subs;            /* subscribed topic prefixes */
    int nsubs;
    hashmap_t *services;    /* service names used -> (void *)1 */
    endpoint_send_f send;
    void *impl;
};

int endpoint_init (struct endpoint *ep, enum endpoint_type type, const char *id,
                   endpoint_send_f send, void *impl);
void endpoint_release (struct endpoint *ep);
int endpoint_subscribe (struct endpoint *ep, const char *prefix);
int endpoint_unsubscribe (struct endpoint *ep, const char *prefix);
bool endpoint_subscribed (const struct endpoint *ep, const char *topic);
/* Remember the service named by 'topic' (the part before the first '.')
 * and the rank it was addressed to (CANOPY_NODEID_ANY: the nearest), so
 * the disconnect notice reaches the same broker.  Keys: "svc" or "svc@R".
 */
void endpoint_note_service (struct endpoint *ep, const char *topic, uint32_t nodeid);

#endif
