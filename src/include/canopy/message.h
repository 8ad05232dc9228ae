/* canopy/message.h - the canopy message (DESIGN.md section 2).
 *
 * A message is: an optional stack of route identities, a topic string
 * ("service.method"), an optional payload (JSON text or raw bytes) and a
 * fixed 20-byte header: magic, version, type, flags, userid, rolemask and two
 * 32-bit words whose meaning depends on the type:
 *
 *   request:  nodeid,  matchtag
 *   response: errnum,  matchtag
 *   event:    sequence, (unused)
 *   control:  control type, status
 *
 * On a ZeroMQ socket a message is sent as frames: routes (most recent hop
 * first), an empty delimiter (only if the ROUTE flag is set), the topic, the
 * payload, and the header last.  On a byte stream (the local connector) the
 * same pieces are packed into one length-prefixed record (canopy_msg_encode).
 *
 * Ownership: messages are reference counted.  canopy_msg_decref() frees the
 * message when the last reference goes; it accepts NULL and keeps errno.
 * Decoders never trust input: anything malformed fails with EPROTO and
 * anything over the size limit with EMSGSIZE.
 */
#ifndef CANOPY_MESSAGE_H
#define CANOPY_MESSAGE_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_msg canopy_msg_t;

enum canopy_msgtype {
    CANOPY_MSGTYPE_REQUEST = 0x01,
    CANOPY_MSGTYPE_RESPONSE = 0x02,
    CANOPY_MSGTYPE_EVENT = 0x04,
    CANOPY_MSGTYPE_CONTROL = 0x08,
    CANOPY_MSGTYPE_ANY = 0x0f,
};

enum canopy_msgflag_b {
    CANOPY_MSGFLAG_TOPIC = 0x01,
    CANOPY_MSGFLAG_PAYLOAD = 0x02,
    CANOPY_MSGFLAG_NORESPONSE = 0x04,
    CANOPY_MSGFLAG_ROUTE = 0x08,
    CANOPY_MSGFLAG_UPSTREAM = 0x10,
    CANOPY_MSGFLAG_STREAMING = 0x20,
    CANOPY_MSGFLAG_RAW = 0x40,      /* payload is raw bytes, not JSON */
};

enum {
    CANOPY_MSG_MAGIC = 0xCA,
    CANOPY_MSG_VERSION = 1,
    CANOPY_MSG_HDR_SIZE = 20,
    CANOPY_MSG_MAX_ROUTES = 64,
    CANOPY_MSG_MAX_ROUTE_LEN = 64,
    CANOPY_MSG_MAX_TOPIC_LEN = 255,
};

/* Largest message accepted by any decoder (bytes, all frames together).
 * Values bigger than 64 KiB are chunked by the KVS, so this only bounds
 * batches (fences, transactions).
 */
#define CANOPY_MSG_SIZE_MAX (256u * 1024 * 1024)

canopy_msg_t *canopy_msg_create (int type);
canopy_msg_t *canopy_msg_incref (canopy_msg_t *msg);
void canopy_msg_decref (canopy_msg_t *msg);
/* Deep copy.  If payload is false, the copy has no payload. */
canopy_msg_t *canopy_msg_copy (const canopy_msg_t *msg, bool payload);

int canopy_msg_get_type (const canopy_msg_t *msg);
int canopy_msg_set_type (canopy_msg_t *msg, int type);
uint8_t canopy_msg_get_flags (const canopy_msg_t *msg);
int canopy_msg_set_flag (canopy_msg_t *msg, uint8_t flag, bool value);
bool canopy_msg_has_flag (const canopy_msg_t *msg, uint8_t flag);

int canopy_msg_set_topic (canopy_msg_t *msg, const char *topic);
/* Returns the topic, or NULL with errno = EPROTO if the message has none. */
const char *canopy_msg_get_topic (const canopy_msg_t *msg);

