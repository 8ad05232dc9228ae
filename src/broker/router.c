/* router.c - where each message goes (DESIGN.md section 3).
 *
 * Requests: a request from a local endpoint gets that endpoint's
 * credentials and id pushed on its route stack; one from a child already
 * has the child's rank pushed (overlay.c).  Then:
 *   nodeid ANY       local service if there is one (and the sender is not
 *                    that service itself), else up to the parent; ENOSYS
 *                    at rank 0.
 *   nodeid UPSTREAM  up to the parent (becomes ANY there).
 *   nodeid == rank   local service, else ENOSYS.
 *   nodeid in subtree  down to the child toward it, pushing our rank;
 *                    EHOSTUNREACH if that child is not online.
 *   other nodeid     up to the parent; EHOSTUNREACH if >= size.
 * Responses retrace the route stack: the top hop is our own rank (pop it:
 * we sent the request down), a local endpoint "<rank>:...", a child rank
 * (pop and send down), or anything else (send up).
 * The broker's own services ("broker", "attr", "log", ...) are internal
 * handlers keyed by topic; the broker's own requests use hop "<rank>:b".
 * Every request gets exactly one answer unless it is NORESPONSE.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <syslog.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/module_private.h"
#include "src/common/libcanopy/msg_stream.h"
#include "broker.h"
#include "overlay.h"
#include "topology.h"
#include "src/common/libcanopy/json_fast_dump.h"

struct service {
    bool internal;
    struct endpoint *ep;
};

struct internal_entry {
    internal_handler_f fn;
    uint32_t rolemask;
};

struct broker_rpc {
    broker_rpc_f cb;
    void *arg;
};

int router_init (struct broker *b)
{
    if (!(b->services = hashmap_create (free))
        || !(b->endpoints = hashmap_create (NULL))
        || !(b->internal = hashmap_create (free))
        || !(b->rpcs = hashmap_create (free)))
        return -1;
    b->next_tag = 1;
    return 0;
}

void router_fini (struct broker *b)
{
    hashmap_destroy (b->services);
    hashmap_destroy (b->endpoints);
    hashmap_destroy (b->internal);
    hashmap_destroy (b->rpcs);
    b->services = b->endpoints = b->internal = b->rpcs = NULL;
}

/* Services */

static int service_name (const char *topic, char *name, size_t size)
{
    const char *dot = strchr (topic, '.');
    size_t len = dot ? (size_t)(dot - topic) : strlen (topic);
    if (len == 0 || len >= size)
        return -1;
    memcpy (name, topic, len);
    name[len] = '\0';
    return 0;
}

int service_add_internal (struct broker *b, const char *name)
{
    struct service *svc = calloc (1, sizeof (*svc));
    if (!svc)
        return -1;
    svc->internal = true;
    if (hashmap_insert (b->services, name, svc) < 0) {
        free (svc);
        return -1;
    }
    return 0;
}

int service_add_module (struct broker *b, const char *name, struct endpoint *ep)
{
    struct service *svc = calloc (1, sizeof (*svc));
    if (!svc)
        return -1;
    svc->ep = ep;
    if (hashmap_insert (b->services, name, svc) < 0) {
        free (svc);
        return -1;
    }
    return 0;
}

void service_remove_endpoint (struct broker *b, struct endpoint *ep)
{
    void *val;
    for (const char *k = hashmap_first (b->services, &val); k;
         k = hashmap_next (b->services, &val)) {
        struct service *svc = val;
        if (svc->ep == ep) {
            char name[CANOPY_MSG_MAX_TOPIC_LEN + 1];
            snprintf (name, sizeof (name), "%s", k);
            (void)hashmap_delete (b->services, name);
        }
    }
}

struct endpoint *service_lookup_endpoint (struct broker *b, const char *topic,
                                          bool *internal)
{
    char name[CANOPY_MSG_MAX_TOPIC_LEN + 1];
    struct service *svc;

    *internal = false;
    if (service_name (topic, name, sizeof (name)) < 0
        || !(svc = hashmap_lookup (b->services, name)))
        return NULL;
    *internal = svc->internal;
    return svc->ep;
}

