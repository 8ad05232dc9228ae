/* overlay.c - tree links (overlay.h).
 *
 * Design notes:
 * - ROUTER options: ROUTER_MANDATORY (sending to a missing child fails
 *   with EHOSTUNREACH instead of vanishing), ROUTER_HANDOVER (a restarted
 *   child with the same rank takes over its identity), no high-water
 *   marks, and a maximum message size on every socket.
 * - Messages from a child are accepted only after its HELLO and only from
 *   identities that are this broker's children.  Requests from children
 *   get the child's rank pushed on their route stack and lose the LOCAL
 *   role.  Events never travel up.
 * - Subtree accounting: online(self) = 1 + sum of online(child) over
 *   children that said hello; each change is reported to the parent, and
 *   rank 0 declares the instance ready when its subtree is full.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <syslog.h>
#include <zmq.h>
#include "src/common/libutil/errprintf.h"
#include "broker.h"
#include "overlay.h"
#include "topology.h"

enum child_state {
    CHILD_OFFLINE,
    CHILD_ONLINE,
    CHILD_GONE,         /* said goodbye */
};

static const char *child_state_str[] = { "offline", "online", "gone" };

struct child {
    uint32_t rank;
    char id[16];
    enum child_state state;
    uint32_t online;    /* ranks online in its subtree */
    uint32_t size;      /* ranks in its subtree */
};

struct overlay {
    struct broker *b;
    void *router;
    void *dealer;
    canopy_watcher_t *router_w;
    canopy_watcher_t *dealer_w;
    struct child *children;
    int nchildren;
    bool parent_online;
    uint32_t reported_online;
    bool ready_declared;
};

static int set_common_opts (void *sock)
{
    int64_t maxmsg = (int64_t)CANOPY_MSG_SIZE_MAX;
    int zero = 0;
    int linger = 1000;
    if (zmq_setsockopt (sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof (maxmsg)) < 0
        || zmq_setsockopt (sock, ZMQ_SNDHWM, &zero, sizeof (zero)) < 0
        || zmq_setsockopt (sock, ZMQ_RCVHWM, &zero, sizeof (zero)) < 0
        || zmq_setsockopt (sock, ZMQ_LINGER, &linger, sizeof (linger)) < 0)
        return -1;
    return 0;
}

struct overlay *overlay_create (struct broker *b)
{
    struct overlay *ov = calloc (1, sizeof (*ov));
    uint32_t kids[1024];
    int n;

    if (!ov) {
        errno = ENOMEM;
        return NULL;
    }
    ov->b = b;
    n = topology_child_count (b->rank, b->size, b->k);
    if (n > 0) {
        uint32_t *v = n <= 1024 ? kids : calloc (n, sizeof (uint32_t));
        if (!v || !(ov->children = calloc (n, sizeof (struct child)))) {
            if (v != kids)
                free (v);
            free (ov);
            errno = ENOMEM;
            return NULL;
        }
        topology_children (b->rank, b->size, b->k, v, n);
        for (int i = 0; i < n; i++) {
            ov->children[i].rank = v[i];
            snprintf (ov->children[i].id, sizeof (ov->children[i].id), "%u", v[i]);
            ov->children[i].size = topology_subtree_size (v[i], b->size, b->k);
        }
        if (v != kids)
            free (v);
        ov->nchildren = n;
    }
    return ov;
}

void overlay_destroy (struct overlay *ov)
{
    if (ov) {
        int saved_errno = errno;
        canopy_watcher_destroy (ov->router_w);
        canopy_watcher_destroy (ov->dealer_w);
        if (ov->router)
            zmq_close (ov->router);
        if (ov->dealer)
            zmq_close (ov->dealer);
        free (ov->children);
        free (ov);
        errno = saved_errno;
    }
}

static struct child *child_lookup (struct overlay *ov, uint32_t rank)
{
    /* children are consecutive ranks */
    if (ov->nchildren == 0 || rank < ov->children[0].rank
        || rank >= ov->children[0].rank + ov->nchildren)
        return NULL;
    return &ov->children[rank - ov->children[0].rank];
}

static struct child *child_lookup_id (struct overlay *ov, const char *id)
{
    char *end;
    unsigned long rank;
    if (!id || !*id)
        return NULL;
    errno = 0;
    rank = strtoul (id, &end, 10);
    if (errno || *end || rank > UINT32_MAX)
        return NULL;
    struct child *c = child_lookup (ov, rank);
    return c && !strcmp (c->id, id) ? c : NULL;
}

