/* direct_client.c - a client's channel to a module's own socket (direct.h).
 *
 * Design notes:
 * - State: NEW until the first request for the service; then the channel
 *   either connects (DIRECT) or, if nobody listens, the handle uses the
 *   broker for that service for good (BROKER).  A DIRECT channel never
 *   hands a request to the broker either: requests that name each other
 *   (a watch and its unwatch, by sender and matchtag) must reach the
 *   module the same way.  So when the connection is lost (the module
 *   unloaded, or dropped this client) every outstanding request is
 *   answered ENOSYS, and while the module is not listening each new one
 *   is too; the next request after it listens again reconnects.
 * - 'pending' maps each outstanding matchtag (decimal) to whether its
 *   request is streaming; a response removes a plain entry, an error
 *   response a streaming one (ENODATA ends a stream), like the broker's
 *   rpctrack.  The same matchtag may be in flight once only (a handle
 *   never reuses one before its response).
 * - Responses made for a lost connection wait in 'lost' until read.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/epoll.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/list.h"
#include "src/common/libutil/decimal.h"
#include "msg_stream.h"
#include "direct.h"

enum { DC_NEW, DC_DIRECT, DC_BROKER };

#define PENDING_PLAIN ((void *)1)
#define PENDING_STREAMING ((void *)2)

struct lost_entry {
    struct list_node node;
    canopy_msg_t *msg;
};

struct direct_client {
    char *path;
    char *service;
    size_t service_len;
    int state;
    int fd;
    struct msg_instream in;
    hashmap_t *pending;
    struct list_node lost;
};

struct direct_client *direct_client_create (const char *path, const char *service)
{
    struct direct_client *dc;

    if (!path || !service) {
        errno = EINVAL;
        return NULL;
    }
    if (!(dc = calloc (1, sizeof (*dc))))
        return NULL;
    dc->fd = -1;
    dc->state = DC_NEW;
    msg_instream_init (&dc->in);
    list_init (&dc->lost);
    if (!(dc->path = strdup (path))
        || !(dc->service = strdup (service))
        || !(dc->pending = hashmap_create (NULL))) {
        direct_client_destroy (dc);
        errno = ENOMEM;
        return NULL;
    }
    dc->service_len = strlen (service);
    return dc;
}

void direct_client_destroy (struct direct_client *dc)
{
    if (!dc)
        return;
    int saved_errno = errno;
    if (dc->fd >= 0)
        close (dc->fd);
    msg_instream_release (&dc->in);
    while (!list_empty (&dc->lost)) {
        struct lost_entry *e = list_first_entry (&dc->lost, struct lost_entry, node);
        list_del (&e->node);
        canopy_msg_decref (e->msg);
        free (e);
    }
    hashmap_destroy (dc->pending);
    free (dc->path);
    free (dc->service);
    free (dc);
    errno = saved_errno;
}

static bool direct_client_wants (const struct direct_client *dc,
                                 const canopy_msg_t *msg)
{
    uint32_t nodeid = 0;
    const char *topic;

    if (!dc || dc->state == DC_BROKER
        || canopy_msg_get_type (msg) != CANOPY_MSGTYPE_REQUEST
        || canopy_msg_has_flag (msg, CANOPY_MSGFLAG_UPSTREAM)
        || canopy_msg_get_nodeid (msg, &nodeid) < 0
        || nodeid != CANOPY_NODEID_ANY
        || !(topic = canopy_msg_get_topic (msg)))
        return false;
    return !strncmp (topic, dc->service, dc->service_len)
           && topic[dc->service_len] == '.';
}

/* Connect if needed.  0 if connected; -1 if nobody listens (or the
 * backlog is full: the socket is nonblocking, so connect never waits).
 */