int broker_register (struct broker *b, const char *topic, internal_handler_f fn,
                     uint32_t rolemask)
{
    struct internal_entry *e = calloc (1, sizeof (*e));
    char name[CANOPY_MSG_MAX_TOPIC_LEN + 1];

    if (!e)
        return -1;
    e->fn = fn;
    e->rolemask = rolemask | CANOPY_ROLE_OWNER;
    if (hashmap_insert (b->internal, topic, e) < 0) {
        free (e);
        return -1;
    }
    if (service_name (topic, name, sizeof (name)) == 0
        && !hashmap_lookup (b->services, name))
        return service_add_internal (b, name);
    return 0;
}

/* Endpoints */

void endpoint_register (struct broker *b, struct endpoint *ep)
{
    (void)hashmap_update (b->endpoints, ep->id, ep);
}

void endpoint_unregister (struct broker *b, struct endpoint *ep)
{
    if (hashmap_lookup (b->endpoints, ep->id) == ep)
        (void)hashmap_delete (b->endpoints, ep->id);
}

/* Responses */

static canopy_msg_t *response_create (const canopy_msg_t *req, int errnum,
                                      const char *text)
{
    canopy_msg_t *rsp = canopy_response_derive (req, errnum);
    if (rsp && text && canopy_msg_set_string (rsp, text) < 0) {
        canopy_msg_decref (rsp);
        return NULL;
    }
    return rsp;
}

void broker_respond (struct broker *b, const canopy_msg_t *req, const char *json_str)
{
    canopy_msg_t *rsp;
    if (canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE))
        return;
    if ((rsp = response_create (req, 0, json_str))) {
        router_response (b, rsp);
        canopy_msg_decref (rsp);
    }
}

void broker_respond_pack (struct broker *b, const canopy_msg_t *req, const char *fmt, ...)
{
    json_t *o;
    char *s;
    va_list ap;

    if (canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE))
        return;
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o || !(s = json_fast_dumps (o, JSON_COMPACT))) {
        json_decref (o);
        broker_respond_error (b, req, ENOMEM, "out of memory");
        return;
    }
    json_decref (o);
    broker_respond (b, req, s);
    free (s);
}

void broker_respond_error (struct broker *b, const canopy_msg_t *req, int errnum,
                           const char *fmt, ...)
{
    char text[256] = "";
    canopy_msg_t *rsp;

    if (canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE))
        return;
    if (fmt) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (text, sizeof (text), fmt, ap);
        va_end (ap);
    }
    if ((rsp = response_create (req, errnum ? errnum : EINVAL, fmt ? text : NULL))) {
        router_response (b, rsp);
        canopy_msg_decref (rsp);
    }
}

static bool is_number (const char *s)
{
    return *s && strspn (s, "0123456789") == strlen (s);
}

static void broker_rpc_dispatch (struct broker *b, canopy_msg_t *rsp)
{
    uint32_t tag;
    char key[16];
    struct broker_rpc *rpc;

    if (canopy_msg_get_matchtag (rsp, &tag) < 0 || tag == 0)
        return;
    snprintf (key, sizeof (key), "%u", tag);
    if (!(rpc = hashmap_take (b->rpcs, key)))
        return;
    if (rpc->cb)
        rpc->cb (b, rsp, rpc->arg);
    free (rpc);
}

void router_response (struct broker *b, canopy_msg_t *msg)
{
    const char *top;
    size_t ranklen = strlen (b->rankstr);

    while ((top = canopy_msg_route_first (msg))) {
        if (!strcmp (top, b->rankstr)) {
            (void)canopy_msg_route_pop (msg, NULL);
            continue;
        }
        if (!strncmp (top, b->rankstr, ranklen) && top[ranklen] == ':') {
            if (!strcmp (top + ranklen, ":b")) {
                (void)canopy_msg_route_pop (msg, NULL);
                broker_rpc_dispatch (b, msg);
                return;
            }
            struct endpoint *ep = hashmap_lookup (b->endpoints, top);
            if (!ep)
                return;     /* the client went away */
            (void)canopy_msg_route_pop (msg, NULL);
            (void)ep->send (ep, msg);
            return;
        }
        if (is_number (top)) {
            unsigned long child = strtoul (top, NULL, 10);
            if (child < b->size && topology_parent (child, b->k) == (int)b->rank) {
                char *id = NULL;
                (void)canopy_msg_route_pop (msg, &id);
                (void)overlay_send_child (b->overlay, child, msg);
                free (id);
                return;
            }
        }
        if (b->rank > 0)
            (void)overlay_send_parent (b->overlay, msg);
        return;
    }
}

