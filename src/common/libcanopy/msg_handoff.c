/* msg_handoff.c - messages between threads as pointers (msg_handoff.h).
 *
 * Design notes:
 * - The frame's content is the canopy_msg_t of a private copy, given to
 *   ZeroMQ with zmq_msg_init_data and a free function that drops the
 *   copy's reference.  The receiver takes a reference of its own before
 *   closing the frame, so the copy outlives the frame; a frame dropped
 *   unread (socket closed, peer gone) frees the copy instead.
 * - The copy has exactly one owner at any time (the sender until
 *   zmq_msg_send succeeds, then ZeroMQ, then the receiver), so the
 *   message's plain reference count is never touched by two threads.
 *   msg_handoff_send_owned skips the copy only when the caller's
 *   reference is the only one, which it gives up: the same holds.
 * - Frames are recognised by size and by a tag word kept beside the
 *   message, so a stray frame is rejected (EPROTO) instead of being
 *   dereferenced as a message.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <zmq.h>
#include "message_private.h"
#include "msg_handoff.h"

#define HANDOFF_TAG 0x63616e6f70796d73ULL   /* "canopyms" */

struct handoff {
    uint64_t tag;
    canopy_msg_t *msg;
};

static void handoff_free (void *data, void *hint)
{
    struct handoff *ho = data;
    if (ho) {
        canopy_msg_decref (ho->msg);
        free (ho);
    }
}

/* Send 'own' (a reference the frame takes over). */
static int send_ref (void *sock, const char *dest, canopy_msg_t *own, bool nonblock)
{
    struct handoff *ho = NULL;
    zmq_msg_t frame;
    int flags = nonblock ? ZMQ_DONTWAIT : 0;

    if (!(ho = calloc (1, sizeof (*ho)))) {
        canopy_msg_decref (own);
        goto nomem;
    }
    ho->tag = HANDOFF_TAG;
    ho->msg = own;
    if (zmq_msg_init_data (&frame, ho, sizeof (*ho), handoff_free, NULL) < 0)
        goto nomem;
    ho = NULL;          /* the frame owns it now */
    if (dest) {
        if (zmq_send (sock, dest, strlen (dest), ZMQ_SNDMORE | flags) < 0)
            goto error;
        flags = 0;      /* the first part was taken: the rest goes whole */
    }
    if (zmq_msg_send (&frame, sock, flags) < 0)
        goto error;
    return 0;
nomem:
    errno = ENOMEM;
    handoff_free (ho, NULL);
    return -1;
error: {
        int e = errno;
        zmq_msg_close (&frame);     /* frees the copy */
        errno = e;
        return -1;
    }
}

int msg_handoff_send (void *sock, const char *dest, const canopy_msg_t *msg,
                      bool nonblock)
{
    canopy_msg_t *cpy;

    if (!sock || !msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(cpy = canopy_msg_copy (msg, true))) {
        errno = ENOMEM;
        return -1;
    }
    return send_ref (sock, dest, cpy, nonblock);
}

int msg_handoff_send_owned (void *sock, const char *dest, canopy_msg_t *msg,
                            bool nonblock)
{
    canopy_msg_t *own;

    if (!sock || !msg) {
        canopy_msg_decref (msg);
        errno = EINVAL;
        return -1;
    }
    if (msg->refcount == 1)
        own = msg;              /* ours alone: no copy */
    else {
        own = canopy_msg_copy (msg, true);
        canopy_msg_decref (msg);
        if (!own) {
            errno = ENOMEM;
            return -1;
        }
    }
    return send_ref (sock, dest, own, nonblock);
}

canopy_msg_t *msg_handoff_recv (void *sock, char **sender, bool nonblock)
{
    zmq_msg_t frame;
    char *id = NULL;
    canopy_msg_t *msg;
    int e;

    if (!sock) {
        errno = EINVAL;
        return NULL;
    }
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, sock, nonblock ? ZMQ_DONTWAIT : 0) < 0)
        goto error_nodrain;
    if (sender) {
        size_t len = zmq_msg_size (&frame);
        if (!zmq_msg_more (&frame)) {
            errno = EPROTO;
            goto error_nodrain;
        }
        if (!(id = malloc (len + 1))) {
            errno = ENOMEM;
            goto error;
        }
        memcpy (id, zmq_msg_data (&frame), len);
        id[len] = '\0';
        zmq_msg_close (&frame);
        zmq_msg_init (&frame);
        if (zmq_msg_recv (&frame, sock, 0) < 0)
            goto error_nodrain;
    }
    struct handoff *ho = zmq_msg_data (&frame);
    if (zmq_msg_more (&frame) || zmq_msg_size (&frame) != sizeof (*ho)
        || ho->tag != HANDOFF_TAG || !ho->msg) {
        errno = EPROTO;
        goto error;
    }
    msg = canopy_msg_incref (ho->msg);
    zmq_msg_close (&frame);     /* drops the frame's reference */
    if (sender)
        *sender = id;
    return msg;
error:
    e = errno;
    msg_zsock_drain (sock);
    errno = e;
error_nodrain:
    e = errno;
    zmq_msg_close (&frame);
    free (id);
    errno = e;
    return NULL;
}
