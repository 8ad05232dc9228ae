/* msg_stream.h - messages over a byte stream (UNIX-domain sockets).
 *
 * Each message is a 4-byte big-endian length followed by the flat record of
 * canopy_msg_encode().  An instream buffers what was read from a socket
 * and yields whole messages; a frame longer than CANOPY_MSG_SIZE_MAX, or a
 * record that does not decode, is EPROTO/EMSGSIZE and the stream must be
 * dropped (it cannot be resynchronised).
 *
 * Used by the client connector and by the broker's local listener.
 */
#ifndef CANOPY_MSG_STREAM_H
#define CANOPY_MSG_STREAM_H

#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>
#include <canopy/message.h>

struct msg_instream {
    char *buf;
    size_t off;         /* start of unread data */
    size_t len;         /* end of data */
    size_t cap;
};

void msg_instream_init (struct msg_instream *s);
void msg_instream_release (struct msg_instream *s);
/* Read what is available from fd (nonblocking).  Returns bytes read (> 0),
 * 0 at EOF, -1 on error (EAGAIN when nothing is available).
 */
ssize_t msg_instream_fill (struct msg_instream *s, int fd);
/* Next whole message, or NULL: EAGAIN (incomplete), EPROTO, EMSGSIZE. */
canopy_msg_t *msg_instream_next (struct msg_instream *s);
/* True if a whole message is buffered. */
bool msg_instream_ready (const struct msg_instream *s);

/* The bytes msg takes as a frame (length prefix included), or 0 with
 * EMSGSIZE if it is larger than CANOPY_MSG_SIZE_MAX.
 */
size_t msg_frame_size (const canopy_msg_t *msg);
/* Encode msg with its length prefix into buf, exactly msg_frame_size()
 * bytes (the caller sized it).
 */
void msg_frame_encode_into (const canopy_msg_t *msg, void *buf, size_t size);
/* Encode msg with its length prefix into a new buffer (caller frees). */
void *msg_frame_encode (const canopy_msg_t *msg, size_t *size);
/* Write msg as one frame to the stream socket fd, waiting in poll() while
 * the socket is full; with 'nonblock', fail with EAGAIN instead if nothing
 * at all could be written (once started, a frame is always finished).
 * -1 with errno: ECONNRESET if the peer is gone, EMSGSIZE, ENOMEM.
 */
int msg_frame_send (int fd, const canopy_msg_t *msg, bool nonblock);

/* Give a request from a local peer (a client of a UNIX-domain socket, or
 * a module) the credentials its connection proved, plus LOCAL.  Only the
 * instance owner may present other credentials (tests of guest access):
 * an owner's request that carries a userid and a rolemask keeps them.
 * Used by the broker's router and by direct channels (direct.h).
 */
int msg_stamp_credentials (canopy_msg_t *msg, uint32_t peer_userid, uint32_t peer_rolemask);

/* The NORESPONSE request 'topic' ("SERVICE.disconnect") that tells a
 * service a local peer has gone: the peer's hop as the sender, its
 * credentials plus LOCAL.  NULL with errno (ENOMEM, EINVAL) on failure.
 * Used by the broker's router and by direct channels (direct.h).
 */
canopy_msg_t *msg_disconnect_create (const char *topic, uint32_t nodeid,
                                     const char *hop, uint32_t userid,
                                     uint32_t rolemask);

#endif
