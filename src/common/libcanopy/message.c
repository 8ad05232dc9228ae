/* message.c - the canopy message object and its accessors (message.h).
 *
 * Design notes: a message owns copies of its topic and route ids, and a
 * reference to its payload's bytes, which copies of the message share
 * (message_private.h: the buffer's count is atomic, the bytes immutable).
 * The parsed JSON payload is cached on first use and dropped whenever the
 * payload changes; the cache is the only thing a const accessor mutates.
 * Setters validate what they store so that every message that exists can
 * be encoded (msg_codec.c applies the same limits when decoding).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fnmatch.h>
#include <stdatomic.h>
#include <canopy/message.h>
#include "message_private.h"
#include "json_fast.h"
#include "json_fast_dump.h"

bool msg_type_valid (int type)
{
    switch (type) {
        case CANOPY_MSGTYPE_REQUEST:
        case CANOPY_MSGTYPE_RESPONSE:
        case CANOPY_MSGTYPE_EVENT:
        case CANOPY_MSGTYPE_CONTROL:
            return true;
    }
    return false;
}

struct msg_pbuf {
    atomic_int refs;
    void (*release)(void *arg);     /* bytes elsewhere (external), or NULL */
    void *arg;
    char data[];
};

/* A new shared buffer of size bytes and the NUL after them, or NULL. */
static struct msg_pbuf *pbuf_create (size_t size)
{
    struct msg_pbuf *pb = malloc (sizeof (*pb) + size + 1);

    if (pb) {
        atomic_init (&pb->refs, 1);
        pb->release = NULL;
        pb->arg = NULL;
        pb->data[size] = '\0';
    }
    return pb;
}

/* Make the size bytes at data, inside pb (one reference, ours), the
 * payload of msg, which has none.  They end where pb's bytes end (a
 * payload may be the tail of a shared buffer: canopy_msg_share_payload),
 * so the NUL after them is pb's.
 */
static void pbuf_attach (canopy_msg_t *msg, struct msg_pbuf *pb,
                         void *data, size_t size)
{
    msg->pbuf = pb;
    msg->payload = data;
    msg->payload_size = size;
}

int msg_payload_attach_external (struct canopy_msg *msg, void *data, size_t size,
                                 void (*release)(void *arg), void *arg)
{
    struct msg_pbuf *pb = malloc (sizeof (*pb));

    if (!pb) {
        errno = ENOMEM;
        return -1;
    }
    atomic_init (&pb->refs, 1);
    pb->release = release;
    pb->arg = arg;
    pbuf_attach (msg, pb, data, size);
    return 0;
}

void *msg_payload_alloc (struct canopy_msg *msg, size_t size)
{
    struct msg_pbuf *pb = pbuf_create (size);

    if (!pb)
        return NULL;
    pbuf_attach (msg, pb, pb->data, size);
    return pb->data;
}

static void pbuf_unref (struct msg_pbuf *pb)
{
    if (pb && atomic_fetch_sub (&pb->refs, 1) == 1) {
        if (pb->release)
            pb->release (pb->arg);
        free (pb);
    }
}

void *msg_payload_ref (const struct canopy_msg *msg)
{
    if (!msg->pbuf)
        return NULL;
    atomic_fetch_add (&msg->pbuf->refs, 1);
    return msg->pbuf;
}

void msg_payload_unref (void *data, void *hint)
{
    pbuf_unref (hint);
}

static void payload_release (canopy_msg_t *msg)
{
    if (msg->pbuf)
        pbuf_unref (msg->pbuf);
    else
        free (msg->payload);
    msg->pbuf = NULL;
    msg->payload = NULL;
    msg->payload_size = 0;
}

