/* canopy/kvs.h - the canopy KVS client API.
 *
 * Keys are dotted paths ("a.b.c"); "." is the root directory.  A path
 * component may hold any printable character except '.', including the
 * ones MPI libraries use ('-', '[', ']', '/', digits).  Values are bytes;
 * the JSON and typed helpers store text encodings (kvs_put_int stores
 * "42", kvs_put of a JSON value stores its compact JSON text).
 *
 * Writes are write-back: kvs_put and friends only record the operation in
 * the handle's pending transaction (no message is sent).  kvs_commit sends
 * it as one atomic transaction; kvs_fence contributes it to a collective
 * commit that completes when nprocs callers have joined the same name.
 * Both return once the caller's own broker has the new root
 * (read-your-writes).  Each thread needs its own handle.
 *
 * Errors (errno): ENOENT (no such key), EISDIR (a directory where a value
 * was expected), ENOTDIR (a value where a directory was expected), EINVAL
 * (bad key or argument; mismatched fence nprocs/flags), ELOOP (symlink
 * cycle), EFBIG (value or transaction too large), ENAMETOOLONG (key too
 * long), EPROTO (value does not decode as asked), ETIMEDOUT (fence
 * timeout), ECONNRESET (a fence participant disconnected), E2BIG (a
 * transaction with too many operations, or a fence whose merged
 * contributions are too large to relay in one message), EAGAIN (too many
 * open fences for this user), EHOSTUNREACH (a broker was lost while the
 * fence was open).  Error text from the service is available through
 * kvs_errstr().
 */
#ifndef CANOPY_KVS_H
#define CANOPY_KVS_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "handle.h"
#include "future.h"

