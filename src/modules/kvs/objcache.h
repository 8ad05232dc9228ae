/* objcache.h - the KVS module's cache of tree objects and value blobs.
 *
 * Entries are keyed by blobref and hold either a parsed directory (a "dir"
 * tree object, json_t; or its encoding, decoded when first asked for) or
 * raw bytes (a value chunk).  A missing entry is
 * faulted in by the module from the content service; while the load is in
 * flight the entry is pending and operations wait on it with a callback.
 * Exactly one load is issued per entry, however many operations wait.
 *
 * Expiry: entries not used for 'max_age' seconds, or the least recently
 * used ones past 'max_bytes', are dropped by objcache_expire (never
 * pending ones, nor one made valid while waiters still wait for its
 * load: objcache_clear keeps those too).
 *
 * Ownership: the cache holds a reference to each json_t and owns raw bytes
 * (its own copy, or a reference to the message whose payload holds them:
 * the _shared puts, which save a copy of every value a setroot event
 * primes; that message's payload then lives as long as any entry made
 * from it); borrowed pointers stay valid until the next expire/clear.
 */
#ifndef CANOPY_KVS_OBJCACHE_H
#define CANOPY_KVS_OBJCACHE_H

#include <stddef.h>
#include <stdbool.h>
#include <jansson.h>
#include <canopy/message.h>

typedef struct objcache objcache_t;

enum objtype { OBJ_DIR = 1, OBJ_RAW = 2 };

typedef void (*objcache_wait_f)(int errnum, void *arg);

objcache_t *objcache_create (size_t max_bytes, double max_age);
void objcache_destroy (objcache_t *c);

/* Borrowed directory, or NULL if not (yet) cached. */
json_t *objcache_get_dir (objcache_t *c, const char *ref);
/* The cheapest way to the entry 'name' of the cached directory 'ref':
 * - 1: *dir is the decoded directory (borrowed, a dir or an hdir, as
 *   objcache_get_dir returns it); the caller looks 'name' up in it;
 * - 2: the directory is still encoded (primed, see below) and 'name' was
 *   found without decoding it, by a scan of its text the first time
 *   (treeobj_scan.h) and with an index of it from the second on
 *   (treeobj_index.h): *entry is a new reference to the decoded and
 *   validated entry, or NULL if the directory has no such name;
 * - 0: not cached (or not a valid dir: dropped), as objcache_get_dir.
 * 'name' NULL always decodes, as does a text the scan declines.
 */
int objcache_find (objcache_t *c, const char *ref, const char *name,
                   json_t **dir, json_t **entry);
int objcache_get_raw (objcache_t *c, const char *ref, const void **data, size_t *len);
/* The encoding of a directory cached still encoded (borrowed, valid as
 * objcache_get_raw's), without using it (no LRU change, no decode).
 * -1 with ENOENT if the entry is absent, pending or decoded.
 */
int objcache_get_encoded (objcache_t *c, const char *ref, const void **data,
                          size_t *len);
bool objcache_has (objcache_t *c, enum objtype type, const char *ref);

/* A decoded dir is accounted at its encoded size plus this many bytes
 * an entry: what jansson holds for one (objcache.c).
 */
enum { OBJCACHE_DECODED_ENTRY_BYTES = 640 };

/* Add a loaded or newly made object (dir: a reference is taken; it is
 * accounted at size plus OBJCACHE_DECODED_ENTRY_BYTES an entry).
 */
int objcache_put_dir (objcache_t *c, const char *ref, json_t *dir, size_t size);
int objcache_put_raw (objcache_t *c, const char *ref, const void *data, size_t len);
/* Add a directory still encoded (its blob's len > 0 bytes, copied, or,
 * with 'owner', left in owner's payload, which the entry keeps a
 * reference to; the ref trusted): the first objcache_get_dir of ref
 * decodes it.  If it is not a dir or hdir then, the entry is dropped and
 * that call returns NULL, so the caller loads it as if it had never been
 * cached.  This is how a setroot event primes directories: only those a
 * broker reads are ever parsed.  Returns 0 (also if ref is cached
 * already), or -1 with EINVAL or ENOMEM (nothing cached).
 */
int objcache_put_dir_encoded (objcache_t *c, const char *ref, const void *data,
                              size_t len, const canopy_msg_t *owner);
/* Add every value of the blob records (blobrecs.h) that fill owner's
 * payload from byte 'off' on, without a copy: each entry points into the
 * payload and keeps a reference to owner (an empty value is copied:
 * nothing to share); refs trusted.  A kvs.prime event's values.  The
 * records are all checked first, so a malformed buffer caches nothing.
 * Returns how many were cached (or were already), or -1 with EINVAL or
 * EPROTO and a sentence.
 */
/* One value left in owner's payload as objcache_put_blobrecs leaves each
 * (data points into that payload; an empty value is copied).  Returns 0
 * (also if ref is cached already), or -1 with EINVAL or ENOMEM.
 */
int objcache_put_raw_shared (objcache_t *c, const char *ref, const void *data,
                             size_t len, const canopy_msg_t *owner);
int objcache_put_blobrecs (objcache_t *c, const canopy_msg_t *owner, size_t off,
                           canopy_error_t *error);

/* Wait for 'ref'.  Returns 1 if the caller must start the load (first
 * waiter), 0 if a load is already in flight, -1 on error (EEXIST: the
 * object is cached; ENOMEM).  The callback runs once, from
 * objcache_load_done, unless the wait is cancelled.
 */
int objcache_wait (objcache_t *c, const char *ref, enum objtype type,
                   objcache_wait_f cb, void *arg);
/* Withdraw one wait (the first one with this cb and arg): its callback
 * will not run.  A pending entry left without waiters is forgotten, so
 * the next wait starts a new load.  Used when starting the load failed.
 */
void objcache_wait_cancel (objcache_t *c, const char *ref, enum objtype type,
                           objcache_wait_f cb, void *arg);
/* A load finished: on success the object was put first; run the waiters
 * (with errnum on failure, then forget the pending entry).
 */
void objcache_load_done (objcache_t *c, enum objtype type, const char *ref,
                         int errnum);

int objcache_expire (objcache_t *c, double now);
int objcache_clear (objcache_t *c);

struct objcache_stats {
    size_t count;
    size_t bytes;
    size_t pending;
    size_t waiters;
    size_t encoded;     /* dirs put encoded and not asked for yet */
    size_t scans;       /* objcache_find answers from encoded dirs */
    size_t indexed;     /* encoded dirs indexed (read more than once) */
    size_t decodes;     /* encoded dirs decoded */
};
void objcache_stats (objcache_t *c, struct objcache_stats *st);

#endif