canopy_msg_t *canopy_msg_create (int type)
{
    canopy_msg_t *msg;

    if (!msg_type_valid (type)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = calloc (1, sizeof (*msg)))) {
        errno = ENOMEM;
        return NULL;
    }
    msg->refcount = 1;
    msg->type = type;
    msg->userid = CANOPY_USERID_UNKNOWN;
    msg->rolemask = CANOPY_ROLE_NONE;
    if (type == CANOPY_MSGTYPE_REQUEST)
        msg->aux1 = CANOPY_NODEID_ANY;
    return msg;
}

canopy_msg_t *canopy_msg_incref (canopy_msg_t *msg)
{
    if (msg)
        msg->refcount++;
    return msg;
}

void canopy_msg_decref (canopy_msg_t *msg)
{
    if (msg && --msg->refcount == 0) {
        int saved_errno = errno;
        free (msg->topic);
        payload_release (msg);
        for (int i = 0; i < msg->route_count; i++)
            free (msg->routes[i]);
        free (msg->routes);
        json_decref (msg->json);
        free (msg);
        errno = saved_errno;
    }
}

canopy_msg_t *canopy_msg_copy (const canopy_msg_t *msg, bool payload)
{
    canopy_msg_t *cpy;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cpy = canopy_msg_create (msg->type)))
        return NULL;
    cpy->flags = msg->flags;
    cpy->userid = msg->userid;
    cpy->rolemask = msg->rolemask;
    cpy->aux1 = msg->aux1;
    cpy->aux2 = msg->aux2;
    if (msg->topic && !(cpy->topic = strdup (msg->topic)))
        goto nomem;
    if (payload && msg->payload_size > 0) {
        if (msg->pbuf)              /* shared: the bytes never change */
            pbuf_attach (cpy, msg_payload_ref (msg), msg->payload, msg->payload_size);
        else {
            void *p = msg_payload_alloc (cpy, msg->payload_size);
            if (!p)
                goto nomem;
            memcpy (p, msg->payload, msg->payload_size);
        }
    }
    else if (!payload)
        cpy->flags &= ~(CANOPY_MSGFLAG_PAYLOAD | CANOPY_MSGFLAG_RAW);
    if (msg->route_count > 0) {
        if (!(cpy->routes = calloc (msg->route_count, sizeof (char *))))
            goto nomem;
        cpy->route_alloc = msg->route_count;
        for (int i = 0; i < msg->route_count; i++) {
            if (!(cpy->routes[i] = strdup (msg->routes[i])))
                goto nomem;
            cpy->route_count++;
        }
    }
    return cpy;
nomem:
    canopy_msg_decref (cpy);
    errno = ENOMEM;
    return NULL;
}

int canopy_msg_get_type (const canopy_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    return msg->type;
}

int canopy_msg_set_type (canopy_msg_t *msg, int type)
{
    if (!msg || !msg_type_valid (type)) {
        errno = EINVAL;
        return -1;
    }
    msg->type = type;
    return 0;
}

uint8_t canopy_msg_get_flags (const canopy_msg_t *msg)
{
    return msg ? msg->flags : 0;
}

int canopy_msg_set_flag (canopy_msg_t *msg, uint8_t flag, bool value)
{
    const uint8_t settable = CANOPY_MSGFLAG_NORESPONSE
                           | CANOPY_MSGFLAG_UPSTREAM
                           | CANOPY_MSGFLAG_STREAMING
                           | CANOPY_MSGFLAG_RAW;
    if (!msg || (flag & ~settable)) {
        errno = EINVAL;
        return -1;
    }
    if (value)
        msg->flags |= flag;
    else
        msg->flags &= ~flag;
    return 0;
}

bool canopy_msg_has_flag (const canopy_msg_t *msg, uint8_t flag)
{
    return msg && (msg->flags & flag) == flag;
}

