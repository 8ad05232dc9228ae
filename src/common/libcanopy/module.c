/* module.c - module-side support: built-in handlers every module answers
 * and extra service registration (module.h).
 *
 * Built-ins, registered by the broker's module host before mod_main runs:
 *   <name>.ping      echo the payload, adding the route and responder rank
 *   <name>.shutdown  stop the module's reactor (mod_main then returns)
 *
 * The ping response (also used by the broker for its own services) is the
 * request's JSON object plus "route", "hops" and "rank".  Decoding and
 * re-encoding the object with jansson costs ~200 instructions per payload
 * byte, which made a 1 KiB ping cost more in the responder than the whole
 * transport (bench/README.md).  So when the payload is a "simple" object
 * (json_check.h) whose text cannot contain those keys already, the three
 * members are spliced in as text before its closing brace; otherwise the
 * full jansson path runs, as before.  Both give the same JSON value.
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
#include "json_check.h"

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

/* True if s needs no JSON escaping (printable ASCII, no '"' or '\\'). */
static bool json_plain (const char *s)
{
    for (; *s; s++) {
        unsigned char c = *s;
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
            return false;
    }
    return true;
}

#define PING_TAIL_FMT "%s\"route\":\"%s\",\"hops\":%d,\"rank\":\"%s\"}"

/* The fast path: returns NULL (errno unchanged) when it does not apply,
 * or with ENOMEM when it applies but memory ran out.
 */
static canopy_msg_t *ping_response_splice (const canopy_msg_t *msg,
                                           const char *rank,
                                           bool *applies)
{
    const void *data;
    size_t size, close;
    bool empty;
    char *route = NULL;
    char *buf = NULL;
    canopy_msg_t *rsp = NULL;
    int hops, n;

    *applies = false;
    if (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW)
        || canopy_msg_get_payload (msg, &data, &size) < 0 || size == 0)
        return NULL;
    /* The added keys must not be in the object already (jansson's
     * set_new would replace them); without escapes, a key can only be
     * spelled literally, so a plain substring search is conclusive.
     */
    if (memmem (data, size, "\"route\"", 7) || memmem (data, size, "\"hops\"", 6)
        || memmem (data, size, "\"rank\"", 6)
        || !json_check_simple_object (data, size, &close, &empty))
        return NULL;
    if (!rank)
        rank = "?";
    if (!(route = canopy_msg_route_string (msg)))
        return NULL;
    if (!json_plain (route) || !json_plain (rank)) {
        free (route);
        return NULL;
    }
    *applies = true;
    hops = route_hop_count (msg);
    /* the payload up to (not including) its closing brace, then the
     * new members and a closing brace
     */
    n = snprintf (NULL, 0, PING_TAIL_FMT, empty ? "" : ",", route, hops, rank);
    if (n < 0 || !(buf = malloc (close + n + 1)))
        goto nomem;
    memcpy (buf, data, close);
    snprintf (buf + close, n + 1, PING_TAIL_FMT, empty ? "" : ",", route, hops, rank);
    if (!(rsp = canopy_response_derive (msg, 0)))
        goto nomem;
    if (canopy_msg_set_payload_nocopy (rsp, buf, close + n) < 0) {
        buf = NULL;     /* taken, even on failure */
        goto nomem;
    }
    free (route);
    return rsp;
nomem:
    free (route);
    free (buf);
    canopy_msg_decref (rsp);
    errno = ENOMEM;
    return NULL;
}

canopy_msg_t *ping_response_create (const canopy_msg_t *msg, const char *rank)
{
    json_t *o = NULL;
    json_t *cpy = NULL;
    char *route = NULL;
    char *s = NULL;
    canopy_msg_t *rsp;
    bool applies;

    if ((rsp = ping_response_splice (msg, rank, &applies)))
        return rsp;
    if (applies)
        return canopy_response_derive (msg, ENOMEM);
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
