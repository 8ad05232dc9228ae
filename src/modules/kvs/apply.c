/* apply.c - see apply.h.
 *
 * Design notes:
 * - The working tree is made of "dir" tree objects.  Directories from the
 *   cache are shared and never modified; before changing one, a fence
 *   makes a shallow copy (treeobj_dir_copy) and marks it as belonging to
 *   the current generation (the fence being applied), so later changes in
 *   the same fence modify it in place.  A new fence starts a new
 *   generation; if it fails, the root pointer from before it is restored
 *   and nothing it copied is reachable any more.
 * - Stored directories never contain inline "dir" entries: every inline
 *   dir in the working tree is new and is unrolled into a dirref.  So
 *   only a directory that was given an inline dir or hdir entry (dl_set
 *   records it in 'parents', and a copy of such a directory inherits the
 *   mark) can hold one, and unroll scans the entries of those only: a
 *   one-key commit into a big directory no longer looks at every entry of
 *   the bucket it changed.
 * - A key whose intermediate component is a value gets a directory there
 *   (the value is replaced); intermediate symlinks are followed (ELOOP
 *   after 32).
 * - Drafts (draft_advance): an incomplete collective fence is applied
 *   ahead into a round that the round taking it continues, only if that
 *   round's first fence is the draft's on the draft's root; otherwise it
 *   applies everything again.  A draft never loads and never publishes.
 */
#include <stdlib.h>
#include <assert.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <canopy/canopy.h>
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/list.h"
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_path.h"
#include "src/common/libkvs/blobtab.h"
#include "src/common/libkvs/kvs_frame.h"
#include "src/common/libkvs/blobrecs.h"
#include "fence.h"
#include "apply.h"
#include "shmpub.h"
#include "checkpoint.h"
#include "src/common/libcanopy/json_fast_dump.h"

#define MAX_BATCH 4096
#define SYMLINK_MAX 32

struct newdir {
    char ref[BLOBREF_MAX];
    json_t *dir;
    size_t size;
};

/* A set of pointers (open addressing): the directories the current fence
 * owns and may change in place.
 */
struct ptrset {
    const void **v;
    size_t cap;         /* power of two */
    size_t count;
};

static void ptrset_clear (struct ptrset *ps)
{
    if (ps->v)
        memset (ps->v, 0, ps->cap * sizeof (*ps->v));
    ps->count = 0;
}

static size_t ptr_hash (const void *p, size_t cap)
{
    uint64_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x & (cap - 1);
}

static bool ptrset_has (const struct ptrset *ps, const void *p)
{
    if (!ps->v)
        return false;
    for (size_t i = ptr_hash (p, ps->cap); ps->v[i]; i = (i + 1) & (ps->cap - 1)) {
        if (ps->v[i] == p)
            return true;
    }
    return false;
}

static int ptrset_add (struct ptrset *ps, const void *p)
{
    if (ptrset_has (ps, p))
        return 0;
    if ((ps->count + 1) * 2 > ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        const void **v = calloc (cap, sizeof (*v));
        if (!v)
            return -1;
        for (size_t i = 0; i < ps->cap; i++) {
            if (ps->v[i]) {
                size_t j = ptr_hash (ps->v[i], cap);
                while (v[j])
                    j = (j + 1) & (cap - 1);
                v[j] = ps->v[i];
            }
        }
        free (ps->v);
        ps->v = v;
        ps->cap = cap;
    }
    size_t i = ptr_hash (p, ps->cap);
    while (ps->v[i])
        i = (i + 1) & (ps->cap - 1);
    ps->v[i] = p;
    ps->count++;
    return 0;
}

struct pick {
    const char *ref;
    const void *data;
    size_t len;
};

struct picks {
    size_t max;                 /* kvs.prime-max */
    size_t left;                /* of this event's share of kvs.prime-values */
    hashmap_t *seen;
    struct pick *v;
    int n;
    int cap;
    bool all;
};

/* A kvs.prime event built and not yet sent: the event.pub request
 * (NULL if only the header could be made), its header alone (malloc'd,
 * sent instead if the request cannot be), and where that header starts
 * in the request's payload.
 */
struct prime_event {
    canopy_msg_t *req;
    void *hdr;
    size_t hlen;
    size_t off;
    int version;
};

static void prime_clear (struct prime_event *pe)
{
    canopy_msg_decref (pe->req);
    free (pe->hdr);
    pe->req = NULL;
    pe->hdr = NULL;
}

struct round {
    struct applier *a;
    struct ready_fence *fences[MAX_BATCH];
    int nfences;
    int *failed;                /* errnum per fence, 0 = ok */
    char (*errstr)[160];
    json_t *root;               /* working root (dir or hdir) */
    struct ptrset gen;          /* dirs owned by the current fence */
    struct ptrset parents;      /* dirs that may hold inline dirs */
    hashmap_t *walked;          /* path -> owned dir (walk cache), or NULL */
    int pending;                /* loads outstanding */
    int load_errnum;
    blobtab_t *store;           /* blobs to store: new dirs + values */
    struct newdir *newdirs;
    int nnewdirs;
    char rootref[BLOBREF_MAX];
    double t0;                  /* thread CPU time at the start */
    canopy_future_t *store_f;
    bool sync;                  /* a fence asked for KVS_SYNC */
    bool picked;                /* 'picks' made (prime_pick) */
    struct picks picks;
    struct prime_event prime;   /* built early (share_prime), or empty */
    /* a draft (applied ahead, before its fence was complete) */
    bool drafting;              /* still a draft: no loads started */
    size_t draft_done;          /* ops of fence 0 already in 'root' */
    json_t *draft_ops;          /* the fence's (growing) ops array */
    json_t *draft_base;         /* the root the draft started from */
    int draft_version;          /* ... and its version */
};

struct applier {
    struct kvs_ctx *ctx;
    struct round *round;
    canopy_watcher_t *prep;
    struct list_node stores;    /* pipelined content stores in flight */
    int nstores;
    canopy_watcher_t *prime_w;  /* sends the kvs.prime that waits */
    struct prime_event prime;   /* a kvs.prime waiting (prime-delay), or empty */
    struct round *draft;        /* the incomplete collective fence applied
                                 * so far (draft_advance), or NULL */
    char *drafted;              /* the fence drafted last ... */
    int redrafts;               /* ... and how often it was drafted anew
                                 * (MAX_REDRAFTS: its draft failed) */
};

/* A fence drafted anew this often (each time its draft was overtaken by
 * another round) is left to its own round: every new draft applies its
 * operations so far again, and a stream of commits between its
 * contributions would make that quadratic.
 */
#define MAX_REDRAFTS 3

struct inflight {
    struct list_node node;
    struct applier *a;
    canopy_future_t *f;
};

static void round_destroy (struct round *rd)
{
    if (!rd)
        return;
    for (int i = 0; i < rd->nfences; i++)
        ready_fence_free (rd->fences[i]);
    for (int i = 0; i < rd->nnewdirs; i++)
        json_decref (rd->newdirs[i].dir);
    free (rd->newdirs);
    free (rd->failed);
    free (rd->errstr);
    json_decref (rd->root);
    free (rd->gen.v);
    free (rd->parents.v);
    hashmap_destroy (rd->walked);
    blobtab_destroy (rd->store);
    canopy_future_destroy (rd->store_f);
    free (rd->picks.v);
    prime_clear (&rd->prime);
    json_decref (rd->draft_ops);
    json_decref (rd->draft_base);
    free (rd);
}

