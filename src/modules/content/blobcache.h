/* blobcache.h - the content module's cache of blobs by blobref.
 *
 * An entry is either valid (holds the blob's bytes) or pending (a load is
 * in flight; callers park requests on it).  A valid entry may be dirty:
 * not yet safe upstream (ranks > 0: the parent has not acknowledged the
 * store; rank 0: not yet in the backing store), and dirty entries are
 * never expired.  Clean valid entries sit on an LRU list and are dropped,
 * oldest first, when the cache holds more than its byte limit.
 *
 * Ownership: the cache owns entries and their bytes; pointers returned by
 * lookup stay valid until the entry is removed or the cache purged.
 */
#ifndef CANOPY_CONTENT_BLOBCACHE_H
#define CANOPY_CONTENT_BLOBCACHE_H

#include <stddef.h>
#include <stdbool.h>
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
    canopy_msg_t **waiters;     /* requests waiting for this entry */
    int nwaiters;
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

struct blobcache_stats {
    size_t count;
    size_t bytes;
    size_t dirty;
    size_t pending;
    size_t max_bytes;
};
void blobcache_stats (blobcache_t *bc, struct blobcache_stats *st);
/* Iterate dirty entries (for flushing). */
struct blobentry *blobcache_first_dirty (blobcache_t *bc);
struct blobentry *blobcache_next_dirty (blobcache_t *bc);

#endif
