/* direct_server.c - a module's own socket for its local clients (direct.h).
 *
 * Design notes:
 * - Connections are kept in a hashmap keyed by their hop ("RANK:dN"), so a
 *   response finds its connection from its top route hop in one lookup.
 * - Input: each wake-up of a connection reads what is there and dispatches
 *   at most INPUT_BUDGET whole messages; if whole messages are left, the
 *   connection goes on the backlog, which an idle watcher drains, and its
 *   socket is not read (POLLIN off) until the backlog is drained: a client
 *   that writes faster than the module answers is held back by its own
 *   socket instead of growing a buffer here.
 * - Output: responses are encoded into the connection's buffer and the
 *   prepare watcher sends every dirty buffer with one send(); what the
 *   socket does not take waits for POLLOUT.  Over OUT_LIMIT bytes unsent,
 *   the client is dropped (the module never blocks on it).
 * - A connection is killed on EOF, a read or write error, a protocol error
 *   (undecodable frame, anything but a request) or too much output.  A
 *   killed connection stops being served at once but stays in the map
 *   (its responses are dropped) until an idle "reaper" takes it out,
 *   dispatches "SERVICE.disconnect" and frees it: the kill may happen
 *   inside a module handler (its response overflowed the buffer), and the
 *   handler must not see the disconnect change its state under it.
 * - Watchers are unreferenced: the direct server never keeps the module's
 *   reactor running by itself.
 * - Out of descriptors (EMFILE), accepting pauses for ACCEPT_BACKOFF
 *   seconds instead of spinning on the readable socket; the client waits
 *   in the listen backlog meanwhile.  The broker raises its soft limit
 *   (each client holds two descriptors there: broker.c).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <syslog.h>
#include <canopy/reactor.h>
#include <canopy/log.h>
#include <canopy/msg_handler.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/list.h"
#include "handle_private.h"
#include "msg_stream.h"
#include "direct.h"

#define INPUT_BUDGET 256
#define OUT_LIMIT (1024UL * 1024 * 1024)
#define ACCEPT_BACKOFF 0.1
#define HOP_MAX 48      /* "RANK:dN": 10 + 2 + 20 digits, and room */

struct direct_conn {
    struct direct_server *ds;
    int fd;
    uint32_t userid;
    uint32_t rolemask;
    char hop[HOP_MAX];
    struct msg_instream in;
    canopy_watcher_t *w;
    char *out;
    size_t out_off, out_len, out_cap;
    bool dead;                      /* killed, waiting for the reaper */
    bool paused;                    /* input not read: whole messages wait */
    struct list_node dirty_node;
    struct list_node backlog_node;  /* on the backlog, or (dead) the reap list */
};

struct direct_server {
    canopy_t *h;
    canopy_reactor_t *r;
    char *path;
    char *service;
    char hop_prefix[16];            /* "RANK:d" */
    size_t hop_prefix_len;
    int fd;
    uid_t owner;
    unsigned long long next_id;
    canopy_watcher_t *listen_w;
    canopy_watcher_t *prep_w;
    canopy_watcher_t *idle_w;
    canopy_watcher_t *retry_w;      /* accept again after EMFILE */
    unsigned long pauses;           /* of the current EMFILE episode */
    canopy_watcher_t *reap_w;       /* idle: frees killed connections */
    struct list_node dead;
    hashmap_t *conns;               /* hop -> struct direct_conn (owned) */
    struct list_node dirty;
    struct list_node backlog;
    struct direct_server_stats stats;
    size_t out_limit;
};

