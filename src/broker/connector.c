/* connector.c - the broker's UNIX-domain socket (connector.h).
 *
 * Design notes:
 * - Reads are nonblocking into a per-client msg_instream; each whole
 *   message is routed as it is decoded.  Route frames sent by a client are
 *   discarded (a client cannot forge hops), and its credentials are
 *   stamped by the router from the endpoint.
 * - Writes are coalesced: client_send encodes into the client's pending
 *   buffer, and a prepare watcher (the loop is about to block) sends each
 *   pending buffer with one send().  A burst of responses (many requests
 *   in flight, a batch of them answered in one wake-up) then costs the
 *   broker and the client one system call and one wake-up instead of one
 *   per message.  A pending buffer over FLUSH_AT bytes is sent at once.
 *   What send() does not take is queued and POLLOUT is enabled until the
 *   queue drains; pending bytes count against the queue limit, and the
 *   connector flushes them (nonblocking, best effort) when it is destroyed.
 * - A client is destroyed on EOF, on a protocol error, or when its queue
 *   exceeds the limit; services it used get "<svc>.disconnect".
 * - Out of descriptors (EMFILE), accepting pauses for ACCEPT_BACKOFF
 *   instead of spinning on the readable socket and logging each time.
 * - Fairness: one wake-up handles at most INPUT_BUDGET messages of a
 *   client.  Whole messages may then be left in its buffer with nothing
 *   more to read on the socket (so POLLIN will not fire again): such a
 *   client goes on the 'backlog' list, which an idle watcher works through
 *   (a budget per client per loop pass) until every buffer is drained.
 *   Without it a burst of more than 256 requests in one read stalled the
 *   tail of the burst until the client sent something else
 *   (t/t0800-abuse-socket.t, "one write of 1000 requests").
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <syslog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/fdutil.h"
#include "src/common/libcanopy/msg_stream.h"
#include "broker.h"
#include "connector.h"

#define INPUT_BUDGET 256
#define FLUSH_AT (64 * 1024)
#define ACCEPT_BACKOFF 0.1      /* seconds without accepting after EMFILE */

struct outbuf {
    struct list_node node;
    char *data;
    size_t len;
    size_t off;
};

struct client {
    struct endpoint ep;
    struct connector *conn;
    struct list_node node;
    int fd;
    uid_t uid;
    pid_t pid;
    struct msg_instream in;
    struct list_node outq;
    size_t outq_bytes;
    canopy_watcher_t *w;
    struct list_node backlog_node;  /* on connector 'backlog' if linked */
    char *pend;                     /* encoded frames not yet sent */
    size_t pend_len;
    size_t pend_cap;
    struct list_node dirty_node;    /* on connector 'dirty' if pend_len > 0 */
    bool dead;
};

struct connector {
    struct broker *b;
    int fd;
    char *path;
    canopy_watcher_t *w;
    struct list_node clients;
    int nclients;
    uint64_t next_id;
    size_t outq_limit;
    canopy_watcher_t *reaper;   /* frees dead clients outside callbacks */
    struct list_node backlog;   /* clients with whole messages buffered */
    canopy_watcher_t *backlog_w;    /* idle: drains the backlog */
    struct list_node dirty;     /* clients with pending output */
    canopy_watcher_t *flush_w;  /* prepare: sends pending output */
    canopy_watcher_t *retry_w;  /* accept again after EMFILE */
    unsigned long pauses;       /* of the current EMFILE episode (0: none) */
};

static void client_input (struct client *cl);

static void client_destroy (struct client *cl)
{
    if (!cl)
        return;
    canopy_watcher_destroy (cl->w);
    if (list_node_linked (&cl->backlog_node))
        list_del (&cl->backlog_node);
    if (list_node_linked (&cl->dirty_node))
        list_del (&cl->dirty_node);
    if (cl->fd >= 0)
        close (cl->fd);
    free (cl->pend);
    msg_instream_release (&cl->in);
    while (!list_empty (&cl->outq)) {
        struct outbuf *ob = list_entry (cl->outq.next, struct outbuf, node);
        list_del (&ob->node);
        free (ob->data);
        free (ob);
    }
    endpoint_release (&cl->ep);
    free (cl);
}

/* Mark a client dead: it stops being an endpoint at once; memory is
 * reclaimed by the reaper so that callers up the stack stay valid.
 */
