/* objcache.c - see objcache.h
 *
 * A dir entry holds either its json_t (dir) or, until first asked for,
 * its encoded bytes (data, from objcache_put_dir_encoded): never both.
 * c->encoded counts the entries in the second state.
 * Bytes (data) are the entry's own malloc'd copy, or, when 'owner' is
 * set, a span of that message's payload, which the entry holds a
 * reference to: release_data() undoes either.
 * An encoded dir answers objcache_find without being decoded: the first
 * find scans its text for the one name (treeobj_scan.h: a dir read once
 * costs one pass); the second indexes it (treeobj_index.h: one more
 * pass), and every later find costs a hash and a comparison.  The index
 * lives as long as the encoded bytes and is counted in the cache's
 * bytes (ixbytes).  A dir is decoded only when asked for whole
 * (objcache_get_dir, or a find without a name), or when the scan
 * declines its text.
 * A decoded dir is accounted at more than its encoded length: jansson
 * spends 650-870 bytes an entry (the entry's object, its members, the
 * table slot; 8-15x the encoded text: mallinfo2 around treeobj_decode
 * of dirs of 16-1024 entries, jansson 2.14), so a cache counting only
 * the text held up to 15x cache-max.  dirbytes adds
 * OBJCACHE_DECODED_ENTRY_BYTES for each member of the tree object's data
 * (a dir's entries; an hdir's few members of its own, its buckets being
 * other objects).
 * On rank 0 a new version shares its unchanged entries with the old
 * one and each is counted in both: old versions expire sooner, which
 * is the side to err on.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/list.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/errprintf.h"
#include "src/common/libkvs/blobrecs.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/treeobj_scan.h"
#include "src/common/libkvs/treeobj_index.h"
#include "objcache.h"

struct waiter {
    objcache_wait_f cb;
    void *arg;
};

struct entry {
    char key[BLOBREF_MAX + 2];      /* "d:" or "r:" + blobref */
    struct list_node lru;
    bool valid;
    enum objtype type;
    json_t *dir;
    void *data;
    canopy_msg_t *owner;    /* data lies in this message's payload */
    size_t len;         /* bytes accounted (the index's apart) */
    bool found;         /* objcache_find answered from the text once */
    treeobj_index_t *index;     /* of the encoded text, from the second find */
    size_t ixbytes;     /* the index's memory, accounted too */
    size_t dirbytes;    /* the decoded dir's memory beyond len, accounted */
    bool noscan;        /* the scan declined its text: decode it */
    double lastuse;
    struct waiter *waiters;
    int nwaiters;
};

struct objcache {
    hashmap_t *map;
    struct list_node lru;   /* valid entries, least recently used first */
    size_t bytes;
    size_t max_bytes;
    double max_age;
    size_t pending;
    size_t nwaiters;
    size_t encoded;
    size_t scans;
    size_t indexed;
    size_t decodes;
};

/* The encoded bytes go, and with them the index of them. */
static void release_data (objcache_t *c, struct entry *e)
{
    if (e->index) {
        treeobj_index_destroy (e->index);
        e->index = NULL;
        if (c)
            c->bytes -= e->ixbytes;
        e->ixbytes = 0;
    }
    if (e->owner)
        canopy_msg_decref (e->owner);
    else
        free (e->data);
    e->owner = NULL;
    e->data = NULL;
}

static void entry_free (void *arg)
{
    struct entry *e = arg;
    if (e) {
        json_decref (e->dir);
        release_data (NULL, e);     /* drop() took its bytes off */
        free (e->waiters);
        free (e);
    }
}

objcache_t *objcache_create (size_t max_bytes, double max_age)
{
    objcache_t *c = calloc (1, sizeof (*c));
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(c->map = hashmap_create (entry_free))) {
        free (c);
        return NULL;
    }
    list_init (&c->lru);
    c->max_bytes = max_bytes;
    c->max_age = max_age;
    return c;
}

void objcache_destroy (objcache_t *c)
{
    if (c) {
        int saved_errno = errno;
        hashmap_destroy (c->map);
        free (c);
        errno = saved_errno;
    }
}

/* Dirs and raw blobs live in separate key spaces: the same bytes could be
 * both a value and a directory's encoding.
 */