static int gen_mark (struct round *rd, json_t *dir)
{
    return ptrset_add (&rd->gen, dir);
}

static bool gen_owns (struct round *rd, json_t *dir)
{
    return ptrset_has (&rd->gen, dir);
}

static void load_cb (int errnum, void *arg);

/* Fetch the stored directory (dir or hdir) a ref names, or NULL with
 * EAGAIN after requesting it (a load that cannot even be started is
 * noted in load_errnum; the walk goes on and the round fails at the end
 * of the fence, never from inside kvs_load).
 */
static json_t *load_dirlike (struct round *rd, const char *ref)
{
    struct kvs_ctx *ctx = rd->a->ctx;
    json_t *dir = objcache_get_dir (ctx->cache, ref);
    if (!dir) {
        if (rd->drafting) {
            errno = EAGAIN;     /* a draft stops here (draft_advance) */
            return NULL;
        }
        if (kvs_load (ctx, ref, OBJ_DIR, load_cb, rd) == 0)
            rd->pending++;
        else if (!rd->load_errnum)
            rd->load_errnum = errno;
        errno = EAGAIN;
        return NULL;
    }
    return dir;
}

/* A copy of a directory-like value the current fence may change in place
 * (the value itself if the fence already owns it).  'entry' may be a dir,
 * an hdir, a dirref (loaded), or anything else (replaced by a new dir).
 * NULL with EAGAIN if a load is needed.
 */
static json_t *own (struct round *rd, json_t *entry)
{
    json_t *copy;
    treeobj_kind_t kind = treeobj_kind (entry);

    if ((kind == TREEOBJ_DIR || kind == TREEOBJ_HDIR) && gen_owns (rd, entry))
        return json_incref (entry);
    if (kind == TREEOBJ_DIRREF) {
        if (!(entry = load_dirlike (rd, treeobj_blobref_at (entry, 0))))
            return NULL;
        kind = treeobj_kind (entry);
    }
    if (kind == TREEOBJ_DIR) {
        if ((copy = treeobj_dir_copy (entry)) && ptrset_has (&rd->parents, entry)
            && ptrset_add (&rd->parents, copy) < 0) {
            json_decref (copy);
            errno = ENOMEM;
            return NULL;
        }
    }
    else if (kind == TREEOBJ_HDIR)
        copy = treeobj_hdir_copy (entry);
    else
        copy = treeobj_create_dir ();
    if (!copy || gen_mark (rd, copy) < 0) {
        json_decref (copy);
        errno = ENOMEM;
        return NULL;
    }
    return copy;
}

/* Look 'name' up in a directory-like object (borrowed result; NULL with
 * ENOENT, or EAGAIN if a bucket must be loaded).
 */
static json_t *dl_get (struct round *rd, json_t *dir, const char *name)
{
    while (treeobj_is_hdir (dir)) {
        json_t *slot = treeobj_hdir_slot (dir, treeobj_hdir_bucket_of (dir, name));
        if (!slot || json_is_null (slot)) {
            errno = ENOENT;
            return NULL;
        }
        if (json_is_string (slot)) {
            if (!(dir = load_dirlike (rd, json_string_value (slot))))
                return NULL;
        }
        else
            dir = slot;
    }
    json_t *e = treeobj_dir_get (dir, name);
    if (!e)
        errno = ENOENT;
    return e;
}

/* Set (entry non-NULL, stolen) or remove 'name' in an owned directory-like
 * object.  *delta gets +1 (added), -1 (removed) or 0.  hdir counts are
 * kept up to date on the way back.
 */
static int dl_set (struct round *rd, json_t *dir, const char *name, json_t *entry,
                   int *delta)
{
    if (treeobj_is_hdir (dir)) {
        int slot = treeobj_hdir_bucket_of (dir, name);
        json_t *cur = treeobj_hdir_slot (dir, slot);
        json_t *bucket;
        int d = 0;
        if ((!cur || json_is_null (cur)) && !entry) {
            *delta = 0;
            return 0;
        }
        if (!cur || json_is_null (cur))
            bucket = own (rd, NULL);
        else if (json_is_string (cur)) {
            json_t *stored = load_dirlike (rd, json_string_value (cur));
            bucket = stored ? own (rd, stored) : NULL;
        }
        else
            bucket = own (rd, cur);
        if (!bucket) {
            json_decref (entry);
            return -1;
        }
        if (dl_set (rd, bucket, name, entry, &d) < 0) {
            json_decref (bucket);
            return -1;
        }
        if (treeobj_hdir_set_slot (dir, slot, bucket) < 0)
            return -1;
        *delta = d;
        return treeobj_hdir_set_count (dir, treeobj_hdir_count (dir) + d);
    }
    bool existed = treeobj_dir_get (dir, name) != NULL;
    if (!entry) {
        (void)treeobj_dir_remove (dir, name);
        *delta = existed ? -1 : 0;
        return 0;
    }
    if (treeobj_is_dirlike (entry) && ptrset_add (&rd->parents, dir) < 0) {
        json_decref (entry);
        errno = ENOMEM;
        return -1;
    }
    *delta = existed ? 0 : 1;
    return treeobj_dir_set (dir, name, entry);
}

/* The walk cache: an owned directory found (or made) at a path of the
 * current fence, by that path.  Every prefix of a cached path is cached
 * too, so a change at a path that is not cached cannot make an entry
 * stale; a change at a cached path (that directory replaced or removed)
 * empties the cache.  Changes inside a cached directory keep it valid
 * (it is changed in place).  Paths walked through a symlink are not
 * cached.  A failure to cache empties the cache and caches nothing more
 * on that walk (its deeper paths would lack their prefix): it only costs
 * walks later.
 */
static bool walked_put (struct round *rd, const char *path, json_t *dir)
{
    if (hashmap_update (rd->walked, path, dir) < 0) {
        hashmap_clear (rd->walked);     /* the deeper paths must not follow */
        return false;
    }
    return true;
}

static void walked_clear (struct round *rd)
{
    hashmap_clear (rd->walked);
}

/* Apply one operation: 'key' is normalised and writable (it is cut into
 * components in place and restored before returning).
 */