static void client_kill (struct client *cl, const char *why)
{
    struct connector *c = cl->conn;
    struct broker *b = c->b;

    if (cl->dead)
        return;
    cl->dead = true;
    if (why)
        broker_log (b, LOG_INFO, "dropped client %s (uid %u pid %d): %s",
                    cl->ep.id, (unsigned)cl->uid, (int)cl->pid, why);
    canopy_watcher_stop (cl->w);
    if (list_node_linked (&cl->backlog_node))
        list_del (&cl->backlog_node);
    if (list_node_linked (&cl->dirty_node))
        list_del (&cl->dirty_node);
    endpoint_unregister (b, &cl->ep);
    endpoint_disconnect_notify (b, &cl->ep);
    list_del (&cl->node);
    c->nclients--;
    list_add_tail (&c->clients, &cl->node);     /* dead ones sit at the tail */
    canopy_watcher_start (c->reaper);
}

static void reaper_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct connector *c = arg;
    struct list_node *pos, *tmp;
    list_for_each_safe (pos, tmp, &c->clients) {
        struct client *cl = list_entry (pos, struct client, node);
        if (cl->dead) {
            list_del (&cl->node);
            client_destroy (cl);
        }
    }
    canopy_watcher_stop (w);
}

/* Give each client on the backlog one more budget of messages.  Clients
 * that still have whole messages buffered re-queue themselves at the tail.
 */
static void backlog_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct connector *c = arg;
    int n = list_length (&c->backlog);

    while (n-- > 0 && !list_empty (&c->backlog)) {
        struct client *cl = list_entry (c->backlog.next, struct client, backlog_node);
        list_del (&cl->backlog_node);
        client_input (cl);
    }
    if (list_empty (&c->backlog))
        canopy_watcher_stop (w);
}