static void mkkey (char *buf, size_t size, enum objtype type, const char *ref)
{
    /* called for every object of every lookup: no snprintf */
    size_t n = strnlen (ref, size - 3);
    buf[0] = type == OBJ_DIR ? 'd' : 'r';
    buf[1] = ':';
    memcpy (buf + 2, ref, n);
    buf[2 + n] = '\0';
}

static struct entry *get_valid (objcache_t *c, enum objtype type, const char *ref)
{
    char key[BLOBREF_MAX + 2];
    mkkey (key, sizeof (key), type, ref);
    struct entry *e = hashmap_lookup (c->map, key);
    if (!e || !e->valid)
        return NULL;
    e->lastuse = monotime ();
    list_del (&e->lru);
    list_add_tail (&c->lru, &e->lru);
    return e;
}

static void drop (objcache_t *c, struct entry *e);

/* What holding the decoded dir costs beyond its encoded length (see the
 * design notes).
 */
static size_t decoded_bytes (const json_t *dir)
{
    const json_t *data = treeobj_data (dir);
    size_t n = json_is_object (data) ? json_object_size (data)
             : json_is_array (data) ? json_array_size (data) : 0;
    return n * OBJCACHE_DECODED_ENTRY_BYTES;
}

/* Decode an encoded dir entry in place; one that is not a dir or hdir is
 * dropped (the caller then loads it as if it had never been cached).
 */
static bool decode_dir (objcache_t *c, struct entry *e)
{
    json_t *dir = treeobj_decode (e->data, e->len);

    if (!dir || (!treeobj_is_dir (dir) && !treeobj_is_hdir (dir))) {
        json_decref (dir);
        drop (c, e);
        return false;
    }
    e->dir = dir;
    release_data (c, e);
    e->dirbytes = decoded_bytes (dir);
    c->bytes += e->dirbytes;
    c->encoded--;
    c->decodes++;
    return true;
}

json_t *objcache_get_dir (objcache_t *c, const char *ref)
{
    struct entry *e = get_valid (c, OBJ_DIR, ref);
    if (!e || (!e->dir && !decode_dir (c, e)))
        return NULL;
    return e->dir;
}

int objcache_find (objcache_t *c, const char *ref, const char *name,
                   json_t **dir, json_t **entry)
{
    struct entry *e = get_valid (c, OBJ_DIR, ref);
    size_t off, vlen;
    int rc;

    if (!e)
        return 0;
    if (!e->dir && !e->noscan && name) {
        json_t *o = NULL;
        /* read again: index it (a failure leaves the scan to decline or,
         * out of memory, to answer)
         */
        if (!e->index && e->found
            && (e->index = treeobj_index_create (e->data, e->len))) {
            e->ixbytes = treeobj_index_bytes (e->index);
            c->bytes += e->ixbytes;
            c->indexed++;
        }
        if (e->index)
            rc = treeobj_index_find (e->index, e->data, name, &off, &vlen);
        else
            rc = treeobj_dir_scan (e->data, e->len, name, &off, &vlen);
        if (rc == 0
            || (rc == 1 && (o = treeobj_decode ((const char *)e->data + off, vlen)))) {
            e->found = true;
            c->scans++;
            *entry = o;     /* NULL: no such name */
            return 2;
        }
        e->noscan = true;   /* declined or a bad entry: the decode judges */
    }
    if (!e->dir && !decode_dir (c, e))
        return 0;
    *dir = e->dir;
    return 1;
}

int objcache_get_raw (objcache_t *c, const char *ref, const void **data, size_t *len)
{
    struct entry *e = get_valid (c, OBJ_RAW, ref);
    if (!e) {
        errno = ENOENT;
        return -1;
    }
    *data = e->data;
    *len = e->len;
    return 0;
}

int objcache_get_encoded (objcache_t *c, const char *ref, const void **data,
                          size_t *len)
{
    char key[BLOBREF_MAX + 2];
    mkkey (key, sizeof (key), OBJ_DIR, ref);
    struct entry *e = hashmap_lookup (c->map, key);
    if (!e || !e->valid || e->dir || !e->data) {
        errno = ENOENT;
        return -1;
    }
    *data = e->data;
    *len = e->len;
    return 0;
}

bool objcache_has (objcache_t *c, enum objtype type, const char *ref)
{
    char key[BLOBREF_MAX + 2];
    mkkey (key, sizeof (key), type, ref);
    struct entry *e = hashmap_lookup (c->map, key);
    return e && e->valid;
}