static int apply_op (struct round *rd, char *key, json_t *obj, int links)
{
    json_t *dir = rd->root;
    char *leaf = key, *dot;
    bool cache = rd->walked != NULL;
    int delta, rc;

    if (kvs_path_is_root (key)) {  /* the root itself: replaced by an (empty) dir */
        json_t *nr = treeobj_create_dir ();
        if (!nr || gen_mark (rd, nr) < 0) {
            json_decref (nr);
            errno = ENOMEM;
            return -1;
        }
        json_decref (rd->root);
        rd->root = nr;
        walked_clear (rd);
        return 0;
    }
    if ((dot = strrchr (key, '.'))) {
        json_t *hit;
        *dot = '\0';
        hit = rd->walked ? hashmap_lookup (rd->walked, key) : NULL;
        *dot = '.';
        if (hit) {
            dir = hit;
            leaf = dot + 1;
            goto set;
        }
    }
    for (char *s = key; (dot = strchr (s, '.')); s = leaf) {
        *dot = '\0';   /* s: this component, key: the path down to it */
        json_t *entry = dl_get (rd, dir, s);
        if (!entry && errno == EAGAIN) {
            *dot = '.';
            return -1;
        }
        if (entry && treeobj_is_symlink (entry)) {
            *dot = '.';
            if (links >= SYMLINK_MAX) {
                errno = ELOOP;
                return -1;
            }
            /* continue at target + the components after this one */
            char *norm = kvs_path_join (treeobj_symlink_target (entry), dot + 1);
            if (!norm)
                return -1;
            rc = apply_op (rd, norm, obj, links + 1);
            free (norm);
            return rc;
        }
        json_t *sub = own (rd, entry);
        if (!sub) {
            *dot = '.';
            return -1;
        }
        if (sub != entry) {
            if (dl_set (rd, dir, s, json_incref (sub), &delta) < 0) {
                json_decref (sub);
                *dot = '.';
                return -1;
            }
        }
        json_decref (sub);
        dir = sub;
        if (cache)
            cache = walked_put (rd, key, dir);
        *dot = '.';
        leaf = dot + 1;
    }
set:
    if (json_is_null (obj))
        rc = dl_set (rd, dir, leaf, NULL, &delta);
    else
        rc = dl_set (rd, dir, leaf, json_incref (obj), &delta);
    /* a cached directory replaced (or removed): the cache may be stale */
    if (rd->walked && hashmap_lookup (rd->walked, key))
        walked_clear (rd);
    return rc;
}

/* Apply operation j of ops (["key", value]); its key in *key. */
static int apply_entry (struct round *rd, json_t *ops, size_t j, const char **key)
{
    json_t *op = json_array_get (ops, j);
    *key = json_string_value (json_array_get (op, 0));
    char *norm = kvs_path_normalize (*key);
    int rc = norm ? apply_op (rd, norm, json_array_get (op, 1), 0) : -1;
    free (norm);
    return rc;
}

/* Apply every fence (restartable).  Returns 0, or -1 with EAGAIN when
 * loads are outstanding.
 */
static int apply_all (struct round *rd)
{
    struct kvs_ctx *ctx = rd->a->ctx;
    json_t *cur = objcache_get_dir (ctx->cache, ctx->rootref);

    if (!cur) {
        if (kvs_load (ctx, ctx->rootref, OBJ_DIR, load_cb, rd) == 0) {
            rd->pending++;
            errno = EAGAIN;
        }
        else
            errno = rd->load_errnum = errno ? errno : ENOMEM;
        return -1;
    }
    /* the first fence's draft (draft_advance) holds its first
     * draft_done operations applied already; only the first pass uses
     * it: a restart applies everything again
     */
    size_t resume = rd->draft_done;
    rd->draft_done = 0;
    if (!resume) {
        json_decref (rd->root);
        rd->root = json_incref (cur);
        ptrset_clear (&rd->parents);    /* a restart builds the tree anew */
    }
    for (int i = 0; i < rd->nfences; i++) {
        struct ready_fence *rf = rd->fences[i];
        json_t *saved;
        size_t j = 0, nops = json_array_size (rf->ops);

        rd->failed[i] = 0;
        if (i == 0 && resume) {
            saved = json_incref (rd->draft_base);
            j = resume;
        }
        else {
            saved = json_incref (rd->root);
            ptrset_clear (&rd->gen);
            walked_clear (rd);      /* only this fence's copies are owned */
            json_t *copy = own (rd, rd->root);
            if (!copy) {
                json_decref (saved);
                return -1;
            }
            json_decref (rd->root);
            rd->root = copy;
        }
        for (; j < nops; j++) {
            const char *key;
            if (apply_entry (rd, rf->ops, j, &key) < 0) {
                if (errno == EAGAIN)
                    continue;   /* keep walking: find every missing dir now */
                rd->failed[i] = errno ? errno : EINVAL;
                snprintf (rd->errstr[i], sizeof (rd->errstr[i]), "%s: %s",
                          key, strerror (rd->failed[i]));
                break;
            }
        }
        if (rd->pending > 0 || rd->load_errnum) {
            json_decref (saved);
            errno = rd->pending > 0 ? EAGAIN : rd->load_errnum;
            return -1;
        }
        if (rd->failed[i]) {
            json_decref (rd->root);
            rd->root = saved;   /* drop this fence's changes */
        }
        else
            json_decref (saved);
    }
    return 0;
}

/* Add a directory's encoding (enc, len, named ref) to the round's store
 * set; a new one is remembered for the cache and priming.
 */
static int store_encoded (struct round *rd, json_t *dir, const char *enc,
                          size_t len, const char *ref)
{
    int rc = blobtab_add (rd->store, ref, enc, len, NULL, 0);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        struct newdir *v = realloc (rd->newdirs, (rd->nnewdirs + 1) * sizeof (*v));
        if (!v)
            return -1;
        rd->newdirs = v;
        snprintf (v[rd->nnewdirs].ref, BLOBREF_MAX, "%s", ref);
        v[rd->nnewdirs].dir = json_incref (dir);
        v[rd->nnewdirs].size = len;
        rd->nnewdirs++;
    }
    return 0;
}

static int store_dir (struct round *rd, json_t *dir, char *ref)
{
    size_t len;
    char *enc;
    int rc;

    if (!(enc = treeobj_encode_ref (dir, &len, ref, BLOBREF_MAX)))
        return -1;
    rc = store_encoded (rd, dir, enc, len, ref);
    free (enc);
    return rc;
}

static int unroll (struct round *rd, json_t *dir, int level, char *ref);

/* Store a directory-like working object and everything new below it;
 * inline children become dirrefs (slots of an hdir become refs).  'level'
 * is the hash level a dir would get if it grew too big.
 */