int canopy_msg_set_topic (canopy_msg_t *msg, const char *topic)
{
    char *cpy = NULL;

    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (topic) {
        size_t len = strlen (topic);
        if (len == 0 || len > CANOPY_MSG_MAX_TOPIC_LEN) {
            errno = EINVAL;
            return -1;
        }
        if (!(cpy = strdup (topic))) {
            errno = ENOMEM;
            return -1;
        }
    }
    free (msg->topic);
    msg->topic = cpy;
    if (cpy)
        msg->flags |= CANOPY_MSGFLAG_TOPIC;
    else
        msg->flags &= ~CANOPY_MSGFLAG_TOPIC;
    return 0;
}

const char *canopy_msg_get_topic (const canopy_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    if (!msg->topic) {
        errno = EPROTO;
        return NULL;
    }
    return msg->topic;
}

static void clear_payload (canopy_msg_t *msg)
{
    payload_release (msg);
    json_decref (msg->json);
    msg->json = NULL;
    msg->flags &= ~CANOPY_MSGFLAG_PAYLOAD;
}

/* Takes ownership of 'data' (malloc'd), even on failure. */
int canopy_msg_set_payload_nocopy (canopy_msg_t *msg, void *data, size_t size)
{
    if (!msg || (size > 0 && !data) || size > CANOPY_MSG_SIZE_MAX) {
        free (data);
        errno = msg && size > CANOPY_MSG_SIZE_MAX ? EMSGSIZE : EINVAL;
        return -1;
    }
    clear_payload (msg);
    if (size > 0) {
        char *p = realloc (data, size + 1);
        if (!p) {
            free (data);
            errno = ENOMEM;
            return -1;
        }
        p[size] = '\0';
        data = p;
        msg->payload = data;
        msg->payload_size = size;
        msg->flags |= CANOPY_MSGFLAG_PAYLOAD;
    }
    else
        free (data);
    return 0;
}

int canopy_msg_set_payload (canopy_msg_t *msg, const void *data, size_t size)
{
    struct msg_pbuf *pb;

    if (!msg || (size > 0 && !data)) {
        errno = EINVAL;
        return -1;
    }
    if (size > CANOPY_MSG_SIZE_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    if (size == 0)
        return canopy_msg_set_payload_nocopy (msg, NULL, 0);
    /* a new buffer first: on ENOMEM the message is unchanged */
    if (!(pb = pbuf_create (size))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy (pb->data, data, size);
    clear_payload (msg);
    pbuf_attach (msg, pb, pb->data, size);
    msg->flags |= CANOPY_MSGFLAG_PAYLOAD;
    return 0;
}

void *canopy_msg_payload_reserve (canopy_msg_t *msg, size_t size)
{
    struct msg_pbuf *pb;

    if (!msg || size == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (size > CANOPY_MSG_SIZE_MAX) {
        errno = EMSGSIZE;
        return NULL;
    }
    if (!(pb = pbuf_create (size))) {
        errno = ENOMEM;
        return NULL;
    }
    clear_payload (msg);
    pbuf_attach (msg, pb, pb->data, size);
    msg->flags |= CANOPY_MSGFLAG_PAYLOAD;
    return pb->data;
}

int canopy_msg_share_payload (canopy_msg_t *msg, const canopy_msg_t *src,
                              size_t offset)
{
    if (!msg || !src || msg == src || offset > src->payload_size) {
        errno = EINVAL;
        return -1;
    }
    size_t size = src->payload_size - offset;
    if (size == 0 || !src->pbuf)
        return canopy_msg_set_payload (msg, size ? (char *)src->payload + offset
                                                 : NULL, size);
    clear_payload (msg);
    pbuf_attach (msg, msg_payload_ref (src), (char *)src->payload + offset, size);
    msg->flags |= CANOPY_MSGFLAG_PAYLOAD;
    return 0;
}

int canopy_msg_get_payload (const canopy_msg_t *msg,
                            const void **data,
                            size_t *size)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & CANOPY_MSGFLAG_PAYLOAD)) {
        if (data)
            *data = NULL;
        if (size)
            *size = 0;
        return 0;
    }
    if (data)
        *data = msg->payload;
    if (size)
        *size = msg->payload_size;
    return 0;
}

