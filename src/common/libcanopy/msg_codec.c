/* msg_codec.c - wire encodings of canopy messages.
 *
 * Two encodings, both carrying the same 20-byte header (message.h):
 *
 * ZeroMQ frames:  [dest] [route top] ... [route bottom] [""] [topic] [payload] [header]
 *   dest is present only when sending on a ROUTER (it selects the peer and
 *   is consumed by ZeroMQ); on a ROUTER receive the peer identity arrives
 *   first and is returned separately as 'sender'.  The payload frame ends
 *   with a NUL that is not part of the payload (every payload has one
 *   after it in memory, message_private.h): a large received payload is
 *   then used where ZeroMQ put it, NUL-terminated as every payload is.
 *
 * Flat record (byte streams):
 *   header (20)
 *   if ROUTE:   u8 count, then count x (u8 len, bytes)   top first
 *   if TOPIC:   u8 len, bytes
 *   if PAYLOAD: u32 len, bytes
 *
 * All integers are big-endian.  Decoders check every length against what
 * is left, the limits of message.h, and the flag/frame agreement; any
 * mismatch is EPROTO, anything too large EMSGSIZE.  Nothing here aborts.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <zmq.h>
#include <canopy/message.h>
#include "message_private.h"

static const uint8_t known_flags = CANOPY_MSGFLAG_TOPIC
                                 | CANOPY_MSGFLAG_PAYLOAD
                                 | CANOPY_MSGFLAG_NORESPONSE
                                 | CANOPY_MSGFLAG_ROUTE
                                 | CANOPY_MSGFLAG_UPSTREAM
                                 | CANOPY_MSGFLAG_STREAMING
                                 | CANOPY_MSGFLAG_RAW;

static void encode_header (const canopy_msg_t *msg, uint8_t *p)
{
    p[0] = CANOPY_MSG_MAGIC;
    p[1] = CANOPY_MSG_VERSION;
    p[2] = msg->type;
    p[3] = msg->flags;
    msg_put32 (p + 4, msg->userid);
    msg_put32 (p + 8, msg->rolemask);
    msg_put32 (p + 12, msg->aux1);
    msg_put32 (p + 16, msg->aux2);
}

static int decode_header (canopy_msg_t *msg, const uint8_t *p)
{
    if (p[0] != CANOPY_MSG_MAGIC || p[1] != CANOPY_MSG_VERSION)
        return -1;
    if (!msg_type_valid (p[2]) || (p[3] & ~known_flags))
        return -1;
    msg->type = p[2];
    msg->flags = p[3];
    msg->userid = msg_get32 (p + 4);
    msg->rolemask = msg_get32 (p + 8);
    msg->aux1 = msg_get32 (p + 12);
    msg->aux2 = msg_get32 (p + 16);
    return 0;
}

static bool valid_text (const void *s, size_t len, size_t max)
{
    return len > 0 && len <= max && !memchr (s, '\0', len);
}

/* Attach decoded pieces to a message being built (no validation here). */
static int set_topic_n (canopy_msg_t *msg, const void *s, size_t len)
{
    if (!(msg->topic = malloc (len + 1)))
        return -1;
    memcpy (msg->topic, s, len);
    msg->topic[len] = '\0';
    return 0;
}

static int set_payload_n (canopy_msg_t *msg, const void *s, size_t len)
{
    void *p = msg_payload_alloc (msg, len);
    if (!p)
        return -1;
    memcpy (p, s, len);
    return 0;
}

static int push_route_n (canopy_msg_t *msg, const void *s, size_t len)
{
    char *id;
    if (msg->route_count == msg->route_alloc) {
        int n = msg->route_alloc ? msg->route_alloc * 2 : 4;
        char **r = realloc (msg->routes, n * sizeof (char *));
        if (!r)
            return -1;
        msg->routes = r;
        msg->route_alloc = n;
    }
    if (!(id = malloc (len + 1)))
        return -1;
    memcpy (id, s, len);
    id[len] = '\0';
    msg->routes[msg->route_count++] = id;
    return 0;
}