static int unroll (struct round *rd, json_t *dir, int level, char *ref)
{
    struct kvs_ctx *ctx = rd->a->ctx;

    if (treeobj_is_hdir (dir)) {
        for (int i = 0; i < TREEOBJ_HDIR_FANOUT; i++) {
            json_t *slot = treeobj_hdir_slot (dir, i);
            char cref[BLOBREF_MAX];
            if (!slot || !json_is_object (slot))
                continue;
            if (treeobj_is_dir (slot) && treeobj_dir_count (slot) == 0) {
                if (treeobj_hdir_set_slot (dir, i, json_null ()) < 0)
                    return -1;
                continue;
            }
            if (unroll (rd, slot, treeobj_hdir_level (dir) + 1, cref) < 0
                || treeobj_hdir_set_slot (dir, i, json_string (cref)) < 0)
                return -1;
        }
        return store_dir (rd, dir, ref);
    }
    json_t *data = treeobj_data (dir);
    const char *name;
    json_t *entry;
    void *tmp;
    if (ptrset_has (&rd->parents, dir)) {
        json_object_foreach_safe (data, tmp, name, entry) {
            if (treeobj_is_dirlike (entry)) {
                char cref[BLOBREF_MAX];
                json_t *dref;
                if (unroll (rd, entry, 0, cref) < 0
                    || !(dref = treeobj_create_dirref (cref)))
                    return -1;
                if (json_object_set_new (data, name, dref) < 0)
                    return -1;
            }
        }
    }
    size_t count = json_object_size (data);
    if (level > TREEOBJ_HDIR_MAXLEVEL || count < 2)
        return store_dir (rd, dir, ref);
    if (count <= (size_t)ctx->limits.hdir_threshold) {
        if (ctx->limits.hdir_bytes <= 0)
            return store_dir (rd, dir, ref);
        /* few entries, but maybe big ones (directory references are
         * ~110 bytes): kept plain only while its encoding fits in
         * hdir-bytes, so that a setroot can carry it (prime-max).  The
         * encoding stops as soon as it passes that, so one that cannot
         * fit is not finished and hashed only to be thrown away (at
         * KAP's 128 value references that was ~14 KiB at every fence,
         * on the way to the answer), and one that fits is encoded once,
         * with no walk beforehand to size it.
         */
        size_t len;
        char *enc = treeobj_encode_max (dir, ctx->limits.hdir_bytes, &len);
        if (enc) {
            int rc = -1;
            if (blobref_hash (enc, len, ref, BLOBREF_MAX) == 0)
                rc = store_encoded (rd, dir, enc, len, ref);
            free (enc);
            return rc;
        }
        if (errno != E2BIG)
            return -1;
    }
    json_t *h = treeobj_hdir_from_dir (dir, level);
    int rc;
    if (!h)
        return -1;
    rc = unroll (rd, h, level, ref);
    json_decref (h);
    return rc;
}

static void round_finish (struct round *rd, int errnum, const char *errstr);
static void round_continue (struct round *rd);

/* A SYNC round's checkpoint is durable (or failed: the round fails). */
static void sync_done (int errnum, const char *errstr, void *arg)
{
    struct round *rd = arg;
    char buf[200];

    if (errnum) {
        snprintf (buf, sizeof (buf), "the commit could not be made durable: %s",
                  errstr ? errstr : strerror (errnum));
        round_finish (rd, errnum, buf);
        return;
    }
    round_finish (rd, 0, NULL);
}

static void store_cb (canopy_future_t *f, void *arg)
{
    struct round *rd = arg;
    struct kvs_ctx *ctx = rd->a->ctx;
    int errnum = 0;

    if (canopy_future_get (f, NULL) < 0) {
        errnum = errno;
        canopy_log (ctx->h, LOG_ERR, "content store failed: %s",
                    canopy_future_error_string (f));
    }
    canopy_future_destroy (f);
    rd->store_f = NULL;
    if (errnum) {
        round_finish (rd, errnum, "storing the new version failed");
        return;
    }
    for (int i = 0; i < rd->nnewdirs; i++)
        (void)objcache_put_dir (ctx->cache, rd->newdirs[i].ref, rd->newdirs[i].dir,
                                rd->newdirs[i].size);
    if (rd->sync) {
        /* durable before anyone hears of it: blobs and a checkpoint naming
         * the new root are on disk before the round is published
         */
        if (!ctx->checkpt
            || checkpointer_write (ctx->checkpt, rd->rootref, ctx->version + 1,
                                   sync_done, rd) < 0) {
            int errnum = ctx->checkpt ? errno : ENOSYS;
            round_finish (rd, errnum, errnum == ENOSYS
                          ? "no backing store: the commit cannot be made durable"
                          : "writing a checkpoint failed");
        }
        return;
    }
    round_finish (rd, 0, NULL);
}

static void load_cb (int errnum, void *arg)
{
    struct round *rd = arg;
    if (errnum && !rd->load_errnum)
        rd->load_errnum = errnum;
    if (--rd->pending == 0) {
        if (rd->load_errnum)
            round_finish (rd, rd->load_errnum, rd->a->ctx->unloading
                          ? "KVS module unloading" : "cannot load a directory");
        else
            round_continue (rd);
    }
}

static void inflight_cb (canopy_future_t *f, void *arg)
{
    struct inflight *in = arg;
    struct kvs_ctx *ctx = in->a->ctx;
    if (canopy_future_get (f, NULL) < 0)
        canopy_log (ctx->h, LOG_CRIT, "content store of a published version failed: %s",
                    canopy_future_error_string (f));
    list_del (&in->node);
    in->a->nstores--;
    canopy_future_destroy (f);
    free (in);
}

/* Call fn for every value blob of the round's successful fences, fence by
 * fence in table order (a value two fences carry comes twice), until fn
 * returns false.  Shared by store_all and prime_pick.
 */
typedef bool (*round_value_f)(struct round *rd, int fence, const char *ref,
                              const void *data, size_t len, void *arg);

static void foreach_value (struct round *rd, round_value_f fn, void *arg)
{
    for (int i = 0; i < rd->nfences; i++) {
        const blobtab_t *bt = rd->fences[i]->blobs;
        if (rd->failed[i] || !bt)
            continue;
        for (int j = 0; j < blobtab_count (bt); j++) {
            const char *ref;
            const void *data;
            size_t len;
            (void)blobtab_at (bt, j, &ref, &data, &len);
            if (!fn (rd, i, ref, data, len, arg))
                return;
        }
    }
}

/* The blobs store_all sends, in order: the values (one an earlier fence
 * of the round, or a new directory, already has is skipped), then the
 * new directories (rd->store).  Calls fn for each; used twice, to size
 * the buffer and to fill it.
 */
typedef void (*store_blob_f)(const char *ref, const void *data, size_t len,
                             void *arg);

struct new_blobs {
    store_blob_f fn;
    void *arg;
};

static bool new_value (struct round *rd, int fence, const char *ref,
                       const void *data, size_t len, void *arg)
{
    struct new_blobs *nb = arg;
    for (int k = 0; k < fence; k++) {
        if (!rd->failed[k] && blobtab_has (rd->fences[k]->blobs, ref))
            return true;
    }
    if (!blobtab_has (rd->store, ref))
        nb->fn (ref, data, len, nb->arg);
    return true;
}

static void foreach_new_blob (struct round *rd, bool values, store_blob_f fn,
                              void *arg)
{
    struct new_blobs nb = { .fn = fn, .arg = arg };

    if (values)
        foreach_value (rd, new_value, &nb);
    for (int i = 0; i < blobtab_count (rd->store); i++) {
        const char *ref;
        const void *data;
        size_t len;
        (void)blobtab_at (rd->store, i, &ref, &data, &len);
        fn (ref, data, len, arg);
    }
}

static void size_blob (const char *ref, const void *data, size_t len, void *arg)
{
    *(size_t *)arg += blobrecs_size (len);
}

static void put_blob (const char *ref, const void *data, size_t len, void *arg)
{
    uint8_t **pp = arg;
    *pp = blobrecs_put (*pp, ref, data, len);
}

static void prime_pick (struct round *rd, struct picks *pk);

/* The round's choice of values for its kvs.prime, made once. */
static const struct picks *round_picks (struct round *rd)
{
    if (!rd->picked) {
        prime_pick (rd, &rd->picks);
        rd->picked = true;
    }
    return &rd->picks;
}

