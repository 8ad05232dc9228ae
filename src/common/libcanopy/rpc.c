/* rpc.c - remote procedure calls (rpc.h).
 *
 * Design notes:
 * - Each outstanding RPC has an entry in the handle's table, keyed by its
 *   matchtag, pointing at its future.  The entry is shared by the table and
 *   the future (an aux item whose destructor orphans it): it is freed when
 *   both have let go, so a future destroyed before its response arrives
 *   leaves an orphan that keeps the matchtag reserved and swallows the late
 *   response instead of confusing a later RPC.
 * - Terminal responses (any non-streaming response; an error for a
 *   streaming one) remove the entry from the table before the future is
 *   fulfilled, since the continuation may destroy the future.
 * - Error responses fulfill the future with the errnum and the error text
 *   carried in the payload.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <canopy/rpc.h>
#include "handle_private.h"
#include "future_private.h"
#include "src/common/libutil/decimal.h"
#include "json_fast_dump.h"

struct rpc_entry {
    canopy_future_t *f;
    uint32_t matchtag;
    uint32_t nodeid;
    bool streaming;
    bool in_table;
    bool has_future;
};

static void entry_release_future (void *arg)
{
    struct rpc_entry *e = arg;
    e->has_future = false;
    e->f = NULL;
    if (!e->in_table)
        free (e);
}

static void entry_remove (canopy_t *h, struct rpc_entry *e)
{
    char key[DECIMAL_U32_MAX];   /* a matchtag in decimal: the table key */
    if (e->in_table) {
        (void)decimal_u32 (key, e->matchtag);
        (void)hashmap_take (h->rpcs, key);
        e->in_table = false;
    }
}

static struct rpc_entry *entry_lookup (canopy_t *h, const canopy_msg_t *msg)
{
    uint32_t tag;
    char key[DECIMAL_U32_MAX];

    if (canopy_msg_get_matchtag (msg, &tag) < 0 || tag == 0)
        return NULL;
    (void)decimal_u32 (key, tag);
    return hashmap_lookup (h->rpcs, key);
}

bool rpc_response_wanted (canopy_t *h, const canopy_msg_t *msg, canopy_future_t *waiting)
{
    struct rpc_entry *e = entry_lookup (h, msg);
    if (!e)
        return false;
    return !e->f || e->f == waiting || !future_has_then (e->f);
}

static void msg_decref_cb (void *arg)
{
    canopy_msg_decref (arg);
}

bool rpc_dispatch_response (canopy_t *h, canopy_msg_t *msg, canopy_future_t *waiting)
{
    struct rpc_entry *e = entry_lookup (h, msg);
    int errnum = 0;
    canopy_future_t *f;

    if (!e)
        return false;
    (void)canopy_msg_get_errnum (msg, &errnum);
    if (!e->streaming || errnum != 0) {
        entry_remove (h, e);
        if (!e->has_future) {
            free (e);
            return true;
        }
    }
    if (!(f = e->f))
        return true;    /* orphaned streaming response */
    if (errnum)
        canopy_future_fulfill_error (f, errnum, canopy_msg_errstr (msg));
    else
        canopy_future_fulfill (f, canopy_msg_incref (msg), msg_decref_cb);
    return true;
}

void rpc_fail_all (canopy_t *h, int errnum)
{
    rpc_fail_all_ex (h, errnum, false);
}

/* quiet: futures with a continuation are left unfulfilled (their owner
 * may be gone, e.g. a module whose mod_main returned); the future keeps
 * the entry and frees it when destroyed.
 */
void rpc_fail_all_ex (canopy_t *h, int errnum, bool quiet)
{
    struct rpc_entry **v;
    size_t n = hashmap_size (h->rpcs);
    size_t i = 0;
    void *val;

    if (n == 0)
        return;
    if (!(v = calloc (n, sizeof (*v))))
        return;
    for (const char *k = hashmap_first (h->rpcs, &val); k && i < n;
         k = hashmap_next (h->rpcs, &val))
        v[i++] = val;
    for (size_t j = 0; j < i; j++)
        entry_remove (h, v[j]);
    for (size_t j = 0; j < i; j++) {
        if (v[j]->has_future && v[j]->f) {
            if (!(quiet && future_has_then (v[j]->f)))
                canopy_future_fulfill_error (v[j]->f, errnum, NULL);
        }
        else
            free (v[j]);
    }
    free (v);
}

