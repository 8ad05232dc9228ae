/* lookup.c - key resolution (lookup.h).
 *
 * Design notes:
 * - The walk is restartable: it holds no state between passes except the
 *   key (which symlinks rewrite) and the loop count, so a restart after
 *   loads simply walks again from the root it started with.
 * - Missing objects found in one pass are all requested at once (e.g. all
 *   chunks of a large value, all buckets of a hashed directory), so a
 *   lookup needs at most one round of loads per tree level.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <canopy/kvs.h>
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_path.h"
#include "kvs_ctx.h"
#include "lookup.h"
#include "shmpub.h"

#define SYMLINK_MAX 32

struct lookup {
    struct kvs_ctx *ctx;
    char *key;              /* current (normalised, symlinks rewritten) */
    char *orig_key;
    int flags;
    char rootref[BLOBREF_MAX];
    lookup_done_f done;
    void *arg;
    int links;
    int pending;            /* loads outstanding */
    int load_errnum;
    bool finished;
    int errnum;
    char errstr[160];
    json_t *treeobj;
    void *value;
    size_t value_len;
};

struct lookup *lookup_create (struct kvs_ctx *ctx, const char *key, int flags,
                              const char *rootref, lookup_done_f done, void *arg)
{
    struct lookup *l = calloc (1, sizeof (*l));
    if (!l) {
        errno = ENOMEM;
        return NULL;
    }
    l->ctx = ctx;
    l->flags = flags;
    l->done = done;
    l->arg = arg;
    size_t n = strnlen (rootref, sizeof (l->rootref) - 1);
    memcpy (l->rootref, rootref, n);
    l->rootref[n] = '\0';
    if (!(l->orig_key = strdup (key)) || !(l->key = kvs_path_normalize (key))) {
        int e = errno;
        lookup_destroy (l);
        errno = e;
        return NULL;
    }
    ctx->nlookups++;
    return l;
}

void lookup_destroy (struct lookup *l)
{
    if (l) {
        int saved_errno = errno;
        if (l->ctx && l->key)
            l->ctx->nlookups--;
        free (l->key);
        free (l->orig_key);
        json_decref (l->treeobj);
        free (l->value);
        free (l);
        errno = saved_errno;
    }
}

int lookup_errnum (const struct lookup *l)
{
    return l->errnum;
}

const char *lookup_errstr (const struct lookup *l)
{
    return l->errstr[0] ? l->errstr : NULL;
}

const char *lookup_key (const struct lookup *l)
{
    return l->orig_key;
}

int lookup_get_value (const struct lookup *l, const void **data, size_t *len)
{
    if (l->errnum) {
        errno = l->errnum;
        return -1;
    }
    *data = l->value;
    *len = l->value_len;
    return 0;
}

json_t *lookup_get_treeobj (const struct lookup *l)
{
    return l->treeobj;
}

static void finish (struct lookup *l, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void finish (struct lookup *l, int errnum, const char *fmt, ...)
{
    l->finished = true;
    l->errnum = errnum;
    if (fmt) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (l->errstr, sizeof (l->errstr), fmt, ap);
        va_end (ap);
    }
    l->done (l, l->arg);
}

static void load_cb (int errnum, void *arg)
{
    struct lookup *l = arg;
    if (errnum && !l->load_errnum)
        l->load_errnum = errnum;
    if (--l->pending == 0) {
        if (l->load_errnum)
            finish (l, l->load_errnum, l->ctx->unloading ? "KVS module unloading"
                                                         : "cannot load KVS object");
        else
            lookup_run (l);
    }
}

/* Request a missing object.  kvs_load never calls back from inside (a
 * failure to start is returned), so the walk may go on and finish the
 * lookup itself.
 */
static void need (struct lookup *l, const char *ref, enum objtype type)
{
    if (kvs_load (l->ctx, ref, type, load_cb, l) == 0)
        l->pending++;
    else if (!l->load_errnum)
        l->load_errnum = errno ? errno : ENOMEM;
}

/* A directory the lookup went through that the shared read cache lacks
 * (it was reset since, or the directory came by a way that does not
 * publish) goes there now, so that the next get of the kind finds it
 * there (shmpub.h).  'decoded': the dir, if the cache had it decoded.
 */
static void republish_dir (struct lookup *l, const char *ref, json_t *decoded)
{
    struct kvs_ctx *ctx = l->ctx;
    const void *data;
    size_t len;

    if (!ctx->shm || shmpub_has (ctx->shm, ref))
        return;
    if (objcache_get_encoded (ctx->cache, ref, &data, &len) == 0)
        shmpub_put (ctx->shm, ref, data, len);
    else if (decoded) {
        char *enc = treeobj_encode (decoded, &len);
        if (enc)
            shmpub_put (ctx->shm, ref, enc, len);
        free (enc);
    }
}