static struct entry *entry_get_or_create (objcache_t *c, enum objtype type,
                                          const char *ref)
{
    char key[BLOBREF_MAX + 2];
    mkkey (key, sizeof (key), type, ref);
    struct entry *e = hashmap_lookup (c->map, key);
    if (e)
        return e;
    if (!(e = calloc (1, sizeof (*e)))) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy (e->key, key, strlen (key) + 1);     /* mkkey fits it */
    e->type = type;
    list_node_init (&e->lru);
    if (hashmap_insert (c->map, e->key, e) < 0) {
        free (e);
        return NULL;
    }
    return e;
}

static void make_valid (objcache_t *c, struct entry *e, size_t len)
{
    e->valid = true;
    e->len = len;
    e->lastuse = monotime ();
    c->bytes += len;
    list_add_tail (&c->lru, &e->lru);
}

int objcache_put_dir (objcache_t *c, const char *ref, json_t *dir, size_t size)
{
    struct entry *e;
    if (!c || !ref || !dir) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = entry_get_or_create (c, OBJ_DIR, ref)))
        return -1;
    if (e->valid)
        return 0;
    e->dir = json_incref (dir);
    e->dirbytes = decoded_bytes (dir);
    c->bytes += e->dirbytes;
    make_valid (c, e, size);
    return 0;
}

/* Cache len bytes under (type, ref): raw bytes, or an encoded
 * directory; a copy, or with 'owner' the bytes where they are in that
 * message's payload (a reference to it is taken).  A valid entry is left
 * as it is.  No side effects on error.
 */
static int put_bytes (objcache_t *c, enum objtype type, const char *ref,
                      const void *data, size_t len, const canopy_msg_t *owner)
{
    struct entry *e;

    if (!(e = entry_get_or_create (c, type, ref)))
        return -1;
    if (e->valid)
        return 0;
    if (owner && len > 0) {     /* nothing to share: a 1-byte buffer, not NULL */
        e->owner = canopy_msg_incref ((canopy_msg_t *)owner);
        e->data = (void *)data;
    }
    else if ((e->data = malloc (len ? len : 1))) {
        if (len)
            memcpy (e->data, data, len);
    }
    else {
        if (e->nwaiters == 0)
            (void)hashmap_delete (c->map, e->key);
        errno = ENOMEM;
        return -1;
    }
    if (type == OBJ_DIR)
        c->encoded++;
    make_valid (c, e, len);
    return 0;
}

int objcache_put_dir_encoded (objcache_t *c, const char *ref, const void *data,
                              size_t len, const canopy_msg_t *owner)
{
    if (!c || !ref || !data || len == 0) {
        errno = EINVAL;
        return -1;
    }
    return put_bytes (c, OBJ_DIR, ref, data, len, owner);
}

int objcache_put_raw_shared (objcache_t *c, const char *ref, const void *data,
                             size_t len, const canopy_msg_t *owner)
{
    if (!c || !ref || !owner || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    return put_bytes (c, OBJ_RAW, ref, data, len, owner);
}

int objcache_put_raw (objcache_t *c, const char *ref, const void *data, size_t len)
{
    if (!c || !ref || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    return put_bytes (c, OBJ_RAW, ref, data, len, NULL);
}

struct recs_arg {
    objcache_t *c;
    const canopy_msg_t *owner;
    int count;
};

static int put_rec (const char *ref, const void *data, size_t len, void *arg)
{
    struct recs_arg *ra = arg;
    if (put_bytes (ra->c, OBJ_RAW, ref, data, len, ra->owner) == 0)
        ra->count++;
    return 0;
}

int objcache_put_blobrecs (objcache_t *c, const canopy_msg_t *owner, size_t off,
                           canopy_error_t *error)
{
    struct recs_arg ra = { .c = c, .owner = owner, .count = 0 };
    const void *buf;
    size_t len;

    if (!c || !owner || canopy_msg_get_payload (owner, &buf, &len) < 0
        || off > len) {
        errno = EINVAL;
        return errprintf (error, "no blob records at byte %zu", off);
    }
    if (blobrecs_foreach ((const char *)buf + off, len - off, put_rec, &ra,
                          error) < 0)
        return -1;
    return ra.count;
}

int objcache_wait (objcache_t *c, const char *ref, enum objtype type,
                   objcache_wait_f cb, void *arg)
{
    struct entry *e;
    struct waiter *v;
    bool first;

    if (!c || !ref || !cb) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = entry_get_or_create (c, type, ref)))
        return -1;
    if (e->valid) {
        errno = EEXIST;
        return -1;
    }
    first = e->nwaiters == 0;
    if (!(v = realloc (e->waiters, (e->nwaiters + 1) * sizeof (*v)))) {
        if (first && !e->valid)
            (void)hashmap_delete (c->map, e->key);
        errno = ENOMEM;
        return -1;
    }
    e->waiters = v;
    e->waiters[e->nwaiters].cb = cb;
    e->waiters[e->nwaiters].arg = arg;
    e->nwaiters++;
    c->nwaiters++;
    if (first)
        c->pending++;
    return first ? 1 : 0;
}