/* Payload.  set_payload copies 'size' bytes (NULL/0 clears the payload).
 * set_string stores a NUL-terminated JSON text (the NUL is not sent).
 * get_payload returns a pointer into the message (valid for its lifetime).
 * get_string returns the payload as a NUL-terminated string, or NULL if the
 * message has no payload; EPROTO if it contains an embedded NUL.
 */
int canopy_msg_set_payload (canopy_msg_t *msg, const void *data, size_t size);
/* Takes ownership of malloc'd data, even on failure. */
int canopy_msg_set_payload_nocopy (canopy_msg_t *msg, void *data, size_t size);
/* Give msg a new payload of 'size' bytes (1 to CANOPY_MSG_SIZE_MAX) for
 * the caller to fill in place, replacing any payload: a large payload
 * built straight into the message instead of built, then copied by
 * set_payload.  The bytes are the message's; fill them before the message
 * is sent or copied and do not change them after.  Returns the buffer (a
 * NUL follows its size bytes), or NULL with errno EINVAL, EMSGSIZE or
 * ENOMEM, msg unchanged.
 */
void *canopy_msg_payload_reserve (canopy_msg_t *msg, size_t size);
/* Make src's payload from byte 'offset' on the payload of msg, without
 * copying when src's buffer is shared (a payload received, copied or set
 * with set_payload): both messages then hold the one buffer, whose bytes
 * never change.  An event published from a request's payload
 * ("topic\0body") is its body this way.  EINVAL if offset is past the
 * payload or msg is src; ENOMEM; on failure msg is unchanged.
 */
int canopy_msg_share_payload (canopy_msg_t *msg, const canopy_msg_t *src,
                              size_t offset);
int canopy_msg_get_payload (const canopy_msg_t *msg,
                            const void **data,
                            size_t *size);
int canopy_msg_set_string (canopy_msg_t *msg, const char *s);
int canopy_msg_get_string (const canopy_msg_t *msg, const char **s);
int canopy_msg_pack (canopy_msg_t *msg, const char *fmt, ...);
/* Parse the JSON payload (cached in the message; returns a borrowed ref). */
int canopy_msg_get_json (const canopy_msg_t *msg, json_t **o);
int canopy_msg_unpack (const canopy_msg_t *msg, const char *fmt, ...);

int canopy_msg_set_userid (canopy_msg_t *msg, uint32_t userid);
int canopy_msg_get_userid (const canopy_msg_t *msg, uint32_t *userid);
int canopy_msg_set_rolemask (canopy_msg_t *msg, uint32_t rolemask);
int canopy_msg_get_rolemask (const canopy_msg_t *msg, uint32_t *rolemask);

/* Type-specific words.  Each fails with EPROTO on a message of another type. */
int canopy_msg_set_nodeid (canopy_msg_t *msg, uint32_t nodeid);
int canopy_msg_get_nodeid (const canopy_msg_t *msg, uint32_t *nodeid);
int canopy_msg_set_matchtag (canopy_msg_t *msg, uint32_t matchtag);
int canopy_msg_get_matchtag (const canopy_msg_t *msg, uint32_t *matchtag);
int canopy_msg_set_errnum (canopy_msg_t *msg, int errnum);
int canopy_msg_get_errnum (const canopy_msg_t *msg, int *errnum);
int canopy_msg_set_seq (canopy_msg_t *msg, uint32_t seq);
int canopy_msg_get_seq (const canopy_msg_t *msg, uint32_t *seq);
int canopy_msg_set_control (canopy_msg_t *msg, int ctype, int status);
int canopy_msg_get_control (const canopy_msg_t *msg, int *ctype, int *status);

/* Route stack.  route_enable() sets the ROUTE flag (an empty stack);
 * push adds a hop on top, pop removes the top (returns it in *id if non-NULL,
 * caller frees).  route_first() is the top (most recent hop), route_last()
 * the bottom (the original sender).  route_count() is -1 with EPROTO if the
 * ROUTE flag is unset.
 */