static int flush_out (struct client *cl)
{
    while (!list_empty (&cl->outq)) {
        struct outbuf *ob = list_entry (cl->outq.next, struct outbuf, node);
        ssize_t n = send (cl->fd, ob->data + ob->off, ob->len - ob->off,
                          MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        ob->off += n;
        cl->outq_bytes -= n;
        if (ob->off == ob->len) {
            list_del (&ob->node);
            free (ob->data);
            free (ob);
        }
    }
    int events = CANOPY_POLLIN | (list_empty (&cl->outq) ? 0 : CANOPY_POLLOUT);
    canopy_watcher_set_events (cl->w, events);
    return 0;
}

/* Hand the pending buffer to the socket: send what it takes at once if
 * nothing is queued ahead of it, and queue the rest (the buffer itself
 * becomes the queue entry, so nothing is copied).  Returns -1 on a write
 * error or ENOMEM (the caller kills the client).
 */
static int flush_pending (struct client *cl)
{
    struct outbuf *ob;
    ssize_t n = 0;

    if (list_node_linked (&cl->dirty_node))
        list_del (&cl->dirty_node);
    if (cl->pend_len == 0)
        return 0;
    if (list_empty (&cl->outq)) {
        do {
            n = send (cl->fd, cl->pend, cl->pend_len, MSG_DONTWAIT | MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (n < 0)
            n = 0;
        cl->outq_bytes -= n;
        if ((size_t)n == cl->pend_len) {
            cl->pend_len = 0;   /* keep the buffer for the next burst */
            if (cl->pend_cap > 4 * FLUSH_AT) {  /* unless a giant passed */
                free (cl->pend);
                cl->pend = NULL;
                cl->pend_cap = 0;
            }
            return 0;
        }
    }
    if (!(ob = calloc (1, sizeof (*ob)))) {
        errno = ENOMEM;
        return -1;
    }
    ob->data = cl->pend;
    ob->len = cl->pend_len;
    ob->off = n;
    cl->pend = NULL;
    cl->pend_len = cl->pend_cap = 0;
    list_add_tail (&cl->outq, &ob->node);
    canopy_watcher_set_events (cl->w, CANOPY_POLLIN | CANOPY_POLLOUT);
    return 0;
}

static void flush_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct connector *c = arg;

    while (!list_empty (&c->dirty)) {
        struct client *cl = list_entry (c->dirty.next, struct client, dirty_node);
        if (flush_pending (cl) < 0)     /* unlinks cl from 'dirty' first */
            client_kill (cl, errno == ENOMEM ? "out of memory" : "write error");
    }
    canopy_watcher_stop (w);
}

static int client_send (struct endpoint *ep, const canopy_msg_t *msg)
{
    struct client *cl = ep->impl;
    struct connector *c = cl->conn;
    size_t size;

    if (cl->dead) {
        errno = ECONNRESET;
        return -1;
    }
    if ((size = msg_frame_size (msg)) == 0)
        return -1;
    if (cl->pend_len + size > cl->pend_cap) {
        size_t cap = cl->pend_cap ? cl->pend_cap : 4096;
        char *p;
        while (cap < cl->pend_len + size)
            cap *= 2;
        if (!(p = realloc (cl->pend, cap))) {
            client_kill (cl, "out of memory");
            errno = ENOMEM;
            return -1;
        }
        cl->pend = p;
        cl->pend_cap = cap;
    }
    msg_frame_encode_into (msg, cl->pend + cl->pend_len, size);
    cl->pend_len += size;
    cl->outq_bytes += size;
    if (cl->outq_bytes > c->outq_limit) {
        client_kill (cl, "output queue limit exceeded (client not reading)");
        errno = ENOBUFS;
        return -1;
    }
    if (cl->pend_len >= FLUSH_AT) {
        if (flush_pending (cl) < 0) {
            int e = errno;
            client_kill (cl, e == ENOMEM ? "out of memory" : "write error");
            errno = e == ENOMEM ? ENOMEM : ECONNRESET;
            return -1;
        }
        return 0;
    }
    if (!list_node_linked (&cl->dirty_node)) {
        list_add_tail (&c->dirty, &cl->dirty_node);
        canopy_watcher_start (c->flush_w);
    }
    return 0;
}

static void client_input (struct client *cl)
{
    struct broker *b = cl->conn->b;

    for (int i = 0; i < INPUT_BUDGET && !cl->dead; i++) {
        canopy_msg_t *msg = msg_instream_next (&cl->in);
        if (!msg) {
            if (errno == EAGAIN) {
                ssize_t n = msg_instream_fill (&cl->in, cl->fd);
                if (n > 0)
                    continue;
                if (n == 0)
                    client_kill (cl, NULL);     /* EOF: normal disconnect */
                else if (errno != EAGAIN && errno != EWOULDBLOCK)
                    client_kill (cl, errno == EMSGSIZE ? "message too large"
                                                       : strerror (errno));
                return;
            }
            client_kill (cl, errno == EMSGSIZE ? "message too large"
                                               : "malformed message");
            return;
        }
        switch (canopy_msg_get_type (msg)) {
            case CANOPY_MSGTYPE_REQUEST:
                canopy_msg_route_disable (msg);
                router_request (b, msg, &cl->ep);
                break;
            case CANOPY_MSGTYPE_RESPONSE:
                /* clients answering requests sent to them (e.g. ENOSYS):
                 * nothing is ever addressed to clients, so drop it
                 */
                break;
            default:
                canopy_msg_decref (msg);
                client_kill (cl, "sent an event or control message");
                return;
        }
        canopy_msg_decref (msg);
    }
    /* budget spent with messages still buffered: come back from idle */
    if (!cl->dead && msg_instream_ready (&cl->in)
        && !list_node_linked (&cl->backlog_node)) {
        list_add_tail (&cl->conn->backlog, &cl->backlog_node);
        canopy_watcher_start (cl->conn->backlog_w);
    }
}

static void client_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct client *cl = arg;

    if (revents & CANOPY_POLLOUT) {
        if (flush_out (cl) < 0) {
            client_kill (cl, "write error");
            return;
        }
    }
    if (revents & (CANOPY_POLLIN | CANOPY_POLLERR))
        client_input (cl);
}

static void retry_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct connector *c = arg;
    canopy_watcher_start (c->w);
}

