/* rpctrack.c - requests in flight on one overlay link (rpctrack.h).
 *
 * Design notes:
 * - Key: "<matchtag>|<route stack bottom to top>".  The stack at send time
 *   is the one the response carries when it arrives back over this link
 *   (the hops above us were pushed by the far side and popped again).
 * - Each entry counts duplicates rather than storing them twice.
 * - purge detaches the table before calling back, so a callback that
 *   sends (and perhaps tracks) messages never sees a half-purged table.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/decimal.h"
#include "rpctrack.h"

struct entry {
    canopy_msg_t *req;      /* copy without payload */
    int count;
    bool streaming;
};

struct rpctrack {
    hashmap_t *map;
    size_t count;           /* requests, duplicates included */
};

static void entry_free (void *arg)
{
    struct entry *e = arg;
    if (e) {
        canopy_msg_decref (e->req);
        free (e);
    }
}

rpctrack_t *rpctrack_create (void)
{
    rpctrack_t *t = calloc (1, sizeof (*t));
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(t->map = hashmap_create (entry_free))) {
        free (t);
        return NULL;
    }
    return t;
}

void rpctrack_destroy (rpctrack_t *t)
{
    if (t) {
        int saved_errno = errno;
        hashmap_destroy (t->map);
        free (t);
        errno = saved_errno;
    }
}

/* Build the key into 'buf' (KEYBUF bytes) when it fits, else into a
 * malloc'd string.  Returns the key, or NULL (ENOMEM, EPROTO).  Free it
 * with key_free.  Hot path: two per request that crosses a link, so no
 * printf and no intermediate route string.
 */
#define KEYBUF 256

static char *make_key (const canopy_msg_t *msg, char *buf)
{
    uint32_t tag = 0;
    int n;
    size_t len;
    char *key, *p;

    if (canopy_msg_get_matchtag (msg, &tag) < 0)
        return NULL;
    n = canopy_msg_route_count (msg);
    if (n < 0)
        return NULL;
    len = decimal_u32_len (tag) + 2;
    for (int i = n - 1; i >= 0; i--)
        len += strlen (canopy_msg_route_at (msg, i)) + 1;
    if (len <= KEYBUF)
        key = buf;
    else if (!(key = malloc (len))) {
        errno = ENOMEM;
        return NULL;
    }
    p = key + decimal_u32 (key, tag);   /* as many digits as counted above */
    *p++ = '|';
    /* bottom (the original sender) first, as canopy_msg_route_string */
    for (int i = n - 1; i >= 0; i--) {
        const char *r = canopy_msg_route_at (msg, i);
        size_t rlen = strlen (r);
        if (i < n - 1)
            *p++ = '!';
        memcpy (p, r, rlen);
        p += rlen;
    }
    *p = '\0';
    return key;
}

static void key_free (char *key, char *buf)
{
    if (key != buf)
        free (key);
}

int rpctrack_add (rpctrack_t *t, const canopy_msg_t *req)
{
    struct entry *e;
    char buf[KEYBUF];
    char *key;

    if (!t || !req) {
        errno = EINVAL;
        return -1;
    }
    if (canopy_msg_get_type (req) != CANOPY_MSGTYPE_REQUEST
        || canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE))
        return 0;
    if (!(key = make_key (req, buf)))
        return -1;
    if ((e = hashmap_lookup (t->map, key))) {
        e->count++;
        t->count++;
        key_free (key, buf);
        return 0;
    }
    if (!(e = calloc (1, sizeof (*e))) || !(e->req = canopy_msg_copy (req, false))) {
        free (e);
        key_free (key, buf);
        errno = ENOMEM;
        return -1;
    }
    e->count = 1;
    e->streaming = canopy_msg_has_flag (req, CANOPY_MSGFLAG_STREAMING);
    if (hashmap_insert (t->map, key, e) < 0) {
        int err = errno;
        entry_free (e);
        key_free (key, buf);
        errno = err;
        return -1;
    }
    t->count++;
    key_free (key, buf);
    return 0;
}