uint32_t overlay_subtree_online (struct overlay *ov)
{
    uint32_t n = 1;
    for (int i = 0; i < ov->nchildren; i++) {
        if (ov->children[i].state == CHILD_ONLINE)
            n += ov->children[i].online;
    }
    return n;
}

bool overlay_subtree_full (struct overlay *ov)
{
    struct broker *b = ov->b;
    return overlay_subtree_online (ov) == topology_subtree_size (b->rank, b->size, b->k);
}

static int send_control (struct overlay *ov, void *sock, const char *dest,
                         int ctype, const char *json)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_CONTROL);
    int rc = -1;
    if (!msg)
        return -1;
    if (canopy_msg_set_control (msg, ctype, 0) == 0
        && (!json || canopy_msg_set_string (msg, json) == 0))
        rc = canopy_msg_sendzsock_to (sock, dest, msg, false);
    canopy_msg_decref (msg);
    return rc;
}

/* Tell the parent (or, on rank 0, the broker) how much of our subtree is up. */
static void report_status (struct overlay *ov)
{
    struct broker *b = ov->b;
    uint32_t online = overlay_subtree_online (ov);

    if (b->rank == 0) {
        if (!ov->ready_declared && overlay_subtree_full (ov)) {
            ov->ready_declared = true;
            broker_instance_ready (b);
        }
        return;
    }
    if (!ov->parent_online || online == ov->reported_online)
        return;
    char buf[64];
    snprintf (buf, sizeof (buf), "{\"online\":%u}", online);
    if (send_control (ov, ov->dealer, NULL, CTL_STATUS, buf) == 0)
        ov->reported_online = online;
}

static void child_control (struct overlay *ov, struct child *c, const char *id,
                           canopy_msg_t *msg)
{
    struct broker *b = ov->b;
    int ctype = 0;
    int online;
    char buf[64];

    (void)canopy_msg_get_control (msg, &ctype, NULL);
    switch (ctype) {
        case CTL_HELLO:
            if (c->state == CHILD_ONLINE)
                broker_log (b, LOG_WARNING, "rank %u reconnected", c->rank);
            c->state = CHILD_ONLINE;
            c->online = 1;
            snprintf (buf, sizeof (buf), "{\"seq\":%u}", b->event_seq);
            if (send_control (ov, ov->router, id, CTL_WELCOME, buf) < 0)
                broker_log (b, LOG_ERR, "welcome to rank %u: %s", c->rank,
                            strerror (errno));
            report_status (ov);
            break;
        case CTL_STATUS:
            if (c->state != CHILD_ONLINE)
                break;
            if (canopy_msg_unpack (msg, "{s:i}", "online", &online) == 0
                && online >= 1 && (uint32_t)online <= c->size) {
                c->online = online;
                report_status (ov);
            }
            break;
        case CTL_GOODBYE:
            c->state = CHILD_GONE;
            c->online = 0;
            broker_check_shutdown (b);
            break;
        case CTL_KEEPALIVE:
            break;
        default:
            broker_log (b, LOG_DEBUG, "unknown control %d from rank %u", ctype, c->rank);
    }
}

static void router_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct overlay *ov = arg;
    struct broker *b = ov->b;

    for (int i = 0; i < 64; i++) {
        char *sender = NULL;
        canopy_msg_t *msg = canopy_msg_recvzsock_from (ov->router, &sender, true);
        if (!msg) {
            if (errno != EAGAIN)
                broker_log (b, LOG_WARNING, "dropped malformed message from a child: %s",
                            strerror (errno));
            if (errno == EAGAIN || errno == ETERM)
                break;
            continue;
        }
        struct child *c = child_lookup_id (ov, sender);
        int type = canopy_msg_get_type (msg);
        if (!c) {
            broker_log (b, LOG_WARNING, "dropped message from unknown peer '%s'", sender);
        }
        else if (type == CANOPY_MSGTYPE_CONTROL)
            child_control (ov, c, sender, msg);
        else if (c->state != CHILD_ONLINE)
            broker_log (b, LOG_DEBUG, "dropped %s from rank %u (not online)",
                        canopy_msg_typestr (type), c->rank);
        else if (type == CANOPY_MSGTYPE_REQUEST) {
            uint32_t rolemask = 0;
            (void)canopy_msg_get_rolemask (msg, &rolemask);
            (void)canopy_msg_set_rolemask (msg, rolemask & ~CANOPY_ROLE_LOCAL);
            if (canopy_msg_route_enable (msg) == 0
                && canopy_msg_route_push (msg, sender) == 0)
                router_request (b, msg, NULL);
        }
        else if (type == CANOPY_MSGTYPE_RESPONSE)
            router_response (b, msg);
        else
            broker_log (b, LOG_DEBUG, "dropped event from rank %u", c->rank);
        canopy_msg_decref (msg);
        free (sender);
    }
}

