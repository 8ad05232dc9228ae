/* message_private.h - the message structure, shared by message.c,
 * msg_codec.c and msg_queue.c (which looks at the reference count) only;
 * msg_stream.c uses the head encoder declared here.
 * Everyone else uses the accessors in message.h.
 *
 * routes[0] is the bottom of the stack (the original sender) and
 * routes[route_count - 1] the top (the most recent hop).
 *
 * Payloads: a payload's bytes never change once set (setters replace the
 * whole buffer).  Most payloads live in a shared buffer (pbuf) that
 * canopy_msg_copy shares instead of copying: the broker hands a copy of
 * each message to a module thread, and a ZeroMQ I/O thread may still be
 * sending the bytes, so its count is atomic.  A payload given with
 * canopy_msg_set_payload_nocopy is a plain malloc'd buffer (pbuf NULL),
 * copied into a pbuf by the first canopy_msg_copy.  A pbuf may also
 * stand for bytes it does not hold (msg_payload_attach_external: a
 * received ZeroMQ frame), released with its last reference.
 */
#ifndef CANOPY_MESSAGE_PRIVATE_H
#define CANOPY_MESSAGE_PRIVATE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
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
    void *payload;          /* pbuf->data, or a plain buffer; NUL after it */
    size_t payload_size;
    struct msg_pbuf *pbuf;
    char **routes;
    int route_count;
    int route_alloc;
    json_t *json;           /* parsed payload, cached */
};

bool msg_type_valid (int type);

/* message.c: give msg (which has no payload) a new shared buffer of size
 * bytes plus the NUL after them, for the caller to fill; NULL on ENOMEM.
 */
void *msg_payload_alloc (struct canopy_msg *msg, size_t size);

/* message.c: make the size bytes at data, which someone else owns, the
 * payload of msg (which has none) without copying them; data[size] must
 * be a NUL.  release (arg) is called, from whichever thread drops the
 * last message sharing them, when they are no longer needed.  Returns 0,
 * or -1 with ENOMEM (msg unchanged; data is still the caller's).  A
 * payload received in a ZeroMQ frame stays in that frame this way
 * (msg_codec.c).
 */
int msg_payload_attach_external (struct canopy_msg *msg, void *data, size_t size,
                                 void (*release)(void *arg), void *arg);

/* message.c: one more reference to msg's shared payload buffer, released
 * by msg_payload_unref (hint) from any thread: for zmq_msg_init_data.
 * NULL if the payload is not shared.
 */
void *msg_payload_ref (const struct canopy_msg *msg);
void msg_payload_unref (void *data, void *hint);

/* Big-endian 32-bit fields of the flat record and of a stream frame's
 * length prefix.
 */
static inline void msg_put32 (void *p, uint32_t v)
{
    uint8_t *b = p;
    b[0] = v >> 24;
    b[1] = v >> 16;
    b[2] = v >> 8;
    b[3] = v;
}

static inline uint32_t msg_get32 (const void *p)
{
    const uint8_t *b = p;
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16)
         | ((uint32_t)b[2] << 8) | (uint32_t)b[3];
}

/* msg_codec.c: a message's flat record (canopy_msg_encode) is its head,
 * then its payload's bytes.  msg_encode_head writes the head, exactly
 * msg_encode_head_size bytes (the payload's length included), so that a
 * stream can send the payload from where it is (msg_frame_send).
 */
size_t msg_encode_head_size (const struct canopy_msg *msg);
void msg_encode_head (const struct canopy_msg *msg, void *buf);

/* msg_codec.c: discard the rest of a multipart ZeroMQ message. */
void msg_zsock_drain (void *sock);

#endif
