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
 *   dir in the working tree is new and is unrolled into a dirref.
 * - A key whose intermediate component is a value gets a directory there
 *   (the value is replaced); intermediate symlinks are followed (ELOOP
 *   after 32).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <canopy/canopy.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_path.h"
#include "src/common/libkvs/blobtab.h"
#include "fence.h"
#include "apply.h"

#define MAX_BATCH 4096
#define SYMLINK_MAX 32

struct newdir {
    char ref[BLOBREF_MAX];
    json_t *dir;
    size_t size;
};

struct round {
    struct applier *a;
    struct ready_fence *fences[MAX_BATCH];
    int nfences;
    int *failed;                /* errnum per fence, 0 = ok */
    char (*errstr)[160];
    json_t *root;               /* working root (dir) */
    hashmap_t *gen;             /* dirs owned by the current fence */
    int pending;                /* loads outstanding */
    int load_errnum;
    blobtab_t *store;           /* blobs to store: new dirs + values */
    struct newdir *newdirs;
    int nnewdirs;
    char rootref[BLOBREF_MAX];
    double t0;
    canopy_future_t *store_f;
};

struct applier {
    struct kvs_ctx *ctx;
    struct round *round;
    canopy_watcher_t *prep;
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
    hashmap_destroy (rd->gen);
    blobtab_destroy (rd->store);
    canopy_future_destroy (rd->store_f);
    free (rd);
}

static void gen_mark (struct round *rd, json_t *dir)
{
    char key[32];
    snprintf (key, sizeof (key), "%p", (void *)dir);
    (void)hashmap_update (rd->gen, key, (void *)1);
}

static bool gen_owns (struct round *rd, json_t *dir)
{
    char key[32];
    snprintf (key, sizeof (key), "%p", (void *)dir);
    return hashmap_lookup (rd->gen, key) != NULL;
}

static void load_cb (int errnum, void *arg);

/* Return a directory object for an entry that the fence may modify, or
 * NULL with EAGAIN if it must be loaded first.
 */
static json_t *mutable_child (struct round *rd, json_t *parent, const char *name,
                              json_t *entry)
{
    struct kvs_ctx *ctx = rd->a->ctx;
    json_t *copy;

    if (treeobj_is_dir (entry)) {
        if (gen_owns (rd, entry))
            return entry;
        if (!(copy = treeobj_dir_copy (entry)))
            return NULL;
    }
    else if (treeobj_is_dirref (entry)) {
        const char *ref = treeobj_blobref_at (entry, 0);
        json_t *dir = objcache_get_dir (ctx->cache, ref);
        if (!dir) {
            if (kvs_load (ctx, ref, OBJ_DIR, load_cb, rd) == 0)
                rd->pending++;
            else if (!rd->load_errnum)
                rd->load_errnum = errno;
            errno = EAGAIN;
            return NULL;
        }
        if (!(copy = treeobj_dir_copy (dir)))
            return NULL;
    }
    else {
        if (!(copy = treeobj_create_dir ()))
            return NULL;
    }
    gen_mark (rd, copy);
    if (treeobj_dir_set (parent, name, copy) < 0)
        return NULL;
    return copy;
}