int canopy_msg_set_string (canopy_msg_t *msg, const char *s)
{
    if (canopy_msg_set_payload (msg, s, s ? strlen (s) : 0) < 0)
        return -1;
    msg->flags &= ~CANOPY_MSGFLAG_RAW;
    return 0;
}

/* Every payload buffer has a NUL byte at payload[payload_size] (not sent on
 * the wire), so the payload can be returned as a string without copying.
 */
int canopy_msg_get_string (const canopy_msg_t *msg, const char **s)
{
    if (!msg || !s) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & CANOPY_MSGFLAG_PAYLOAD)) {
        *s = NULL;
        return 0;
    }
    if (memchr (msg->payload, '\0', msg->payload_size)) {
        errno = EPROTO;
        return -1;
    }
    *s = msg->payload;
    return 0;
}

int canopy_msg_get_json (const canopy_msg_t *msg, json_t **o)
{
    canopy_msg_t *m = (canopy_msg_t *)msg;
    json_error_t jerr;

    if (!msg || !o) {
        errno = EINVAL;
        return -1;
    }
    if (!msg->json) {
        if (!(msg->flags & CANOPY_MSGFLAG_PAYLOAD)
            || (msg->flags & CANOPY_MSGFLAG_RAW)) {
            errno = EPROTO;
            return -1;
        }
        if (!(m->json = json_fast_loadb (msg->payload,
                                         msg->payload_size,
                                         JSON_DECODE_ANY,
                                         &jerr))) {
            errno = EPROTO;
            return -1;
        }
    }
    *o = msg->json;
    return 0;
}

int canopy_msg_unpack (const canopy_msg_t *msg, const char *fmt, ...)
{
    json_t *o;
    va_list ap;
    int rc;

    if (!fmt) {
        errno = EINVAL;
        return -1;
    }
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

int canopy_msg_pack (canopy_msg_t *msg, const char *fmt, ...)
{
    json_t *o;
    char *s;
    va_list ap;

    if (!msg || !fmt) {
        errno = EINVAL;
        return -1;
    }
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o) {
        errno = EINVAL;
        return -1;
    }
    if (!(s = json_fast_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY))) {
        json_decref (o);
        errno = ENOMEM;
        return -1;
    }
    if (canopy_msg_set_payload_nocopy (msg, s, strlen (s)) < 0) {
        int saved_errno = errno;
        json_decref (o);
        errno = saved_errno;
        return -1;
    }
    msg->flags &= ~CANOPY_MSGFLAG_RAW;
    msg->json = o;
    return 0;
}

int canopy_msg_set_userid (canopy_msg_t *msg, uint32_t userid)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    msg->userid = userid;
    return 0;
}

int canopy_msg_get_userid (const canopy_msg_t *msg, uint32_t *userid)
{
    if (!msg || !userid) {
        errno = EINVAL;
        return -1;
    }
    *userid = msg->userid;
    return 0;
}

int canopy_msg_set_rolemask (canopy_msg_t *msg, uint32_t rolemask)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    msg->rolemask = rolemask;
    return 0;
}

int canopy_msg_get_rolemask (const canopy_msg_t *msg, uint32_t *rolemask)
{
    if (!msg || !rolemask) {
        errno = EINVAL;
        return -1;
    }
    *rolemask = msg->rolemask;
    return 0;
}

static int check_type (const canopy_msg_t *msg, int typemask)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->type & typemask)) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int canopy_msg_set_nodeid (canopy_msg_t *msg, uint32_t nodeid)
{
    if (check_type (msg, CANOPY_MSGTYPE_REQUEST) < 0)
        return -1;
    msg->aux1 = nodeid;
    return 0;
}

int canopy_msg_get_nodeid (const canopy_msg_t *msg, uint32_t *nodeid)
{
    if (check_type (msg, CANOPY_MSGTYPE_REQUEST) < 0 || !nodeid) {
        if (msg && !nodeid)
            errno = EINVAL;
        return -1;
    }
    *nodeid = msg->aux1;
    return 0;
}

