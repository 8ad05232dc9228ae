/* connector_local.c - client side of a broker's UNIX-domain socket.
 *
 * Sends block until the whole frame is written (the broker never blocks on
 * its clients, so this cannot deadlock); with nonblock, EAGAIN is returned
 * only if nothing at all could be written.  Receives never block: the
 * handle polls the descriptor.  EOF or a malformed frame from the broker is
 * ECONNRESET.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "src/common/libutil/errprintf.h"
#include "handle_private.h"
#include "msg_stream.h"

struct local_conn {
    int fd;
    struct msg_instream in;
};

void *connector_local_create (const char *path, canopy_error_t *error)
{
    struct local_conn *c;
    struct sockaddr_un addr;

    if (strlen (path) >= sizeof (addr.sun_path)) {
        errno = ENAMETOOLONG;
        errprintf (error, "socket path too long: %s", path);
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        errno = ENOMEM;
        return NULL;
    }
    msg_instream_init (&c->in);
    if ((c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        goto error;
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, path);
    if (connect (c->fd, (struct sockaddr *)&addr, sizeof (addr)) < 0)
        goto error;
    return c;
error:
    errprintf (error, "cannot connect to broker at %s: %s", path, strerror (errno));
    if (c->fd >= 0) {
        int saved_errno = errno;
        close (c->fd);
        errno = saved_errno;
    }
    free (c);
    return NULL;
}

static int local_send (void *impl, const canopy_msg_t *msg, bool nonblock)
{
    struct local_conn *c = impl;
    size_t size, done = 0;
    char *buf;

    if (!(buf = msg_frame_encode (msg, &size)))
        return -1;
    while (done < size) {
        ssize_t n = send (c->fd, buf + done, size - done,
                          MSG_NOSIGNAL | (nonblock && done == 0 ? MSG_DONTWAIT : 0));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (nonblock && done == 0)
                    goto error;
                struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
                (void)poll (&pfd, 1, -1);
                continue;
            }
            if (errno == EPIPE)
                errno = ECONNRESET;
            goto error;
        }
        done += n;
    }
    free (buf);
    return 0;
error:
    {
        int saved_errno = errno;
        free (buf);
        errno = saved_errno;
    }
    return -1;
}

static canopy_msg_t *local_recv (void *impl, bool nonblock)
{
    struct local_conn *c = impl;
    canopy_msg_t *msg;

    for (;;) {
        if ((msg = msg_instream_next (&c->in)))
            return msg;
        if (errno != EAGAIN) {
            errno = ECONNRESET;     /* corrupt stream from the broker */
            return NULL;
        }
        ssize_t n = msg_instream_fill (&c->in, c->fd);
        if (n == 0) {
            errno = ECONNRESET;
            return NULL;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return NULL;
            if (errno != ENOMEM)
                errno = ECONNRESET;
            return NULL;
        }
    }
}

static int local_pollfd (void *impl)
{
    return ((struct local_conn *)impl)->fd;
}

static void *local_pollzsock (void *impl)
{
    return NULL;
}

static bool local_pending (void *impl)
{
    return msg_instream_ready (&((struct local_conn *)impl)->in);
}

static void local_close (void *impl)
{
    struct local_conn *c = impl;
    if (c) {
        close (c->fd);
        msg_instream_release (&c->in);
        free (c);
    }
}

const struct connector_ops connector_local_ops = {
    .send = local_send,
    .recv = local_recv,
    .pollfd = local_pollfd,
    .pollzsock = local_pollzsock,
    .pending = local_pending,
    .close = local_close,
};