static void parent_control (struct overlay *ov, canopy_msg_t *msg)
{
    struct broker *b = ov->b;
    int ctype = 0;
    int seq;

    (void)canopy_msg_get_control (msg, &ctype, NULL);
    if (ctype == CTL_WELCOME) {
        /* Our children may have joined us before we were welcomed, with
         * an older baseline: events published before then never reach
         * this subtree, so pass the new baseline down rather than let
         * them report those events as lost.
         */
        if (canopy_msg_unpack (msg, "{s:i}", "seq", &seq) == 0
            && (uint32_t)seq > b->event_seq) {
            char buf[64];
            b->event_seq = seq;
            snprintf (buf, sizeof (buf), "{\"seq\":%u}", b->event_seq);
            for (int i = 0; i < ov->nchildren; i++) {
                struct child *c = &ov->children[i];
                if (c->state == CHILD_ONLINE)
                    (void)send_control (ov, ov->router, c->id, CTL_WELCOME, buf);
            }
        }
        ov->parent_online = true;
        ov->reported_online = 0;
        report_status (ov);
    }
}

static void dealer_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct overlay *ov = arg;
    struct broker *b = ov->b;

    for (int i = 0; i < 64; i++) {
        canopy_msg_t *msg = canopy_msg_recvzsock_from (ov->dealer, NULL, true);
        if (!msg) {
            if (errno != EAGAIN)
                broker_log (b, LOG_WARNING, "dropped malformed message from parent: %s",
                            strerror (errno));
            if (errno == EAGAIN || errno == ETERM)
                break;
            continue;
        }
        switch (canopy_msg_get_type (msg)) {
            case CANOPY_MSGTYPE_REQUEST:
                router_request (b, msg, NULL);
                break;
            case CANOPY_MSGTYPE_RESPONSE:
                router_response (b, msg);
                break;
            case CANOPY_MSGTYPE_EVENT:
                canopy_msg_route_disable (msg);
                events_deliver (b, msg);
                break;
            case CANOPY_MSGTYPE_CONTROL:
                parent_control (ov, msg);
                break;
        }
        canopy_msg_decref (msg);
    }
}

int overlay_bind (struct overlay *ov, const char *uri)
{
    int one = 1;
    if (!(ov->router = zmq_socket (ov->b->zctx, ZMQ_ROUTER)))
        return -1;
    if (set_common_opts (ov->router) < 0
        || zmq_setsockopt (ov->router, ZMQ_ROUTER_MANDATORY, &one, sizeof (one)) < 0
        || zmq_setsockopt (ov->router, ZMQ_ROUTER_HANDOVER, &one, sizeof (one)) < 0
        || zmq_bind (ov->router, uri) < 0)
        return -1;
    return 0;
}

int overlay_connect (struct overlay *ov, const char *uri)
{
    int ivl = 20, ivl_max = 1000;
    if (!(ov->dealer = zmq_socket (ov->b->zctx, ZMQ_DEALER)))
        return -1;
    if (set_common_opts (ov->dealer) < 0
        || zmq_setsockopt (ov->dealer, ZMQ_ROUTING_ID, ov->b->rankstr,
                           strlen (ov->b->rankstr)) < 0
        || zmq_setsockopt (ov->dealer, ZMQ_RECONNECT_IVL, &ivl, sizeof (ivl)) < 0
        || zmq_setsockopt (ov->dealer, ZMQ_RECONNECT_IVL_MAX, &ivl_max,
                           sizeof (ivl_max)) < 0
        || zmq_connect (ov->dealer, uri) < 0)
        return -1;
    return 0;
}

