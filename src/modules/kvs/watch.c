/* watch.c - see watch.h.
 *
 * Design notes: each watch keeps the canonical encoding of the last tree
 * object it reported ("" for "no such key").  A check looks the key up as
 * a tree object; if it differs, it looks up the value and responds.  At
 * most one check per watch runs at a time; a root that arrives meanwhile
 * triggers another check when the current one ends.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <canopy/canopy.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/base64.h"
#include "src/common/libkvs/treeobj.h"
#include "lookup.h"
#include "watch.h"

struct watch {
    struct watch_table *wt;
    struct list_node node;
    canopy_msg_t *req;
    char *key;
    char sender[CANOPY_MSG_MAX_ROUTE_LEN + 1];
    uint32_t matchtag;
    char *last;             /* encoding of last reported treeobj, or NULL */
    bool reported;
    struct lookup *l;       /* check in progress */
    bool again;             /* another root arrived during the check */
    bool dead;
};

struct watch_table {
    struct kvs_ctx *ctx;
    struct list_node watches;
    int count;
};

static void watch_free (struct watch *w)
{
    lookup_destroy (w->l);
    canopy_msg_decref (w->req);
    free (w->key);
    free (w->last);
    free (w);
}

static void watch_end (struct watch *w, int errnum, const char *errstr)
{
    if (w->dead)
        return;
    w->dead = true;
    canopy_respond_error (w->wt->ctx->h, w->req, errnum, errstr);
    list_del (&w->node);
    w->wt->count--;
    if (!w->l)
        watch_free (w);
    /* else freed when the lookup returns */
}

static void check (struct watch *w);

static void respond_value (struct watch *w, const void *data, size_t len, bool exists)
{
    struct kvs_ctx *ctx = w->wt->ctx;
    if (!exists) {
        canopy_respond_pack (ctx->h, w->req, "{s:n}", "val");
        return;
    }
    char *s = base64_encode (data, len);
    if (!s) {
        watch_end (w, ENOMEM, NULL);
        return;
    }
    canopy_respond_pack (ctx->h, w->req, "{s:s}", "val", s);
    free (s);
}

static void value_done (struct lookup *l, void *arg)
{
    struct watch *w = arg;
    const void *data;
    size_t len;

    w->l = NULL;
    if (w->dead) {
        lookup_destroy (l);
        watch_free (w);
        return;
    }
    if (lookup_errnum (l) == ENOENT)
        respond_value (w, NULL, 0, false);
    else if (lookup_get_value (l, &data, &len) < 0) {
        int e = lookup_errnum (l);
        if (e == EISDIR || e == ENOTDIR)
            respond_value (w, NULL, 0, false);  /* not a value any more */
        else {
            watch_end (w, e, lookup_errstr (l));
            lookup_destroy (l);
            return;
        }
    }
    else
        respond_value (w, data, len, true);
    lookup_destroy (l);
    if (w->again) {
        w->again = false;
        check (w);
    }
}

static void treeobj_done (struct lookup *l, void *arg)
{
    struct watch *w = arg;
    struct kvs_ctx *ctx = w->wt->ctx;
    char *enc = NULL;

    w->l = NULL;
    if (w->dead) {
        lookup_destroy (l);
        watch_free (w);
        return;
    }
    if (lookup_errnum (l) == 0) {
        if (!(enc = treeobj_encode (lookup_get_treeobj (l), NULL))) {
            lookup_destroy (l);
            watch_end (w, ENOMEM, NULL);
            return;
        }
    }
    else if (lookup_errnum (l) != ENOENT && lookup_errnum (l) != ENOTDIR) {
        int e = lookup_errnum (l);
        watch_end (w, e, lookup_errstr (l));
        lookup_destroy (l);
        return;
    }
    lookup_destroy (l);
    bool changed = !w->reported
                   || (enc == NULL) != (w->last == NULL)
                   || (enc && strcmp (enc, w->last) != 0);
    if (!changed) {
        free (enc);
        if (w->again) {
            w->again = false;
            check (w);
        }
        return;
    }
    free (w->last);
    w->last = enc;
    w->reported = true;
    if (!enc) {
        respond_value (w, NULL, 0, false);
        if (w->again) {
            w->again = false;
            check (w);
        }
        return;
    }
    if (!(w->l = lookup_create (ctx, w->key, 0, ctx->rootref, value_done, w))) {
        watch_end (w, errno, NULL);
        return;
    }
    lookup_run (w->l);
}