static int apply_op (struct round *rd, const char *key, json_t *obj, int links)
{
    char **comps = NULL;
    char *buf = NULL;
    int n, rc = -1;
    json_t *dir;

    if ((n = kvs_path_split (key, &comps, &buf)) < 0)
        return -1;
    if (n == 0) {       /* the root itself: replaced by an (empty) dir */
        json_t *nr = treeobj_create_dir ();
        if (!nr)
            goto done;
        json_decref (rd->root);
        rd->root = nr;
        gen_mark (rd, nr);
        rc = 0;
        goto done;
    }
    dir = rd->root;
    for (int i = 0; i < n - 1; i++) {
        json_t *entry = treeobj_dir_get (dir, comps[i]);
        if (entry && treeobj_is_symlink (entry)) {
            if (links >= SYMLINK_MAX) {
                errno = ELOOP;
                goto done;
            }
            /* continue at target + remaining components */
            size_t len = strlen (treeobj_symlink_target (entry)) + 2;
            for (int j = i + 1; j < n; j++)
                len += strlen (comps[j]) + 1;
            char *nk = malloc (len);
            if (!nk)
                goto done;
            strcpy (nk, treeobj_symlink_target (entry));
            for (int j = i + 1; j < n; j++) {
                strcat (nk, ".");
                strcat (nk, comps[j]);
            }
            char *norm = kvs_path_normalize (nk);
            free (nk);
            if (!norm)
                goto done;
            rc = apply_op (rd, norm, obj, links + 1);
            free (norm);
            goto done;
        }
        if (entry && treeobj_is_hdir (entry)) {
            errno = EINVAL;     /* hashed dirs: see hdir support */
            goto done;
        }
        if (!(dir = mutable_child (rd, dir, comps[i], entry ? entry : json_null ())))
            goto done;
    }
    if (json_is_null (obj)) {
        (void)treeobj_dir_remove (dir, comps[n - 1]);
        rc = 0;
    }
    else
        rc = treeobj_dir_set (dir, comps[n - 1], json_incref (obj));
done:
    free (comps);
    free (buf);
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
        if (kvs_load (ctx, ctx->rootref, OBJ_DIR, load_cb, rd) == 0)
            rd->pending++;
        errno = EAGAIN;
        return -1;
    }
    json_decref (rd->root);
    rd->root = json_incref (cur);
    for (int i = 0; i < rd->nfences; i++) {
        struct ready_fence *rf = rd->fences[i];
        json_t *saved = json_incref (rd->root);
        size_t j;
        json_t *op;

        rd->failed[i] = 0;
        hashmap_clear (rd->gen);
        if (!gen_owns (rd, rd->root)) {
            json_t *copy = treeobj_dir_copy (rd->root);
            if (!copy) {
                json_decref (saved);
                return -1;
            }
            json_decref (rd->root);
            rd->root = copy;
            gen_mark (rd, copy);
        }
        json_array_foreach (rf->ops, j, op) {
            const char *key = json_string_value (json_array_get (op, 0));
            char *norm = kvs_path_normalize (key);
            int rc = norm ? apply_op (rd, norm, json_array_get (op, 1), 0) : -1;
            free (norm);
            if (rc < 0) {
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

/* Replace every inline dir below 'dir' by a dirref to its stored form;
 * returns the ref of 'dir' itself in 'ref'.
 */
static int unroll (struct round *rd, json_t *dir, char *ref)
{
    json_t *data = treeobj_data (dir);
    const char *name;
    json_t *entry;
    void *tmp;
    char *enc;
    size_t len;

    json_object_foreach_safe (data, tmp, name, entry) {
        if (treeobj_is_dir (entry)) {
            char cref[BLOBREF_MAX];
            json_t *dref;
            if (unroll (rd, entry, cref) < 0 || !(dref = treeobj_create_dirref (cref)))
                return -1;
            if (json_object_set_new (data, name, dref) < 0)
                return -1;
        }
    }
    if (!(enc = treeobj_encode_ref (dir, &len, ref, BLOBREF_MAX)))
        return -1;
    int rc = blobtab_add (rd->store, ref, enc, len, NULL, 0);
    free (enc);
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

static void round_finish (struct round *rd, int errnum, const char *errstr);
static void round_continue (struct round *rd);

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
    round_finish (rd, 0, NULL);
}

static void load_cb (int errnum, void *arg)
{
    struct round *rd = arg;
    if (errnum && !rd->load_errnum)
        rd->load_errnum = errnum;
    if (--rd->pending == 0) {
        if (rd->load_errnum)
            round_finish (rd, rd->load_errnum, "cannot load a directory");
        else
            round_continue (rd);
    }
}

static int store_all (struct round *rd)
{
    struct kvs_ctx *ctx = rd->a->ctx;
    int n = blobtab_count (rd->store);
    size_t total = 0;
    uint8_t *buf, *p;
    canopy_future_t *f;

    for (int i = 0; i < n; i++) {
        size_t len;
        (void)blobtab_at (rd->store, i, NULL, NULL, &len);
        total += 4 + len;
    }
    if (!(buf = malloc (total + 1)))
        return -1;
    p = buf;
    for (int i = 0; i < n; i++) {
        const void *data;
        size_t len;
        (void)blobtab_at (rd->store, i, NULL, &data, &len);
        p[0] = len >> 24;
        p[1] = len >> 16;
        p[2] = len >> 8;
        p[3] = len;
        memcpy (p + 4, data, len);
        p += 4 + len;
    }
    f = canopy_rpc_raw (ctx->h, "content.store-batch", buf, total, CANOPY_NODEID_ANY, 0);
    free (buf);
    if (!f || canopy_future_then (f, -1, store_cb, rd) < 0) {
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
            return;     /* load_cb restarts us */
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
    for (int i = 0; i < rd->nfences; i++) {
        if (rd->failed[i])
            continue;
        if (blobtab_merge (rd->store, rd->fences[i]->blobs) < 0) {
            round_finish (rd, ENOMEM, NULL);
            return;
        }
    }
    if (unroll (rd, rd->root, rd->rootref) < 0 || store_all (rd) < 0)
        round_finish (rd, errno ? errno : ENOMEM, "storing the new version failed");
}

/* Publish the outcome of the round and start the next. */
static void round_finish (struct round *rd, int errnum, const char *errstr)
{
    struct applier *a = rd->a;
    struct kvs_ctx *ctx = a->ctx;
    json_t *names = json_array ();
    json_t *errors = json_array ();
    bool any = false;

    for (int i = 0; i < rd->nfences; i++) {
        const char *name = rd->fences[i]->name;
        int e = errnum ? errnum : rd->failed[i];
        const char *s = errnum ? errstr : rd->errstr[i];
        if (e) {
            json_array_append_new (errors, json_pack ("{s:s s:i s:s}", "name", name,
                                                      "errnum", e, "errstr",
                                                      s ? s : ""));
            fence_finished (ctx->fences, name, e, s);
        }
        else {
            json_array_append_new (names, json_string (name));
            fence_finished (ctx->fences, name, 0, NULL);
            any = true;
        }
    }
    if (any && !errnum)
        kvs_root_update (ctx, ctx->version + 1, rd->rootref);
    /* failures were published one by one by fence_finished; publish the
     * successes (and the new root) in one event
     */
    if (json_array_size (names) > 0) {
        canopy_future_t *f = canopy_event_publish_pack (ctx->h, "kvs.setroot", 0,
                                                        "{s:i s:s s:O s:[]}",
                                                        "version", ctx->version,
                                                        "rootref", ctx->rootref,
                                                        "names", names,
                                                        "errors");
        if (!f)
            canopy_log_error (ctx->h, "publish kvs.setroot");
        canopy_future_destroy (f);
    }
    json_decref (names);
    json_decref (errors);
    ctx->stats.applies++;
    ctx->stats.apply_txns += rd->nfences;
    a->round = NULL;
    round_destroy (rd);
    applier_kick (a);
}

static void start_round (struct applier *a)
{
    struct kvs_ctx *ctx = a->ctx;
    struct round *rd = calloc (1, sizeof (*rd));

    if (!rd)
        return;
    rd->a = a;
    rd->t0 = monotime ();
    if (!(rd->gen = hashmap_create (NULL)) || !(rd->store = blobtab_create ())) {
        round_destroy (rd);
        return;
    }
    rd->nfences = fence_take_ready (ctx->fences, rd->fences, MAX_BATCH);
    if (rd->nfences == 0 || !(rd->failed = calloc (rd->nfences, sizeof (int)))
        || !(rd->errstr = calloc (rd->nfences, sizeof (*rd->errstr)))) {
        round_destroy (rd);
        return;
    }
    a->round = rd;
    round_continue (rd);
}

void applier_kick (struct applier *a)
{
    if (a && !a->round && fence_have_ready (a->ctx->fences))
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
}

struct applier *applier_create (struct kvs_ctx *ctx)
{
    struct applier *a = calloc (1, sizeof (*a));
    if (!a) {
        errno = ENOMEM;
        return NULL;
    }
    a->ctx = ctx;
    if (!(a->prep = canopy_prepare_watcher_create (ctx->r, prep_cb, a))) {
        free (a);
        return NULL;
    }
    canopy_watcher_unref (a->prep);
    return a;
}

void applier_destroy (struct applier *a)
{
    if (a) {
        int saved_errno = errno;
        /* a round in flight cannot finish without the reactor */
        round_destroy (a->round);
        canopy_watcher_destroy (a->prep);
        free (a);
        errno = saved_errno;
    }
}
