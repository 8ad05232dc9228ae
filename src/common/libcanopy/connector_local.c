/* connector_local.c - client side of a broker's UNIX-domain socket.
 *
 * Sends block until the whole frame is written (the broker never blocks on
 * its clients, so this cannot deadlock); with nonblock, EAGAIN is returned
 * only if nothing at all could be written.  Receives never block: the
 * handle polls the descriptor.  EOF or a malformed frame from the broker is
 * ECONNRESET.
 *
 * kvs.* requests for the local broker go over the KVS module's direct
 * channel when it listens (direct.h, direct_client.c): two thread hops
 * per round trip instead of four.  Its loss is not the handle's: the
 * requests it carried get ENOSYS, as do new ones until the module listens
 * again.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/epoll.h>
#include "src/common/libutil/errprintf.h"
#include "handle_private.h"
#include "msg_stream.h"
#include "direct.h"

struct local_conn {
    int fd;
    struct msg_instream in;
    int epfd;                       /* fd + the direct channel's, or -1 */
    struct direct_client *direct;   /* kvs.* requests (direct.h), or NULL */
    char *path;                     /* the broker's socket */
};

/* With direct channels on, the handle polls an epoll set of the broker's
 * socket and the KVS module's (added when it connects).  Without (too long
 * a path, CANOPY_DIRECT=0, no epoll), it polls the broker's socket alone.
 */
static void direct_setup (struct local_conn *c, const char *path)
{
    char dpath[sizeof (((struct sockaddr_un *)0)->sun_path)];
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = c->fd };

    if (!direct_enabled ()
        || direct_path (dpath, sizeof (dpath), path, "kvs") < 0
        || (c->epfd = epoll_create1 (EPOLL_CLOEXEC)) < 0)
        goto off;
    if (epoll_ctl (c->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0
        || !(c->direct = direct_client_create (dpath, "kvs")))
        goto off;
    return;
off:
    if (c->epfd >= 0)
        close (c->epfd);
    c->epfd = -1;
}

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
    c->epfd = -1;
    if (!(c->path = strdup (path))) {
        free (c);
        errno = ENOMEM;
        return NULL;
    }
    if ((c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        goto error;
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, path);
    if (connect (c->fd, (struct sockaddr *)&addr, sizeof (addr)) < 0)
        goto error;
    direct_setup (c, path);
    return c;
error:
    errprintf (error, "cannot connect to broker at %s: %s", path, strerror (errno));
    if (c->fd >= 0) {
        int saved_errno = errno;
        close (c->fd);
        errno = saved_errno;
    }
    free (c->path);
    free (c);
    return NULL;
}

static int local_send (void *impl, const canopy_msg_t *msg, bool nonblock)
{
    struct local_conn *c = impl;

    if (c->direct) {
        int rc = direct_client_send (c->direct, c->epfd, msg, nonblock);
        if (rc <= 0)
            return rc;
    }
    return msg_frame_send (c->fd, msg, nonblock);
}

static canopy_msg_t *broker_recv (struct local_conn *c)
{
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

/* Buffered messages first; then, if requests wait on the direct channel,
 * its socket before the broker's (one read in the common case of a
 * client waiting for its answer); otherwise the broker's first.  The
 * direct socket is always read when the broker had nothing, so its EOF
 * (the module unloaded) is seen even while idle.
 */
static canopy_msg_t *local_recv (void *impl, bool nonblock)
{
    struct local_conn *c = impl;
    canopy_msg_t *msg;
    bool busy;

    if (!c->direct)
        return broker_recv (c);
    if (direct_client_pending (c->direct))
        return direct_client_recv (c->direct, c->epfd);
    if (msg_instream_ready (&c->in))
        return broker_recv (c);
    if ((busy = direct_client_busy (c->direct))
        && (msg = direct_client_recv (c->direct, c->epfd)))
        return msg;
    if ((msg = broker_recv (c)) || errno != EAGAIN)
        return msg;
    if (!busy && (msg = direct_client_recv (c->direct, c->epfd)))
        return msg;
    errno = EAGAIN;
    return NULL;
}

static int local_pollfd (void *impl)
{
    struct local_conn *c = impl;
    return c->epfd >= 0 ? c->epfd : c->fd;
}

static void *local_pollzsock (void *impl)
{
    return NULL;
}

static bool local_pending (void *impl)
{
    struct local_conn *c = impl;
    return msg_instream_ready (&c->in) || direct_client_pending (c->direct);
}

static void local_close (void *impl)
{
    struct local_conn *c = impl;
    if (c) {
        close (c->fd);
        if (c->epfd >= 0)
            close (c->epfd);
        direct_client_destroy (c->direct);
        msg_instream_release (&c->in);
        free (c->path);
        free (c);
    }
}

static const char *local_path (void *impl)
{
    struct local_conn *c = impl;
    return c->path;
}

const struct connector_ops connector_local_ops = {
    .send = local_send,
    .recv = local_recv,
    .pollfd = local_pollfd,
    .pollzsock = local_pollzsock,
    .pending = local_pending,
    .close = local_close,
    .path = local_path,
    .poll_first = true,
};
