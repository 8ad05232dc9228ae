/* message_private.h - the message structure, shared by message.c,
 * msg_codec.c and msg_handoff.c (which looks at the reference count) only.
 * Everyone else uses the accessors in message.h.
 *
 * routes[0] is the bottom of the stack (the original sender) and
 * routes[route_count - 1] the top (the most recent hop).
 */
#ifndef CANOPY_MESSAGE_PRIVATE_H
#define CANOPY_MESSAGE_PRIVATE_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>

struct canopy_msg {
    int refcount;
    uint8_t type;
    uint8_t flags;
    uint32_t userid;
    uint32_t rolemask;
    uint32_t aux1;          /* nodeid | errnum | seq | control type */
    uint32_t aux2;          /* matchtag | control status */
    char *topic;
    void *payload;
    size_t payload_size;
    char **routes;
    int route_count;
    int route_alloc;
    json_t *json;           /* parsed payload, cached */
};

bool msg_type_valid (int type);

/* msg_codec.c: discard the rest of a multipart ZeroMQ message. */
void msg_zsock_drain (void *sock);

#endif
