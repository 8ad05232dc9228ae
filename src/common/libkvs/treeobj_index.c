/* treeobj_index.c - see treeobj_index.h.
 *
 * Design notes:
 * - One walk of the text (treeobj_dir_walk, which checks all of it)
 *   collects the entries into an array of offsets; then an open-addressed
 *   table of twice as many slots (a power of two, linear probing) maps a
 *   name's hash (hashmap_hash) to its entry.  A name seen again replaces
 *   the earlier entry in its slot: the last one wins.
 * - Slots hold an entry's number plus one (0: empty) and the low 32 bits
 *   of its hash, compared before the name.
 * - Offsets are 32-bit: a text of 4 GiB or more is refused (EINVAL); no
 *   directory comes near (objects are at most CANOPY_MSG_SIZE_MAX).
 * - Nothing is allocated on failure.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include "src/common/libutil/hashmap.h"
#include "treeobj_scan.h"
#include "treeobj_index.h"

struct ix_entry {
    uint32_t noff, nlen;        /* the name in the text */
    uint32_t voff, vlen;        /* the encoded value */
};

struct ix_slot {
    uint32_t entry;             /* entry number + 1; 0: empty */
    uint32_t hash;
};

struct treeobj_index {
    const char *base;           /* the text while building; not kept */
    struct ix_entry *entries;
    size_t n, cap;
    struct ix_slot *slots;
    size_t nslots;              /* a power of two, at least 2n */
    size_t count;               /* distinct names */
};

static int collect (const char *name, size_t nlen, size_t voff, size_t vlen, void *arg)
{
    struct treeobj_index *ix = arg;

    if (ix->n == ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 16;
        struct ix_entry *e = realloc (ix->entries, cap * sizeof (*e));
        if (!e) {
            errno = ENOMEM;
            return -1;
        }
        ix->entries = e;
        ix->cap = cap;
    }
    ix->entries[ix->n++] = (struct ix_entry){
        .noff = (uint32_t)(name - ix->base), .nlen = (uint32_t)nlen,
        .voff = (uint32_t)voff, .vlen = (uint32_t)vlen,
    };
    return 0;
}

/* The slot of name (nlen bytes, hash h): where it is, or the empty slot
 * where it would go.
 */
static struct ix_slot *probe (const treeobj_index_t *ix, const char *s,
                              const char *name, size_t nlen, uint64_t h)
{
    size_t mask = ix->nslots - 1;
    size_t i = (size_t)h & mask;

    for (;;) {
        struct ix_slot *sl = &ix->slots[i];
        if (sl->entry == 0)
            return sl;
        const struct ix_entry *e = &ix->entries[sl->entry - 1];
        if (sl->hash == (uint32_t)h && e->nlen == nlen
            && memcmp (s + e->noff, name, nlen) == 0)
            return sl;
        i = (i + 1) & mask;
    }
}

treeobj_index_t *treeobj_index_create (const char *s, size_t len)
{
    struct treeobj_index *ix;

    if (!s || len >= UINT32_MAX) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ix = calloc (1, sizeof (*ix)))) {
        errno = ENOMEM;
        return NULL;
    }
    ix->base = s;
    if (treeobj_dir_walk (s, len, collect, ix) < 0)
        goto error;
    ix->nslots = 4;
    while (ix->nslots < 2 * ix->n)
        ix->nslots *= 2;
    if (!(ix->slots = calloc (ix->nslots, sizeof (ix->slots[0])))) {
        errno = ENOMEM;
        goto error;
    }
    for (size_t i = 0; i < ix->n; i++) {
        const struct ix_entry *e = &ix->entries[i];
        uint64_t h = hashmap_hash (s + e->noff, e->nlen);
        struct ix_slot *sl = probe (ix, s, s + e->noff, e->nlen, h);
        if (sl->entry == 0)
            ix->count++;
        sl->entry = (uint32_t)i + 1;
        sl->hash = (uint32_t)h;
    }
    ix->base = NULL;
    return ix;
error:
    treeobj_index_destroy (ix);
    return NULL;
}

void treeobj_index_destroy (treeobj_index_t *ix)
{
    if (ix) {
        int saved_errno = errno;
        free (ix->entries);
        free (ix->slots);
        free (ix);
        errno = saved_errno;
    }
}

int treeobj_index_find (const treeobj_index_t *ix, const char *s, const char *name,
                        size_t *off, size_t *vlen)
{
    if (!ix || !s || !name || !off || !vlen) {
        errno = EINVAL;
        return -1;
    }
    size_t nlen = strlen (name);
    const struct ix_slot *sl = probe (ix, s, name, nlen, hashmap_hash (name, nlen));
    if (sl->entry == 0)
        return 0;
    *off = ix->entries[sl->entry - 1].voff;
    *vlen = ix->entries[sl->entry - 1].vlen;
    return 1;
}

size_t treeobj_index_count (const treeobj_index_t *ix)
{
    return ix ? ix->count : 0;
}

size_t treeobj_index_bytes (const treeobj_index_t *ix)
{
    if (!ix)
        return 0;
    return sizeof (*ix) + ix->cap * sizeof (ix->entries[0])
           + ix->nslots * sizeof (ix->slots[0]);
}