/* Routes arrive top first but are stored bottom first. */
static void reverse_routes (canopy_msg_t *msg)
{
    for (int i = 0, j = msg->route_count - 1; i < j; i++, j--) {
        char *tmp = msg->routes[i];
        msg->routes[i] = msg->routes[j];
        msg->routes[j] = tmp;
    }
}

size_t canopy_msg_encode_size (const canopy_msg_t *msg)
{
    size_t size = CANOPY_MSG_HDR_SIZE;
    if (msg->flags & CANOPY_MSGFLAG_ROUTE) {
        size += 1;
        for (int i = 0; i < msg->route_count; i++)
            size += 1 + strlen (msg->routes[i]);
    }
    if (msg->flags & CANOPY_MSGFLAG_TOPIC)
        size += 1 + strlen (msg->topic);
    if (msg->flags & CANOPY_MSGFLAG_PAYLOAD)
        size += 4 + msg->payload_size;
    return size;
}

size_t msg_encode_head_size (const canopy_msg_t *msg)
{
    size_t size = canopy_msg_encode_size (msg);
    if (msg->flags & CANOPY_MSGFLAG_PAYLOAD)
        size -= msg->payload_size;
    return size;
}

/* The flat record but the payload's bytes (they come last). */
void msg_encode_head (const canopy_msg_t *msg, void *buf)
{
    uint8_t *p = buf;

    encode_header (msg, p);
    p += CANOPY_MSG_HDR_SIZE;
    if (msg->flags & CANOPY_MSGFLAG_ROUTE) {
        *p++ = msg->route_count;
        for (int i = msg->route_count - 1; i >= 0; i--) {
            size_t len = strlen (msg->routes[i]);
            *p++ = len;
            memcpy (p, msg->routes[i], len);
            p += len;
        }
    }
    if (msg->flags & CANOPY_MSGFLAG_TOPIC) {
        size_t len = strlen (msg->topic);
        *p++ = len;
        memcpy (p, msg->topic, len);
        p += len;
    }
    if (msg->flags & CANOPY_MSGFLAG_PAYLOAD)
        msg_put32 (p, msg->payload_size);
}

int canopy_msg_encode_into (const canopy_msg_t *msg, void *buf, size_t size)
{
    if (!msg || !buf || size < canopy_msg_encode_size (msg)) {
        errno = EINVAL;
        return -1;
    }
    msg_encode_head (msg, buf);
    if (msg->flags & CANOPY_MSGFLAG_PAYLOAD)
        memcpy ((uint8_t *)buf + msg_encode_head_size (msg), msg->payload,
                msg->payload_size);
    return 0;
}

