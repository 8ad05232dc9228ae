/* blobcache.c - see blobcache.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/list.h"
#include "blobcache.h"

struct node {
    struct list_node lru;
    struct list_node dirtyq;
    struct blobentry e;
    bool on_lru;
    bool on_dirtyq;
};

struct blobcache {
    hashmap_t *map;
    struct list_node lru;   /* clean valid entries, oldest first */
    size_t bytes;
    size_t max_bytes;
    size_t dirty;
    size_t flushing;
    size_t pending;
    struct list_node dirtyq;    /* dirty entries, oldest first */
    uint64_t seq;
};

static struct node *node_of (struct blobentry *e)
{
    return (struct node *)((char *)e - offsetof (struct node, e));
}

static void node_free (void *arg)
{
    struct node *n = arg;
    if (n) {
        free (n->e.data);
        for (int i = 0; i < n->e.nwaiters; i++)
            canopy_msg_decref (n->e.waiters[i]);
        free (n->e.waiters);
        free (n->e.ops);
        free (n);
    }
}

blobcache_t *blobcache_create (size_t max_bytes)
{
    blobcache_t *bc = calloc (1, sizeof (*bc));
    if (!bc) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(bc->map = hashmap_create (node_free))) {
        free (bc);
        return NULL;
    }
    list_init (&bc->lru);
    list_init (&bc->dirtyq);
    bc->max_bytes = max_bytes;
    return bc;
}

void blobcache_destroy (blobcache_t *bc)
{
    if (bc) {
        int saved_errno = errno;
        hashmap_destroy (bc->map);
        free (bc);
        errno = saved_errno;
    }
}

struct blobentry *blobcache_lookup (blobcache_t *bc, const char *ref)
{
    struct node *n = hashmap_lookup (bc->map, ref);
    return n ? &n->e : NULL;
}

static struct node *node_create (blobcache_t *bc, const char *ref)
{
    struct node *n = calloc (1, sizeof (*n));
    if (!n) {
        errno = ENOMEM;
        return NULL;
    }
    list_node_init (&n->lru);
    list_node_init (&n->dirtyq);
    strcpy (n->e.ref, ref);
    if (hashmap_insert (bc->map, n->e.ref, n) < 0) {
        free (n);
        return NULL;
    }
    return n;
}

struct blobentry *blobcache_add_pending (blobcache_t *bc, const char *ref)
{
    struct node *n;
    if (blobref_validate (ref) < 0)
        return NULL;
    if (hashmap_lookup (bc->map, ref)) {
        errno = EEXIST;
        return NULL;
    }
    if (!(n = node_create (bc, ref)))
        return NULL;
    n->e.load_pending = true;
    bc->pending++;
    return &n->e;
}

static void lru_update (blobcache_t *bc, struct node *n)
{
    bool want = n->e.valid && !n->e.dirty;
    if (n->on_lru)
        list_del (&n->lru);
    n->on_lru = false;
    if (want) {
        list_add_tail (&bc->lru, &n->lru);
        n->on_lru = true;
    }
}

int blobcache_fill (blobcache_t *bc, struct blobentry *e, const void *data,
                    size_t len, bool dirty)
{
    struct node *n = node_of (e);
    void *cpy;

    if (e->valid)
        return 0;
    if (!(cpy = malloc (len ? len : 1))) {
        errno = ENOMEM;
        return -1;
    }
    if (len)
        memcpy (cpy, data, len);
    e->data = cpy;
    e->len = len;
    e->valid = true;
    if (e->load_pending) {
        e->load_pending = false;
        bc->pending--;
    }
    e->dirty = dirty;
    if (dirty) {
        bc->dirty++;
        e->seq = ++bc->seq;
        list_add_tail (&bc->dirtyq, &n->dirtyq);
        n->on_dirtyq = true;
    }
    bc->bytes += len;
    lru_update (bc, n);
    return 0;
}

struct blobentry *blobcache_insert (blobcache_t *bc, const void *data, size_t len,
                                    bool dirty, bool *added)
{
    char ref[BLOBREF_MAX];

    if (blobref_hash (data, len, ref, sizeof (ref)) < 0)
        return NULL;
    return blobcache_insert_ref (bc, ref, data, len, dirty, added);
}

struct blobentry *blobcache_insert_ref (blobcache_t *bc, const char *ref,
                                        const void *data, size_t len,
                                        bool dirty, bool *added)
{
    struct blobentry *e;
    struct node *n;

    if ((e = blobcache_lookup (bc, ref)) && e->valid) {
        if (added)
            *added = false;
        blobcache_touch (bc, e);
        return e;
    }
    if (!e) {
        if (!(n = node_create (bc, ref)))
            return NULL;
        e = &n->e;
    }
    if (blobcache_fill (bc, e, data, len, dirty) < 0)
        return NULL;
    if (added)
        *added = true;
    return e;
}

static void dirtyq_del (blobcache_t *bc, struct node *n)
{
    if (n->on_dirtyq) {
        list_del (&n->dirtyq);
        n->on_dirtyq = false;
    }
    if (n->e.flushing) {
        n->e.flushing = false;
        bc->flushing--;
    }
}

