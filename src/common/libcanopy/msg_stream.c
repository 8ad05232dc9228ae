/* msg_stream.c - see msg_stream.h
 *
 * The buffer grows to hold the largest frame seen (bounded by the message
 * size limit) and compacts when the unread tail is small, so steady-state
 * reads do not allocate.  It grows with the bytes actually received, never
 * with what a frame header claims: each read asks for at most as much room
 * again as the buffer already holds (at least READ_CHUNK), so a peer that
 * sends a 4-byte header claiming 256 MiB costs 64 KiB, not 256 MiB, and
 * a real large frame still arrives in O(log n) reallocations.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "msg_stream.h"
#include "message_private.h"

#define READ_CHUNK 65536

void msg_instream_init (struct msg_instream *s)
{
    memset (s, 0, sizeof (*s));
}

void msg_instream_release (struct msg_instream *s)
{
    free (s->buf);
    memset (s, 0, sizeof (*s));
}

/* How many bytes the frame at the read offset needs in total (or 4 if
 * its length is not known yet).
 */
static size_t frame_need (const struct msg_instream *s)
{
    if (s->len - s->off < 4)
        return 4;
    return 4 + (size_t)msg_get32 (s->buf + s->off);
}

static int reserve (struct msg_instream *s, size_t want)
{
    /* compact */
    if (s->off > 0 && (s->off == s->len || s->off > s->cap / 2)) {
        memmove (s->buf, s->buf + s->off, s->len - s->off);
        s->len -= s->off;
        s->off = 0;
    }
    if (s->cap - s->len >= want)
        return 0;
    size_t cap = s->cap ? s->cap : READ_CHUNK;
    while (cap - s->len < want)
        cap *= 2;
    char *p = realloc (s->buf, cap);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    s->buf = p;
    s->cap = cap;
    return 0;
}