int canopy_msg_set_matchtag (canopy_msg_t *msg, uint32_t matchtag)
{
    if (check_type (msg, CANOPY_MSGTYPE_REQUEST | CANOPY_MSGTYPE_RESPONSE) < 0)
        return -1;
    msg->aux2 = matchtag;
    return 0;
}

int canopy_msg_get_matchtag (const canopy_msg_t *msg, uint32_t *matchtag)
{
    if (check_type (msg, CANOPY_MSGTYPE_REQUEST | CANOPY_MSGTYPE_RESPONSE) < 0
        || !matchtag) {
        if (msg && !matchtag)
            errno = EINVAL;
        return -1;
    }
    *matchtag = msg->aux2;
    return 0;
}

int canopy_msg_set_errnum (canopy_msg_t *msg, int errnum)
{
    if (check_type (msg, CANOPY_MSGTYPE_RESPONSE) < 0)
        return -1;
    msg->aux1 = errnum;
    return 0;
}

int canopy_msg_get_errnum (const canopy_msg_t *msg, int *errnum)
{
    if (check_type (msg, CANOPY_MSGTYPE_RESPONSE) < 0 || !errnum) {
        if (msg && !errnum)
            errno = EINVAL;
        return -1;
    }
    *errnum = (int)msg->aux1;
    return 0;
}

int canopy_msg_set_seq (canopy_msg_t *msg, uint32_t seq)
{
    if (check_type (msg, CANOPY_MSGTYPE_EVENT) < 0)
        return -1;
    msg->aux1 = seq;
    return 0;
}

int canopy_msg_get_seq (const canopy_msg_t *msg, uint32_t *seq)
{
    if (check_type (msg, CANOPY_MSGTYPE_EVENT) < 0 || !seq) {
        if (msg && !seq)
            errno = EINVAL;
        return -1;
    }
    *seq = msg->aux1;
    return 0;
}

int canopy_msg_set_control (canopy_msg_t *msg, int ctype, int status)
{
    if (check_type (msg, CANOPY_MSGTYPE_CONTROL) < 0)
        return -1;
    msg->aux1 = ctype;
    msg->aux2 = status;
    return 0;
}

int canopy_msg_get_control (const canopy_msg_t *msg, int *ctype, int *status)
{
    if (check_type (msg, CANOPY_MSGTYPE_CONTROL) < 0)
        return -1;
    if (ctype)
        *ctype = msg->aux1;
    if (status)
        *status = msg->aux2;
    return 0;
}

int canopy_msg_route_enable (canopy_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    msg->flags |= CANOPY_MSGFLAG_ROUTE;
    return 0;
}

void canopy_msg_route_disable (canopy_msg_t *msg)
{
    if (msg) {
        for (int i = 0; i < msg->route_count; i++)
            free (msg->routes[i]);
        msg->route_count = 0;
        msg->flags &= ~CANOPY_MSGFLAG_ROUTE;
    }
}

int canopy_msg_route_push (canopy_msg_t *msg, const char *id)
{
    size_t len;
    char *cpy;

    if (!msg || !id) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & CANOPY_MSGFLAG_ROUTE)) {
        errno = EPROTO;
        return -1;
    }
    len = strlen (id);
    if (len == 0 || len > CANOPY_MSG_MAX_ROUTE_LEN) {
        errno = EINVAL;
        return -1;
    }
    if (msg->route_count >= CANOPY_MSG_MAX_ROUTES) {
        errno = EMSGSIZE;
        return -1;
    }
    if (msg->route_count == msg->route_alloc) {
        int n = msg->route_alloc ? msg->route_alloc * 2 : 4;
        char **r = realloc (msg->routes, n * sizeof (char *));
        if (!r) {
            errno = ENOMEM;
            return -1;
        }
        msg->routes = r;
        msg->route_alloc = n;
    }
    if (!(cpy = strdup (id))) {
        errno = ENOMEM;
        return -1;
    }
    msg->routes[msg->route_count++] = cpy;
    return 0;
}