static void forget_one (rpctrack_t *t, const char *key, struct entry *e)
{
    t->count--;
    if (--e->count == 0)
        (void)hashmap_delete (t->map, key);
}

bool rpctrack_match (rpctrack_t *t, const canopy_msg_t *rsp)
{
    struct entry *e;
    char buf[KEYBUF];
    char *key;
    int errnum = 0;

    if (!t || !rsp || canopy_msg_get_type (rsp) != CANOPY_MSGTYPE_RESPONSE
        || t->count == 0)
        return false;
    if (!(key = make_key (rsp, buf)))
        return false;
    if (!(e = hashmap_lookup (t->map, key))) {
        key_free (key, buf);
        return false;
    }
    (void)canopy_msg_get_errnum (rsp, &errnum);
    if (!e->streaming || errnum != 0)
        forget_one (t, key, e);
    key_free (key, buf);
    return true;
}

void rpctrack_remove (rpctrack_t *t, const canopy_msg_t *req)
{
    struct entry *e;
    char buf[KEYBUF];
    char *key;

    if (!t || !req || canopy_msg_get_type (req) != CANOPY_MSGTYPE_REQUEST
        || canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE))
        return;
    if (!(key = make_key (req, buf)))
        return;
    if ((e = hashmap_lookup (t->map, key)))
        forget_one (t, key, e);
    key_free (key, buf);
}

void rpctrack_purge (rpctrack_t *t, rpctrack_purge_f fn, void *arg)
{
    hashmap_t *old, *fresh;
    void *val;

    if (!t || t->count == 0)
        return;
    if (!(fresh = hashmap_create (entry_free))) {
        /* cannot detach: clear in place after the callbacks */
        if (fn) {
            for (const char *k = hashmap_first (t->map, &val); k;
                 k = hashmap_next (t->map, &val)) {
                struct entry *e = val;
                for (int i = 0; i < e->count; i++)
                    fn (e->req, arg);
            }
        }
        hashmap_clear (t->map);
        t->count = 0;
        return;
    }
    old = t->map;
    t->map = fresh;
    t->count = 0;
    if (fn) {
        for (const char *k = hashmap_first (old, &val); k; k = hashmap_next (old, &val)) {
            struct entry *e = val;
            for (int i = 0; i < e->count; i++)
                fn (e->req, arg);
        }
    }
    hashmap_destroy (old);
}

size_t rpctrack_purge_if (rpctrack_t *t, rpctrack_pred_f pred, void *pred_arg,
                          rpctrack_purge_f fn, void *arg)
{
    void *val;
    size_t n = 0;

    if (!t || !pred || t->count == 0)
        return 0;
    /* Two passes: the callback may not run while we walk the map (it may
     * send, and a send may track), so the victims' keys are collected
     * first.  The callback gets the entry's own copy, taken out of the map.
     */
    size_t nkeys = 0;
    char **keys = calloc (hashmap_size (t->map), sizeof (*keys));
    if (!keys)
        return 0;   /* out of memory: they stay tracked */
    for (const char *k = hashmap_first (t->map, &val); k;
         k = hashmap_next (t->map, &val)) {
        struct entry *e = val;
        if (!pred (e->req, pred_arg))
            continue;
        if (!(keys[nkeys] = strdup (k)))
            break;
        nkeys++;
    }
    for (size_t i = 0; i < nkeys; i++) {
        struct entry *e = hashmap_take (t->map, keys[i]);
        if (e) {
            t->count -= e->count;
            n += e->count;
            for (int j = 0; j < e->count && fn; j++)
                fn (e->req, arg);
            entry_free (e);
        }
        free (keys[i]);
    }
    free (keys);
    return n;
}

size_t rpctrack_count (const rpctrack_t *t)
{
    return t ? t->count : 0;
}