/* Resolve a directory-like tree object to the plain dir object that holds
 * (or would hold) 'name': follow a dirref to its blob, and down an hdir's
 * buckets.  Returns 1 with *dir that plain dir (borrowed); 2 with *entry
 * the entry itself (a new reference, NULL if absent) when that dir was
 * still encoded and the cache scanned it instead of decoding it
 * (objcache_find); 0 if something must be loaded (requested) or, with no
 * load pending, if an hdir bucket is empty (the name is absent).
 */
static int open_dir (struct lookup *l, json_t *obj, const char *name,
                     json_t **dir, json_t **entry)
{
    for (int depth = 0; depth <= TREEOBJ_HDIR_MAXLEVEL + 2; depth++) {
        if (treeobj_is_dir (obj)) {
            *dir = obj;
            return 1;
        }
        const char *ref;
        if (treeobj_is_dirref (obj))
            ref = treeobj_blobref_at (obj, 0);
        else if (treeobj_is_hdir (obj)) {
            if (!name || !(ref = treeobj_hdir_ref (obj,
                                                   treeobj_hdir_bucket_of (obj, name))))
                return 0;
        }
        else
            return 0;
        json_t *next = NULL;
        switch (objcache_find (l->ctx->cache, ref, name, &next, entry)) {
            case 0:
                need (l, ref, OBJ_DIR);
                return 0;
            case 2:
                republish_dir (l, ref, NULL);
                return 2;
        }
        republish_dir (l, ref, next);
        obj = next;
    }
    return 0;
}


/* Merge every entry of a directory-like object into 'out'.  Returns -1 if
 * objects must be loaded first (they are requested).
 */
static int flatten (struct lookup *l, json_t *obj, json_t *out)
{
    if (treeobj_is_dir (obj)) {
        const char *name;
        json_t *e;
        json_object_foreach (treeobj_data (obj), name, e)
            json_object_set (treeobj_data (out), name, e);
        return 0;
    }
    if (treeobj_is_dirref (obj) || treeobj_is_hdir (obj)) {
        int rc = 0;
        int n = treeobj_is_dirref (obj) ? 1 : TREEOBJ_HDIR_FANOUT;
        for (int i = 0; i < n; i++) {
            const char *ref = treeobj_is_dirref (obj) ? treeobj_blobref_at (obj, 0)
                                                      : treeobj_hdir_ref (obj, i);
            json_t *sub;
            if (!ref)
                continue;
            if (!(sub = objcache_get_dir (l->ctx->cache, ref))) {
                need (l, ref, OBJ_DIR);
                rc = -1;
                continue;
            }
            if (flatten (l, sub, out) < 0)
                rc = -1;
        }
        return rc;
    }
    return 0;
}

/* Replace l->key by target + remaining components (from index i). */
static int rewrite_key (struct lookup *l, const char *target, char **comps, int i, int n)
{
    size_t len = strlen (target) + 2;
    for (int j = i; j < n; j++)
        len += strlen (comps[j]) + 1;
    char *s = malloc (len);
    if (!s)
        return -1;
    strcpy (s, target);
    for (int j = i; j < n; j++) {
        strcat (s, ".");
        strcat (s, comps[j]);
    }
    char *norm = kvs_path_normalize (s);
    free (s);
    if (!norm)
        return -1;
    free (l->key);
    l->key = norm;
    return 0;
}

