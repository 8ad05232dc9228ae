/* blobtab.c - see blobtab.h.  A hashmap for lookup plus an array for
 * order; each blob's bytes are owned by the table.  The map holds index + 1
 * (never 0, so a lookup miss is NULL); the newest blobs are at the end of
 * the array, which is what makes blobtab_truncate exact.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/blobref.h"
#include "blobtab.h"

struct blob {
    char ref[BLOBREF_MAX];
    void *data;
    size_t len;
    bool borrowed;          /* data is another table's (blobtab_merge_borrow) */
};

struct blobtab {
    hashmap_t *map;         /* ref -> index + 1 (as pointer) */
    struct blob *v;
    int count;
    int alloc;
    size_t bytes;
};

blobtab_t *blobtab_create (void)
{
    blobtab_t *bt = calloc (1, sizeof (*bt));
    if (!bt) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(bt->map = hashmap_create (NULL))) {
        free (bt);
        return NULL;
    }
    return bt;
}

void blobtab_destroy (blobtab_t *bt)
{
    if (bt) {
        int saved_errno = errno;
        for (int i = 0; i < bt->count; i++) {
            if (!bt->v[i].borrowed)
                free (bt->v[i].data);
        }
        free (bt->v);
        hashmap_destroy (bt->map);
        free (bt);
        errno = saved_errno;
    }
}

/* Insert ref -> data (owned) at the end; -1 leaves the table as it was. */
static int insert (blobtab_t *bt, const char *ref, void *data, size_t len,
                   bool borrowed)
{
    struct blob *b;

    if (bt->count == bt->alloc) {
        int n = bt->alloc ? bt->alloc * 2 : 8;
        struct blob *v = realloc (bt->v, n * sizeof (*v));
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        bt->v = v;
        bt->alloc = n;
    }
    b = &bt->v[bt->count];
    strcpy (b->ref, ref);
    b->data = data;
    b->len = len;
    b->borrowed = borrowed;
    if (hashmap_insert (bt->map, b->ref, (void *)(intptr_t)(bt->count + 1)) < 0)
        return -1;
    bt->count++;
    bt->bytes += len;
    return 0;
}

int blobtab_add (blobtab_t *bt, const char *ref, const void *data, size_t len,
                 char *out, size_t outsize)
{
    char buf[BLOBREF_MAX];
    void *copy;

    if (!bt || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (!ref) {
        if (blobref_hash (data, len, buf, sizeof (buf)) < 0)
            return -1;
        ref = buf;
    }
    else if (blobref_validate (ref) < 0)
        return -1;
    if (out) {
        if (outsize < BLOBREF_MAX) {
            errno = EINVAL;
            return -1;
        }
        strcpy (out, ref);
    }
    if (hashmap_lookup (bt->map, ref))
        return 0;
    if (!(copy = malloc (len ? len : 1))) {
        errno = ENOMEM;
        return -1;
    }
    if (len)
        memcpy (copy, data, len);
    if (insert (bt, ref, copy, len, false) < 0) {
        free (copy);
        return -1;
    }
    return 1;
}

int blobtab_adopt (blobtab_t *bt, const char *ref, void *data, size_t len)
{
    if (!bt || !ref || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (blobref_validate (ref) < 0)
        return -1;
    if (hashmap_lookup (bt->map, ref)) {
        free (data);
        return 0;
    }
    if (!data && !(data = malloc (1))) {
        errno = ENOMEM;
        return -1;
    }
    return insert (bt, ref, data, len, false) < 0 ? -1 : 1;
}

void blobtab_truncate (blobtab_t *bt, int count)
{
    if (!bt || count < 0)
        return;
    int saved_errno = errno;
    while (bt->count > count) {
        struct blob *b = &bt->v[--bt->count];
        (void)hashmap_delete (bt->map, b->ref);
        bt->bytes -= b->len;
        if (!b->borrowed)
            free (b->data);
    }
    errno = saved_errno;
}

/* Every blob of 'from' into bt, copied or borrowed; on error bt is as
 * before.
 */
static int merge (blobtab_t *bt, const blobtab_t *from, bool borrow)
{
    if (!bt || !from) {
        errno = EINVAL;
        return -1;
    }
    int mark = bt->count;
    for (int i = 0; i < from->count; i++) {
        const struct blob *b = &from->v[i];
        if ((borrow ? blobtab_borrow (bt, b->ref, b->data, b->len)
                    : blobtab_add (bt, b->ref, b->data, b->len, NULL, 0)) < 0) {
            blobtab_truncate (bt, mark);
            return -1;
        }
    }
    return 0;
}

int blobtab_merge (blobtab_t *bt, const blobtab_t *from)
{
    return merge (bt, from, false);
}

bool blobtab_has (const blobtab_t *bt, const char *ref)
{
    return bt && ref && hashmap_lookup (bt->map, ref) != NULL;
}

int blobtab_get (const blobtab_t *bt, const char *ref, const void **data, size_t *len)
{
    intptr_t idx;
    if (!bt || !ref || !(idx = (intptr_t)hashmap_lookup (bt->map, ref))) {
        errno = ENOENT;
        return -1;
    }
    if (data)
        *data = bt->v[idx - 1].data;
    if (len)
        *len = bt->v[idx - 1].len;
    return 0;
}

int blobtab_count (const blobtab_t *bt)
{
    return bt ? bt->count : 0;
}

size_t blobtab_bytes (const blobtab_t *bt)
{
    return bt ? bt->bytes : 0;
}

int blobtab_at (const blobtab_t *bt, int index, const char **ref,
                const void **data, size_t *len)
{
    if (!bt || index < 0 || index >= bt->count) {
        errno = EINVAL;
        return -1;
    }
    if (ref)
        *ref = bt->v[index].ref;
    if (data)
        *data = bt->v[index].data;
    if (len)
        *len = bt->v[index].len;
    return 0;
}

int blobtab_borrow (blobtab_t *bt, const char *ref, const void *data, size_t len)
{
    if (!bt || !ref || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (blobref_validate (ref) < 0)
        return -1;
    if (hashmap_lookup (bt->map, ref))
        return 0;
    if (insert (bt, ref, (void *)data, len, true) < 0)
        return -1;
    return 1;
}

int blobtab_merge_borrow (blobtab_t *bt, const blobtab_t *from)
{
    return merge (bt, from, true);
}
