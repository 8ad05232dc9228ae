/* handle.c - connection to a broker (handle.h).
 *
 * Design notes:
 * - Receiving: messages come from the requeue list first, then from the
 *   connector.  The reactor side uses three watchers: an I/O watcher on
 *   the connector's fd or zmq socket, an idle watcher started (from a
 *   prepare watcher) whenever messages are already buffered or requeued so
 *   that poll does not block, and both dispatch a bounded batch.
 * - Dispatch: responses go to their RPC future (rpc.c); everything else to
 *   message handlers (msg_handler.c).
 * - Reactor liveness: the I/O watcher is referenced only while 'interest'
 *   > 0 (started message handlers, pending continuations), so a client's
 *   canopy_reactor_run() returns when it has nothing left to wait for.
 * - Synchronous waits (handle_pump) read the connector directly: a response
 *   for the awaited future, or for a future without a continuation, is
 *   delivered; everything else is requeued for the reactor.
 * - A lost connection fails every pending RPC with ECONNRESET and stops
 *   the reactor with an error if it was waiting on the handle.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <poll.h>
#include <zmq.h>
#include <canopy/handle.h>
#include <canopy/rpc.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/monotime.h"
#include "handle_private.h"
#include "direct.h"
#include "future_private.h"

#define DISPATCH_BATCH 64

struct aux_item {
    void *value;
    canopy_free_f destroy;
};

static void aux_item_destroy (void *arg)
{
    struct aux_item *item = arg;
    if (item) {
        if (item->destroy && item->value)
            item->destroy (item->value);
        free (item);
    }
}

canopy_t *handle_create (const struct connector_ops *ops, void *impl, int flags)
{
    canopy_t *h;

    if (!(h = calloc (1, sizeof (*h)))) {
        ops->close (impl);
        errno = ENOMEM;
        return NULL;
    }
    h->ops = ops;
    h->impl = impl;
    h->flags = flags;
    if (getenv ("CANOPY_HANDLE_TRACE"))
        h->flags |= CANOPY_O_TRACE;
    list_init (&h->rq);
    list_init (&h->handlers);
    h->next_tag = 1;
    if (!(h->rpcs = hashmap_create (NULL)))
        goto error;
    return h;
error:
    canopy_close (h);
    return NULL;
}

static bool is_uri_local (const char *uri, const char **path)
{
    if (!strncmp (uri, "local://", 8)) {
        *path = uri + 8;
        return true;
    }
    return false;
}

canopy_t *canopy_open (const char *uri, int flags, canopy_error_t *error)
{
    const char *path;
    void *impl;

    if (!uri && !(uri = getenv ("CANOPY_URI"))) {
        uri = "local:///run/canopy/local";  /* the system instance */
    }
    if (!is_uri_local (uri, &path) || *path == '\0') {
        errno = EINVAL;
        errprintf (error, "unsupported URI '%s' (expected local:///path)", uri);
        return NULL;
    }
    if (!(impl = connector_local_create (path, error)))
        return NULL;
    return handle_create (&connector_local_ops, impl, flags);
}

void canopy_close (canopy_t *h)
{
    if (!h)
        return;
    int saved_errno = errno;
    /* Continuations are not run from here: their owners may be gone. */
    rpc_fail_all_ex (h, ECONNRESET, true);
    msg_handler_list_destroy (h);
    rpc_table_destroy (h);
    canopy_watcher_destroy (h->io_w);
    canopy_watcher_destroy (h->prep_w);
    canopy_watcher_destroy (h->idle_w);
    while (!list_empty (&h->rq)) {
        struct rq_entry *e = list_entry (h->rq.next, struct rq_entry, node);
        list_del (&e->node);
        canopy_msg_decref (e->msg);
        free (e);
    }
    hashmap_destroy (h->aux);
    hashmap_destroy (h->attr_cache);
    free (h->attr_last);
    free (h->appname);
    if (h->ops)
        h->ops->close (h->impl);
    if (h->r_owned)
        canopy_reactor_destroy (h->r);
    free (h);
    errno = saved_errno;
}