/* Build the kvs.prime of 'version' carrying the picks: a kvs_frame whose
 * header "fences" is [{"version": V, "stamp": T}], with no blob table,
 * and whose body is the values as blob records (blobrecs.h: no JSON
 * table for every broker to parse).  A frame without blobs is its header
 * frame followed by its body, so the header is framed alone and the
 * event's payload is written in place (canopy_event_pub_create): each
 * value is copied once, from its fence's blob table into the event.
 * With no values (or out of memory for them) only the header is made:
 * sent alone, it still releases the brokers' holds at once.  Returns 0
 * with pe filled (pe->req may be NULL), or -1 (nothing built: brokers
 * release their holds on their timer, kvs.c, or at the next setroot).
 */
static int prime_build (struct kvs_ctx *ctx, int version, const struct picks *pk,
                        struct prime_event *pe)
{
    json_t *one = json_pack ("[{s:i s:f}]", "version", version, "stamp", monotime ());
    size_t total = 0;
    void *buf;

    memset (pe, 0, sizeof (*pe));
    pe->version = version;
    if (!one || kvs_frame_encode (one, NULL, NULL, 0, SIZE_MAX, &pe->hdr,
                                  &pe->hlen) < 0) {
        json_decref (one);
        return -1;
    }
    json_decref (one);
    for (int i = 0; i < pk->n; i++)
        total += blobrecs_size (pk->v[i].len);
    if (total > 0 && (pe->req = canopy_event_pub_create ("kvs.prime", CANOPY_MSGFLAG_RAW,
                                                         pe->hlen + total, &buf,
                                                         &pe->off))) {
        uint8_t *p = buf;
        memcpy (p, pe->hdr, pe->hlen);
        p += pe->hlen;
        for (int i = 0; i < pk->n; i++)
            p = blobrecs_put (p, pk->v[i].ref, pk->v[i].data, pk->v[i].len);
    }
    return 0;
}

/* Whether the round's new values, in store order, are exactly its picks. */
struct match {
    const struct picks *pk;
    int i;
    bool ok;
};

static void match_pick (const char *ref, const void *data, size_t len, void *arg)
{
    struct match *m = arg;
    if (m->i >= m->pk->n || strcmp (m->pk->v[m->i].ref, ref) != 0)
        m->ok = false;
    m->i++;
}

/* A collective round whose new values all go in its kvs.prime event (the
 * common case: kvs.prime-values is far more than a fence's values) builds
 * that event's request first, and its content store of the values shares
 * the event's bytes (canopy_msg_share_payload) instead of copying them
 * again: with 512 values of 1 KiB, one 512 KiB copy and its page faults
 * less in rank 0's apply.  Returns that store request (the caller's
 * reference), with the event kept in rd for publish_prime; or NULL if the
 * round is not such a round or anything failed (store_all then copies
 * the values into its own request, as for any other round).
 */
static canopy_msg_t *share_prime (struct round *rd)
{
    const struct picks *pk = round_picks (rd);
    struct match m = { .pk = pk, .i = 0, .ok = true };
    struct new_blobs nb = { .fn = match_pick, .arg = &m };
    canopy_msg_t *store;

    if (pk->n == 0 || pk->all)
        return NULL;
    foreach_value (rd, new_value, &nb);
    if (!m.ok || m.i != pk->n)
        return NULL;
    /* the version the round makes (round_finish) */
    if (prime_build (rd->a->ctx, rd->a->ctx->version + 1, pk, &rd->prime) < 0)
        return NULL;
    if (!(store = canopy_rpc_raw_request ("content.store-local"))
        || canopy_msg_share_payload (store, rd->prime.req,
                                     rd->prime.off + rd->prime.hlen) < 0) {
        canopy_msg_decref (store);
        prime_clear (&rd->prime);
        return NULL;
    }
    return store;
}

/* Send a content store the round does not wait for. */
static int send_store (struct round *rd, canopy_msg_t *msg)
{
    struct kvs_ctx *ctx = rd->a->ctx;
    canopy_future_t *f;
    struct inflight *in;

    if (!(f = canopy_rpc_message (ctx->h, msg, CANOPY_NODEID_ANY, 0)))
        return -1;
    if (!(in = calloc (1, sizeof (*in))) || canopy_future_then (f, -1, inflight_cb, in) < 0) {
        free (in);
        canopy_future_destroy (f);
        return -1;
    }
    in->a = rd->a;
    in->f = f;
    list_add_tail (&rd->a->stores, &in->node);
    rd->a->nstores++;
    return 0;
}

/* Send every new blob to the content service, in one content.store-local
 * (foreach_new_blob: the values are not merged into a table of the round
 * first, which cost a copy of every value), or in two when the values
 * share the kvs.prime event's bytes (share_prime: the values in one, the
 * new directories in the other).  Unless 'wait', the round goes on at
 * once: the stores travel to the content service over the same FIFO
 * pipes as the setroot event that follows them, so any broker's load of
 * a new object reaches the content service after the store.
 */
static int store_all (struct round *rd, bool wait)
{
    struct kvs_ctx *ctx = rd->a->ctx;
    size_t total = 0;
    uint8_t *buf = NULL, *p;
    canopy_msg_t *msg, *shared = NULL;
    canopy_future_t *f;

    /* a round waited for sends one store, and answers when it is done */
    if (!wait && (shared = share_prime (rd))) {
        int rc = send_store (rd, shared);
        canopy_msg_decref (shared);
        if (rc < 0)
            return -1;
    }
    /* the blobs are written straight into the request (no second copy) */
    foreach_new_blob (rd, !shared, size_blob, &total);
    if (!(msg = canopy_rpc_raw_request ("content.store-local"))
        || (total > 0 && !(buf = canopy_msg_payload_reserve (msg, total)))) {
        canopy_msg_decref (msg);
        return -1;
    }
    /* the new directories for rank 0's own readers (shmpub.h): the
     * setroot that makes them reachable comes after
     */
    for (int i = 0; ctx->shm && i < blobtab_count (rd->store); i++) {
        const char *ref;
        const void *data;
        size_t len;
        (void)blobtab_at (rd->store, i, &ref, &data, &len);
        shmpub_put (ctx->shm, ref, data, len);
    }
    if ((p = buf))
        foreach_new_blob (rd, !shared, put_blob, &p);
    /* We vouch for the refs (we just computed them): no re-hashing. */
    if (!wait) {
        int rc = send_store (rd, msg);
        canopy_msg_decref (msg);
        if (rc < 0)
            return -1;
        for (int i = 0; i < rd->nnewdirs; i++)
            (void)objcache_put_dir (ctx->cache, rd->newdirs[i].ref, rd->newdirs[i].dir,
                                    rd->newdirs[i].size);
        round_finish (rd, 0, NULL);
        return 0;
    }
    f = canopy_rpc_message (ctx->h, msg, CANOPY_NODEID_ANY, 0);
    canopy_msg_decref (msg);
    if (!f)
        return -1;
    if (canopy_future_then (f, -1, store_cb, rd) < 0) {
        canopy_future_destroy (f);
        return -1;
    }
    rd->store_f = f;
    return 0;
}

