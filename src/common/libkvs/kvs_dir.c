/* kvs_dir.c - directory snapshots and iteration (kvsdir_t, kvsitr_t).
 *
 * kvs_get_dir fetches a directory's tree object once; the kvsdir_t is a
 * read-only snapshot (entries of subdirectories are references; read them
 * with kvs_get_dir on kvsdir_key_at).  Iteration is in sorted name order.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/canopy.h>
#include "treeobj.h"
#include "kvs_path.h"
#include "kvs_private.h"

struct kvsdir {
    char *key;
    json_t *dir;        /* dir treeobj */
};

struct kvsitr {
    const char **names;
    int count;
    int next;
};

int kvs_get_dir (canopy_t *h, const char *key, kvsdir_t **dirp)
{
    canopy_future_t *f;
    json_t *o;
    kvsdir_t *d;

    if (!h || !key || !dirp) {
        errno = EINVAL;
        return -1;
    }
    if (!(f = kvs_lookup (h, key, KVS_READDIR)))
        return -1;
    if (kvs_lookup_get_treeobj (f, &o) < 0) {
        kvs_set_errstr (h, f);
        canopy_future_destroy (f);
        return -1;
    }
    if (!treeobj_is_dir (o)) {
        canopy_future_destroy (f);
        errno = EPROTO;
        return -1;
    }
    if (!(d = calloc (1, sizeof (*d))) || !(d->key = kvs_path_normalize (key))) {
        free (d);
        canopy_future_destroy (f);
        return -1;
    }
    d->dir = json_incref (o);
    canopy_future_destroy (f);
    *dirp = d;
    return 0;
}

void kvsdir_destroy (kvsdir_t *dir)
{
    if (dir) {
        int saved_errno = errno;
        json_decref (dir->dir);
        free (dir->key);
        free (dir);
        errno = saved_errno;
    }
}

const char *kvsdir_key (const kvsdir_t *dir)
{
    return dir ? dir->key : NULL;
}

int kvsdir_count (const kvsdir_t *dir)
{
    return dir ? treeobj_dir_count (dir->dir) : -1;
}

bool kvsdir_exists (const kvsdir_t *dir, const char *name)
{
    return dir && name && treeobj_dir_get (dir->dir, name) != NULL;
}

bool kvsdir_isdir (const kvsdir_t *dir, const char *name)
{
    return dir && name && treeobj_is_directory (treeobj_dir_get (dir->dir, name));
}

bool kvsdir_issymlink (const kvsdir_t *dir, const char *name)
{
    json_t *e = dir && name ? treeobj_dir_get (dir->dir, name) : NULL;
    return e && treeobj_is_symlink (e);
}

char *kvsdir_key_at (const kvsdir_t *dir, const char *name)
{
    if (!dir || !name) {
        errno = EINVAL;
        return NULL;
    }
    return kvs_path_join (dir->key, name);
}

static int cmp (const void *a, const void *b)
{
    return strcmp (*(const char **)a, *(const char **)b);
}

kvsitr_t *kvsitr_create (const kvsdir_t *dir)
{
    kvsitr_t *itr;
    json_t *data;
    const char *name;
    json_t *v;
    int n = 0;

    if (!dir || !(data = treeobj_data (dir->dir))) {
        errno = EINVAL;
        return NULL;
    }
    if (!(itr = calloc (1, sizeof (*itr)))
        || !(itr->names = calloc (json_object_size (data) + 1, sizeof (char *)))) {
        free (itr);
        errno = ENOMEM;
        return NULL;
    }
    json_object_foreach (data, name, v)
        itr->names[n++] = name;
    qsort (itr->names, n, sizeof (char *), cmp);
    itr->count = n;
    return itr;
}

const char *kvsitr_next (kvsitr_t *itr)
{
    if (!itr || itr->next >= itr->count)
        return NULL;
    return itr->names[itr->next++];
}

void kvsitr_rewind (kvsitr_t *itr)
{
    if (itr)
        itr->next = 0;
}

void kvsitr_destroy (kvsitr_t *itr)
{
    if (itr) {
        free (itr->names);
        free (itr);
    }
}