static void trace (canopy_t *h, const char *dir, const canopy_msg_t *msg)
{
    const char *topic = canopy_msg_get_topic (msg);
    uint32_t tag = 0;
    const void *data;
    size_t size = 0;
    (void)canopy_msg_get_matchtag (msg, &tag);
    (void)canopy_msg_get_payload (msg, &data, &size);
    fprintf (stderr, "canopy-trace %s %s %s tag=%u payload=%zu\n",
             dir, canopy_msg_typestr (canopy_msg_get_type (msg)),
             topic ? topic : "-", tag, size);
}

int canopy_send (canopy_t *h, const canopy_msg_t *msg, int flags)
{
    if (!h || !msg) {
        errno = EINVAL;
        return -1;
    }
    if (h->disconnected) {
        errno = ECONNRESET;
        return -1;
    }
    if ((h->flags | flags) & CANOPY_O_TRACE)
        trace (h, ">", msg);
    if (h->direct && direct_server_send (h->direct, (canopy_msg_t *)msg, false)) {
        h->stats.tx_msgs++;
        return 0;
    }
    if (h->ops->send (h->impl, msg, ((h->flags | flags) & CANOPY_O_NONBLOCK) != 0) < 0)
        return -1;
    h->stats.tx_msgs++;
    return 0;
}

int handle_send_owned (canopy_t *h, canopy_msg_t *msg, int flags)
{
    bool nonblock;

    if (!h || !msg || h->disconnected || !h->ops->send_owned) {
        int rc = canopy_send (h, msg, flags);
        int e = errno;
        canopy_msg_decref (msg);
        errno = e;
        return rc;
    }
    nonblock = ((h->flags | flags) & CANOPY_O_NONBLOCK) != 0;
    if ((h->flags | flags) & CANOPY_O_TRACE)
        trace (h, ">", msg);
    if (h->direct && direct_server_send (h->direct, msg, true)) {
        h->stats.tx_msgs++;
        return 0;
    }
    if (h->ops->send_owned (h->impl, msg, nonblock) < 0)
        return -1;
    h->stats.tx_msgs++;
    return 0;
}

static canopy_msg_t *rq_pop (canopy_t *h)
{
    if (list_empty (&h->rq))
        return NULL;
    struct rq_entry *e = list_entry (h->rq.next, struct rq_entry, node);
    canopy_msg_t *msg = e->msg;
    list_del (&e->node);
    free (e);
    h->rq_count--;
    return msg;
}

int canopy_requeue (canopy_t *h, const canopy_msg_t *msg, int where)
{
    struct rq_entry *e;

    if (!h || !msg || (where != CANOPY_RQ_HEAD && where != CANOPY_RQ_TAIL)) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = calloc (1, sizeof (*e)))) {
        errno = ENOMEM;
        return -1;
    }
    e->msg = canopy_msg_incref ((canopy_msg_t *)msg);
    if (where == CANOPY_RQ_HEAD)
        list_add_head (&h->rq, &e->node);
    else
        list_add_tail (&h->rq, &e->node);
    h->rq_count++;
    if (h->idle_w)
        canopy_watcher_start (h->idle_w);
    return 0;
}

static void connection_lost (canopy_t *h)
{
    if (h->disconnected)
        return;
    h->disconnected = true;
    rpc_fail_all (h, ECONNRESET);
    if (h->io_w)
        canopy_watcher_stop (h->io_w);
    if (h->disconnect_cb)
        h->disconnect_cb (h, h->disconnect_arg);
    else if (h->r && h->interest > 0)
        canopy_reactor_stop_error (h->r);
}

/* Read one message from the connector, waiting until 'deadline'.
 * A blocking receive on a socket connector polls before its first try
 * unless a message is buffered (connector_ops.poll_first): a client
 * waiting for an answer made a failed read on each of its two sockets,
 * then polled, then read (kvs-bench seqget: 2.85 reads and 0.93 polls
 * per get).  With a deadline already past it tries once, as before.
 */