#ifdef __cplusplus
extern "C" {
#endif

enum kvs_limits {
    KVS_MAX_KEY = 4096,         /* bytes in a key */
    KVS_MAX_COMPONENT = 255,    /* bytes in one path component */
    KVS_INLINE_MAX = 64,        /* values up to this many bytes are inline */
    KVS_CHUNK_SIZE = 65536,     /* larger values are cut into chunks */
};

enum kvs_flags {
    KVS_READDIR = 1,        /* lookup: the key is a directory */
    KVS_READLINK = 2,       /* lookup: don't follow a final symlink */
    KVS_TREEOBJ = 4,        /* lookup: return the tree object itself */
    KVS_NO_MERGE = 8,       /* commit: apply alone, not merged with others */
    KVS_SYNC = 16,          /* commit/fence: return once durable */
    KVS_WATCH_INITIAL = 32, /* watch stream: report what the key holds
                               now first (kvs_watch always does) */
};

/* Text of the last error reported by the service on this handle (or NULL). */
const char *kvs_errstr (canopy_t *h);

/* Send this handle's KVS requests to the broker of rank 'rank' (routed
 * over the tree) instead of the local one.  CANOPY_NODEID_ANY restores
 * the default.
 */
int kvs_set_rank (canopy_t *h, uint32_t rank);

/* Write-back operations (no round trip). */
int kvs_put (canopy_t *h, const char *key, json_t *val);
int kvs_put_string (canopy_t *h, const char *key, const char *val);
int kvs_put_int (canopy_t *h, const char *key, int val);
int kvs_put_int64 (canopy_t *h, const char *key, int64_t val);
int kvs_put_double (canopy_t *h, const char *key, double val);
int kvs_put_boolean (canopy_t *h, const char *key, bool val);
int kvs_put_raw (canopy_t *h, const char *key, const void *data, size_t len);
int kvs_unlink (canopy_t *h, const char *key);
int kvs_mkdir (canopy_t *h, const char *key);
int kvs_symlink (canopy_t *h, const char *key, const char *target);
/* Drop the handle's pending (uncommitted) operations. */
void kvs_discard (canopy_t *h);
/* Number of pending operations. */
int kvs_pending (canopy_t *h);

/* Consistency points.
 *
 * Fence names: all nprocs participants of a fence use the same name,
 * nprocs and flags.  Once a fence has finished (succeeded or failed) its
 * name stays taken for 300 seconds (5 minutes, FINISHED_KEEP in the KVS
 * module's fence.c; forgotten within a second after that, by rank 0's
 * timer; a restart of rank 0's KVS forgets them at once): a contribution
 * under that name in that
 * time is a late joiner and fails, with EINVAL ("fence already complete:
 * too many participants") if the fence succeeded, or with the fence's own
 * error.  Use a fresh name for every fence (e.g. with a run or iteration
 * number in it).  kvs_commit needs no name: it is a fence of one with a
 * unique name.
 */
int kvs_commit (canopy_t *h, int flags);
int kvs_fence (canopy_t *h, const char *name, int nprocs, int flags);
/* Fail a fence for every participant (e.g. a launcher whose task died). */
int kvs_fence_abort (canopy_t *h, const char *name, int errnum);

/* Reads.  Results are new objects/buffers owned by the caller. */
int kvs_get (canopy_t *h, const char *key, json_t **val);
int kvs_get_string (canopy_t *h, const char *key, char **val);
int kvs_get_int (canopy_t *h, const char *key, int *val);
int kvs_get_int64 (canopy_t *h, const char *key, int64_t *val);
int kvs_get_double (canopy_t *h, const char *key, double *val);
int kvs_get_boolean (canopy_t *h, const char *key, bool *val);
int kvs_get_raw (canopy_t *h, const char *key, void **data, size_t *len);
int kvs_readlink (canopy_t *h, const char *key, char **target);

/* The gets above (kvs_get and the typed getters, kvs_get_raw) are read
 * from the local broker's shared read cache when the handle may read the
 * whole namespace (the instance owner, or a guest with kvs.guest-access
 * read or own) and reads from the local broker: the KVS module publishes its
 * root and the objects it holds in memory its local clients map, and a
 * get found there sends no message (a miss asks the KVS as always; see
 * kvs.shm-size in canopy-broker(8); CANOPY_KVS_SHM=0 turns it off for a
 * process).  Results are those of the same get asked of the KVS at that
 * moment, with read-your-writes: nothing older than a version the handle
 * was answered is read.  kvs_read_stats counts this handle's gets:
 * answered from the cache (shm_hits), not found there (shm_misses, then
 * asked), reads torn by a concurrent update and tried again
 * (shm_retries), sent to the KVS (rpc_gets, misses included), and how
 * often the handle attached to a cache (attaches; attached: now).
 * Returns 0, or -1 with EINVAL.
 * A handle attaches to the cache on its first get, which waits for it;
 * kvs_read_attach attaches now instead (say, while a program sets up, so
 * that no timed get pays for it).  Returns 0 once attached, or -1 with
 * errno: EINVAL, ENOENT (no cache to attach to: not a local broker's
 * handle, kvs_set_rank in effect, CANOPY_KVS_SHM=0, or no KVS module
 * sharing one; gets ask the KVS), EPERM (a guest without read access),
 * ETIMEDOUT.
 */
struct kvs_read_stats {
    uint64_t shm_hits;
    uint64_t shm_misses;
    uint64_t shm_retries;
    uint64_t rpc_gets;
    uint64_t attaches;
    bool attached;
};
int kvs_read_stats (canopy_t *h, struct kvs_read_stats *st);
int kvs_read_attach (canopy_t *h);

/* Directories. */
typedef struct kvsdir kvsdir_t;
typedef struct kvsitr kvsitr_t;
int kvs_get_dir (canopy_t *h, const char *key, kvsdir_t **dir);
void kvsdir_destroy (kvsdir_t *dir);
const char *kvsdir_key (const kvsdir_t *dir);
int kvsdir_count (const kvsdir_t *dir);
bool kvsdir_exists (const kvsdir_t *dir, const char *name);
bool kvsdir_isdir (const kvsdir_t *dir, const char *name);
bool kvsdir_issymlink (const kvsdir_t *dir, const char *name);
/* Full key of an entry (caller frees). */
char *kvsdir_key_at (const kvsdir_t *dir, const char *name);
/* Iterate entry names in sorted order. */
kvsitr_t *kvsitr_create (const kvsdir_t *dir);
const char *kvsitr_next (kvsitr_t *itr);
void kvsitr_rewind (kvsitr_t *itr);
void kvsitr_destroy (kvsitr_t *itr);

/* Versions (causal consistency across processes). */
int kvs_get_version (canopy_t *h, int *version);
int kvs_wait_version (canopy_t *h, int version);

/* Watch a key: cb is called from the handle's reactor with the current
 * value first, then each time the value changes (val NULL: the key does
 * not exist; errnum non-zero: the watch failed and has ended).  val is
 * borrowed for the call: the value decoded as JSON, or a JSON string of
 * its bytes if they are not JSON.  Return non-zero from cb to stop
 * watching.  If the key is a directory, val is its listing, a "dir" tree
 * object ({"data": {name: entry, ...}, "type": "dir", "ver": 1}, what
 * kvs_get_dir reads; subdirectories are "dirref" entries), and cb is
 * called whenever anything below the directory changes, however deep.
 * Symlinks on the way are followed.  The key is watched from the root
 * the handle's broker has: a change reaches cb once that broker has it.
 * kvs_watch returns 0, or -1 with errno: EINVAL (NULL argument, bad key),
 * EEXIST (this handle already watches the key), ENOMEM.
 * kvs_unwatch returns 0, or -1 with errno: EINVAL, ENOENT (not watched
 * on this handle), ENOMEM; cb is not called again.
 */
typedef int (*kvs_watch_f)(const char *key, json_t *val, int errnum, void *arg);
int kvs_watch (canopy_t *h, const char *key, kvs_watch_f cb, void *arg);
int kvs_unwatch (canopy_t *h, const char *key);

/* Drop cached objects on the local broker (or every broker if all). */
int kvs_dropcache (canopy_t *h, bool all);

/* Asynchronous interface.
 *
 * kvs_lookup sends one lookup (many may be in flight on one handle); the
 * _get functions decode the result (pointers valid until the future is
 * destroyed).  kvs_commit_async/kvs_fence_async send the pending
 * transaction; kvs_commit_get gives the new version.  kvs_watch_start
 * returns a streaming future: after each result, reset it to get the
 * next; kvs_watch_cancel ends the stream (a last ENODATA result).  Its
 * flags: KVS_WATCH_INITIAL makes the first result what the key holds now;
 * without it, the first result is the first change (other flags: EINVAL).
 * A directory's result is its listing as JSON text (kvs_watch_get: the
 * "dir" tree object).
 */
canopy_future_t *kvs_lookup (canopy_t *h, const char *key, int flags);
int kvs_lookup_get_raw (canopy_future_t *f, const void **data, size_t *len);
int kvs_lookup_get_json (canopy_future_t *f, json_t **val);   /* new ref */
int kvs_lookup_get_treeobj (canopy_future_t *f, json_t **treeobj); /* borrowed */
canopy_future_t *kvs_commit_async (canopy_t *h, int flags);
canopy_future_t *kvs_fence_async (canopy_t *h, const char *name, int nprocs,
                                  int flags);
int kvs_commit_get (canopy_future_t *f, int *version);
canopy_future_t *kvs_getroot (canopy_t *h);
int kvs_getroot_get (canopy_future_t *f, int *version, const char **rootref);
canopy_future_t *kvs_wait_version_async (canopy_t *h, int version);
/* Watch streams.  kvs_watch_start returns NULL with errno (EINVAL: NULL
 * handle or key, ENOMEM); flags other than KVS_WATCH_INITIAL are refused
 * by the service (the first result is EINVAL).
 * kvs_watch_get: *val is NULL when the key does not exist; otherwise a
 * new reference: a directory's "dir" listing, or the value decoded as
 * JSON (a JSON string of its bytes if they are not JSON).
 * kvs_watch_get_raw: the bytes (a directory: its listing's compact JSON
 * text), valid until the future is reset or destroyed; *exists false (and
 * *data NULL, *len 0) when the key does not exist.  data, len, exists may
 * be NULL.
 * Both return 0, or -1 with errno: ENODATA (the stream ended: cancelled,
 * or the module unloaded), EPROTO (a malformed response), EPERM (guests
 * without read access), ENOMEM, a lookup's error (ELOOP, or a load
 * error; the watch has then ended).  The service's error text is
 * canopy_future_error_string's.
 * kvs_watch_cancel asks the service to end the stream (no response of its
 * own); returns 0, or -1 with errno (EINVAL: not a handle's future).
 */
canopy_future_t *kvs_watch_start (canopy_t *h, const char *key, int flags);
int kvs_watch_get (canopy_future_t *f, json_t **val);
int kvs_watch_get_raw (canopy_future_t *f, const void **data, size_t *len,
                       bool *exists);
int kvs_watch_cancel (canopy_future_t *f);

#ifdef __cplusplus
}
#endif
#endif