int direct_path (char *buf, size_t size, const char *local_path, const char *service)
{
    struct sockaddr_un addr;
    int n = snprintf (buf, size, "%s-%s", local_path, service);

    if (n < 0 || (size_t)n >= size || (size_t)n >= sizeof (addr.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

bool direct_enabled (void)
{
    const char *s = getenv ("CANOPY_DIRECT");
    return !s || (strcmp (s, "0") != 0 && strcmp (s, "off") != 0);
}

/* Free a connection that is no longer in the map or on any list. */
static void conn_free (struct direct_conn *c)
{
    if (!c)
        return;
    canopy_watcher_destroy (c->w);
    if (c->fd >= 0)
        close (c->fd);
    msg_instream_release (&c->in);
    free (c->out);
    free (c);
}

static void notify_disconnect (struct direct_server *ds, struct direct_conn *c)
{
    char topic[CANOPY_MSG_MAX_TOPIC_LEN + 1];
    canopy_msg_t *msg;

    snprintf (topic, sizeof (topic), "%s.disconnect", ds->service);
    if ((msg = msg_disconnect_create (topic, CANOPY_NODEID_ANY, c->hop,
                                      c->userid, c->rolemask))) {
        msg_handler_dispatch (ds->h, msg);
        canopy_msg_decref (msg);
    }
}

/* Poll for input unless paused, for output while some is unsent. */
static void conn_update_events (struct direct_conn *c)
{
    int events = (c->paused ? 0 : CANOPY_POLLIN)
                 | (c->out_off < c->out_len ? CANOPY_POLLOUT : 0);
    if (events) {
        canopy_watcher_set_events (c->w, events);
        canopy_watcher_start (c->w);
    }
    else
        canopy_watcher_stop (c->w);
}

/* Stop serving c.  It stays in the map (so its responses are recognised
 * and dropped) until the reaper, outside every callback and handler,
 * takes it out, tells the module and frees it: a handler whose response
 * kills c must not see its own state changed under it by the disconnect.
 */
static void conn_kill (struct direct_conn *c, const char *why)
{
    struct direct_server *ds = c->ds;
    int saved_errno = errno;

    if (c->dead)
        return;
    c->dead = true;
    if (list_node_linked (&c->dirty_node))
        list_del (&c->dirty_node);
    if (list_node_linked (&c->backlog_node))
        list_del (&c->backlog_node);
    canopy_watcher_stop (c->w);
    c->out_off = c->out_len = 0;
    list_add_tail (&ds->dead, &c->backlog_node);
    canopy_watcher_start (ds->reap_w);
    if (why)
        canopy_log (ds->h, LOG_WARNING, "direct %s client %s dropped: %s",
                    ds->service, c->hop, why);
    errno = saved_errno;
}

static void reap_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct direct_server *ds = arg;

    while (!list_empty (&ds->dead)) {
        struct direct_conn *c = list_first_entry (&ds->dead, struct direct_conn,
                                                  backlog_node);
        list_del (&c->backlog_node);
        (void)hashmap_take (ds->conns, c->hop);
        ds->stats.connections--;
        notify_disconnect (ds, c);
        conn_free (c);
    }
    canopy_watcher_stop (ds->reap_w);
}

/* Send what the socket takes.  -1 on a write error (caller closes). */
static int conn_flush (struct direct_conn *c)
{
    if (list_node_linked (&c->dirty_node))
        list_del (&c->dirty_node);
    while (c->out_off < c->out_len) {
        ssize_t n = send (c->fd, c->out + c->out_off, c->out_len - c->out_off,
                          MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                conn_update_events (c);
                return 0;
            }
            return -1;
        }
        c->out_off += n;
    }
    c->out_off = c->out_len = 0;
    if (c->out_cap > 4 * 65536) {   /* do not keep a giant's buffer */
        free (c->out);
        c->out = NULL;
        c->out_cap = 0;
    }
    conn_update_events (c);
    return 0;
}

/* Stamp, mark and dispatch one request read from c. */
static void conn_dispatch (struct direct_conn *c, canopy_msg_t *msg)
{
    struct direct_server *ds = c->ds;

    canopy_msg_route_disable (msg);
    if (msg_stamp_credentials (msg, c->userid, c->rolemask) < 0
        || canopy_msg_route_enable (msg) < 0
        || canopy_msg_route_push (msg, c->hop) < 0) {
        /* no way to answer without the hop: the client sees the close */
        conn_kill (c, "out of memory");
        return;
    }
    ds->stats.requests++;
    msg_handler_dispatch (ds->h, msg);
}

/* Dispatch up to INPUT_BUDGET buffered messages.  Returns -1 if c was
 * killed, 1 if whole messages are left, else 0.
 */
static int conn_drain (struct direct_conn *c)
{
    for (int i = 0; i < INPUT_BUDGET && !c->dead; i++) {
        canopy_msg_t *msg = msg_instream_next (&c->in);
        if (!msg) {
            if (errno == EAGAIN)
                return 0;
            conn_kill (c, "malformed message");
            return -1;
        }
        if (canopy_msg_get_type (msg) != CANOPY_MSGTYPE_REQUEST) {
            canopy_msg_decref (msg);
            conn_kill (c, "sent something other than a request");
            return -1;
        }
        conn_dispatch (c, msg);     /* may kill c (its output overflowed) */
        canopy_msg_decref (msg);
    }
    if (c->dead)
        return -1;
    return msg_instream_ready (&c->in) ? 1 : 0;
}

/* Whole messages left after a budget: stop reading the socket (so a
 * client that writes faster than the module answers is held back by its
 * socket, not buffered here) and let the idle watcher go on.
 */
static void conn_backlog (struct direct_conn *c)
{
    struct direct_server *ds = c->ds;

    if (!list_node_linked (&c->backlog_node))
        list_add_tail (&ds->backlog, &c->backlog_node);
    c->paused = true;
    conn_update_events (c);
    canopy_watcher_start (ds->idle_w);
}

static void conn_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct direct_conn *c = arg;

    if (c->dead)
        return;
    if (revents & CANOPY_POLLOUT) {
        if (conn_flush (c) < 0) {
            conn_kill (c, "write error");
            return;
        }
    }
    if (!(revents & (CANOPY_POLLIN | CANOPY_POLLERR)) || c->paused)
        return;
    ssize_t n = msg_instream_fill (&c->in, c->fd);
    if (n == 0) {
        conn_kill (c, NULL);        /* EOF: the client went away */
        return;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        conn_kill (c, errno == ECONNRESET ? NULL : "read error");
        return;
    }
    if (conn_drain (c) == 1)
        conn_backlog (c);
}

