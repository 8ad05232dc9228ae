/* kvswalk.c - see kvswalk.h.
 *
 * Design notes:
 * - A directory's entries are gathered first (for an hdir, from all of
 *   its buckets, loaded one by one), then sorted by name, so the walk
 *   order is the key order whatever the directory's shape.
 * - Directory objects are held only while their subtree is walked, so
 *   memory grows with the depth of the tree, not its size.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <jansson.h>
#include "src/common/libkvs/treeobj.h"
#include "src/common/libutil/blobref.h"
#include "kvswalk.h"

struct walk {
    const struct kvswalk_ops *ops;
    void *load_arg;
    void *arg;
    struct kvswalk_stats st;
};

struct dirent_ref {
    const char *name;
    json_t *entry;          /* borrowed from an object in 'holders' */
};

struct gather {
    struct dirent_ref *v;
    int n, alloc;
    json_t *holders;        /* array: keeps loaded buckets alive */
};

static void problem (struct walk *w, const char *key, const char *ref, int errnum,
                     const char *what)
{
    w->st.problems++;
    if (w->ops->problem)
        w->ops->problem (key, ref, errnum, what, w->arg);
}

/* Load one blob: 0 with data, 1 if it cannot be had (reported), -1 fatal. */
static int load_one (struct walk *w, const char *key, const char *ref, void **data,
                     size_t *len)
{
    int errnum = 0;
    const char *refs[1] = { ref };

    *data = NULL;
    if (w->ops->load (refs, 1, data, len, &errnum, w->load_arg) < 0)
        return -1;
    if (errnum || !*data) {
        free (*data);
        *data = NULL;
        problem (w, key, ref, errnum ? errnum : EIO, "missing blob");
        return 1;
    }
    w->st.blobs++;
    w->st.bytes += *len;
    return 0;
}

/* Load a directory-like object (dir or hdir): 0 with *obj, 1 if it cannot
 * be had (reported), -1 fatal.
 */
static int load_dirlike (struct walk *w, const char *key, const char *ref, json_t **obj)
{
    void *data;
    size_t len;
    int rc = load_one (w, key, ref, &data, &len);
    json_t *o;

    if (rc != 0)
        return rc;
    o = treeobj_decode (data, len);
    free (data);
    if (!o || (!treeobj_is_dir (o) && !treeobj_is_hdir (o))) {
        json_decref (o);
        problem (w, key, ref, EPROTO, "not a directory object");
        return 1;
    }
    *obj = o;
    return 0;
}

static int gather_add (struct gather *g, const char *name, json_t *entry)
{
    if (g->n == g->alloc) {
        int na = g->alloc ? g->alloc * 2 : 32;
        struct dirent_ref *nv = realloc (g->v, na * sizeof (*nv));
        if (!nv) {
            errno = ENOMEM;
            return -1;
        }
        g->v = nv;
        g->alloc = na;
    }
    g->v[g->n].name = name;
    g->v[g->n].entry = entry;
    g->n++;
    return 0;
}

/* Collect the entries of a dir or hdir (loading hdir buckets). */
static int gather (struct walk *w, const char *key, json_t *obj, struct gather *g)
{
    if (treeobj_is_dir (obj)) {
        const char *name;
        json_t *entry;
        json_object_foreach (treeobj_data (obj), name, entry) {
            if (gather_add (g, name, entry) < 0)
                return -1;
        }
        return 0;
    }
    for (int i = 0; i < TREEOBJ_HDIR_FANOUT; i++) {
        json_t *slot = treeobj_hdir_slot (obj, i);
        json_t *bucket;
        int rc;
        if (!slot || json_is_null (slot))
            continue;
        if (json_is_string (slot)) {
            if ((rc = load_dirlike (w, key, json_string_value (slot), &bucket)) < 0)
                return -1;
            if (rc > 0)
                continue;
            if (json_array_append_new (g->holders, bucket) < 0) {
                errno = ENOMEM;
                return -1;
            }
        }
        else if (treeobj_is_dir (slot) || treeobj_is_hdir (slot))
            bucket = slot;
        else {
            problem (w, key, NULL, EPROTO, "malformed hashed directory slot");
            continue;
        }
        if (gather (w, key, bucket, g) < 0)
            return -1;
    }
    return 0;
}

static int cmp_dirent (const void *a, const void *b)
{
    return strcmp (((const struct dirent_ref *)a)->name,
                   ((const struct dirent_ref *)b)->name);
}

static char *join (const char *key, const char *name)
{
    char *s;
    if (!*key)
        return strdup (name);
    if (asprintf (&s, "%s.%s", key, name) < 0)
        return NULL;
    return s;
}