ssize_t msg_instream_fill (struct msg_instream *s, int fd)
{
    size_t need = frame_need (s);
    size_t have = s->len - s->off;
    size_t want = READ_CHUNK;
    ssize_t n;

    if (need > 4 + (size_t)CANOPY_MSG_SIZE_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    if (need > have && need - have > want) {
        want = need - have;
        if (want > have && have > READ_CHUNK)
            want = have;        /* double at most: memory follows data */
        else if (want > have)
            want = READ_CHUNK;
    }
    if (reserve (s, want) < 0)
        return -1;
    do {
        n = recv (fd, s->buf + s->len, s->cap - s->len, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n > 0)
        s->len += n;
    return n;
}

bool msg_instream_ready (const struct msg_instream *s)
{
    size_t have = s->len - s->off;
    return have >= 4 && have >= frame_need (s);
}

canopy_msg_t *msg_instream_next (struct msg_instream *s)
{
    size_t need;
    canopy_msg_t *msg;

    if (s->len - s->off < 4) {
        errno = EAGAIN;
        return NULL;
    }
    need = frame_need (s);
    if (need - 4 > CANOPY_MSG_SIZE_MAX) {
        errno = EMSGSIZE;
        return NULL;
    }
    if (s->len - s->off < need) {
        errno = EAGAIN;
        return NULL;
    }
    msg = canopy_msg_decode (s->buf + s->off + 4, need - 4);
    if (!msg) {
        if (errno == ENOMEM)
            return NULL;
        errno = EPROTO;
        return NULL;
    }
    s->off += need;
    if (s->off == s->len)
        s->off = s->len = 0;
    return msg;
}

size_t msg_frame_size (const canopy_msg_t *msg)
{
    size_t size = canopy_msg_encode_size (msg);

    if (size > CANOPY_MSG_SIZE_MAX) {
        errno = EMSGSIZE;
        return 0;
    }
    return size + 4;
}

void msg_frame_encode_into (const canopy_msg_t *msg, void *buf, size_t size)
{
    msg_put32 (buf, size - 4);
    (void)canopy_msg_encode_into (msg, (uint8_t *)buf + 4, size - 4);
}

void *msg_frame_encode (const canopy_msg_t *msg, size_t *sizep)
{
    size_t size = msg_frame_size (msg);
    void *buf;

    if (size == 0)
        return NULL;
    if (!(buf = malloc (size))) {
        errno = ENOMEM;
        return NULL;
    }
    msg_frame_encode_into (msg, buf, size);
    *sizep = size;
    return buf;
}

/* The frame is its length, the record's head and the payload, sent with
 * one sendmsg from where each is: a large payload (a fence's values) is
 * not copied into a frame buffer first, which in a new process also meant
 * a page fault for every 4 KiB of it.
 */
int msg_frame_send (int fd, const canopy_msg_t *msg, bool nonblock)
{
    size_t size = msg_frame_size (msg);
    size_t hsize, done = 0;
    uint8_t stackbuf[512], *head = stackbuf;
    const void *payload = NULL;
    size_t plen = 0;
    int rc = -1;

    if (size == 0)
        return -1;
    hsize = 4 + msg_encode_head_size (msg);
    if (hsize > sizeof (stackbuf) && !(head = malloc (hsize))) {
        errno = ENOMEM;
        return -1;
    }
    msg_put32 (head, size - 4);
    msg_encode_head (msg, head + 4);
    if (hsize < size)
        (void)canopy_msg_get_payload (msg, &payload, &plen);
    while (done < size) {
        struct iovec iov[2];
        struct msghdr mh = { .msg_iov = iov };
        if (done < hsize) {
            iov[0] = (struct iovec){ head + done, hsize - done };
            iov[1] = (struct iovec){ (void *)payload, plen };
            mh.msg_iovlen = plen > 0 ? 2 : 1;
        }
        else {
            iov[0] = (struct iovec){ (uint8_t *)payload + (done - hsize), size - done };
            mh.msg_iovlen = 1;
        }
        ssize_t n = sendmsg (fd, &mh,
                             MSG_NOSIGNAL | (nonblock && done == 0 ? MSG_DONTWAIT : 0));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (nonblock && done == 0)
                    goto done;
                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                (void)poll (&pfd, 1, -1);
                continue;
            }
            if (errno == EPIPE)
                errno = ECONNRESET;
            goto done;
        }
        done += n;
    }
    rc = 0;
done:
    if (head != stackbuf) {
        int saved_errno = errno;
        free (head);
        errno = saved_errno;
    }
    return rc;
}

int msg_stamp_credentials (canopy_msg_t *msg, uint32_t peer_userid, uint32_t peer_rolemask)
{
    uint32_t userid = CANOPY_USERID_UNKNOWN;
    uint32_t rolemask = 0;

    (void)canopy_msg_get_userid (msg, &userid);
    (void)canopy_msg_get_rolemask (msg, &rolemask);
    if (!(peer_rolemask & CANOPY_ROLE_OWNER)
        || userid == CANOPY_USERID_UNKNOWN || rolemask == 0) {
        userid = peer_userid;
        rolemask = peer_rolemask;
    }
    if (canopy_msg_set_userid (msg, userid) < 0
        || canopy_msg_set_rolemask (msg, rolemask | CANOPY_ROLE_LOCAL) < 0)
        return -1;
    return 0;
}

canopy_msg_t *msg_disconnect_create (const char *topic, uint32_t nodeid,
                                     const char *hop, uint32_t userid,
                                     uint32_t rolemask)
{
    canopy_msg_t *msg;

    if (!(msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST)))
        return NULL;
    if (canopy_msg_set_topic (msg, topic) < 0
        || canopy_msg_set_nodeid (msg, nodeid) < 0
        || canopy_msg_set_flag (msg, CANOPY_MSGFLAG_NORESPONSE, true) < 0
        || canopy_msg_route_enable (msg) < 0
        || canopy_msg_route_push (msg, hop) < 0
        || canopy_msg_set_userid (msg, userid) < 0
        || canopy_msg_set_rolemask (msg, rolemask | CANOPY_ROLE_LOCAL) < 0) {
        int saved_errno = errno;
        canopy_msg_decref (msg);
        errno = saved_errno;
        return NULL;
    }
    return msg;
}
