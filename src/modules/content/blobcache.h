/* blobcache.h - the content module's cache of blobs by blobref.
 *
 * An entry is either valid (holds the blob's bytes) or pending (a load is
 * in flight; callers park requests on it).  A valid entry may be dirty:
 * not yet safe upstream (ranks > 0: the parent has not acknowledged the
 * store; rank 0: not yet in the backing store), and dirty entries are
 * never expired.  Clean valid entries sit on an LRU list and are dropped,
 * oldest first, when the cache holds more than its byte limit.
 *
 * Dirty entries are also kept in the order they became dirty, each with a
 * sequence number, for rank 0's write-back: a batch of them is taken (they
 * are then 'flushing', still dirty) and marked clean when the backing store
 * has them, or given back if the write failed.  blobcache_clean_through
 * tells the largest sequence number up to which everything is clean, so a
 * flush request can wait for exactly the blobs stored before it.
 *
 * Ownership: the cache owns entries and their bytes; pointers returned by
 * lookup stay valid until the entry is removed or the cache purged.
 */
#ifndef CANOPY_CONTENT_BLOBCACHE_H
#define CANOPY_CONTENT_BLOBCACHE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <canopy/message.h>
#include "src/common/libutil/blobref.h"

typedef struct blobcache blobcache_t;

struct blobentry {
    char ref[BLOBREF_MAX];
    void *data;
    size_t len;
    bool valid;
    bool dirty;
    bool load_pending;
    bool flushing;              /* dirty, in a write-back batch */
    uint64_t seq;               /* when it became dirty */
    canopy_msg_t **waiters;     /* requests waiting for this entry */
    int nwaiters;
    void **ops;                 /* the caller's other waiters (batched */
    int nops;                   /* loads): opaque, not owned */
    void *lru;                  /* private */
};

blobcache_t *blobcache_create (size_t max_bytes);
void blobcache_destroy (blobcache_t *bc);
struct blobentry *blobcache_lookup (blobcache_t *bc, const char *ref);
/* Create a pending entry (no data yet).  EEXIST if present. */
struct blobentry *blobcache_add_pending (blobcache_t *bc, const char *ref);
/* Give an entry its bytes (copied); it becomes valid.  dirty as given. */
int blobcache_fill (blobcache_t *bc, struct blobentry *e, const void *data,
                    size_t len, bool dirty);
/* Insert or find: returns the entry for data's hash, valid; *added tells
 * whether it was new.  A new entry is dirty if 'dirty'.
 */
struct blobentry *blobcache_insert (blobcache_t *bc, const void *data, size_t len,
                                    bool dirty, bool *added);
/* The same with the ref already known (the caller vouches for it). */
struct blobentry *blobcache_insert_ref (blobcache_t *bc, const char *ref,
                                        const void *data, size_t len,
                                        bool dirty, bool *added);
void blobcache_mark_clean (blobcache_t *bc, struct blobentry *e);
void blobcache_touch (blobcache_t *bc, struct blobentry *e);
int blobcache_park (struct blobentry *e, const canopy_msg_t *msg);
/* Take the waiters (caller owns the array and its references). */
canopy_msg_t **blobcache_take_waiters (struct blobentry *e, int *count);
/* Park an opaque waiter (a batched load waiting for several entries):
 * -1 with ENOMEM.  Take them back (the caller owns the array; NULL if
 * none).  An entry with ops parked is not purged.
 */
int blobcache_park_op (struct blobentry *e, void *op);
void **blobcache_take_ops (struct blobentry *e, int *count);
void blobcache_remove (blobcache_t *bc, struct blobentry *e);
/* Drop clean entries until the cache is within its limit (all clean
 * entries if 'all').  Returns the number dropped.
 */
int blobcache_purge (blobcache_t *bc, bool all);
void blobcache_set_max (blobcache_t *bc, size_t max_bytes);
/* Hand every parked request to fn (which answers it); the cache drops its
 * references afterwards.  For shutdown: nobody is left waiting.
 */
void blobcache_drain_waiters (blobcache_t *bc,
                              void (*fn)(const canopy_msg_t *msg, void *arg),
                              void *arg);
/* The same for parked ops: fn is called once per parking (an op parked
 * on three entries, three times).
 */
void blobcache_drain_ops (blobcache_t *bc, void (*fn)(void *op, void *arg),
                          void *arg);

struct blobcache_stats {
    size_t count;
    size_t bytes;
    size_t dirty;
    size_t pending;
    size_t max_bytes;
};
void blobcache_stats (blobcache_t *bc, struct blobcache_stats *st);

/* Write-back.  Take up to 'max' dirty entries that are not flushing yet,
 * oldest first, stopping before max_bytes is passed (at least one entry
 * is taken if any); they become flushing.  Returns the count.
 */
int blobcache_take_dirty (blobcache_t *bc, struct blobentry **v, int max,
                          size_t max_bytes);
/* A batch failed: the entry is dirty and may be taken again. */
void blobcache_unflush (blobcache_t *bc, struct blobentry *e);
/* Sequence number of the last entry that became dirty (0: none yet). */
uint64_t blobcache_seq (blobcache_t *bc);
/* Every entry whose seq is <= this is clean. */
uint64_t blobcache_clean_through (blobcache_t *bc);
/* Dirty entries that are not flushing (the write-back backlog). */
size_t blobcache_backlog (blobcache_t *bc);

#endif