static void idle_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct direct_server *ds = arg;

    /* one connection's budget per pass, round robin */
    if (!list_empty (&ds->backlog)) {
        struct direct_conn *c = list_first_entry (&ds->backlog, struct direct_conn,
                                                  backlog_node);
        list_del (&c->backlog_node);
        int rc = conn_drain (c);
        if (rc == 1)
            list_add_tail (&ds->backlog, &c->backlog_node);
        else if (rc == 0) {
            c->paused = false;      /* drained: read the socket again */
            conn_update_events (c);
        }
    }
    if (list_empty (&ds->backlog))
        canopy_watcher_stop (ds->idle_w);
}

static void prep_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct direct_server *ds = arg;

    while (!list_empty (&ds->dirty)) {
        struct direct_conn *c = list_first_entry (&ds->dirty, struct direct_conn,
                                                  dirty_node);
        if (conn_flush (c) < 0)     /* unlinks c from 'dirty' first */
            conn_kill (c, "write error");
    }
}

static void retry_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct direct_server *ds = arg;
    canopy_watcher_start (ds->listen_w);
}

static void listen_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct direct_server *ds = arg;

    for (int i = 0; i < 64; i++) {
        struct ucred cred;
        socklen_t len = sizeof (cred);
        struct direct_conn *c;
        int fd = accept4 (ds->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                /* out of descriptors: do not spin on the readable socket;
                 * try again in a while (the client waits in the backlog).
                 * Said once per episode, not every pause.
                 */
                if (ds->pauses++ == 0)
                    canopy_log (ds->h, LOG_ERR, "direct %s: accept: %s (retrying"
                                " every %.1f s)", ds->service, strerror (errno),
                                ACCEPT_BACKOFF);
                canopy_watcher_stop (ds->listen_w);
                canopy_timer_watcher_reset (ds->retry_w, ACCEPT_BACKOFF, 0);
                canopy_watcher_start (ds->retry_w);
            }
            else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                canopy_log (ds->h, LOG_ERR, "direct %s: accept: %s",
                            ds->service, strerror (errno));
            return;
        }
        if (ds->pauses) {
            canopy_log (ds->h, LOG_INFO, "direct %s: accepting again after %lu"
                        " pauses", ds->service, ds->pauses);
            ds->pauses = 0;
        }
        if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0
            || !(c = calloc (1, sizeof (*c)))) {
            close (fd);
            continue;
        }
        c->ds = ds;
        c->fd = fd;
        c->userid = cred.uid;
        c->rolemask = cred.uid == ds->owner ? CANOPY_ROLE_OWNER : CANOPY_ROLE_USER;
        msg_instream_init (&c->in);
        list_node_init (&c->dirty_node);
        list_node_init (&c->backlog_node);
        snprintf (c->hop, sizeof (c->hop), "%s%llu", ds->hop_prefix, ++ds->next_id);
        if (!(c->w = canopy_fd_watcher_create (ds->r, fd, CANOPY_POLLIN, conn_cb, c))
            || hashmap_insert (ds->conns, c->hop, c) < 0) {
            conn_free (c);
            continue;
        }
        canopy_watcher_unref (c->w);
        canopy_watcher_start (c->w);
        ds->stats.connections++;
        ds->stats.accepted++;
    }
}