int canopy_msg_route_enable (canopy_msg_t *msg);
void canopy_msg_route_disable (canopy_msg_t *msg);
int canopy_msg_route_push (canopy_msg_t *msg, const char *id);
int canopy_msg_route_pop (canopy_msg_t *msg, char **id);
const char *canopy_msg_route_first (const canopy_msg_t *msg);
const char *canopy_msg_route_last (const canopy_msg_t *msg);
const char *canopy_msg_route_at (const canopy_msg_t *msg, int depth);
int canopy_msg_route_count (const canopy_msg_t *msg);
/* "a!b!c" bottom to top, for diagnostics (caller frees). */
char *canopy_msg_route_string (const canopy_msg_t *msg);

/* Flat encoding (one record, used on byte streams and by fuzzers).
 * encode: *buf is malloc'd, caller frees.
 * decode: EPROTO on malformed input, EMSGSIZE if size > CANOPY_MSG_SIZE_MAX.
 */
int canopy_msg_encode (const canopy_msg_t *msg, void **buf, size_t *size);
size_t canopy_msg_encode_size (const canopy_msg_t *msg);
int canopy_msg_encode_into (const canopy_msg_t *msg, void *buf, size_t size);
canopy_msg_t *canopy_msg_decode (const void *buf, size_t size);

/* ZeroMQ frames.  sendzsock sends all frames (ZMQ_DONTWAIT not used);
 * recvzsock receives one whole multipart message; on a malformed message
 * the remaining frames are drained and EPROTO is returned.
 */
int canopy_msg_sendzsock (void *sock, const canopy_msg_t *msg);
int canopy_msg_sendzsock_ex (void *sock, const canopy_msg_t *msg, bool nonblock);
canopy_msg_t *canopy_msg_recvzsock (void *sock);
/* ROUTER sockets: 'dest' (if non-NULL) is sent first to select the peer;
 * 'sender' (if non-NULL) receives the peer identity that ZeroMQ prepends
 * (caller frees).  nonblock: EAGAIN if nothing can be sent/received now.
 * A message whose sender identity ZeroMQ generated (it starts with a zero
 * byte: a peer that set none, or what was left queued on a connection
 * that ROUTER_HANDOVER gave to a newer one) is consumed and refused with
 * ENOTCONN; other malformed messages with EPROTO.
 */
int canopy_msg_sendzsock_to (void *sock,
                             const char *dest,
                             const canopy_msg_t *msg,
                             bool nonblock);
canopy_msg_t *canopy_msg_recvzsock_from (void *sock, char **sender, bool nonblock);

const char *canopy_msg_typestr (int type);

/* Build a response to 'request': same route stack and matchtag, payload
 * unset.  errnum 0 means success.
 */
canopy_msg_t *canopy_response_derive (const canopy_msg_t *request, int errnum);

/* Error response payload: the text (may be NULL).  canopy_msg_errstr returns
 * the error text carried by a response, or NULL.
 */
const char *canopy_msg_errstr (const canopy_msg_t *msg);

/* Matching rules used by message handlers: type mask and topic glob. */
struct canopy_match {
    int typemask;
    uint32_t matchtag;      /* 0 = any */
    const char *topic_glob; /* NULL or "*" = any */
};
#define CANOPY_MATCH_ANY                                              \
    (struct canopy_match){ .typemask = CANOPY_MSGTYPE_ANY,            \
                           .matchtag = 0,                             \
                           .topic_glob = NULL }
#define CANOPY_MATCH_EVENT                                            \
    (struct canopy_match){ .typemask = CANOPY_MSGTYPE_EVENT,          \
                           .matchtag = 0,                             \
                           .topic_glob = NULL }
#define CANOPY_MATCH_REQUEST                                          \
    (struct canopy_match){ .typemask = CANOPY_MSGTYPE_REQUEST,        \
                           .matchtag = 0,                             \
                           .topic_glob = NULL }
bool canopy_msg_cmp (const canopy_msg_t *msg, struct canopy_match match);

#ifdef __cplusplus
}
#endif
#endif