static canopy_msg_t *connector_recv (canopy_t *h, double deadline, bool nonblock)
{
    canopy_msg_t *msg;
    bool wait_first = !nonblock && h->ops->poll_first && !h->ops->pending (h->impl)
                      && (deadline < 0 || deadline > monotime ());

    for (;;) {
        if (h->disconnected) {
            errno = ECONNRESET;
            return NULL;
        }
        if (wait_first)
            wait_first = false;
        else {
            if ((msg = h->ops->recv (h->impl, true))) {
                h->stats.rx_msgs++;
                if (h->flags & CANOPY_O_TRACE)
                    trace (h, "<", msg);
                return msg;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                if (errno == ECONNRESET || errno == EPIPE || errno == EPROTO)
                    connection_lost (h);
                return NULL;
            }
            if (nonblock)
                return NULL;
        }
        long timeout = -1;
        if (deadline >= 0) {
            double left = deadline - monotime ();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return NULL;
            }
            timeout = (long)(left * 1000) + 1;
        }
        void *zsock = h->ops->pollzsock (h->impl);
        if (zsock) {
            zmq_pollitem_t item = { .socket = zsock, .events = ZMQ_POLLIN };
            if (zmq_poll (&item, 1, timeout) < 0 && errno != EINTR)
                return NULL;
        }
        else {
            /* a plain descriptor: poll(2) directly, without zmq_poll's
             * bookkeeping (every synchronous RPC of a client waits here)
             */
            struct pollfd pfd = { .fd = h->ops->pollfd (h->impl), .events = POLLIN };
            if (poll (&pfd, 1, timeout > INT_MAX ? INT_MAX : (int)timeout) < 0
                && errno != EINTR)
                return NULL;
        }
    }
}

canopy_msg_t *canopy_recv (canopy_t *h, struct canopy_match match, int flags)
{
    struct list_node *pos;
    canopy_msg_t *msg;
    bool nonblock;

    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    nonblock = ((h->flags | flags) & CANOPY_O_NONBLOCK) != 0;
    list_for_each (pos, &h->rq) {
        struct rq_entry *e = list_entry (pos, struct rq_entry, node);
        if (canopy_msg_cmp (e->msg, match)) {
            msg = e->msg;
            list_del (&e->node);
            free (e);
            h->rq_count--;
            return msg;
        }
    }
    for (;;) {
        if (!(msg = connector_recv (h, -1, nonblock)))
            return NULL;
        if (canopy_msg_cmp (msg, match))
            return msg;
        if (canopy_requeue (h, msg, CANOPY_RQ_TAIL) < 0) {
            canopy_msg_decref (msg);
            return NULL;
        }
        canopy_msg_decref (msg);
    }
}

canopy_msg_t *canopy_recv_timeout (canopy_t *h, double timeout)
{
    canopy_msg_t *msg;
    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    if ((msg = rq_pop (h)))
        return msg;
    return connector_recv (h, timeout >= 0 ? monotime () + timeout : -1, false);
}

static void dispatch_one (canopy_t *h, canopy_msg_t *msg)
{
    if (canopy_msg_get_type (msg) == CANOPY_MSGTYPE_RESPONSE) {
        if (!rpc_dispatch_response (h, msg, NULL) && (h->flags & CANOPY_O_TRACE))
            trace (h, "drop", msg);
    }
    else
        msg_handler_dispatch (h, msg);
    canopy_msg_decref (msg);
}

static void dispatch_batch (canopy_t *h)
{
    for (int i = 0; i < DISPATCH_BATCH && !h->disconnected; i++) {
        canopy_msg_t *msg = rq_pop (h);
        if (!msg && !(msg = connector_recv (h, -1, true)))
            break;
        dispatch_one (h, msg);
    }
}

static void io_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    dispatch_batch (arg);
}

static void idle_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    dispatch_batch (arg);
}

static void prep_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    canopy_t *h = arg;
    if (!list_empty (&h->rq) || (!h->disconnected && h->ops->pending (h->impl)))
        canopy_watcher_start (h->idle_w);
    else
        canopy_watcher_stop (h->idle_w);
}