static void check (struct watch *w)
{
    struct kvs_ctx *ctx = w->wt->ctx;
    if (w->l) {
        w->again = true;
        return;
    }
    if (!(w->l = lookup_create (ctx, w->key, KVS_TREEOBJ, ctx->rootref,
                                treeobj_done, w))) {
        watch_end (w, errno, NULL);
        return;
    }
    lookup_run (w->l);
}

void watch_request (struct watch_table *wt, const canopy_msg_t *msg)
{
    struct kvs_ctx *ctx = wt->ctx;
    const char *key;
    int flags = 0;
    struct watch *w;
    const char *sender = canopy_msg_route_last (msg);

    if (canopy_msg_unpack (msg, "{s:s s?i}", "key", &key, "flags", &flags) < 0) {
        canopy_respond_error (ctx->h, msg, EPROTO, "malformed kvs.watch");
        return;
    }
    if (!canopy_msg_has_flag (msg, CANOPY_MSGFLAG_STREAMING)) {
        canopy_respond_error (ctx->h, msg, EPROTO, "kvs.watch must be streaming");
        return;
    }
    if (!(w = calloc (1, sizeof (*w))) || !(w->key = strdup (key))) {
        free (w);
        canopy_respond_error (ctx->h, msg, ENOMEM, NULL);
        return;
    }
    w->wt = wt;
    w->req = canopy_msg_incref ((canopy_msg_t *)msg);
    (void)canopy_msg_get_matchtag (msg, &w->matchtag);
    snprintf (w->sender, sizeof (w->sender), "%s", sender ? sender : "");
    list_add_tail (&wt->watches, &w->node);
    wt->count++;
    check (w);
}

void watch_unwatch (struct watch_table *wt, const canopy_msg_t *msg)
{
    int matchtag;
    const char *sender = canopy_msg_route_last (msg);
    struct list_node *pos, *tmp;

    if (canopy_msg_unpack (msg, "{s:i}", "matchtag", &matchtag) < 0 || !sender) {
        canopy_respond_error (wt->ctx->h, msg, EPROTO, "malformed kvs.unwatch");
        return;
    }
    list_for_each_safe (pos, tmp, &wt->watches) {
        struct watch *w = list_entry (pos, struct watch, node);
        if (w->matchtag == (uint32_t)matchtag && !strcmp (w->sender, sender))
            watch_end (w, ENODATA, NULL);
    }
    canopy_respond (wt->ctx->h, msg, NULL);
}

void watch_disconnect (struct watch_table *wt, const char *sender)
{
    struct list_node *pos, *tmp;
    list_for_each_safe (pos, tmp, &wt->watches) {
        struct watch *w = list_entry (pos, struct watch, node);
        if (!strcmp (w->sender, sender))
            watch_end (w, ENODATA, NULL);   /* the response is dropped */
    }
}

void watch_setroot (struct watch_table *wt)
{
    struct list_node *pos, *tmp;
    list_for_each_safe (pos, tmp, &wt->watches) {
        struct watch *w = list_entry (pos, struct watch, node);
        check (w);
    }
}

int watch_count (struct watch_table *wt)
{
    return wt ? wt->count : 0;
}

struct watch_table *watch_table_create (struct kvs_ctx *ctx)
{
    struct watch_table *wt = calloc (1, sizeof (*wt));
    if (!wt) {
        errno = ENOMEM;
        return NULL;
    }
    wt->ctx = ctx;
    list_init (&wt->watches);
    return wt;
}

void watch_table_destroy (struct watch_table *wt)
{
    if (wt) {
        int saved_errno = errno;
        while (!list_empty (&wt->watches)) {
            struct watch *w = list_entry (wt->watches.next, struct watch, node);
            lookup_destroy (w->l);
            w->l = NULL;
            watch_end (w, ENODATA, "KVS module unloading");
        }
        free (wt);
        errno = saved_errno;
    }
}
