/* lookup.h - resolving a key from a root, faulting in what is missing.
 *
 * lookup_run walks from the root (following symlinks, at most 32) and
 * either finishes (result or errnum set) or stops because objects are
 * missing; it then starts their loads (one per object in the cache) and
 * calls lookup_run again itself when they have all arrived.  When the
 * lookup finishes, 'done' is called; the owner destroys the lookup.
 *
 * Results by flags:
 *   (none)     value bytes (val decoded, valref chunks concatenated)
 *   TREEOBJ    the tree object at the key (final symlink not followed if
 *              READLINK)
 *   READDIR    a "dir" tree object with the directory's entries (an hdir
 *              is flattened)
 *   READLINK   the symlink tree object
 * Errors: ENOENT, ENOTDIR, EISDIR, ELOOP, EINVAL (READLINK on a
 * non-symlink), or a load error.
 */
#ifndef CANOPY_KVS_LOOKUP_H
#define CANOPY_KVS_LOOKUP_H

#include <jansson.h>
#include "kvs_ctx.h"

struct lookup;
typedef void (*lookup_done_f)(struct lookup *l, void *arg);

struct lookup *lookup_create (struct kvs_ctx *ctx, const char *key, int flags,
                              const char *rootref, lookup_done_f done, void *arg);
void lookup_destroy (struct lookup *l);
/* Start (or restart) the walk.  May call 'done' before returning. */
void lookup_run (struct lookup *l);

int lookup_errnum (const struct lookup *l);
const char *lookup_errstr (const struct lookup *l);
/* Value bytes (no flags); borrowed until destroy. */
int lookup_get_value (const struct lookup *l, const void **data, size_t *len);
/* Tree object result (TREEOBJ/READDIR/READLINK); borrowed. */
json_t *lookup_get_treeobj (const struct lookup *l);
const char *lookup_key (const struct lookup *l);

#endif
