/* kvs_wire.h - the payload of kvs.commit and kvs.fence: what a client
 * sends its broker.  (Brokers send each other kvs.relay, a different
 * format: kvs_relay.h.)
 *
 * A batch carries fence contributions and the blobs their operations
 * reference, each blob once:
 *
 *   u32 header length (big-endian) | header JSON | blob bytes ...
 *   header: {"fences": [ {"name": s, "nprocs": i, "flags": i, "count": i,
 *                         "ops": [[key, treeobj|null], ...],
 *                         "errnum"?: i}, ... ],
 *            "blobs":  [[blobref, length], ...]}
 *
 * A client sends exactly one entry with count 1 (kvs_txn_encode); a commit
 * is a fence of one participant.  The decoder accepts the general shape
 * (several entries, an entry with "errnum" and no "ops"); the service
 * refuses anything but one entry with count 1 and no errnum.
 *
 * kvs_wire_decode validates the lengths, the JSON shape of the header and
 * (if verify is true) that each blob's data hashes to its ref; the blobs
 * are copied into a new blobtab.  Each op is checked separately with
 * kvs_wire_check_op.  Malformed input is EPROTO with text in *error.
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
