/* kvs_shm.h - the KVS read cache in shared memory: a broker's KVS module
 * publishes its current root and the tree objects it holds in a segment
 * that its local clients map read-only, and a client resolves a plain
 * value get there, on its own core, without a message.
 *
 * Why: even on the direct channel (direct.h) a get is a request and a
 * response, two wake-ups of other threads, and when the ranks of a node
 * read at once their gets queue at the one KVS thread.  A rank that finds
 * the objects in the segment reads them where they lie, as PMIx's
 * shared-memory datastore lets ranks read what their server holds.
 *
 * Layout (native byte order, offsets from the segment's start, all
 * 8-aligned):
 *   header   magic, format, the sizes and offsets below (fixed when the
 *            segment is formatted), then what changes: seq, closed,
 *            resets, version, filled and rootref
 *   table    nslots slots {hash, off}: open addressing, linear probing,
 *            keyed by the first 16 hex digits of a blobref; off 0: empty
 *   arena    records {bytes, len, ref[BLOBREF_MAX], data[len]}, appended
 *            one after another
 * Objects are blobs by ref (a directory's encoding, an hdir's, a value's
 * chunk), so a record never changes once its slot points to it, and one
 * ref means one content whatever it is used as.  When the arena or the
 * table (half full) has no room for the next object the writer starts
 * over (a reset): the table is emptied and the arena reused from its
 * start.
 *
 * Concurrency: one writer (the KVS module's thread) and any number of
 * readers (client processes).  A seqlock: the writer makes seq odd before
 * it changes anything a reader may be reading (a reset, the root, the
 * closing) and even again after; a reader notes seq before it starts and
 * keeps its result only if seq is the same even value once it has copied
 * the result out, else it tries again (three times) and then misses.
 * Appending a record changes nothing a reader reads: the record is
 * written before its slot's off is stored (release).  Readers never trust
 * the segment: every offset and length is checked against it before use
 * and every loop is bounded, so a read torn by the writer is a miss or a
 * retry, never a fault.
 *
 * What a reader resolves: a plain value (val inline, or valref: its chunks
 * concatenated) at a key of the current root, through plain directories
 * and hdirs, when every object on the way is in the segment.  Anything
 * else is a miss and the caller asks the KVS (kvs.lookup): the root
 * itself, a directory, a symlink on the way, a missing key (whose error
 * the KVS words), an object not published, a version older than the
 * caller's floor.  A miss is never an answer.
 *
 * Ownership and threads: the writer and reader structures are private to
 * their thread; the memory they work on belongs to the caller, which
 * keeps it mapped while they exist.
 */
#ifndef CANOPY_KVS_SHM_H
#define CANOPY_KVS_SHM_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* The smallest segment kvs_shm_format accepts. */
#define KVS_SHM_MIN_SIZE (64 * 1024)

/* Writer */

typedef struct kvs_shm kvs_shm_t;

/* Format the size bytes at mem (8-aligned) as an empty segment with no
 * root yet (version -1), and return its writer.  'zeroed': the memory is
 * known to be all zeros (a new memory file), so the table is not written
 * (its pages stay unallocated until used).  NULL with errno EINVAL (size
 * below KVS_SHM_MIN_SIZE, or at least 2^40) or ENOMEM.
 */
kvs_shm_t *kvs_shm_format (void *mem, size_t size, bool zeroed);
/* Free the writer; the segment's memory is the caller's.  Accepts NULL;
 * keeps errno.
 */
void kvs_shm_destroy (kvs_shm_t *w);

/* Publish the blob 'ref' (trusted to be the hash of data[0..len-1]).
 * Returns 1 if it was added (maybe after a reset), 0 if it was there
 * already, or -1 with errno EINVAL (ref malformed) or EFBIG (it would take
 * more than a quarter of the arena: not published).
 */
int kvs_shm_put (kvs_shm_t *w, const char *ref, const void *data, size_t len);
bool kvs_shm_has (kvs_shm_t *w, const char *ref);
/* Make 'rootref' at 'version' the root readers resolve keys from. */
void kvs_shm_set_root (kvs_shm_t *w, int version, const char *rootref);
/* Tell readers that the first 'bytes' of the segment are in memory (its
 * owner wrote them or made them resident), so that they map those pages
 * in one call instead of taking a page fault at each (kvs_shm.c's design
 * notes).  kvs_shm_put moves it past each record it writes; the owner
 * calls it for the table once it has made that resident.  It only grows;
 * beyond the segment's size it is the size.  Accepts NULL.
 */
void kvs_shm_set_filled (kvs_shm_t *w, size_t bytes);
/* Tell readers the segment is no longer kept up to date: they stop using
 * it (kvs_shm_get returns KVS_SHM_CLOSED).
 */
void kvs_shm_close (kvs_shm_t *w);

struct kvs_shm_stats {
    size_t size;            /* the segment */
    size_t arena;           /* bytes for records */
    size_t used;            /* ... in use since the last reset */
    size_t end;             /* the segment's offset just past the last
                               record: what the writer has written in */
    size_t objects;         /* records since the last reset */
    uint64_t puts;          /* records ever added */
    uint64_t resets;
    uint64_t too_big;       /* kvs_shm_put EFBIG */
};
void kvs_shm_stats (const kvs_shm_t *w, struct kvs_shm_stats *st);

/* Reader */

typedef struct kvs_shm_reader kvs_shm_reader_t;

/* A reader of the segment mapped at mem (size bytes, as the writer
 * formatted it).  NULL with errno EPROTO (not a segment of this format,
 * or its header does not fit 'size') or ENOMEM.
 */
kvs_shm_reader_t *kvs_shm_reader_create (const void *mem, size_t size);
void kvs_shm_reader_destroy (kvs_shm_reader_t *r);

enum {
    KVS_SHM_MISS = 0,       /* ask the KVS */
    KVS_SHM_HIT = 1,        /* *data, *len: the value */
    KVS_SHM_CLOSED = 2,     /* the writer is gone: stop using the segment */
};

/* The value at 'key' in the current root, if that root's version is at
 * least min_version.  KVS_SHM_HIT with *data a malloc'd copy (one NUL
 * byte after the *len bytes, not counted), KVS_SHM_MISS, KVS_SHM_CLOSED,
 * or -1 with errno ENOMEM or EINVAL (NULL arguments).
 */
int kvs_shm_get (kvs_shm_reader_t *r, const char *key, int min_version,
                 void **data, size_t *len);
/* The version of the segment's current root (-1: none yet). */
int kvs_shm_version (const kvs_shm_reader_t *r);

struct kvs_shm_reader_stats {
    uint64_t hits;
    uint64_t misses;
    uint64_t retries;       /* reads torn by the writer, tried again */
    uint64_t levels_skipped;    /* directories not walked again (last path) */
};
void kvs_shm_reader_stats (const kvs_shm_reader_t *r,
                           struct kvs_shm_reader_stats *st);

#endif