void blobcache_mark_clean (blobcache_t *bc, struct blobentry *e)
{
    if (e->dirty) {
        struct node *n = node_of (e);
        e->dirty = false;
        bc->dirty--;
        dirtyq_del (bc, n);
        lru_update (bc, n);
    }
}

void blobcache_touch (blobcache_t *bc, struct blobentry *e)
{
    struct node *n = node_of (e);
    if (n->on_lru) {
        list_del (&n->lru);
        list_add_tail (&bc->lru, &n->lru);
    }
}

int blobcache_park (struct blobentry *e, const canopy_msg_t *msg)
{
    canopy_msg_t **v = realloc (e->waiters, (e->nwaiters + 1) * sizeof (*v));
    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    e->waiters = v;
    e->waiters[e->nwaiters++] = canopy_msg_incref ((canopy_msg_t *)msg);
    return 0;
}

canopy_msg_t **blobcache_take_waiters (struct blobentry *e, int *count)
{
    canopy_msg_t **v = e->waiters;
    *count = e->nwaiters;
    e->waiters = NULL;
    e->nwaiters = 0;
    return v;
}

int blobcache_park_op (struct blobentry *e, void *op)
{
    void **v = realloc (e->ops, (e->nops + 1) * sizeof (*v));
    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    e->ops = v;
    e->ops[e->nops++] = op;
    return 0;
}

void **blobcache_take_ops (struct blobentry *e, int *count)
{
    void **v = e->ops;
    *count = e->nops;
    e->ops = NULL;
    e->nops = 0;
    return v;
}

void blobcache_remove (blobcache_t *bc, struct blobentry *e)
{
    struct node *n = node_of (e);
    if (n->on_lru)
        list_del (&n->lru);
    if (e->valid)
        bc->bytes -= e->len;
    if (e->dirty)
        bc->dirty--;
    if (e->load_pending)
        bc->pending--;
    dirtyq_del (bc, n);
    (void)hashmap_delete (bc->map, e->ref);
}

int blobcache_purge (blobcache_t *bc, bool all)
{
    int count = 0;
    while (!list_empty (&bc->lru) && (all || bc->bytes > bc->max_bytes)) {
        struct node *n = list_entry (bc->lru.next, struct node, lru);
        if (n->e.nwaiters > 0 || n->e.nops > 0)
            break;
        blobcache_remove (bc, &n->e);
        count++;
    }
    return count;
}

void blobcache_drain_waiters (blobcache_t *bc,
                              void (*fn)(const canopy_msg_t *msg, void *arg),
                              void *arg)
{
    void *val;
    for (const char *k = hashmap_first (bc->map, &val); k;
         k = hashmap_next (bc->map, &val)) {
        struct node *n = val;
        for (int i = 0; i < n->e.nwaiters; i++) {
            fn (n->e.waiters[i], arg);
            canopy_msg_decref (n->e.waiters[i]);
        }
        free (n->e.waiters);
        n->e.waiters = NULL;
        n->e.nwaiters = 0;
    }
}

void blobcache_drain_ops (blobcache_t *bc, void (*fn)(void *op, void *arg),
                          void *arg)
{
    void *val;
    for (const char *k = hashmap_first (bc->map, &val); k;
         k = hashmap_next (bc->map, &val)) {
        struct node *n = val;
        int count;
        void **v = blobcache_take_ops (&n->e, &count);
        for (int i = 0; i < count; i++)
            fn (v[i], arg);
        free (v);
    }
}

void blobcache_set_max (blobcache_t *bc, size_t max_bytes)
{
    bc->max_bytes = max_bytes;
}

void blobcache_stats (blobcache_t *bc, struct blobcache_stats *st)
{
    st->count = hashmap_size (bc->map);
    st->bytes = bc->bytes;
    st->dirty = bc->dirty;
    st->pending = bc->pending;
    st->max_bytes = bc->max_bytes;
}

int blobcache_take_dirty (blobcache_t *bc, struct blobentry **v, int max,
                          size_t max_bytes)
{
    struct list_node *pos;
    int n = 0;
    size_t bytes = 0;

    list_for_each (pos, &bc->dirtyq) {
        struct node *nd = list_entry (pos, struct node, dirtyq);
        if (n >= max)
            break;
        if (nd->e.flushing)
            continue;
        if (n > 0 && bytes + nd->e.len > max_bytes)
            break;
        nd->e.flushing = true;
        bc->flushing++;
        bytes += nd->e.len;
        v[n++] = &nd->e;
    }
    return n;
}

void blobcache_unflush (blobcache_t *bc, struct blobentry *e)
{
    if (e->flushing) {
        e->flushing = false;
        bc->flushing--;
    }
}

uint64_t blobcache_seq (blobcache_t *bc)
{
    return bc->seq;
}

uint64_t blobcache_clean_through (blobcache_t *bc)
{
    if (list_empty (&bc->dirtyq))
        return bc->seq;
    struct node *n = list_entry (bc->dirtyq.next, struct node, dirtyq);
    return n->e.seq - 1;
}

size_t blobcache_backlog (blobcache_t *bc)
{
    return bc->dirty - bc->flushing;
}