static void round_continue (struct round *rd)
{
    rd->load_errnum = 0;
    if (apply_all (rd) < 0) {
        if (errno == EAGAIN && rd->pending > 0)
            return;     /* load_cb restarts us (or fails the round) */
        if (rd->load_errnum)
            round_finish (rd, rd->load_errnum, "cannot load a directory");
        else
            round_finish (rd, errno ? errno : EIO, "applying the transaction failed");
        return;
    }
    bool any = false;
    for (int i = 0; i < rd->nfences; i++) {
        if (!rd->failed[i])
            any = true;
    }
    if (!any) {
        round_finish (rd, 0, NULL);
        return;
    }
    rd->sync = false;
    for (int i = 0; i < rd->nfences; i++) {
        if (!rd->failed[i] && (rd->fences[i]->flags & KVS_SYNC))
            rd->sync = true;
    }
    if (unroll (rd, rd->root, 0, rd->rootref) < 0 || store_all (rd, rd->sync) < 0)
        round_finish (rd, errno ? errno : ENOMEM, "storing the new version failed");
}

/* Whether a fence of the round with more than one participant succeeded:
 * only then does the setroot carry directories and values.
 */
static bool round_collective (struct round *rd)
{
    for (int i = 0; i < rd->nfences; i++) {
        if (!rd->failed[i] && rd->fences[i]->nprocs > 1)
            return true;
    }
    return false;
}

/* The new directories to carry in the setroot event: each at most
 * kvs.prime-max bytes, kvs.prime-budget in all, nearest the root first
 * (unroll stores children before parents, so walk backwards), as their
 * encoded blobs.  It spares every broker the chain of loads down the path
 * its next lookup takes; a broker decodes only those it reads (objcache
 * keeps them encoded until then).  It is only done after a collective
 * fence (nprocs > 1): the pattern where many brokers read the new version
 * at once (PMI, KAP).  A stream of single commits does not pay for it.
 * Returns a table (maybe empty), or NULL with ENOMEM.
 */
static blobtab_t *prime_objects (struct round *rd)
{
    struct kvs_ctx *ctx = rd->a->ctx;
    blobtab_t *dirs = blobtab_create ();
    size_t budget = ctx->limits.prime_budget;

    if (!dirs || ctx->limits.prime_max == 0 || !round_collective (rd))
        return dirs;
    for (int i = rd->nnewdirs - 1; i >= 0; i--) {
        struct newdir *nd = &rd->newdirs[i];
        const void *data;
        size_t len;
        if (nd->size > (size_t)ctx->limits.prime_max || nd->size > budget
            || blobtab_get (rd->store, nd->ref, &data, &len) < 0)
            continue;
        if (blobtab_add (dirs, nd->ref, data, len, NULL, 0) < 0)
            break;
        budget -= nd->size;
    }
    ctx->stats.primed += blobtab_count (dirs);
    return dirs;
}

/* The new values to carry in the kvs.prime event that follows the setroot
 * of a collective fence (nprocs > 1), as prime_objects does for
 * directories: each at most kvs.prime-max bytes, each once.  After a
 * fence of many participants, many brokers read each other's values at
 * once (PMI business cards, KAP): this spares each of them a fault-in,
 * through the tree, per value.  But every broker receives every value
 * while it reads a share of them, so the budget is for the instance:
 * kvs.prime-values divided by the number of brokers (with 8 MiB: 1 MiB
 * per event on 8 brokers, 128 KiB on 64, where a whole MiB made
 * 1024-participant fences 45% slower for 20% faster gets).  They travel
 * in their own event, after the setroot, so that the fence is answered
 * without waiting for them: with 1 KiB values on 8 brokers (512 KiB per
 * event) the answers of the setroot that carried them were spread over
 * 11 ms instead of 5.
 *
 * The choice is made once per round (prime_pick) and serves both the
 * setroot's list of what is coming (prime_announce) and the event
 * (publish_prime).  Picks point into the round's fence blob tables: valid
 * until round_destroy.  Out of memory, 'all' is set: the setroot then
 * announces every value (brokers hold every value load) and the event
 * carries what was picked.
 */
static bool pick_value (struct round *rd, int fence, const char *ref,
                        const void *data, size_t len, void *arg)
{
    struct picks *pk = arg;

    if (len > pk->max || len > pk->left || hashmap_lookup (pk->seen, ref))
        return true;
    if (pk->n == pk->cap) {
        int cap = pk->cap ? pk->cap * 2 : 64;
        struct pick *v = realloc (pk->v, cap * sizeof (*v));
        if (!v) {
            pk->all = true;
            return false;
        }
        pk->v = v;
        pk->cap = cap;
    }
    if (hashmap_insert (pk->seen, ref, (void *)1) < 0) {
        pk->all = true;
        return false;
    }
    pk->v[pk->n++] = (struct pick){ .ref = ref, .data = data, .len = len };
    pk->left -= len;
    return pk->left > 0;
}

static void prime_pick (struct round *rd, struct picks *pk)
{
    struct kvs_ctx *ctx = rd->a->ctx;

    memset (pk, 0, sizeof (*pk));
    pk->max = ctx->limits.prime_max;
    pk->left = ctx->size > 1 ? ctx->limits.prime_values / ctx->size : 0;
    if (!round_collective (rd) || pk->left == 0 || pk->max == 0)
        return;
    if (!(pk->seen = hashmap_create (NULL)))
        pk->all = true;
    else
        foreach_value (rd, pick_value, pk);
    hashmap_destroy (pk->seen);
    pk->seen = NULL;
}

/* What the setroot says of the kvs.prime event to come: NULL if none
 * comes, the first KVS_PRIME_PREFIX hex digits of each picked value's ref
 * (so that a broker holds only the loads of those, kvs.c and load.h, and
 * loads any other value at once), or true (hold every value load) past
 * KVS_PRIME_LIST_MAX values or out of memory.
 */
static json_t *prime_announce (const struct picks *pk)
{
    json_t *o = NULL;
    char *list;

    if (pk->n == 0 && !pk->all)
        return NULL;
    if (!pk->all && pk->n <= KVS_PRIME_LIST_MAX
        && (list = malloc (pk->n * KVS_PRIME_PREFIX + 1))) {
        for (int i = 0; i < pk->n; i++)
            memcpy (list + i * KVS_PRIME_PREFIX, pk->v[i].ref + BLOBREF_PREFIX_LEN,
                    KVS_PRIME_PREFIX);
        o = json_stringn (list, pk->n * KVS_PRIME_PREFIX);
        free (list);
    }
    return o ? o : json_true ();
}

/* Publish kvs.setroot: JSON, or, with directories to carry, a kvs_frame
 * whose header "fences" is [the same JSON object] and whose blobs are
 * those directories (setroot_cb in kvs.c reads both).
 * 'prime' (NULL: none; stolen otherwise) announces the kvs.prime event
 * that follows, and which values it will bring (prime_announce).
 */