/* A valref: load every chunk (a window at a time). */
static int walk_valref (struct walk *w, const char *key, json_t *entry)
{
    int n = treeobj_blobref_count (entry);
    char *value = NULL;
    size_t vlen = 0;
    bool bad = false;
    int rc = 0;

    for (int i = 0; i < n && rc == 0; i += KVSWALK_WINDOW) {
        int m = n - i < KVSWALK_WINDOW ? n - i : KVSWALK_WINDOW;
        const char *refs[KVSWALK_WINDOW];
        void *data[KVSWALK_WINDOW] = { NULL };
        size_t len[KVSWALK_WINDOW] = { 0 };
        int errnum[KVSWALK_WINDOW] = { 0 };
        for (int k = 0; k < m; k++) {
            refs[k] = treeobj_blobref_at (entry, i + k);
            if (!refs[k] || blobref_validate (refs[k]) < 0) {
                problem (w, key, NULL, EPROTO, "malformed value reference");
                bad = true;
                goto done;
            }
        }
        if (w->ops->load (refs, m, data, len, errnum, w->load_arg) < 0) {
            rc = -1;
            m = 0;
        }
        for (int k = 0; k < m; k++) {
            if (errnum[k] || !data[k]) {
                problem (w, key, refs[k], errnum[k] ? errnum[k] : EIO, "missing blob");
                bad = true;
            }
            else {
                w->st.blobs++;
                w->st.bytes += len[k];
                if (w->ops->value && !bad) {
                    char *nv = realloc (value, vlen + len[k] + 1);
                    if (!nv) {
                        errno = ENOMEM;
                        rc = -1;
                    }
                    else {
                        value = nv;
                        memcpy (value + vlen, data[k], len[k]);
                        vlen += len[k];
                    }
                }
            }
            free (data[k]);
        }
    }
done:
    if (rc == 0 && !bad) {
        w->st.values++;
        if (w->ops->value && w->ops->value (key, value ? value : "", vlen, w->arg) < 0)
            rc = -1;
    }
    free (value);
    return rc;
}

static int walk_dir (struct walk *w, const char *key, json_t *obj);

static int walk_entry (struct walk *w, const char *key, json_t *entry)
{
    if (treeobj_is_val (entry)) {
        void *data;
        size_t len;
        if (treeobj_decode_val (entry, &data, &len) < 0) {
            problem (w, key, NULL, EPROTO, "malformed value");
            return 0;
        }
        w->st.values++;
        int rc = w->ops->value ? w->ops->value (key, data, len, w->arg) : 0;
        free (data);
        return rc;
    }
    if (treeobj_is_valref (entry))
        return walk_valref (w, key, entry);
    if (treeobj_is_symlink (entry)) {
        w->st.symlinks++;
        const char *t = treeobj_symlink_target (entry);
        if (!t) {
            problem (w, key, NULL, EPROTO, "malformed symlink");
            return 0;
        }
        return w->ops->symlink ? w->ops->symlink (key, t, w->arg) : 0;
    }
    if (treeobj_is_dirref (entry)) {
        const char *ref = treeobj_blobref_at (entry, 0);
        json_t *obj;
        int rc;
        if (!ref || blobref_validate (ref) < 0) {
            problem (w, key, NULL, EPROTO, "malformed directory reference");
            return 0;
        }
        if ((rc = load_dirlike (w, key, ref, &obj)) != 0)
            return rc < 0 ? -1 : 0;
        rc = walk_dir (w, key, obj);
        json_decref (obj);
        return rc;
    }
    if (treeobj_is_dir (entry) || treeobj_is_hdir (entry))
        return walk_dir (w, key, entry);
    problem (w, key, NULL, EPROTO, "malformed tree object");
    return 0;
}

static int walk_dir (struct walk *w, const char *key, json_t *obj)
{
    struct gather g = { .holders = json_array () };
    int rc = -1;

    if (!g.holders) {
        errno = ENOMEM;
        return -1;
    }
    if (gather (w, key, obj, &g) < 0)
        goto done;
    if (g.n > 1)
        qsort (g.v, g.n, sizeof (*g.v), cmp_dirent);
    w->st.dirs++;
    if (w->ops->dir && w->ops->dir (key, g.n, w->arg) < 0)
        goto done;
    for (int i = 0; i < g.n; i++) {
        char *sub = join (key, g.v[i].name);
        if (!sub) {
            errno = ENOMEM;
            goto done;
        }
        int r = walk_entry (w, sub, g.v[i].entry);
        free (sub);
        if (r < 0)
            goto done;
    }
    rc = 0;
done:
    free (g.v);
    json_decref (g.holders);
    return rc;
}

int kvswalk (const char *rootref, const struct kvswalk_ops *ops, void *load_arg,
             void *arg, struct kvswalk_stats *stats)
{
    struct walk w = { .ops = ops, .load_arg = load_arg, .arg = arg };
    json_t *root;
    int rc;

    if (!rootref || blobref_validate (rootref) < 0 || !ops || !ops->load) {
        errno = EINVAL;
        return -1;
    }
    if ((rc = load_dirlike (&w, "", rootref, &root)) == 0) {
        rc = walk_dir (&w, "", root);
        json_decref (root);
    }
    else if (rc > 0)
        rc = 0;     /* the root itself is missing: reported */
    if (stats)
        *stats = w.st;
    return rc;
}
