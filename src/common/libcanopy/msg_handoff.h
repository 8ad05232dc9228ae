/* msg_handoff.h - pass messages between the threads of one process over a
 * ZeroMQ inproc socket without encoding them.
 *
 * The broker and its module threads talk over inproc ROUTER/DEALER
 * sockets.  Encoding every message into frames and decoding it again on
 * the far side cost more than the work most requests ask for, so on these
 * links a message travels as a pointer: the sender makes a private copy
 * (the caller keeps its own message and may go on using it), and the copy
 * rides in one frame whose content is the message itself.  The receiver
 * takes the copy over.  A frame that is never received (the socket closes
 * with messages queued) releases its copy when ZeroMQ drops it, so nothing
 * leaks and no message is ever shared between two threads.
 *
 * Only for inproc sockets whose peers are in this process and use these
 * calls: a pointer means nothing anywhere else.
 */
#ifndef CANOPY_MSG_HANDOFF_H
#define CANOPY_MSG_HANDOFF_H

#include <stdbool.h>
#include <canopy/message.h>

/* Send a copy of 'msg' (to peer 'dest' when 'sock' is a ROUTER, else NULL).
 * 'nonblock' fails with EAGAIN instead of waiting at the high-water mark.
 * Returns 0, or -1 with errno (EINVAL, ENOMEM, or ZeroMQ's errno); on
 * failure nothing was queued.
 */
int msg_handoff_send (void *sock, const char *dest, const canopy_msg_t *msg,
                      bool nonblock);

/* The same, consuming the caller's reference to 'msg' (whether or not
 * the send succeeds).  When that reference is the only one, the message
 * itself is handed off, with no copy: a response a service has just built
 * and will not touch again.
 */
int msg_handoff_send_owned (void *sock, const char *dest, canopy_msg_t *msg,
                            bool nonblock);

/* Receive a message sent with msg_handoff_send.  On a ROUTER, pass
 * 'sender' to get the peer identity (malloc'd, the caller frees it).
 * Returns the message (the caller owns one reference), or NULL with errno:
 * EAGAIN (nonblock, nothing queued), EPROTO (a frame that is not a
 * hand-off: it is discarded whole), ENOMEM, or ZeroMQ's errno (ETERM...).
 */
canopy_msg_t *msg_handoff_recv (void *sock, char **sender, bool nonblock);

#endif