int overlay_start (struct overlay *ov)
{
    struct broker *b = ov->b;

    if (ov->router) {
        if (!(ov->router_w = canopy_zmq_watcher_create (b->r, ov->router,
                                                        CANOPY_POLLIN, router_cb, ov)))
            return -1;
        canopy_watcher_start (ov->router_w);
    }
    if (ov->dealer) {
        char buf[64];
        if (!(ov->dealer_w = canopy_zmq_watcher_create (b->r, ov->dealer,
                                                        CANOPY_POLLIN, dealer_cb, ov)))
            return -1;
        canopy_watcher_start (ov->dealer_w);
        snprintf (buf, sizeof (buf), "{\"rank\":%u}", b->rank);
        if (send_control (ov, ov->dealer, NULL, CTL_HELLO, buf) < 0)
            return -1;
    }
    report_status (ov);
    return 0;
}

int overlay_send_parent (struct overlay *ov, const canopy_msg_t *msg)
{
    if (!ov->dealer) {
        errno = EHOSTUNREACH;
        return -1;
    }
    return canopy_msg_sendzsock_to (ov->dealer, NULL, msg, false);
}

int overlay_send_child (struct overlay *ov, uint32_t rank, const canopy_msg_t *msg)
{
    struct child *c = child_lookup (ov, rank);
    if (!c || c->state != CHILD_ONLINE || !ov->router) {
        errno = EHOSTUNREACH;
        return -1;
    }
    if (canopy_msg_sendzsock_to (ov->router, c->id, msg, false) < 0) {
        if (errno == EHOSTUNREACH) {
            c->state = CHILD_OFFLINE;
            c->online = 0;
        }
        return -1;
    }
    return 0;
}

void overlay_send_event_children (struct overlay *ov, const canopy_msg_t *msg)
{
    for (int i = 0; i < ov->nchildren; i++) {
        struct child *c = &ov->children[i];
        if (c->state == CHILD_ONLINE
            && canopy_msg_sendzsock_to (ov->router, c->id, msg, false) < 0
            && errno == EHOSTUNREACH) {
            c->state = CHILD_OFFLINE;
            c->online = 0;
        }
    }
}

int overlay_children_connected (struct overlay *ov)
{
    int n = 0;
    for (int i = 0; i < ov->nchildren; i++) {
        if (ov->children[i].state == CHILD_ONLINE)
            n++;
    }
    return n;
}

void overlay_goodbye (struct overlay *ov)
{
    if (ov->dealer && ov->parent_online) {
        (void)send_control (ov, ov->dealer, NULL, CTL_GOODBYE, NULL);
        ov->parent_online = false;
    }
}

bool overlay_parent_online (struct overlay *ov)
{
    return ov->parent_online;
}

json_t *overlay_status (struct overlay *ov)
{
    struct broker *b = ov->b;
    json_t *children = json_array ();
    json_t *o;

    if (!children)
        return NULL;
    for (int i = 0; i < ov->nchildren; i++) {
        struct child *c = &ov->children[i];
        json_t *entry = json_pack ("{s:i s:s s:i s:i}",
                                   "rank", (int)c->rank,
                                   "state", child_state_str[c->state],
                                   "online", (int)c->online,
                                   "size", (int)c->size);
        if (!entry || json_array_append_new (children, entry) < 0) {
            json_decref (entry);
            json_decref (children);
            return NULL;
        }
    }
    o = json_pack ("{s:i s:s s:i s:i s:o}",
                   "rank", (int)b->rank,
                   "state", overlay_subtree_full (ov) ? "full" : "partial",
                   "online", (int)overlay_subtree_online (ov),
                   "size", (int)topology_subtree_size (b->rank, b->size, b->k),
                   "children", children);
    return o;
}

char *overlay_missing (struct overlay *ov)
{
    size_t len = 0, cap = 256;
    char *s = calloc (1, cap);
    if (!s)
        return NULL;
    for (int i = 0; i < ov->nchildren; i++) {
        struct child *c = &ov->children[i];
        if (c->state == CHILD_ONLINE && c->online == c->size)
            continue;
        char buf[32];
        if (c->state == CHILD_ONLINE)
            snprintf (buf, sizeof (buf), "%s%u(partial)", len ? "," : "", c->rank);
        else
            snprintf (buf, sizeof (buf), "%s%u", len ? "," : "", c->rank);
        size_t n = strlen (buf);
        if (len + n + 1 > cap) {
            char *p = realloc (s, cap * 2 + n);
            if (!p)
                break;
            s = p;
            cap = cap * 2 + n;
        }
        memcpy (s + len, buf, n + 1);
        len += n;
    }
    return s;
}