/* Produce the final result for 'obj' found at the key. */
static void deliver (struct lookup *l, json_t *obj)
{
    int flags = l->flags;

    if (flags & KVS_TREEOBJ) {
        l->treeobj = json_incref (obj);
        finish (l, 0, NULL);
        return;
    }
    if (flags & KVS_READLINK) {
        if (!treeobj_is_symlink (obj)) {
            finish (l, EINVAL, "%s is not a symlink", l->orig_key);
            return;
        }
        l->treeobj = json_incref (obj);
        finish (l, 0, NULL);
        return;
    }
    if (flags & KVS_READDIR) {
        if (!treeobj_is_directory (obj)) {
            finish (l, ENOTDIR, "%s is not a directory", l->orig_key);
            return;
        }
        json_t *out = treeobj_create_dir ();
        if (!out) {
            finish (l, ENOMEM, NULL);
            return;
        }
        if (flatten (l, obj, out) < 0 || l->load_errnum) {
            json_decref (out);
            if (l->pending == 0)
                finish (l, l->load_errnum ? l->load_errnum : EPROTO,
                        "cannot load directory");
            return;
        }
        l->treeobj = out;
        finish (l, 0, NULL);
        return;
    }
    /* a value */
    if (treeobj_is_directory (obj)) {
        finish (l, EISDIR, "%s is a directory", l->orig_key);
        return;
    }
    if (treeobj_is_val (obj)) {
        if (treeobj_decode_val (obj, &l->value, &l->value_len) < 0) {
            finish (l, EPROTO, "corrupt value at %s", l->orig_key);
            return;
        }
        finish (l, 0, NULL);
        return;
    }
    if (treeobj_is_valref (obj)) {
        int n = treeobj_blobref_count (obj);
        size_t total = 0;
        for (int i = 0; i < n; i++) {
            const char *ref = treeobj_blobref_at (obj, i);
            const void *data;
            size_t len;
            if (objcache_get_raw (l->ctx->cache, ref, &data, &len) < 0)
                need (l, ref, OBJ_RAW);
            else {
                total += len;
                /* for the shared read cache, if it lost it (a no-op if not) */
                shmpub_put (l->ctx->shm, ref, data, len);
            }
        }
        if (l->pending > 0)
            return;
        if (l->load_errnum) {
            finish (l, l->load_errnum, "cannot load value of %s", l->orig_key);
            return;
        }
        char *buf = malloc (total + 1);
        size_t off = 0;
        if (!buf) {
            finish (l, ENOMEM, NULL);
            return;
        }
        for (int i = 0; i < n; i++) {
            const void *data;
            size_t len;
            (void)objcache_get_raw (l->ctx->cache, treeobj_blobref_at (obj, i),
                                    &data, &len);
            memcpy (buf + off, data, len);
            off += len;
        }
        buf[total] = '\0';
        l->value = buf;
        l->value_len = total;
        finish (l, 0, NULL);
        return;
    }
    finish (l, EPROTO, "unexpected tree object at %s", l->orig_key);
}

void lookup_run (struct lookup *l)
{
    char **comps = NULL;
    char *buf = NULL;
    json_t *held = NULL;    /* the last entry found by scanning (ours) */
    int n;

    if (l->finished)
        return;
again:
    free (comps);
    free (buf);
    comps = NULL;
    buf = NULL;
    l->load_errnum = 0;
    json_t *root = objcache_get_dir (l->ctx->cache, l->rootref);
    if (!root) {
        need (l, l->rootref, OBJ_DIR);
        if (l->pending == 0)
            finish (l, l->load_errnum ? l->load_errnum : EPROTO, "cannot load the root");
        goto done;
    }
    if ((n = kvs_path_split (l->key, &comps, &buf)) < 0) {
        finish (l, errno, NULL);
        goto done;
    }
    if (n == 0) {
        /* the root itself: its tree object is a dirref (built only here,
         * not on every lookup) */
        if ((l->flags & KVS_TREEOBJ) && !(l->flags & KVS_READDIR)) {
            json_t *rootobj = treeobj_create_dirref (l->rootref);
            if (!rootobj) {
                finish (l, ENOMEM, NULL);
                goto done;
            }
            deliver (l, rootobj);
            json_decref (rootobj);
        }
        else
            deliver (l, root);
        goto done;
    }
    json_t *cur = root;     /* a dir-like object */
    for (int i = 0; i < n; i++) {
        json_t *dir = NULL, *entry = NULL;
        int found = open_dir (l, cur, comps[i], &dir, &entry);
        if (found == 0) {
            if (l->pending == 0 && !l->load_errnum) {
                /* empty hdir bucket */
                finish (l, ENOENT, "%s: no such key", l->orig_key);
            }
            else if (l->pending == 0)
                finish (l, l->load_errnum, "cannot load KVS object");
            goto done;
        }
        if (found == 1)
            entry = treeobj_dir_get (dir, comps[i]);
        else {
            /* 'cur', which the previous scanned entry may be, is done
             * with: open_dir keeps nothing of it */
            json_decref (held);
            held = entry;
        }
        if (!entry) {
            finish (l, ENOENT, "%s: no such key", l->orig_key);
            goto done;
        }
        bool last = (i == n - 1);
        if (treeobj_is_symlink (entry) && (!last || !(l->flags & KVS_READLINK))) {
            if (++l->links > SYMLINK_MAX) {
                finish (l, ELOOP, "%s: too many levels of symbolic links", l->orig_key);
                goto done;
            }
            if (rewrite_key (l, treeobj_symlink_target (entry), comps, i + 1, n) < 0) {
                finish (l, errno, NULL);
                goto done;
            }
            goto again;
        }
        if (last) {
            deliver (l, entry);
            goto done;
        }
        if (!treeobj_is_directory (entry)) {
            finish (l, ENOTDIR, "%s: a component is not a directory", l->orig_key);
            goto done;
        }
        cur = entry;
    }
done:
    free (comps);
    free (buf);
    json_decref (held);
}
