/* kvs_watch.c - following a key's changes.
 *
 * The service answers a streaming "kvs.watch" request with
 * {"val": base64|null} (a value, or no such key) or {"dir": treeobj} (a
 * directory's listing) each time what the key holds changes (first what
 * it holds now, with KVS_WATCH_INITIAL), until "kvs.unwatch" or the
 * client disconnects; the stream then ends with ENODATA.  A directory's
 * listing is handed out as its JSON text (the bytes), so kvs_watch_get
 * gives the "dir" tree object.
 * kvs_watch() wraps the stream in a continuation that calls the user's
 * callback; its future is kept on the handle by key for kvs_unwatch().
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libutil/base64.h"
#include "kvs_path.h"
#include "kvs_private.h"

canopy_future_t *kvs_watch_start (canopy_t *h, const char *key, int flags)
{
    if (!h || !key) {
        errno = EINVAL;
        return NULL;
    }
    return canopy_rpc_pack (h, "kvs.watch", kvs_target (h), CANOPY_RPC_STREAMING,
                            "{s:s s:i}", "key", key, "flags", flags);
}

/* Keep bytes on the future until the next call or reset. */
static int keep (canopy_future_t *f, void *buf, size_t n, const void **data,
                 size_t *len)
{
    size_t *np = malloc (sizeof (size_t));
    if (!np) {
        free (buf);
        errno = ENOMEM;
        return -1;
    }
    *np = n;
    if (canopy_future_aux_set (f, "kvs::watchval", buf, free) < 0) {
        free (buf);
        free (np);
        return -1;
    }
    if (canopy_future_aux_set (f, "kvs::watchlen", np, free) < 0) {
        free (np);
        return -1;
    }
    if (data)
        *data = buf;
    if (len)
        *len = n;
    return 0;
}

int kvs_watch_get_raw (canopy_future_t *f, const void **data, size_t *len, bool *exists)
{
    json_t *val = NULL, *dir = NULL;
    void *buf;
    size_t n;

    if (canopy_rpc_get_unpack (f, "{s?o s?o}", "val", &val, "dir", &dir) < 0)
        return -1;
    if (dir) {
        /* a directory: its listing as JSON text */
        if (!json_is_object (dir)) {
            errno = EPROTO;
            return -1;
        }
        if (!(buf = json_dumps (dir, JSON_COMPACT | JSON_SORT_KEYS))) {
            errno = ENOMEM;
            return -1;
        }
        if (keep (f, buf, strlen (buf), data, len) < 0)
            return -1;
        if (exists)
            *exists = true;
        return 0;
    }
    if (!val) {
        errno = EPROTO;
        return -1;
    }
    if (json_is_null (val)) {
        if (exists)
            *exists = false;
        if (data)
            *data = NULL;
        if (len)
            *len = 0;
        return 0;
    }
    if (!json_is_string (val)) {
        errno = EPROTO;
        return -1;
    }
    if (!(buf = base64_decode (json_string_value (val), json_string_length (val), &n)))
        return -1;
    if (keep (f, buf, n, data, len) < 0)
        return -1;
    if (exists)
        *exists = true;
    return 0;
}

int kvs_watch_get (canopy_future_t *f, json_t **valp)
{
    const void *data;
    size_t len;
    bool exists;
    json_t *o;

    if (!valp) {
        errno = EINVAL;
        return -1;
    }
    /* a directory's listing: the tree object itself, not via its text */
    json_t *dir = NULL;
    if (canopy_rpc_get_unpack (f, "{s?o}", "dir", &dir) == 0 && dir) {
        if (!json_is_object (dir)) {
            errno = EPROTO;
            return -1;
        }
        *valp = json_incref (dir);
        return 0;
    }
    if (kvs_watch_get_raw (f, &data, &len, &exists) < 0)
        return -1;
    if (!exists) {
        *valp = NULL;
        return 0;
    }
    if (len == 0)
        o = json_string ("");
    else if (!(o = json_fast_loadb (data, len, JSON_DECODE_ANY, NULL))
             && !(o = json_stringn (data, len))) {
        errno = EPROTO;
        return -1;
    }
    *valp = o;
    return 0;
}

int kvs_watch_cancel (canopy_future_t *f)
{
    canopy_t *h = canopy_future_get_handle (f);
    canopy_future_t *f2;
    if (!h) {
        errno = EINVAL;
        return -1;
    }
    if (!(f2 = canopy_rpc_pack (h, "kvs.unwatch", kvs_target (h),
                                CANOPY_RPC_NORESPONSE, "{s:i}", "matchtag",
                                (int)canopy_rpc_get_matchtag (f))))
        return -1;
    canopy_future_destroy (f2);
    return 0;
}

struct watcher {
    canopy_t *h;
    char *key;          /* normalised */
    char *auxname;
    kvs_watch_f cb;
    void *arg;
    canopy_future_t *f;
};

static void watcher_destroy (void *arg)
{
    struct watcher *w = arg;
    if (w) {
        canopy_future_destroy (w->f);
        free (w->key);
        free (w->auxname);
        free (w);
    }
}

static void watch_continuation (canopy_future_t *f, void *arg)
{
    struct watcher *w = arg;
    json_t *val = NULL;
    int errnum = 0;
    int stop;

    if (kvs_watch_get (f, &val) < 0)
        errnum = errno;
    if (errnum == ENODATA) {
        /* stream ended after kvs_unwatch */
        (void)canopy_aux_set (w->h, w->auxname, NULL, NULL);
        return;
    }
    stop = w->cb (w->key, val, errnum, w->arg);
    json_decref (val);
    if (errnum != 0) {
        (void)canopy_aux_set (w->h, w->auxname, NULL, NULL);   /* destroys w */
        return;
    }
    canopy_future_reset (f);
    if (stop)
        (void)kvs_watch_cancel (f);
}

int kvs_watch (canopy_t *h, const char *key, kvs_watch_f cb, void *arg)
{
    struct watcher *w;

    if (!h || !key || !cb) {
        errno = EINVAL;
        return -1;
    }
    if (!(w = calloc (1, sizeof (*w))))
        goto nomem;
    w->h = h;
    w->cb = cb;
    w->arg = arg;
    if (!(w->key = kvs_path_normalize (key)))
        goto error;
    if (asprintf (&w->auxname, "kvs::watch::%s", w->key) < 0) {
        w->auxname = NULL;
        goto nomem;
    }
    if (canopy_aux_get (h, w->auxname)) {
        errno = EEXIST;
        goto error;
    }
    if (!(w->f = kvs_watch_start (h, w->key, KVS_WATCH_INITIAL))
        || canopy_future_then (w->f, -1, watch_continuation, w) < 0)
        goto error;
    if (canopy_aux_set (h, w->auxname, w, watcher_destroy) < 0)
        goto error;
    return 0;
nomem:
    errno = ENOMEM;
error:
    watcher_destroy (w);
    return -1;
}

int kvs_unwatch (canopy_t *h, const char *key)
{
    struct watcher *w;
    char *norm, *auxname;

    if (!h || !key) {
        errno = EINVAL;
        return -1;
    }
    if (!(norm = kvs_path_normalize (key)))
        return -1;
    if (asprintf (&auxname, "kvs::watch::%s", norm) < 0) {
        free (norm);
        errno = ENOMEM;
        return -1;
    }
    free (norm);
    if (!(w = canopy_aux_get (h, auxname))) {
        free (auxname);
        errno = ENOENT;
        return -1;
    }
    (void)kvs_watch_cancel (w->f);
    (void)canopy_aux_set (h, auxname, NULL, NULL);  /* drops the stream */
    free (auxname);
    return 0;
}
