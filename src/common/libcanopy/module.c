/* module.c - module-side support: built-in handlers every module answers
 * and extra service registration (module.h).
 *
 * Built-ins, registered by the broker's module host before mod_main runs:
 *   <name>.ping      echo the payload, adding the route and responder rank
 *   <name>.shutdown  stop the module's reactor (mod_main then returns)
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <canopy/module.h>
#include <canopy/msg_handler.h>
#include <canopy/rpc.h>
#include "handle_private.h"
#include "module_private.h"

int canopy_service_register (canopy_t *h, const char *name)
{
    canopy_future_t *f;
    int rc;

    if (!h || !name || !*name || strchr (name, '.')) {
        errno = EINVAL;
        return -1;
    }
    if (!(f = canopy_rpc_pack (h, "service.add", CANOPY_NODEID_ANY, 0,
                               "{s:s}", "service", name)))
        return -1;
    rc = canopy_future_get (f, NULL);
    canopy_future_destroy (f);
    return rc;
}

/* Count the broker hops in a route stack: hop ids are bare ranks. */
int route_hop_count (const canopy_msg_t *msg)
{
    int count = 0;
    int n = canopy_msg_route_count (msg);
    for (int i = 0; i < n; i++) {
        const char *id = canopy_msg_route_at (msg, i);
        if (id && strspn (id, "0123456789") == strlen (id))
            count++;
    }
    return count;
}

canopy_msg_t *ping_response_create (const canopy_msg_t *msg, const char *rank)
{
    json_t *o = NULL;
    json_t *cpy = NULL;
    char *route = NULL;
    char *s = NULL;
    canopy_msg_t *rsp;

    if (canopy_msg_get_json (msg, &o) < 0 || !json_is_object (o)) {
        rsp = canopy_response_derive (msg, EPROTO);
        if (rsp)
            (void)canopy_msg_set_string (rsp, "ping payload must be a JSON object");
        return rsp;
    }
    if (!(cpy = json_deep_copy (o))
        || !(route = canopy_msg_route_string (msg))
        || json_object_set_new (cpy, "route", json_string (route)) < 0
        || json_object_set_new (cpy, "hops", json_integer (route_hop_count (msg))) < 0
        || json_object_set_new (cpy, "rank", json_string (rank ? rank : "?")) < 0
        || !(s = json_dumps (cpy, JSON_COMPACT))
        || !(rsp = canopy_response_derive (msg, 0))) {
        free (route);
        json_decref (cpy);
        free (s);
        return canopy_response_derive (msg, ENOMEM);
    }
    free (route);
    json_decref (cpy);
    if (canopy_msg_set_payload_nocopy (rsp, s, strlen (s)) < 0) {
        canopy_msg_decref (rsp);
        return canopy_response_derive (msg, ENOMEM);
    }
    return rsp;
}

struct builtins {
    char *rank;
    canopy_msg_handler_t *ping;
    canopy_msg_handler_t *shutdown;
};

static void builtins_destroy (void *arg)
{
    struct builtins *b = arg;
    if (b) {
        canopy_msg_handler_destroy (b->ping);
        canopy_msg_handler_destroy (b->shutdown);
        free (b->rank);
        free (b);
    }
}

static void ping_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    struct builtins *b = arg;
    canopy_msg_t *rsp;

    if (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_NORESPONSE))
        return;
    if ((rsp = ping_response_create (msg, b->rank))) {
        (void)canopy_send (h, rsp, 0);
        canopy_msg_decref (rsp);
    }
}

static void shutdown_cb (canopy_t *h, canopy_msg_handler_t *mh,
                         const canopy_msg_t *msg, void *arg)
{
    (void)canopy_respond (h, msg, NULL);
    canopy_reactor_stop (canopy_get_reactor (h));
}

int module_builtins_register (canopy_t *h, const char *name, uint32_t rank)
{
    struct builtins *b;
    char topic[CANOPY_MSG_MAX_TOPIC_LEN + 1];

    if (!(b = calloc (1, sizeof (*b))))
        return -1;
    if (asprintf (&b->rank, "%u", rank) < 0) {
        b->rank = NULL;
        goto error;
    }
    snprintf (topic, sizeof (topic), "%s.ping", name);
    if (!(b->ping = canopy_msg_handler_create (h, (struct canopy_match){
                                                   .typemask = CANOPY_MSGTYPE_REQUEST,
                                                   .topic_glob = topic },
                                               ping_cb, b)))
        goto error;
    canopy_msg_handler_allow_rolemask (b->ping, CANOPY_ROLE_ALL);
    snprintf (topic, sizeof (topic), "%s.shutdown", name);
    if (!(b->shutdown = canopy_msg_handler_create (h, (struct canopy_match){
                                                       .typemask = CANOPY_MSGTYPE_REQUEST,
                                                       .topic_glob = topic },
                                                   shutdown_cb, b)))
        goto error;
    if (canopy_aux_set (h, "canopy::module_builtins", b, builtins_destroy) < 0)
        goto error;
    /* Started before mod_main adds its own, so module handlers win. */
    canopy_msg_handler_start (b->ping);
    canopy_msg_handler_start (b->shutdown);
    return 0;
error:
    builtins_destroy (b);
    return -1;
}