static int watchers_create (canopy_t *h)
{
    void *zsock = h->ops->pollzsock (h->impl);
    if (zsock)
        h->io_w = canopy_zmq_watcher_create (h->r, zsock, CANOPY_POLLIN, io_cb, h);
    else
        h->io_w = canopy_fd_watcher_create (h->r, h->ops->pollfd (h->impl),
                                            CANOPY_POLLIN, io_cb, h);
    if (!h->io_w)
        return -1;
    if (!(h->prep_w = canopy_prepare_watcher_create (h->r, prep_cb, h)))
        return -1;
    if (!(h->idle_w = canopy_idle_watcher_create (h->r, idle_cb, h)))
        return -1;
    canopy_watcher_unref (h->prep_w);
    canopy_watcher_unref (h->idle_w);
    if (h->interest == 0)
        canopy_watcher_unref (h->io_w);
    if (!h->disconnected)
        canopy_watcher_start (h->io_w);
    canopy_watcher_start (h->prep_w);
    return 0;
}

canopy_reactor_t *canopy_get_reactor (canopy_t *h)
{
    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    if (!h->r) {
        if (!(h->r = canopy_reactor_create ()))
            return NULL;
        h->r_owned = true;
        if (watchers_create (h) < 0) {
            canopy_reactor_destroy (h->r);
            h->r = NULL;
            return NULL;
        }
    }
    return h->r;
}

int canopy_set_reactor (canopy_t *h, canopy_reactor_t *r)
{
    if (!h || !r || h->r) {
        errno = h && h->r ? EEXIST : EINVAL;
        return -1;
    }
    h->r = r;
    h->r_owned = false;
    if (watchers_create (h) < 0)
        return -1;
    return 0;
}

void handle_interest_inc (canopy_t *h)
{
    if (h && h->interest++ == 0 && h->io_w)
        canopy_watcher_ref (h->io_w);
}

void handle_interest_dec (canopy_t *h)
{
    if (h && h->interest > 0 && --h->interest == 0 && h->io_w)
        canopy_watcher_unref (h->io_w);
}

void handle_set_disconnect_cb (canopy_t *h,
                               void (*cb) (canopy_t *h, void *arg),
                               void *arg)
{
    if (h) {
        h->disconnect_cb = cb;
        h->disconnect_arg = arg;
    }
}

const char *handle_local_path (canopy_t *h)
{
    if (!h || !h->ops->path)
        return NULL;
    return h->ops->path (h->impl);
}

int handle_pump (canopy_t *h, canopy_future_t *f, double deadline)
{
    struct list_node *pos, *tmp;
    canopy_msg_t *msg;

    /* A wanted response may have been requeued earlier. */
    list_for_each_safe (pos, tmp, &h->rq) {
        struct rq_entry *e = list_entry (pos, struct rq_entry, node);
        if (canopy_msg_get_type (e->msg) == CANOPY_MSGTYPE_RESPONSE
            && rpc_response_wanted (h, e->msg, f)) {
            msg = e->msg;
            list_del (&e->node);
            free (e);
            h->rq_count--;
            rpc_dispatch_response (h, msg, f);
            canopy_msg_decref (msg);
            return 0;
        }
    }
    if (!(msg = connector_recv (h, deadline, false)))
        return -1;
    if (canopy_msg_get_type (msg) == CANOPY_MSGTYPE_RESPONSE
        && rpc_response_wanted (h, msg, f)) {
        rpc_dispatch_response (h, msg, f);
    }
    else if (canopy_requeue (h, msg, CANOPY_RQ_TAIL) < 0) {
        canopy_msg_decref (msg);
        return -1;
    }
    canopy_msg_decref (msg);
    return 0;
}

int canopy_aux_set (canopy_t *h, const char *name, void *aux, canopy_free_f destroy)
{
    struct aux_item *item;

    if (!h || !name) {
        errno = EINVAL;
        return -1;
    }
    if (!h->aux && !(h->aux = hashmap_create (aux_item_destroy)))
        return -1;
    if (!aux) {
        (void)hashmap_delete (h->aux, name);
        return 0;
    }
    if (!(item = calloc (1, sizeof (*item)))) {
        errno = ENOMEM;
        return -1;
    }
    item->value = aux;
    item->destroy = destroy;
    if (hashmap_update (h->aux, name, item) < 0) {
        free (item);
        return -1;
    }
    return 0;
}

