/* msg_handler.c - message handlers and responses (msg_handler.h).
 *
 * Design notes:
 * - Started handlers sit on the handle's list, newest first.  Dispatch
 *   picks the first match and calls it; only one handler ever sees a
 *   message, so callbacks may stop or destroy any handler.
 * - Topic patterns without wildcard characters are compared with strcmp;
 *   the rest use fnmatch.
 * - Requests: no match -> ENOSYS; sender's rolemask not admitted -> EPERM.
 *   Both answers are skipped for NORESPONSE requests.
 * - A started handler holds a reference on the handle's reactor interest.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdarg.h>
#include <fnmatch.h>
#include <canopy/msg_handler.h>
#include "handle_private.h"
#include "future_private.h"
#include "json_fast_dump.h"

struct canopy_msg_handler {
    canopy_t *h;
    struct list_node node;
    int typemask;
    char *topic;        /* NULL = any */
    bool is_glob;
    canopy_msg_handler_f cb;
    void *arg;
    uint32_t rolemask;
    bool started;
};

canopy_msg_handler_t *canopy_msg_handler_create (canopy_t *h,
                                                 struct canopy_match match,
                                                 canopy_msg_handler_f cb,
                                                 void *arg)
{
    canopy_msg_handler_t *mh;

    if (!h || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(mh = calloc (1, sizeof (*mh)))) {
        errno = ENOMEM;
        return NULL;
    }
    mh->h = h;
    list_node_init (&mh->node);
    mh->typemask = match.typemask;
    if (match.topic_glob && strcmp (match.topic_glob, "*") != 0) {
        if (!(mh->topic = strdup (match.topic_glob))) {
            free (mh);
            errno = ENOMEM;
            return NULL;
        }
        mh->is_glob = strpbrk (mh->topic, "*?[") != NULL;
    }
    mh->cb = cb;
    mh->arg = arg;
    mh->rolemask = CANOPY_ROLE_OWNER;
    /* make sure the handle has a reactor to dispatch from */
    if (!canopy_get_reactor (h)) {
        free (mh->topic);
        free (mh);
        return NULL;
    }
    return mh;
}

void canopy_msg_handler_start (canopy_msg_handler_t *mh)
{
    if (mh && !mh->started) {
        list_add_head (&mh->h->handlers, &mh->node);
        mh->started = true;
        handle_interest_inc (mh->h);
    }
}

void canopy_msg_handler_stop (canopy_msg_handler_t *mh)
{
    if (mh && mh->started) {
        list_del (&mh->node);
        mh->started = false;
        handle_interest_dec (mh->h);
    }
}

void canopy_msg_handler_destroy (canopy_msg_handler_t *mh)
{
    if (mh) {
        int saved_errno = errno;
        canopy_msg_handler_stop (mh);
        free (mh->topic);
        free (mh);
        errno = saved_errno;
    }
}

void canopy_msg_handler_allow_rolemask (canopy_msg_handler_t *mh, uint32_t rolemask)
{
    if (mh)
        mh->rolemask |= rolemask;
}

void msg_handler_list_destroy (canopy_t *h)
{
    /* Handlers are owned by their creators; just unlink them. */
    while (!list_empty (&h->handlers)) {
        canopy_msg_handler_t *mh = list_entry (h->handlers.next,
                                               canopy_msg_handler_t, node);
        list_del (&mh->node);
        mh->started = false;
    }
}

static bool handler_match (canopy_msg_handler_t *mh, int type, const char *topic)
{
    if (!(mh->typemask & type))
        return false;
    if (!mh->topic)
        return true;
    if (!topic)
        return false;
    if (mh->is_glob)
        return fnmatch (mh->topic, topic, 0) == 0;
    return strcmp (mh->topic, topic) == 0;
}

void msg_handler_dispatch (canopy_t *h, const canopy_msg_t *msg)
{
    struct list_node *pos;
    int type = canopy_msg_get_type (msg);
    const char *topic = canopy_msg_get_topic (msg);

    list_for_each (pos, &h->handlers) {
        canopy_msg_handler_t *mh = list_entry (pos, canopy_msg_handler_t, node);
        if (!handler_match (mh, type, topic))
            continue;
        if (type == CANOPY_MSGTYPE_REQUEST) {
            uint32_t rolemask = 0;
            (void)canopy_msg_get_rolemask (msg, &rolemask);
            if (!(rolemask & mh->rolemask)) {
                (void)canopy_respond_error (h, msg, EPERM,
                                            "request denied for this user");
                return;
            }
        }
        mh->cb (h, mh, msg, mh->arg);
        return;
    }
    if (type == CANOPY_MSGTYPE_REQUEST) {
        char buf[CANOPY_MSG_MAX_TOPIC_LEN + 64];
        snprintf (buf, sizeof (buf), "unknown service method '%s'",
                  topic ? topic : "");
        (void)canopy_respond_error (h, msg, ENOSYS, buf);
    }
}