static void listen_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct connector *c = arg;
    struct broker *b = c->b;

    for (int i = 0; i < 64; i++) {
        struct ucred cred;
        socklen_t len = sizeof (cred);
        struct client *cl;
        char id[64];
        int fd = accept4 (c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                /* out of descriptors: pause instead of spinning on the
                 * readable socket; the client waits in the backlog.  Said
                 * once per episode, not every pause.
                 */
                if (c->pauses++ == 0)
                    broker_log (b, LOG_ERR, "accept: %s (retrying every %.1f s)",
                                strerror (errno), ACCEPT_BACKOFF);
                canopy_watcher_stop (c->w);
                canopy_timer_watcher_reset (c->retry_w, ACCEPT_BACKOFF, 0);
                canopy_watcher_start (c->retry_w);
            }
            else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                broker_log (b, LOG_ERR, "accept: %s", strerror (errno));
            return;
        }
        if (c->pauses) {
            broker_log (b, LOG_INFO, "accepting again after %lu pauses", c->pauses);
            c->pauses = 0;
        }
        if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
            broker_log (b, LOG_ERR, "SO_PEERCRED: %s", strerror (errno));
            close (fd);
            continue;
        }
        if (!(cl = calloc (1, sizeof (*cl)))) {
            close (fd);
            continue;
        }
        cl->conn = c;
        cl->fd = fd;
        cl->uid = cred.uid;
        cl->pid = cred.pid;
        list_init (&cl->outq);
        list_node_init (&cl->node);
        list_node_init (&cl->backlog_node);
        list_node_init (&cl->dirty_node);
        msg_instream_init (&cl->in);
        snprintf (id, sizeof (id), "%s:c%llu", b->rankstr,
                  (unsigned long long)++c->next_id);
        if (endpoint_init (&cl->ep, EP_CLIENT, id, client_send, cl) < 0
            || !(cl->w = canopy_fd_watcher_create (b->r, fd, CANOPY_POLLIN,
                                                   client_cb, cl))) {
            client_destroy (cl);
            continue;
        }
        cl->ep.userid = cred.uid;
        cl->ep.rolemask = cred.uid == b->owner ? CANOPY_ROLE_OWNER : CANOPY_ROLE_USER;
        list_add_head (&c->clients, &cl->node);
        c->nclients++;
        endpoint_register (b, &cl->ep);
        canopy_watcher_start (cl->w);
    }
}

struct connector *connector_create (struct broker *b, const char *path)
{
    struct connector *c;
    struct sockaddr_un addr;

    if (strlen (path) >= sizeof (addr.sun_path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        errno = ENOMEM;
        return NULL;
    }
    c->b = b;
    c->fd = -1;
    c->outq_limit = 1024UL * 1024 * 1024;
    list_init (&c->clients);
    list_init (&c->backlog);
    list_init (&c->dirty);
    if (!(c->path = strdup (path)))
        goto error;
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, path);
    if ((c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
        goto error;
    (void)unlink (path);
    if (bind (c->fd, (struct sockaddr *)&addr, sizeof (addr)) < 0)
        goto error;
    /* Access is decided per message by credentials, so let anyone connect. */
    (void)chmod (path, 0777);
    if (listen (c->fd, 4096) < 0)
        goto error;
    if (!(c->w = canopy_fd_watcher_create (b->r, c->fd, CANOPY_POLLIN, listen_cb, c))
        || !(c->reaper = canopy_idle_watcher_create (b->r, reaper_cb, c))
        || !(c->backlog_w = canopy_idle_watcher_create (b->r, backlog_cb, c))
        || !(c->flush_w = canopy_prepare_watcher_create (b->r, flush_cb, c))
        || !(c->retry_w = canopy_timer_watcher_create (b->r, ACCEPT_BACKOFF, 0,
                                                       retry_cb, c)))
        goto error;
    canopy_watcher_unref (c->reaper);
    canopy_watcher_unref (c->backlog_w);
    canopy_watcher_unref (c->flush_w);
    canopy_watcher_start (c->w);
    return c;
error:
    connector_destroy (c);
    return NULL;
}

void connector_destroy (struct connector *c)
{
    if (!c)
        return;
    int saved_errno = errno;
    while (!list_empty (&c->dirty)) {      /* last words, best effort */
        struct client *cl = list_entry (c->dirty.next, struct client, dirty_node);
        (void)flush_pending (cl);
    }
    while (!list_empty (&c->clients)) {
        struct client *cl = list_entry (c->clients.next, struct client, node);
        list_del (&cl->node);
        if (!cl->dead)
            endpoint_unregister (c->b, &cl->ep);
        client_destroy (cl);
    }
    canopy_watcher_destroy (c->w);
    canopy_watcher_destroy (c->reaper);
    canopy_watcher_destroy (c->backlog_w);
    canopy_watcher_destroy (c->flush_w);
    canopy_watcher_destroy (c->retry_w);
    if (c->fd >= 0) {
        close (c->fd);
        (void)unlink (c->path);
    }
    free (c->path);
    free (c);
    errno = saved_errno;
}

int connector_client_count (struct connector *c)
{
    return c ? c->nclients : 0;
}

void connector_set_outq_limit (struct connector *c, size_t bytes)
{
    if (c)
        c->outq_limit = bytes;
}