/* A response too large to frame becomes an EMSGSIZE error with the same
 * matchtag and route, so that the client is answered instead of left
 * waiting.  NULL on ENOMEM.
 */
static canopy_msg_t *too_large_response (const canopy_msg_t *rsp)
{
    canopy_msg_t *err;

    if (!(err = canopy_msg_copy (rsp, false)))
        return NULL;
    if (canopy_msg_set_errnum (err, EMSGSIZE) < 0
        || canopy_msg_set_string (err, "response too large for a local"
                                  " connection") < 0) {
        canopy_msg_decref (err);
        return NULL;
    }
    return err;
}

bool direct_server_send (struct direct_server *ds, canopy_msg_t *msg, bool owned)
{
    const char *hop;
    struct direct_conn *c;
    canopy_msg_t *err = NULL;
    size_t size;

    if (!ds || canopy_msg_get_type (msg) != CANOPY_MSGTYPE_RESPONSE
        || !(hop = canopy_msg_route_first (msg))
        || strncmp (hop, ds->hop_prefix, ds->hop_prefix_len) != 0)
        return false;
    if (!(c = hashmap_lookup (ds->conns, hop)) || c->dead)
        goto done;      /* the client has gone: drop the response */
    if ((size = msg_frame_size (msg)) == 0) {
        if (!(err = too_large_response (msg))
            || (size = msg_frame_size (err)) == 0) {
            conn_kill (c, "cannot answer a response too large to send");
            goto done;
        }
    }
    if (c->out_len - c->out_off + size > ds->out_limit) {
        conn_kill (c, "too much unread output");
        goto done;
    }
    if (c->out_len + size > c->out_cap) {
        if (c->out_off > 0) {
            memmove (c->out, c->out + c->out_off, c->out_len - c->out_off);
            c->out_len -= c->out_off;
            c->out_off = 0;
        }
        if (c->out_len + size > c->out_cap) {
            size_t cap = c->out_cap ? c->out_cap : 4096;
            while (cap < c->out_len + size)
                cap *= 2;
            char *p = realloc (c->out, cap);
            if (!p) {
                conn_kill (c, "out of memory");
                goto done;
            }
            c->out = p;
            c->out_cap = cap;
        }
    }
    /* the hop stays on the stack: the client matches by matchtag only */
    msg_frame_encode_into (err ? err : msg, c->out + c->out_len, size);
    c->out_len += size;
    ds->stats.responses++;
    if (!list_node_linked (&c->dirty_node))
        list_add_tail (&ds->dirty, &c->dirty_node);
done:
    canopy_msg_decref (err);
    if (owned)
        canopy_msg_decref (msg);
    return true;
}