void rpc_table_destroy (canopy_t *h)
{
    rpc_fail_all_ex (h, ECONNRESET, true);
    hashmap_destroy (h->rpcs);
    h->rpcs = NULL;
}

static bool rpc_args_valid (canopy_t *h, const canopy_msg_t *msg, int flags)
{
    if (!h || !msg || canopy_msg_get_type (msg) != CANOPY_MSGTYPE_REQUEST
        || (flags & ~(CANOPY_RPC_NORESPONSE | CANOPY_RPC_STREAMING))) {
        errno = EINVAL;
        return false;
    }
    return true;
}

/* Send request 'msg' and return its future.  The caller's reference to
 * 'msg' is consumed whatever happens, so the message itself goes out (a
 * module's connector hands it over without a copy).
 */
static canopy_future_t *rpc_send_owned (canopy_t *h, canopy_msg_t *msg,
                                        uint32_t nodeid, int flags)
{
    canopy_future_t *f = NULL;
    struct rpc_entry *e = NULL;
    char key[DECIMAL_U32_MAX];

    if (canopy_msg_set_nodeid (msg, nodeid) < 0)
        goto error;
    if (!(f = canopy_future_create (NULL, NULL)))
        goto error;
    canopy_future_set_handle (f, h);
    if ((flags & CANOPY_RPC_NORESPONSE)) {
        if (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_NORESPONSE, true) < 0
            || canopy_msg_set_matchtag (msg, 0) < 0)
            goto error;
        if (handle_send_owned (h, msg, 0) < 0) {
            msg = NULL;     /* consumed */
            goto error;
        }
        canopy_future_fulfill (f, NULL, NULL);
        return f;
    }
    if (!(e = calloc (1, sizeof (*e)))) {
        errno = ENOMEM;
        goto error;
    }
    if ((e->matchtag = canopy_matchtag_alloc (h)) == 0)
        goto error;
    e->nodeid = nodeid;
    e->streaming = (flags & CANOPY_RPC_STREAMING) != 0;
    e->f = f;
    if (canopy_msg_set_matchtag (msg, e->matchtag) < 0
        || (e->streaming
            && canopy_msg_set_flag (msg, CANOPY_MSGFLAG_STREAMING, true) < 0))
        goto error;
    (void)decimal_u32 (key, e->matchtag);
    if (hashmap_insert (h->rpcs, key, e) < 0)
        goto error;
    e->in_table = true;
    if (canopy_future_aux_set (f, "canopy::rpc", e, entry_release_future) < 0) {
        entry_remove (h, e);
        goto error;
    }
    e->has_future = true;
    if (handle_send_owned (h, msg, 0) < 0) {
        int saved_errno = errno;
        entry_remove (h, e);
        canopy_future_destroy (f);  /* frees e via aux */
        errno = saved_errno;
        return NULL;
    }
    return f;
error: {
        int saved_errno = errno;
        if (e && !e->has_future)
            free (e);
        canopy_future_destroy (f);
        canopy_msg_decref (msg);
        errno = saved_errno;
        return NULL;
    }
}

canopy_future_t *canopy_rpc_message (canopy_t *h,
                                     const canopy_msg_t *msg,
                                     uint32_t nodeid,
                                     int flags)
{
    canopy_msg_t *cpy;

    if (!rpc_args_valid (h, msg, flags))
        return NULL;
    if (!(cpy = canopy_msg_copy (msg, true)))
        return NULL;
    return rpc_send_owned (h, cpy, nodeid, flags);
}

static canopy_msg_t *request_create (const char *topic)
{
    canopy_msg_t *msg;
    if (!topic) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST)))
        return NULL;
    if (canopy_msg_set_topic (msg, topic) < 0) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return msg;
}