int canopy_msg_route_pop (canopy_msg_t *msg, char **id)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & CANOPY_MSGFLAG_ROUTE) || msg->route_count == 0) {
        errno = EPROTO;
        return -1;
    }
    char *top = msg->routes[--msg->route_count];
    if (id)
        *id = top;
    else
        free (top);
    return 0;
}

const char *canopy_msg_route_first (const canopy_msg_t *msg)
{
    if (!msg || !(msg->flags & CANOPY_MSGFLAG_ROUTE) || msg->route_count == 0)
        return NULL;
    return msg->routes[msg->route_count - 1];
}

const char *canopy_msg_route_last (const canopy_msg_t *msg)
{
    if (!msg || !(msg->flags & CANOPY_MSGFLAG_ROUTE) || msg->route_count == 0)
        return NULL;
    return msg->routes[0];
}

const char *canopy_msg_route_at (const canopy_msg_t *msg, int depth)
{
    if (!msg || depth < 0 || depth >= msg->route_count)
        return NULL;
    return msg->routes[msg->route_count - 1 - depth];
}

int canopy_msg_route_count (const canopy_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & CANOPY_MSGFLAG_ROUTE)) {
        errno = EPROTO;
        return -1;
    }
    return msg->route_count;
}

char *canopy_msg_route_string (const canopy_msg_t *msg)
{
    size_t len = 1;
    char *s;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    for (int i = 0; i < msg->route_count; i++)
        len += strlen (msg->routes[i]) + 1;
    if (!(s = calloc (1, len))) {
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < msg->route_count; i++) {
        if (i > 0)
            strcat (s, "!");
        strcat (s, msg->routes[i]);
    }
    return s;
}

const char *canopy_msg_typestr (int type)
{
    switch (type) {
        case CANOPY_MSGTYPE_REQUEST:
            return "request";
        case CANOPY_MSGTYPE_RESPONSE:
            return "response";
        case CANOPY_MSGTYPE_EVENT:
            return "event";
        case CANOPY_MSGTYPE_CONTROL:
            return "control";
    }
    return "unknown";
}

canopy_msg_t *canopy_response_derive (const canopy_msg_t *request, int errnum)
{
    canopy_msg_t *rsp;

    if (!request || request->type != CANOPY_MSGTYPE_REQUEST) {
        errno = EINVAL;
        return NULL;
    }
    if (!(rsp = canopy_msg_copy (request, false)))
        return NULL;
    rsp->type = CANOPY_MSGTYPE_RESPONSE;
    rsp->aux1 = errnum;
    rsp->flags &= ~(CANOPY_MSGFLAG_NORESPONSE | CANOPY_MSGFLAG_UPSTREAM);
    return rsp;
}

const char *canopy_msg_errstr (const canopy_msg_t *msg)
{
    const char *s;
    if (!msg || msg->type != CANOPY_MSGTYPE_RESPONSE || msg->aux1 == 0)
        return NULL;
    if (canopy_msg_get_string (msg, &s) < 0 || !s || *s == '\0')
        return NULL;
    return s;
}

bool canopy_msg_cmp (const canopy_msg_t *msg, struct canopy_match match)
{
    if (!msg || !(msg->type & match.typemask))
        return false;
    if (match.matchtag != 0) {
        if (!(msg->type & (CANOPY_MSGTYPE_REQUEST | CANOPY_MSGTYPE_RESPONSE))
            || msg->aux2 != match.matchtag)
            return false;
    }
    if (match.topic_glob && strcmp (match.topic_glob, "*") != 0) {
        if (!msg->topic)
            return false;
        if (fnmatch (match.topic_glob, msg->topic, 0) != 0)
            return false;
    }
    return true;
}