static int channel_connect (struct direct_client *dc, int epfd)
{
    struct sockaddr_un addr;
    struct epoll_event ev = { .events = EPOLLIN };
    int fd;

    if (dc->fd >= 0)
        return 0;
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
        return -1;
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", dc->path);
    ev.data.fd = fd;
    if (connect (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0
        || epoll_ctl (epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        close (fd);
        return -1;
    }
    dc->fd = fd;
    dc->state = DC_DIRECT;
    return 0;
}

/* Queue a made-up ENOSYS answer to a request that expects one. */
static void answer_enosys (struct direct_client *dc, uint32_t tag, const char *text)
{
    struct lost_entry *e;
    canopy_msg_t *rsp;

    if (!(rsp = canopy_msg_create (CANOPY_MSGTYPE_RESPONSE)))
        return;
    if (canopy_msg_set_matchtag (rsp, tag) < 0
        || canopy_msg_set_errnum (rsp, ENOSYS) < 0
        || canopy_msg_set_string (rsp, text) < 0
        || !(e = calloc (1, sizeof (*e)))) {
        canopy_msg_decref (rsp);
        return;
    }
    e->msg = rsp;
    list_add_tail (&dc->lost, &e->node);
}

/* The connection is gone: close it, answer what was outstanding. */
static void lose (struct direct_client *dc, int epfd)
{
    const char *key;
    void *val;
    char text[128];

    if (dc->fd < 0)
        return;
    (void)epoll_ctl (epfd, EPOLL_CTL_DEL, dc->fd, NULL);
    close (dc->fd);
    dc->fd = -1;
    msg_instream_release (&dc->in);
    msg_instream_init (&dc->in);
    snprintf (text, sizeof (text), "the %s module went away before answering",
              dc->service);
    for (key = hashmap_first (dc->pending, &val); key;
         key = hashmap_next (dc->pending, &val))
        answer_enosys (dc, (uint32_t)strtoul (key, NULL, 10), text);
    hashmap_clear (dc->pending);
}

int direct_client_send (struct direct_client *dc, int epfd,
                        const canopy_msg_t *msg, bool nonblock)
{
    uint32_t tag = 0;
    char key[DECIMAL_U32_MAX];
    bool tracked;

    if (!direct_client_wants (dc, msg))
        return 1;
    (void)canopy_msg_get_matchtag (msg, &tag);
    tracked = tag != 0 && !canopy_msg_has_flag (msg, CANOPY_MSGFLAG_NORESPONSE);
    if (channel_connect (dc, epfd) < 0) {
        if (dc->state == DC_NEW) {
            dc->state = DC_BROKER;  /* nobody listens: the broker, for good */
            return 1;
        }
        if (tracked) {
            char text[128];
            snprintf (text, sizeof (text), "the %s module is not running here",
                      dc->service);
            answer_enosys (dc, tag, text);
        }
        return 0;
    }
    if (tracked) {
        (void)decimal_u32 (key, tag);
        if (hashmap_update (dc->pending, key,
                            canopy_msg_has_flag (msg, CANOPY_MSGFLAG_STREAMING)
                            ? PENDING_STREAMING : PENDING_PLAIN) < 0)
            return -1;
    }
    if (msg_frame_send (dc->fd, msg, nonblock) < 0) {
        if (errno == EAGAIN || errno == ENOMEM || errno == EMSGSIZE) {
            if (tracked)
                (void)hashmap_delete (dc->pending, key);
            return -1;
        }
        lose (dc, epfd);            /* the module is gone: ENOSYS for all */
    }
    return 0;
}

bool direct_client_busy (const struct direct_client *dc)
{
    return dc && dc->fd >= 0 && hashmap_size (dc->pending) > 0;
}

bool direct_client_pending (const struct direct_client *dc)
{
    return dc && (!list_empty (&dc->lost)
                  || (dc->fd >= 0 && msg_instream_ready (&dc->in)));
}

/* Bookkeeping for a response read from the socket. */
static void settle (struct direct_client *dc, const canopy_msg_t *rsp)
{
    uint32_t tag = 0;
    int errnum = 0;
    char key[DECIMAL_U32_MAX];
    void *val;

    if (canopy_msg_get_matchtag (rsp, &tag) < 0 || tag == 0)
        return;
    (void)decimal_u32 (key, tag);
    if (!(val = hashmap_lookup (dc->pending, key)))
        return;
    (void)canopy_msg_get_errnum (rsp, &errnum);
    if (val == PENDING_PLAIN || errnum != 0)
        (void)hashmap_delete (dc->pending, key);
}

canopy_msg_t *direct_client_recv (struct direct_client *dc, int epfd)
{
    canopy_msg_t *msg;

    for (;;) {
        if (!list_empty (&dc->lost)) {
            struct lost_entry *e = list_first_entry (&dc->lost, struct lost_entry, node);
            list_del (&e->node);
            msg = e->msg;
            free (e);
            return msg;
        }
        if (dc->fd < 0)
            break;
        if ((msg = msg_instream_next (&dc->in))) {
            if (canopy_msg_get_type (msg) != CANOPY_MSGTYPE_RESPONSE) {
                canopy_msg_decref (msg);
                lose (dc, epfd);    /* protocol error: a module only answers */
                continue;
            }
            settle (dc, msg);
            return msg;
        }
        if (errno != EAGAIN) {
            if (errno == ENOMEM)
                return NULL;
            lose (dc, epfd);        /* corrupt stream */
            continue;
        }
        ssize_t n = msg_instream_fill (&dc->in, dc->fd);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n < 0 && errno == ENOMEM)
            return NULL;
        lose (dc, epfd);            /* EOF or error */
    }
    errno = EAGAIN;
    return NULL;
}