/* Send a request built here (its only reference, consumed). */
static canopy_future_t *rpc_send_msg (canopy_t *h,
                                      canopy_msg_t *msg,
                                      uint32_t nodeid,
                                      int flags)
{
    if (!rpc_args_valid (h, msg, flags)) {
        int saved_errno = errno;
        canopy_msg_decref (msg);
        errno = saved_errno;
        return NULL;
    }
    return rpc_send_owned (h, msg, nodeid, flags);
}

canopy_future_t *canopy_rpc (canopy_t *h,
                             const char *topic,
                             const char *json_str,
                             uint32_t nodeid,
                             int flags)
{
    canopy_msg_t *msg;

    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = request_create (topic)))
        return NULL;
    if (json_str && canopy_msg_set_string (msg, json_str) < 0) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return rpc_send_msg (h, msg, nodeid, flags);
}

canopy_future_t *canopy_rpc_pack (canopy_t *h,
                                  const char *topic,
                                  uint32_t nodeid,
                                  int flags,
                                  const char *fmt,
                                  ...)
{
    canopy_msg_t *msg;
    json_t *o;
    char *s;
    va_list ap;

    if (!h || !fmt) {
        errno = EINVAL;
        return NULL;
    }
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o) {
        errno = EINVAL;
        return NULL;
    }
    s = json_fast_dumps (o, JSON_COMPACT);
    json_decref (o);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(msg = request_create (topic))
        || canopy_msg_set_payload_nocopy (msg, s, strlen (s)) < 0) {
        if (!msg)
            free (s);
        canopy_msg_decref (msg);
        return NULL;
    }
    return rpc_send_msg (h, msg, nodeid, flags);
}

canopy_msg_t *canopy_rpc_raw_request (const char *topic)
{
    canopy_msg_t *msg;

    if (!(msg = request_create (topic)))
        return NULL;
    if (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true) < 0) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return msg;
}

canopy_future_t *canopy_rpc_raw (canopy_t *h,
                                 const char *topic,
                                 const void *data,
                                 size_t size,
                                 uint32_t nodeid,
                                 int flags)
{
    canopy_msg_t *msg;

    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = request_create (topic)))
        return NULL;
    if (canopy_msg_set_payload (msg, data, size) < 0
        || canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true) < 0) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return rpc_send_msg (h, msg, nodeid, flags);
}

int canopy_rpc_get_msg (canopy_future_t *f, const canopy_msg_t **msgp)
{
    const void *result;

    if (canopy_future_get (f, &result) < 0)
        return -1;
    if (!result) {      /* NORESPONSE rpc */
        errno = ENODATA;
        return -1;
    }
    if (msgp)
        *msgp = result;
    return 0;
}

int canopy_rpc_get (canopy_future_t *f, const char **json_str)
{
    const canopy_msg_t *msg;
    const char *s;

    if (canopy_rpc_get_msg (f, &msg) < 0)
        return -1;
    if (canopy_msg_get_string (msg, &s) < 0)
        return -1;
    if (json_str)
        *json_str = s;
    return 0;
}

int canopy_rpc_get_unpack (canopy_future_t *f, const char *fmt, ...)
{
    const canopy_msg_t *msg;
    json_t *o;
    va_list ap;
    int rc;

    if (!fmt) {
        errno = EINVAL;
        return -1;
    }
    if (canopy_rpc_get_msg (f, &msg) < 0)
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

int canopy_rpc_get_raw (canopy_future_t *f, const void **data, size_t *size)
{
    const canopy_msg_t *msg;

    if (canopy_rpc_get_msg (f, &msg) < 0)
        return -1;
    return canopy_msg_get_payload (msg, data, size);
}

uint32_t canopy_rpc_get_matchtag (canopy_future_t *f)
{
    struct rpc_entry *e = canopy_future_aux_get (f, "canopy::rpc");
    return e ? e->matchtag : 0;
}

uint32_t canopy_rpc_get_nodeid (canopy_future_t *f)
{
    struct rpc_entry *e = canopy_future_aux_get (f, "canopy::rpc");
    return e ? e->nodeid : CANOPY_NODEID_ANY;
}
