/* kvswalk.h - walk one KVS snapshot from its root reference, in key order
 * (for canopy dump and canopy fsck).
 *
 * Blobs come from a caller-supplied loader, so the walk itself needs no
 * broker (and is unit tested with blobs in memory).  The loader is given
 * up to KVSWALK_WINDOW references at once so that it may keep that many
 * requests in flight.
 *
 * Every tree object is visited: directories (dir, hdir and its buckets,
 * dirref), values (val, valref: every chunk is loaded), symlinks.  A blob
 * that cannot be loaded or an object that does not decode is reported to
 * 'problem' with the key it belongs to, and the walk goes on; such a value
 * is not reported to 'value'.
 *
 * Keys are dotted paths; the root directory's key is "" (dir callback only).
 */
#ifndef CANOPY_CMD_KVSWALK_H
#define CANOPY_CMD_KVSWALK_H

#include <stddef.h>
#include <stdint.h>

enum { KVSWALK_WINDOW = 64 };

struct kvswalk_ops {
    /* Load n blobs: set data[i] (malloc'd; the walker frees it) and len[i],
     * or errnum[i] for a blob that cannot be had.  Return -1 (errno set) to
     * abandon the walk.
     */
    int (*load)(const char **refs, int n, void **data, size_t *len, int *errnum,
                void *load_arg);
    /* Each callback may be NULL; returning -1 abandons the walk. */
    int (*value)(const char *key, const void *data, size_t len, void *arg);
    int (*dir)(const char *key, int count, void *arg);
    int (*symlink)(const char *key, const char *target, void *arg);
    /* ref may be NULL (a malformed object inside a directory). */
    void (*problem)(const char *key, const char *ref, int errnum, const char *what,
                    void *arg);
};

struct kvswalk_stats {
    uint64_t dirs;
    uint64_t values;
    uint64_t symlinks;
    uint64_t blobs;             /* blobs loaded */
    uint64_t bytes;             /* their size */
    uint64_t problems;
};

/* load_arg goes to the loader, arg to the other callbacks.  Returns 0
 * once the whole tree was visited (problems are counted in stats), -1 if
 * the loader or a callback abandoned the walk.
 */
int kvswalk (const char *rootref, const struct kvswalk_ops *ops, void *load_arg,
             void *arg, struct kvswalk_stats *stats);

#endif