int canopy_msg_encode (const canopy_msg_t *msg, void **bufp, size_t *sizep)
{
    size_t size;
    void *buf;

    if (!msg || !bufp || !sizep) {
        errno = EINVAL;
        return -1;
    }
    size = canopy_msg_encode_size (msg);
    if (size > CANOPY_MSG_SIZE_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    if (!(buf = malloc (size))) {
        errno = ENOMEM;
        return -1;
    }
    (void)canopy_msg_encode_into (msg, buf, size);
    *bufp = buf;
    *sizep = size;
    return 0;
}

canopy_msg_t *canopy_msg_decode (const void *buf, size_t size)
{
    const uint8_t *p = buf;
    const uint8_t *end;
    canopy_msg_t *msg;

    if (!buf && size > 0) {
        errno = EINVAL;
        return NULL;
    }
    if (size > CANOPY_MSG_SIZE_MAX) {
        errno = EMSGSIZE;
        return NULL;
    }
    if (size < CANOPY_MSG_HDR_SIZE) {
        errno = EPROTO;
        return NULL;
    }
    end = p + size;
    if (!(msg = calloc (1, sizeof (*msg)))) {
        errno = ENOMEM;
        return NULL;
    }
    msg->refcount = 1;
    if (decode_header (msg, p) < 0)
        goto proto;
    p += CANOPY_MSG_HDR_SIZE;
    if (msg->flags & CANOPY_MSGFLAG_ROUTE) {
        if (p >= end)
            goto proto;
        int count = *p++;
        if (count > CANOPY_MSG_MAX_ROUTES)
            goto proto;
        for (int i = 0; i < count; i++) {
            if (p >= end)
                goto proto;
            size_t len = *p++;
            if ((size_t)(end - p) < len
                || !valid_text (p, len, CANOPY_MSG_MAX_ROUTE_LEN))
                goto proto;
            if (push_route_n (msg, p, len) < 0)
                goto nomem;
            p += len;
        }
        reverse_routes (msg);
    }
    if (msg->flags & CANOPY_MSGFLAG_TOPIC) {
        if (p >= end)
            goto proto;
        size_t len = *p++;
        if ((size_t)(end - p) < len
            || !valid_text (p, len, CANOPY_MSG_MAX_TOPIC_LEN))
            goto proto;
        if (set_topic_n (msg, p, len) < 0)
            goto nomem;
        p += len;
    }
    if (msg->flags & CANOPY_MSGFLAG_PAYLOAD) {
        if (end - p < 4)
            goto proto;
        uint32_t len = msg_get32 (p);
        p += 4;
        if ((size_t)(end - p) < len || len == 0)
            goto proto;
        if (set_payload_n (msg, p, len) < 0)
            goto nomem;
        p += len;
    }
    if (p != end)
        goto proto;
    return msg;
nomem:
    canopy_msg_decref (msg);
    errno = ENOMEM;
    return NULL;
proto:
    canopy_msg_decref (msg);
    errno = EPROTO;
    return NULL;
}

/* ZeroMQ */

/* Send one frame.  *first holds ZMQ_DONTWAIT (or 0) for the first frame
 * actually sent and is cleared afterwards: once ZeroMQ accepts the first
 * frame it queues the rest of the message atomically.
 */
static int send_frame (void *sock, const void *data, size_t len, bool last, int *first)
{
    int flags = (last ? 0 : ZMQ_SNDMORE) | *first;
    *first = 0;
    return zmq_send (sock, data, len, flags) < 0 ? -1 : 0;
}

/* A large shared payload is sent without copying: ZeroMQ keeps a
 * reference to the buffer until its I/O thread has written it (the
 * buffer's count is atomic, message_private.h).  Small ones are copied,
 * which is cheaper than the bookkeeping.
 */
enum { ZEROCOPY_MIN = 4096 };

static int send_payload (void *sock, const canopy_msg_t *msg, int *first)
{
    void *hint;
    zmq_msg_t frame;
    int flags = ZMQ_SNDMORE | *first;
    size_t n = msg->payload_size + 1;       /* with the NUL after it */

    if (msg->payload_size < ZEROCOPY_MIN || !(hint = msg_payload_ref (msg)))
        return send_frame (sock, msg->payload, n, false, first);
    if (zmq_msg_init_data (&frame, msg->payload, n, msg_payload_unref, hint) < 0) {
        msg_payload_unref (NULL, hint);
        return -1;
    }
    *first = 0;
    if (zmq_msg_send (&frame, sock, flags) < 0) {
        int e = errno;
        zmq_msg_close (&frame);     /* drops the reference */
        errno = e;
        return -1;
    }
    return 0;
}

int canopy_msg_sendzsock_to (void *sock,
                             const char *dest,
                             const canopy_msg_t *msg,
                             bool nonblock)
{
    uint8_t hdr[CANOPY_MSG_HDR_SIZE];
    int first = nonblock ? ZMQ_DONTWAIT : 0;

    if (!sock || !msg) {
        errno = EINVAL;
        return -1;
    }
    if (dest && send_frame (sock, dest, strlen (dest), false, &first) < 0)
        return -1;
    if (msg->flags & CANOPY_MSGFLAG_ROUTE) {
        for (int i = msg->route_count - 1; i >= 0; i--) {
            if (send_frame (sock, msg->routes[i], strlen (msg->routes[i]), false,
                            &first) < 0)
                return -1;
        }
        if (send_frame (sock, NULL, 0, false, &first) < 0)
            return -1;
    }
    if ((msg->flags & CANOPY_MSGFLAG_TOPIC)
        && send_frame (sock, msg->topic, strlen (msg->topic), false, &first) < 0)
        return -1;
    if ((msg->flags & CANOPY_MSGFLAG_PAYLOAD)
        && send_payload (sock, msg, &first) < 0)
        return -1;
    encode_header (msg, hdr);
    return send_frame (sock, hdr, sizeof (hdr), true, &first);
}

int canopy_msg_sendzsock_ex (void *sock, const canopy_msg_t *msg, bool nonblock)
{
    return canopy_msg_sendzsock_to (sock, NULL, msg, nonblock);
}

int canopy_msg_sendzsock (void *sock, const canopy_msg_t *msg)
{
    return canopy_msg_sendzsock_to (sock, NULL, msg, false);
}

static void frame_release (void *arg)
{
    zmq_msg_t *frame = arg;
    zmq_msg_close (frame);
    free (frame);
}

/* The payload of a received frame (its bytes, then the NUL the sender
 * added): a large one stays in the frame, which the message keeps
 * (msg_payload_attach_external; the frame is moved out of 'frame'); a
 * small one is copied, as it is sent.  A large payload copied here had
 * been a fresh buffer and a copy per hop for every large event and
 * relay on its way through the tree (the broker's thread: 512 KiB
 * kvs.prime events, a page fault every 4 KiB).
 */
static int recv_payload (canopy_msg_t *msg, zmq_msg_t *frame)
{
    size_t size = zmq_msg_size (frame) - 1;
    zmq_msg_t *keep;

    if (size < ZEROCOPY_MIN)
        return set_payload_n (msg, zmq_msg_data (frame), size);
    if (!(keep = malloc (sizeof (*keep))))
        return -1;
    zmq_msg_init (keep);
    if (zmq_msg_move (keep, frame) < 0
        || msg_payload_attach_external (msg, zmq_msg_data (keep), size,
                                        frame_release, keep) < 0) {
        zmq_msg_close (keep);
        free (keep);
        return -1;
    }
    return 0;
}

#define MAX_FRAMES (CANOPY_MSG_MAX_ROUTES + 5)

void msg_zsock_drain (void *sock)
{
    int more;
    size_t len = sizeof (more);
    zmq_msg_t f;

    while (zmq_getsockopt (sock, ZMQ_RCVMORE, &more, &len) == 0 && more) {
        zmq_msg_init (&f);
        if (zmq_msg_recv (&f, sock, 0) < 0) {
            zmq_msg_close (&f);
            break;
        }
        zmq_msg_close (&f);
        len = sizeof (more);
    }
}

canopy_msg_t *canopy_msg_recvzsock_from (void *sock, char **sender, bool nonblock)
{
    zmq_msg_t frames[MAX_FRAMES];
    int n = 0;
    int errnum = EPROTO;
    size_t total = 0;
    canopy_msg_t *msg = NULL;
    char *id = NULL;
    int more;
    size_t len;

    if (!sock) {
        errno = EINVAL;
        return NULL;
    }
    do {
        if (n == MAX_FRAMES) {
            msg_zsock_drain (sock);
            goto error;
        }
        zmq_msg_init (&frames[n]);
        if (zmq_msg_recv (&frames[n], sock, (n == 0 && nonblock) ? ZMQ_DONTWAIT : 0) < 0) {
            errnum = errno;
            zmq_msg_close (&frames[n]);
            if (n > 0)
                msg_zsock_drain (sock);
            goto error;
        }
        total += zmq_msg_size (&frames[n]);
        n++;
        len = sizeof (more);
        if (zmq_getsockopt (sock, ZMQ_RCVMORE, &more, &len) < 0)
            more = 0;
    } while (more);

    int first = 0;
    if (sender) {
        size_t idlen = zmq_msg_size (&frames[0]);
        if (idlen > 0 && *(const uint8_t *)zmq_msg_data (&frames[0]) == 0) {
            errnum = ENOTCONN;  /* an identity ZeroMQ made up */
            goto error;
        }
        if (n < 2 || !valid_text (zmq_msg_data (&frames[0]), idlen,
                                  CANOPY_MSG_MAX_ROUTE_LEN))
            goto error;
        if (!(id = malloc (idlen + 1))) {
            errnum = ENOMEM;
            goto error;
        }
        memcpy (id, zmq_msg_data (&frames[0]), idlen);
        id[idlen] = '\0';
        first = 1;
    }
    if (total > CANOPY_MSG_SIZE_MAX + 1) {  /* a payload's NUL is not counted */
        errnum = EMSGSIZE;
        goto error;
    }
    zmq_msg_t *hdr = &frames[n - 1];
    if (zmq_msg_size (hdr) != CANOPY_MSG_HDR_SIZE)
        goto error;
    if (!(msg = calloc (1, sizeof (*msg)))) {
        errnum = ENOMEM;
        goto error;
    }
    msg->refcount = 1;
    if (decode_header (msg, zmq_msg_data (hdr)) < 0)
        goto error;
    int i = first;
    int last = n - 1;   /* index of header frame */
    if (msg->flags & CANOPY_MSGFLAG_ROUTE) {
        while (i < last && zmq_msg_size (&frames[i]) > 0) {
            size_t flen = zmq_msg_size (&frames[i]);
            if (msg->route_count >= CANOPY_MSG_MAX_ROUTES
                || !valid_text (zmq_msg_data (&frames[i]), flen,
                                CANOPY_MSG_MAX_ROUTE_LEN))
                goto error;
            if (push_route_n (msg, zmq_msg_data (&frames[i]), flen) < 0) {
                errnum = ENOMEM;
                goto error;
            }
            i++;
        }
        if (i >= last)          /* no delimiter */
            goto error;
        i++;                    /* skip delimiter */
        reverse_routes (msg);
    }
    if (msg->flags & CANOPY_MSGFLAG_TOPIC) {
        if (i >= last)
            goto error;
        size_t flen = zmq_msg_size (&frames[i]);
        if (!valid_text (zmq_msg_data (&frames[i]), flen, CANOPY_MSG_MAX_TOPIC_LEN))
            goto error;
        if (set_topic_n (msg, zmq_msg_data (&frames[i]), flen) < 0) {
            errnum = ENOMEM;
            goto error;
        }
        i++;
    }
    if (msg->flags & CANOPY_MSGFLAG_PAYLOAD) {
        /* the payload's bytes and a NUL (send_payload) */
        if (i >= last || zmq_msg_size (&frames[i]) < 2
            || ((const char *)zmq_msg_data (&frames[i]))[zmq_msg_size (&frames[i]) - 1])
            goto error;
        if (recv_payload (msg, &frames[i]) < 0) {
            errnum = ENOMEM;
            goto error;
        }
        i++;
    }
    if (i != last)
        goto error;
    for (int j = 0; j < n; j++)
        zmq_msg_close (&frames[j]);
    if (sender)
        *sender = id;
    return msg;
error:
    for (int j = 0; j < n; j++)
        zmq_msg_close (&frames[j]);
    canopy_msg_decref (msg);
    free (id);
    errno = errnum;
    return NULL;
}

canopy_msg_t *canopy_msg_recvzsock (void *sock)
{
    return canopy_msg_recvzsock_from (sock, NULL, false);
}
