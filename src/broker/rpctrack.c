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

/* Returns a malloc'd key, or NULL (ENOMEM, EPROTO). */
static char *make_key (const canopy_msg_t *msg)
{
    uint32_t tag = 0;
    char *routes, *key;

    if (canopy_msg_get_matchtag (msg, &tag) < 0)
        return NULL;
    if (!(routes = canopy_msg_route_string (msg)))
        return NULL;
    if (asprintf (&key, "%u|%s", tag, routes) < 0) {
        free (routes);
        errno = ENOMEM;
        return NULL;
    }
    free (routes);
    return key;
}

int rpctrack_add (rpctrack_t *t, const canopy_msg_t *req)
{
    struct entry *e;
    char *key;

    if (!t || !req) {
        errno = EINVAL;
        return -1;
    }
    if (canopy_msg_get_type (req) != CANOPY_MSGTYPE_REQUEST
        || canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE))
        return 0;
    if (!(key = make_key (req)))
        return -1;
    if ((e = hashmap_lookup (t->map, key))) {
        e->count++;
        t->count++;
        free (key);
        return 0;
    }
    if (!(e = calloc (1, sizeof (*e))) || !(e->req = canopy_msg_copy (req, false))) {
        free (e);
        free (key);
        errno = ENOMEM;
        return -1;
    }
    e->count = 1;
    e->streaming = canopy_msg_has_flag (req, CANOPY_MSGFLAG_STREAMING);
    if (hashmap_insert (t->map, key, e) < 0) {
        entry_free (e);
        free (key);
        return -1;
    }
    t->count++;
    free (key);
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
    char *key;
    int errnum = 0;

    if (!t || !rsp || canopy_msg_get_type (rsp) != CANOPY_MSGTYPE_RESPONSE)
        return false;
    if (!(key = make_key (rsp)))
        return false;
    if (!(e = hashmap_lookup (t->map, key))) {
        free (key);
        return false;
    }
    (void)canopy_msg_get_errnum (rsp, &errnum);
    if (!e->streaming || errnum != 0)
        forget_one (t, key, e);
    free (key);
    return true;
}

void rpctrack_remove (rpctrack_t *t, const canopy_msg_t *req)
{
    struct entry *e;
    char *key;

    if (!t || !req || canopy_msg_get_type (req) != CANOPY_MSGTYPE_REQUEST
        || canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE))
        return;
    if (!(key = make_key (req)))
        return;
    if ((e = hashmap_lookup (t->map, key)))
        forget_one (t, key, e);
    free (key);
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

size_t rpctrack_count (const rpctrack_t *t)
{
    return t ? t->count : 0;
}