/* Requests */

static void deliver_internal (struct broker *b, const canopy_msg_t *msg)
{
    const char *topic = canopy_msg_get_topic (msg);
    struct internal_entry *e = hashmap_lookup (b->internal, topic);
    uint32_t rolemask = 0;

    if (!e) {
        const char *dot = strchr (topic, '.');
        if (dot && !strcmp (dot, ".ping")) {
            canopy_msg_t *rsp;
            if (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_NORESPONSE))
                return;
            if ((rsp = ping_response_create (msg, b->rankstr))) {
                router_response (b, rsp);
                canopy_msg_decref (rsp);
            }
            return;
        }
        broker_respond_error (b, msg, ENOSYS, "unknown service method '%s'", topic);
        return;
    }
    (void)canopy_msg_get_rolemask (msg, &rolemask);
    if (!(rolemask & e->rolemask)) {
        broker_respond_error (b, msg, EPERM, "request denied for this user");
        return;
    }
    e->fn (b, msg);
}

/* Answer a request the overlay could not send on ('where' names the hop). */
static void respond_send_error (struct broker *b, const canopy_msg_t *msg, int errnum,
                                const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
static void respond_send_error (struct broker *b, const canopy_msg_t *msg, int errnum,
                                const char *fmt, ...)
{
    char where[64];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (where, sizeof (where), fmt, ap);
    va_end (ap);
    switch (errnum) {
        case EMSGSIZE:
            broker_respond_error (b, msg, errnum, "message too large for the overlay "
                                  "(tbon.maxmsgsize) toward %s", where);
            break;
        case EAGAIN:
            broker_respond_error (b, msg, errnum, "the queue toward %s is full "
                                  "(tbon.sndhwm)", where);
            break;
        case ENOMEM:
            broker_respond_error (b, msg, errnum, "out of memory");
            break;
        default:
            broker_respond_error (b, msg, EHOSTUNREACH, "%s is unreachable", where);
            break;
    }
}

static void forward_up (struct broker *b, canopy_msg_t *msg)
{
    if (b->rank == 0) {
        broker_respond_error (b, msg, ENOSYS, "no service for '%s'",
                              canopy_msg_get_topic (msg));
        return;
    }
    if (overlay_send_parent (b->overlay, msg) < 0)
        respond_send_error (b, msg, errno, "the parent of rank %u", b->rank);
}

static void deliver_local (struct broker *b, canopy_msg_t *msg, struct endpoint *from,
                           bool any)
{
    const char *topic = canopy_msg_get_topic (msg);
    bool internal;
    struct endpoint *ep = service_lookup_endpoint (b, topic, &internal);

    if (internal) {
        deliver_internal (b, msg);
        return;
    }
    if (ep && !(any && ep == from)) {
        if (ep->send (ep, msg) < 0)
            broker_respond_error (b, msg, ENOSYS, "service module unavailable");
        return;
    }
    if (any) {
        forward_up (b, msg);
        return;
    }
    broker_respond_error (b, msg, ENOSYS, "no service for '%s' on rank %u",
                          topic, b->rank);
}

void router_request (struct broker *b, canopy_msg_t *msg, struct endpoint *from)
{
    uint32_t nodeid = CANOPY_NODEID_ANY;
    const char *topic = canopy_msg_get_topic (msg);

    if (from) {
        (void)msg_stamp_credentials (msg, from->userid, from->rolemask);
        if (canopy_msg_route_enable (msg) < 0
            || canopy_msg_route_push (msg, from->id) < 0) {
            broker_log (b, LOG_ERR, "dropped request from %s: route stack", from->id);
            return;
        }
        if (topic) {
            uint32_t target = CANOPY_NODEID_ANY;
            (void)canopy_msg_get_nodeid (msg, &target);
            endpoint_note_service (from, topic, target);
        }
    }
    if (!topic) {
        broker_respond_error (b, msg, EPROTO, "request has no topic");
        return;
    }
    (void)canopy_msg_get_nodeid (msg, &nodeid);
    if (nodeid == CANOPY_NODEID_UPSTREAM
        || canopy_msg_has_flag (msg, CANOPY_MSGFLAG_UPSTREAM)) {
        (void)canopy_msg_set_nodeid (msg, CANOPY_NODEID_ANY);
        (void)canopy_msg_set_flag (msg, CANOPY_MSGFLAG_UPSTREAM, false);
        if (from)
            forward_up (b, msg);
        else
            deliver_local (b, msg, from, true);
        return;
    }
    if (nodeid == CANOPY_NODEID_ANY) {
        deliver_local (b, msg, from, true);
        return;
    }
    if (nodeid == b->rank) {
        deliver_local (b, msg, from, false);
        return;
    }
    if (nodeid >= b->size) {
        broker_respond_error (b, msg, EHOSTUNREACH,
                              "rank %u is not in this instance (size %u)",
                              nodeid, b->size);
        return;
    }
    if (topology_in_subtree (b->rank, nodeid, b->k)) {
        int child = topology_child_toward (b->rank, nodeid, b->k);
        if (canopy_msg_route_enable (msg) < 0
            || canopy_msg_route_push (msg, b->rankstr) < 0
            || overlay_send_child (b->overlay, child, msg) < 0) {
            int e = errno;
            (void)canopy_msg_route_pop (msg, NULL);
            if (nodeid == (uint32_t)child)
                respond_send_error (b, msg, e, "rank %u", nodeid);
            else
                respond_send_error (b, msg, e, "rank %u (via rank %d)", nodeid, child);
        }
        return;
    }
    forward_up (b, msg);
}

int broker_rpc (struct broker *b, canopy_msg_t *req, uint32_t nodeid,
                broker_rpc_f cb, void *arg)
{
    char id[32];
    char key[16];

    snprintf (id, sizeof (id), "%s:b", b->rankstr);
    if (canopy_msg_set_nodeid (req, nodeid) < 0
        || canopy_msg_route_enable (req) < 0
        || canopy_msg_route_push (req, id) < 0
        || canopy_msg_set_userid (req, b->owner) < 0
        || canopy_msg_set_rolemask (req, CANOPY_ROLE_OWNER | CANOPY_ROLE_LOCAL) < 0)
        return -1;
    if (cb) {
        struct broker_rpc *rpc = calloc (1, sizeof (*rpc));
        if (!rpc)
            return -1;
        rpc->cb = cb;
        rpc->arg = arg;
        uint32_t tag = b->next_tag++;
        if (b->next_tag == 0)
            b->next_tag = 1;
        snprintf (key, sizeof (key), "%u", tag);
        if (canopy_msg_set_matchtag (req, tag) < 0
            || hashmap_update (b->rpcs, key, rpc) < 0) {
            free (rpc);
            return -1;
        }
    }
    else
        (void)canopy_msg_set_flag (req, CANOPY_MSGFLAG_NORESPONSE, true);
    router_request (b, req, NULL);
    return 0;
}

void endpoint_disconnect_notify (struct broker *b, struct endpoint *ep)
{
    void *val;
    for (const char *svc = hashmap_first (ep->services, &val); svc;
         svc = hashmap_next (ep->services, &val)) {
        char topic[CANOPY_MSG_MAX_TOPIC_LEN + 16];
        uint32_t nodeid = CANOPY_NODEID_ANY;
        canopy_msg_t *msg;
        const char *at = strchr (svc, '@');
        if (at) {
            nodeid = strtoul (at + 1, NULL, 10);
            snprintf (topic, sizeof (topic), "%.*s.disconnect", (int)(at - svc), svc);
        }
        else
            snprintf (topic, sizeof (topic), "%s.disconnect", svc);
        if (!(msg = msg_disconnect_create (topic, nodeid, ep->id,
                                           ep->userid, ep->rolemask)))
            continue;
        router_request (b, msg, NULL);
        canopy_msg_decref (msg);
    }
}