void objcache_wait_cancel (objcache_t *c, const char *ref, enum objtype type,
                           objcache_wait_f cb, void *arg)
{
    char key[BLOBREF_MAX + 2];
    struct entry *e;

    if (!c || !ref)
        return;
    mkkey (key, sizeof (key), type, ref);
    if (!(e = hashmap_lookup (c->map, key)))
        return;
    for (int i = 0; i < e->nwaiters; i++) {
        if (e->waiters[i].cb == cb && e->waiters[i].arg == arg) {
            memmove (&e->waiters[i], &e->waiters[i + 1],
                     (e->nwaiters - i - 1) * sizeof (e->waiters[0]));
            e->nwaiters--;
            c->nwaiters--;
            if (e->nwaiters == 0) {
                c->pending--;
                free (e->waiters);
                e->waiters = NULL;
                if (!e->valid)
                    (void)hashmap_delete (c->map, key);
            }
            return;
        }
    }
}

void objcache_load_done (objcache_t *c, enum objtype type, const char *ref,
                         int errnum)
{
    char key[BLOBREF_MAX + 2];
    mkkey (key, sizeof (key), type, ref);
    struct entry *e = hashmap_lookup (c->map, key);
    struct waiter *v;
    int n;

    if (!e || e->nwaiters == 0)
        return;
    v = e->waiters;
    n = e->nwaiters;
    e->waiters = NULL;
    e->nwaiters = 0;
    c->pending--;
    c->nwaiters -= n;
    if (!e->valid && !errnum)
        errnum = EPROTO;    /* "done" without data */
    if (!e->valid)
        (void)hashmap_delete (c->map, key);
    for (int i = 0; i < n; i++)
        v[i].cb (errnum, v[i].arg);
    free (v);
}

static void drop (objcache_t *c, struct entry *e)
{
    if (e->type == OBJ_DIR && !e->dir)
        c->encoded--;
    list_del (&e->lru);
    c->bytes -= e->len + e->ixbytes + e->dirbytes;
    (void)hashmap_delete (c->map, e->key);
}

/* An entry made valid while a load of it was in flight (a setroot or
 * kvs.prime event brought it first, or a held load) still has waiters
 * until objcache_load_done: it is never dropped, or they would never be
 * called.
 */
int objcache_expire (objcache_t *c, double now)
{
    struct list_node *pos, *tmp;
    int count = 0;
    list_for_each_safe (pos, tmp, &c->lru) {
        struct entry *e = list_entry (pos, struct entry, lru);
        if (c->bytes <= c->max_bytes && now - e->lastuse < c->max_age)
            break;
        if (e->nwaiters > 0)
            continue;
        drop (c, e);
        count++;
    }
    return count;
}

int objcache_clear (objcache_t *c)
{
    struct list_node *pos, *tmp;
    int count = 0;
    list_for_each_safe (pos, tmp, &c->lru) {
        struct entry *e = list_entry (pos, struct entry, lru);
        if (e->nwaiters > 0)
            continue;
        drop (c, e);
        count++;
    }
    return count;
}

void objcache_stats (objcache_t *c, struct objcache_stats *st)
{
    st->count = hashmap_size (c->map);
    st->bytes = c->bytes;
    st->pending = c->pending;
    st->waiters = c->nwaiters;
    st->encoded = c->encoded;
    st->scans = c->scans;
    st->indexed = c->indexed;
    st->decodes = c->decodes;
}