static canopy_future_t *publish_setroot (struct kvs_ctx *ctx, json_t *names,
                                         blobtab_t *dirs, json_t *prime)
{
    json_t *o = json_pack ("{s:i s:s s:O s:[] s:f}",
                           "version", ctx->version, "rootref", ctx->rootref,
                           "names", names, "errors", "stamp", monotime ());
    canopy_future_t *f = NULL;

    if (!o || (prime && json_object_set_new (o, "prime", prime) < 0)) {
        if (!o)
            json_decref (prime);
        json_decref (o);
        errno = ENOMEM;
        return NULL;
    }
    if (blobtab_count (dirs) > 0) {
        json_t *one = json_pack ("[O]", o);
        void *buf;
        size_t len;
        if (one && kvs_frame_encode (one, dirs, NULL, 0, SIZE_MAX, &buf, &len) == 0) {
            f = canopy_event_publish_raw (ctx->h, "kvs.setroot", CANOPY_MSGFLAG_RAW,
                                           buf, len);
            free (buf);
        }
        json_decref (one);
    }
    if (!f) {       /* nothing to carry, or it could not be framed: plain JSON */
        char *s = json_fast_dumps (o, JSON_COMPACT);
        if (s)
            f = canopy_event_publish (ctx->h, "kvs.setroot", 0, s);
        free (s);
    }
    json_decref (o);
    return f;
}

/* Send the kvs.prime that waits, if any (the prime-delay timer, or the
 * next setroot, which must not overtake it: a broker that sees a newer
 * setroot than the kvs.prime it holds loads for stops waiting for it).
 * If it cannot be sent, its header alone goes, so that brokers release
 * their holds at once; if even that fails (out of memory), they release
 * them on their timer (kvs.c, one second) or at the next setroot.
 */
static void prime_flush (struct applier *a)
{
    struct kvs_ctx *ctx = a->ctx;
    struct prime_event *pe = &a->prime;
    canopy_future_t *f = NULL;

    canopy_watcher_stop (a->prime_w);
    if (!pe->req && !pe->hdr)
        return;
    if (pe->req)
        f = canopy_event_pub_send (ctx->h, pe->req);
    if (!f && pe->hdr)
        f = canopy_event_publish_raw (ctx->h, "kvs.prime", CANOPY_MSGFLAG_RAW,
                                      pe->hdr, pe->hlen);
    if (!f)
        canopy_log (ctx->h, LOG_ERR, "cannot publish kvs.prime of version %d: %s",
                    pe->version, strerror (errno ? errno : ENOMEM));
    canopy_future_destroy (f);
    prime_clear (pe);
}

static void prime_timer_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                            void *arg)
{
    prime_flush (arg);
}

/* Publish kvs.prime, the values a setroot announced (the one share_prime
 * built, or prime_build's now), at once or prime-delay seconds from now:
 * the setroot it follows then spreads first.  Rank 0 caches the values
 * from the event's bytes as it makes it, without a copy, as every other
 * broker does from the event: its lookups find them at once.  The
 * caller flushed any kvs.prime that waited (round_finish).
 */
static void publish_prime (struct round *rd, const struct picks *pk)
{
    struct applier *a = rd->a;
    struct kvs_ctx *ctx = a->ctx;
    struct prime_event *pe = &a->prime;

    assert (!pe->req && !pe->hdr);
    if (rd->prime.hdr) {
        *pe = rd->prime;
        memset (&rd->prime, 0, sizeof (rd->prime));
    }
    else if (prime_build (ctx, ctx->version, pk, pe) < 0) {
        canopy_log (ctx->h, LOG_ERR, "cannot publish kvs.prime of version %d: %s",
                    ctx->version, strerror (errno ? errno : ENOMEM));
        return;
    }
    if (pe->req) {
        /* rank 0's lookups of the values are answered from the cache at
         * once (not by a content.load each, nor held until the event
         * comes back): the entries point into the event's bytes, kept by
         * a message of their own that shares them
         */
        canopy_msg_t *frame = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
        canopy_error_t error;
        if (frame && canopy_msg_share_payload (frame, pe->req, pe->off) == 0) {
            int n = objcache_put_blobrecs (ctx->cache, frame, pe->hlen, &error);
            if (n < 0)
                canopy_log (ctx->h, LOG_ERR, "kvs.prime: %s", error.text);
            else
                ctx->stats.primed_values += n;
        }
        canopy_msg_decref (frame);
    }
    if (ctx->limits.prime_delay > 0 && pe->req) {
        canopy_timer_watcher_reset (a->prime_w, ctx->limits.prime_delay, 0);
        canopy_watcher_start (a->prime_w);
    }
    else
        prime_flush (a);
}

/* Publish the outcome of the round and start the next. */
static void round_finish (struct round *rd, int errnum, const char *errstr)
{
    struct applier *a = rd->a;
    struct kvs_ctx *ctx = a->ctx;
    json_t *names = json_array ();
    bool names_ok = names != NULL;
    bool any = false;

    for (int i = 0; i < rd->nfences; i++) {
        const char *name = rd->fences[i]->name;
        int e = errnum ? errnum : rd->failed[i];
        const char *s = errnum ? errstr : rd->errstr[i];
        if (e)
            fence_finished (ctx->fences, name, e, s);   /* publishes it */
        else {
            if (names_ok && json_array_append_new (names, json_string (name)) < 0)
                names_ok = false;
            fence_finished (ctx->fences, name, 0, NULL);
            any = true;
        }
    }
    if (any)
        kvs_root_update (ctx, ctx->version + 1, rd->rootref);
    /* failures were published one by one by fence_finished; publish the
     * successes (and the new root) in one event, with the small new
     * directories every broker's next lookup would otherwise fault in.
     * If that event cannot be built or sent, every success is published
     * again later (fence_timer), and answered then, here too.
     */
    if (any) {
        blobtab_t *dirs = names_ok ? prime_objects (rd) : NULL;
        json_t *announce = prime_announce (round_picks (rd));
        bool prime = announce != NULL;
        canopy_future_t *f = NULL;
        /* the kvs.prime of the version before goes first */
        prime_flush (a);
        if (names_ok && dirs)
            f = publish_setroot (ctx, names, dirs, announce);
        else {
            json_decref (announce);
            errno = ENOMEM;
        }
        blobtab_destroy (dirs);
        if (!f) {
            for (int i = 0; i < rd->nfences; i++) {
                if (!errnum && !rd->failed[i])
                    fence_publish_failed (ctx->fences, rd->fences[i]->name);
            }
            json_decref (names);
            names = NULL;       /* nothing to answer here now */
        }
        canopy_future_destroy (f);
        /* the apply ends here; answering is counted as setroot handling */
        double t1 = thread_cputime ();
        tstat_push (&ctx->timing.apply, (t1 - rd->t0) * 1e6);
        rd->t0 = -1;
        /* rank 0 has the new root already: answer its own callers now
         * rather than when the event comes back
         */
        if (names)
            fence_setroot (ctx->fences, names, NULL, ctx->version, ctx->rootref);
        /* then the values the setroot announced: no answer waits for
         * their bytes (other brokers hold the loads they would start)
         */
        if (names && prime)
            publish_prime (rd, round_picks (rd));
        tstat_push (&ctx->timing.setroot_handle, (thread_cputime () - t1) * 1e6);
    }
    json_decref (names);
    ctx->stats.applies++;
    ctx->stats.apply_txns += rd->nfences;
    if (rd->t0 >= 0)
        tstat_push (&ctx->timing.apply, (thread_cputime () - rd->t0) * 1e6);
    size_t nops = 0;
    for (int i = 0; i < rd->nfences; i++)
        nops += json_array_size (rd->fences[i]->ops);
    tstat_push (&ctx->timing.apply_ops, (double)nops);
    a->round = NULL;
    round_destroy (rd);
    applier_kick (a);
}

