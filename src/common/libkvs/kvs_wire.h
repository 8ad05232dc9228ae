/* kvs_wire.h - the payload of kvs.commit, kvs.fence and kvs.relay.
 *
 * A batch carries one or more fence contributions and the blobs their
 * operations reference, each blob once:
 *
 *   u32 header length (big-endian) | header JSON | blob bytes ...
 *   header: {"fences": [ {"name": s, "nprocs": i, "flags": i, "count": i,
 *                         "ops": [[key, treeobj|null], ...],
 *                         "errnum"?: i, "errstr"?: s, "userid"?: i}, ... ],
 *            "blobs":  [[blobref, length], ...]}
 *
 * A commit is a fence of one participant.  'count' is how many
 * participants a contribution stands for (merged contributions add up).
 * An entry with "errnum" carries a failure instead of operations.
 *
 * kvs_wire_decode validates everything: the lengths, the JSON shape, each
 * op's key and tree object, and (if verify is true) that each blob's data
 * hashes to its ref.  Malformed input is EPROTO with text in *error.
 */
#ifndef CANOPY_KVS_WIRE_H
#define CANOPY_KVS_WIRE_H

#include <stddef.h>
#include <stdbool.h>
#include <jansson.h>
#include <canopy/types.h>
#include "blobtab.h"

/* fences: array of fence objects (borrowed) */
int kvs_wire_encode (json_t *fences, const blobtab_t *blobs, void **buf, size_t *len);
int kvs_wire_decode (const void *buf, size_t len, bool verify,
                     json_t **fences, blobtab_t **blobs, canopy_error_t *error);
/* Check one op [key, treeobj|null] as a client may send it: valid key,
 * a val, valref (every blob present in 'blobs'), empty dir, symlink, or
 * null (unlink).
 */
int kvs_wire_check_op (json_t *op, const blobtab_t *blobs, canopy_error_t *error);

#endif