struct direct_server *direct_server_create (canopy_t *h,
                                            const char *path,
                                            const char *service,
                                            uint32_t rank,
                                            canopy_error_t *error)
{
    struct direct_server *ds;
    struct sockaddr_un addr;

    if (!h || !path || !service || !*service) {
        errno = EINVAL;
        errprintf (error, "direct server: invalid arguments");
        return NULL;
    }
    if (strlen (path) >= sizeof (addr.sun_path)) {
        errno = ENAMETOOLONG;
        errprintf (error, "direct socket path too long: %s", path);
        return NULL;
    }
    if (!(ds = calloc (1, sizeof (*ds)))) {
        errno = ENOMEM;
        errprintf (error, "out of memory");
        return NULL;
    }
    ds->h = h;
    ds->fd = -1;
    ds->owner = getuid ();
    ds->out_limit = OUT_LIMIT;
    list_init (&ds->dirty);
    list_init (&ds->backlog);
    list_init (&ds->dead);
    snprintf (ds->hop_prefix, sizeof (ds->hop_prefix), "%u:d", rank);
    ds->hop_prefix_len = strlen (ds->hop_prefix);
    if (!(ds->path = strdup (path))
        || !(ds->service = strdup (service))
        || !(ds->conns = hashmap_create (NULL))) {
        errno = ENOMEM;
        errprintf (error, "out of memory");
        goto error;
    }
    if (!(ds->r = canopy_get_reactor (h))) {
        errprintf (error, "direct server: no reactor: %s", strerror (errno));
        goto error;
    }
    if ((ds->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
        errprintf (error, "socket: %s", strerror (errno));
        goto error;
    }
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, path);
    (void)unlink (path);
    if (bind (ds->fd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        errprintf (error, "bind %s: %s", path, strerror (errno));
        goto error;
    }
    /* access is decided per request by credentials, as on the broker's socket */
    (void)chmod (path, 0777);
    if (listen (ds->fd, 4096) < 0) {
        errprintf (error, "listen %s: %s", path, strerror (errno));
        goto error;
    }
    if (!(ds->listen_w = canopy_fd_watcher_create (ds->r, ds->fd, CANOPY_POLLIN,
                                                   listen_cb, ds))
        || !(ds->prep_w = canopy_prepare_watcher_create (ds->r, prep_cb, ds))
        || !(ds->idle_w = canopy_idle_watcher_create (ds->r, idle_cb, ds))
        || !(ds->retry_w = canopy_timer_watcher_create (ds->r, ACCEPT_BACKOFF, 0,
                                                        retry_cb, ds))
        || !(ds->reap_w = canopy_idle_watcher_create (ds->r, reap_cb, ds))) {
        errprintf (error, "direct server: watchers: %s", strerror (errno));
        goto error;
    }
    canopy_watcher_unref (ds->listen_w);
    canopy_watcher_unref (ds->prep_w);
    canopy_watcher_unref (ds->idle_w);
    canopy_watcher_unref (ds->retry_w);
    canopy_watcher_unref (ds->reap_w);
    canopy_watcher_start (ds->listen_w);
    canopy_watcher_start (ds->prep_w);
    h->direct = ds;
    return ds;
error:
    direct_server_destroy (ds);
    return NULL;
}

void direct_server_destroy (struct direct_server *ds)
{
    if (!ds)
        return;
    int saved_errno = errno;
    if (ds->h && ds->h->direct == ds)
        ds->h->direct = NULL;
    if (ds->conns) {
        struct direct_conn *c;
        const char *key;
        /* flush, best effort, then close each without telling the module
         * (it is going away)
         */
        for (key = hashmap_first (ds->conns, (void **)&c); key;
             key = hashmap_next (ds->conns, (void **)&c)) {
            if (!c->dead)
                (void)conn_flush (c);
            (void)hashmap_take (ds->conns, key);    /* allowed: just returned */
            conn_free (c);
        }
        hashmap_destroy (ds->conns);
    }
    canopy_watcher_destroy (ds->listen_w);
    canopy_watcher_destroy (ds->prep_w);
    canopy_watcher_destroy (ds->idle_w);
    canopy_watcher_destroy (ds->retry_w);
    canopy_watcher_destroy (ds->reap_w);
    if (ds->fd >= 0) {
        close (ds->fd);
        (void)unlink (ds->path);
    }
    free (ds->path);
    free (ds->service);
    free (ds);
    errno = saved_errno;
}

void direct_server_get_stats (struct direct_server *ds, struct direct_server_stats *st)
{
    if (ds && st)
        *st = ds->stats;
    else if (st)
        memset (st, 0, sizeof (*st));
}

void direct_server_set_out_limit (struct direct_server *ds, size_t bytes)
{
    if (ds)
        ds->out_limit = bytes;
}