void *canopy_aux_get (canopy_t *h, const char *name)
{
    struct aux_item *item;
    if (!h || !name || !(item = hashmap_lookup (h->aux, name))) {
        errno = ENOENT;
        return NULL;
    }
    return item->value;
}

int canopy_get_flags (canopy_t *h)
{
    return h ? h->flags : 0;
}

void canopy_set_flags (canopy_t *h, int flags)
{
    if (h)
        h->flags = flags;
}

void canopy_get_stats (canopy_t *h, struct canopy_handle_stats *stats)
{
    if (h && stats)
        *stats = h->stats;
}

/* Attributes */

const char *canopy_attr_get (canopy_t *h, const char *name)
{
    canopy_future_t *f;
    const char *value;
    int immutable = 0;
    char *cpy;

    if (!h || !name) {
        errno = EINVAL;
        return NULL;
    }
    if ((value = hashmap_lookup (h->attr_cache, name)))
        return value;
    if (!(f = canopy_rpc_pack (h, "attr.get", CANOPY_NODEID_ANY, 0,
                               "{s:s}", "name", name)))
        return NULL;
    if (canopy_rpc_get_unpack (f, "{s:s s?b}",
                               "value", &value,
                               "immutable", &immutable) < 0) {
        canopy_future_destroy (f);
        return NULL;
    }
    if (!(cpy = strdup (value))) {
        canopy_future_destroy (f);
        errno = ENOMEM;
        return NULL;
    }
    canopy_future_destroy (f);
    if (immutable) {
        if (!h->attr_cache && !(h->attr_cache = hashmap_create (free))) {
            free (cpy);
            return NULL;
        }
        if (hashmap_update (h->attr_cache, name, cpy) < 0) {
            free (cpy);
            return NULL;
        }
        return cpy;
    }
    free (h->attr_last);
    h->attr_last = cpy;
    return cpy;
}

int canopy_attr_set (canopy_t *h, const char *name, const char *value)
{
    canopy_future_t *f;
    int rc;

    if (!h || !name || !value) {
        errno = EINVAL;
        return -1;
    }
    if (!(f = canopy_rpc_pack (h, "attr.set", CANOPY_NODEID_ANY, 0,
                               "{s:s s:s}", "name", name, "value", value)))
        return -1;
    rc = canopy_future_get (f, NULL);
    canopy_future_destroy (f);
    return rc;
}

static int attr_get_u32 (canopy_t *h, const char *name, uint32_t *value)
{
    const char *s;
    char *end;
    unsigned long v;

    if (!value) {
        errno = EINVAL;
        return -1;
    }
    if (!(s = canopy_attr_get (h, name)))
        return -1;
    errno = 0;
    v = strtoul (s, &end, 10);
    if (errno != 0 || *end != '\0' || v > UINT32_MAX) {
        errno = EPROTO;
        return -1;
    }
    *value = v;
    return 0;
}

int canopy_get_rank (canopy_t *h, uint32_t *rank)
{
    return attr_get_u32 (h, "rank", rank);
}

int canopy_get_size (canopy_t *h, uint32_t *size)
{
    return attr_get_u32 (h, "size", size);
}

/* Matchtags */

uint32_t canopy_matchtag_alloc (canopy_t *h)
{
    char key[16];

    if (!h) {
        errno = EINVAL;
        return 0;
    }
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t tag = h->next_tag++;
        if (h->next_tag == 0)
            h->next_tag = 1;
        if (tag == 0)
            continue;
        snprintf (key, sizeof (key), "%u", tag);
        if (!hashmap_lookup (h->rpcs, key))
            return tag;
    }
    errno = EBUSY;
    return 0;
}

void canopy_matchtag_free (canopy_t *h, uint32_t matchtag)
{
    /* Tags are recycled implicitly: a tag is in use only while it is in
     * the RPC table.  Nothing to do.
     */
    (void)h;
    (void)matchtag;
}

uint32_t canopy_matchtag_avail (canopy_t *h)
{
    return h ? UINT32_MAX - 1 - (uint32_t)hashmap_size (h->rpcs) : 0;
}