/* An empty round: its store set and (optional) walk cache. */
static struct round *round_create (struct applier *a)
{
    struct round *rd = calloc (1, sizeof (*rd));
    if (!rd)
        return NULL;
    rd->a = a;
    rd->walked = hashmap_create (NULL);     /* optional: NULL walks every time */
    if (!(rd->store = blobtab_create ())) {
        round_destroy (rd);
        return NULL;
    }
    return rd;
}

static void draft_drop (struct applier *a)
{
    round_destroy (a->draft);
    a->draft = NULL;
}

/* Drafts.  A collective fence's operations reach rank 0 over a while
 * (its participants' contributions, merged on the way up), and apply
 * only once the last one is there: at 128 KAP ranks, 128 operations
 * between the last entry and the answer.  So while a fence is still
 * incomplete and nothing else is being applied, its operations so far
 * are applied ahead into a round of their own (the draft), and each new
 * contribution's as it comes.  When the fence completes, a round whose
 * first fence is the draft's, on the root the draft started from,
 * applies only the rest (apply_all: draft_done).  Anything else (another
 * fence first, a new root meanwhile) makes the draft a plain round that
 * applies everything again, so the result never depends on the draft;
 * a draft never loads (a missing directory, like a failing operation,
 * drops it, and that fence is not drafted again: its round does the
 * work, loads and errors included, as without drafts).
 */
static void draft_advance (struct applier *a)
{
    struct kvs_ctx *ctx = a->ctx;
    const char *name;
    json_t *ops;
    struct round *rd = a->draft;

    if (a->round || !fence_draft_candidate (ctx->fences, &name, &ops))
        return;
    if (rd && (rd->draft_ops != ops || rd->draft_version != ctx->version)) {
        draft_drop (a);
        rd = NULL;
    }
    if (!rd) {
        json_t *cur = objcache_get_dir (ctx->cache, ctx->rootref);
        if (!cur)
            return;
        if (a->drafted && !strcmp (a->drafted, name)) {
            if (a->redrafts >= MAX_REDRAFTS)
                return;
            a->redrafts++;
        }
        else {
            char *copy = strdup (name);
            if (!copy)
                return;
            free (a->drafted);
            a->drafted = copy;
            a->redrafts = 0;
        }
        if (!(rd = round_create (a)))
            return;
        rd->drafting = true;
        rd->draft_base = json_incref (cur);
        rd->draft_ops = json_incref (ops);
        rd->draft_version = ctx->version;
        if (!(rd->root = own (rd, cur))) {
            round_destroy (rd);
            return;
        }
        a->draft = rd;
    }
    size_t n = json_array_size (ops);
    for (size_t j = rd->draft_done; j < n; j++) {
        const char *key;
        if (apply_entry (rd, ops, j, &key) < 0) {
            a->redrafts = MAX_REDRAFTS;     /* not drafted again */
            draft_drop (a);
            return;
        }
    }
    rd->draft_done = n;
}

/* Allocate everything a round needs first, then take the fences: a
 * failure (ENOMEM) takes nothing, so every ready fence stays ready (its
 * waiters keep waiting for an answer that will come) and the round is
 * tried again at the next reactor pass.
 */
static void start_round (struct applier *a)
{
    struct kvs_ctx *ctx = a->ctx;
    int max = fence_ready_count (ctx->fences);
    struct round *rd;

    if (max > MAX_BATCH)
        max = MAX_BATCH;
    if (max == 0)
        return;
    /* the draft becomes this round (used if its fence comes first) */
    if ((rd = a->draft))
        a->draft = NULL;
    else if (!(rd = round_create (a)))
        goto retry;
    rd->drafting = false;
    rd->t0 = thread_cputime ();
    if (!(rd->failed = calloc (max, sizeof (int)))
        || !(rd->errstr = calloc (max, sizeof (*rd->errstr))))
        goto retry;
    if ((rd->nfences = fence_take_ready (ctx->fences, rd->fences, max)) == 0)
        goto retry;
    if (rd->draft_done > 0 && (rd->fences[0]->ops != rd->draft_ops
                               || rd->draft_version != ctx->version))
        rd->draft_done = 0;     /* applied from the start, as any round */
    if (rd->draft_done > 0) {
        ctx->stats.drafts_used++;
        ctx->stats.drafted_ops += rd->draft_done;
        free (a->drafted);      /* a later fence of that name starts afresh */
        a->drafted = NULL;
    }
    a->round = rd;
    round_continue (rd);
    return;
retry:
    round_destroy (rd);
    canopy_log (ctx->h, LOG_ERR, "cannot start applying %d ready fence%s: out of"
                " memory; trying again", max, max == 1 ? "" : "s");
    canopy_watcher_start (a->prep);
}

void applier_kick (struct applier *a)
{
    if (a && !a->round && (fence_have_ready (a->ctx->fences)
                           || fence_draft_candidate (a->ctx->fences, NULL, NULL)))
        canopy_watcher_start (a->prep);
}

bool applier_busy (struct applier *a)
{
    return a && a->round != NULL;
}

static void prep_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct applier *a = arg;
    canopy_watcher_stop (w);
    if (!a->round && fence_have_ready (a->ctx->fences))
        start_round (a);
    else
        draft_advance (a);
}

struct applier *applier_create (struct kvs_ctx *ctx)
{
    struct applier *a = calloc (1, sizeof (*a));
    if (!a) {
        errno = ENOMEM;
        return NULL;
    }
    a->ctx = ctx;
    list_init (&a->stores);
    if (!(a->prep = canopy_prepare_watcher_create (ctx->r, prep_cb, a))
        || !(a->prime_w = canopy_timer_watcher_create (ctx->r, 0, 0, prime_timer_cb,
                                                       a))) {
        canopy_watcher_destroy (a->prep);
        free (a);
        return NULL;
    }
    canopy_watcher_unref (a->prep);
    canopy_watcher_unref (a->prime_w);
    return a;
}

void applier_destroy (struct applier *a)
{
    if (a) {
        int saved_errno = errno;
        /* a round in flight cannot finish without the reactor */
        round_destroy (a->round);
        round_destroy (a->draft);
        free (a->drafted);
        while (!list_empty (&a->stores)) {
            struct inflight *in = list_entry (a->stores.next, struct inflight, node);
            list_del (&in->node);
            canopy_future_destroy (in->f);
            free (in);
        }
        canopy_watcher_destroy (a->prep);
        /* a kvs.prime still waiting is dropped: brokers stop holding
         * for it on their own timer (kvs.c)
         */
        canopy_watcher_destroy (a->prime_w);
        prime_clear (&a->prime);
        free (a);
        errno = saved_errno;
    }
}