int canopy_msg_handler_addvec (canopy_t *h,
                               const struct canopy_msg_handler_spec tab[],
                               void *arg,
                               canopy_msg_handler_t ***handlers)
{
    int n = 0;
    canopy_msg_handler_t **v;

    if (!h || !tab || !handlers) {
        errno = EINVAL;
        return -1;
    }
    while (tab[n].cb)
        n++;
    if (!(v = calloc (n + 1, sizeof (*v)))) {
        errno = ENOMEM;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        struct canopy_match match = {
            .typemask = tab[i].typemask,
            .matchtag = 0,
            .topic_glob = tab[i].topic_glob,
        };
        if (!(v[i] = canopy_msg_handler_create (h, match, tab[i].cb, arg))) {
            canopy_msg_handler_delvec (v);
            return -1;
        }
        canopy_msg_handler_allow_rolemask (v[i], tab[i].rolemask);
        canopy_msg_handler_start (v[i]);
    }
    *handlers = v;
    return 0;
}

void canopy_msg_handler_delvec (canopy_msg_handler_t **handlers)
{
    if (handlers) {
        int saved_errno = errno;
        for (int i = 0; handlers[i]; i++)
            canopy_msg_handler_destroy (handlers[i]);
        free (handlers);
        errno = saved_errno;
    }
}

/* Responses */

/* Send a response built here and forget it (it is handed over, not
 * copied, where the connector allows).
 */
static int respond_msg (canopy_t *h, canopy_msg_t *rsp)
{
    return handle_send_owned (h, rsp, 0);
}

static bool noresponse (const canopy_msg_t *request)
{
    return canopy_msg_has_flag (request, CANOPY_MSGFLAG_NORESPONSE);
}

int canopy_respond (canopy_t *h, const canopy_msg_t *request, const char *json_str)
{
    canopy_msg_t *rsp;

    if (!h || !request) {
        errno = EINVAL;
        return -1;
    }
    if (noresponse (request))
        return 0;
    if (!(rsp = canopy_response_derive (request, 0)))
        return -1;
    if (json_str && canopy_msg_set_string (rsp, json_str) < 0) {
        canopy_msg_decref (rsp);
        return -1;
    }
    return respond_msg (h, rsp);
}

int canopy_respond_pack (canopy_t *h, const canopy_msg_t *request, const char *fmt, ...)
{
    canopy_msg_t *rsp;
    json_t *o;
    char *s;
    va_list ap;

    if (!h || !request || !fmt) {
        errno = EINVAL;
        return -1;
    }
    if (noresponse (request))
        return 0;
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o) {
        errno = EINVAL;
        return -1;
    }
    s = json_fast_dumps (o, JSON_COMPACT);
    json_decref (o);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    if (!(rsp = canopy_response_derive (request, 0))) {
        free (s);
        return -1;
    }
    if (canopy_msg_set_payload_nocopy (rsp, s, strlen (s)) < 0) {
        canopy_msg_decref (rsp);
        return -1;
    }
    return respond_msg (h, rsp);
}

int canopy_respond_raw (canopy_t *h,
                        const canopy_msg_t *request,
                        const void *data,
                        size_t size)
{
    canopy_msg_t *rsp;

    if (!h || !request) {
        errno = EINVAL;
        return -1;
    }
    if (noresponse (request))
        return 0;
    if (!(rsp = canopy_response_derive (request, 0)))
        return -1;
    if (canopy_msg_set_payload (rsp, data, size) < 0
        || canopy_msg_set_flag (rsp, CANOPY_MSGFLAG_RAW, true) < 0) {
        canopy_msg_decref (rsp);
        return -1;
    }
    return respond_msg (h, rsp);
}

int canopy_respond_error (canopy_t *h,
                          const canopy_msg_t *request,
                          int errnum,
                          const char *errstr)
{
    canopy_msg_t *rsp;

    if (!h || !request || errnum == 0) {
        errno = EINVAL;
        return -1;
    }
    if (noresponse (request))
        return 0;
    if (!(rsp = canopy_response_derive (request, errnum)))
        return -1;
    if (errstr && *errstr && canopy_msg_set_string (rsp, errstr) < 0) {
        canopy_msg_decref (rsp);
        return -1;
    }
    return respond_msg (h, rsp);
}

int canopy_request_unpack (const canopy_msg_t *msg,
                           const char **topic,
                           const char *fmt,
                           ...)
{
    json_t *o;
    va_list ap;
    int rc;

    if (!msg || !fmt || canopy_msg_get_type (msg) != CANOPY_MSGTYPE_REQUEST) {
        errno = EINVAL;
        return -1;
    }
    if (topic && !(*topic = canopy_msg_get_topic (msg)))
        return -1;
    if (canopy_msg_get_json (msg, &o) < 0)
        return -1;
    va_start (ap, fmt);
    rc = json_vunpack_ex (o, NULL, 0, fmt, ap);
    va_end (ap);
    if (rc < 0) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}
