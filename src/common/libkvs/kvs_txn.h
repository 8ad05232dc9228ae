/* kvs_txn.h - a client transaction: ordered operations plus the blobs
 * they reference.
 *
 * Values up to KVS_INLINE_MAX bytes become inline "val" objects; larger
 * values are cut into KVS_CHUNK_SIZE chunks stored as blobs and referenced
 * by a "valref" (identical chunks are stored once).  Keys are normalised
 * when the operation is added, so errors are reported at put time.
 *
 * Chunks are hashed in one batch when the transaction is first read
 * (kvs_txn_ops, kvs_txn_blobs, kvs_txn_encode), not at put time; until
 * then kvs_txn_bytes counts identical chunks more than once.  Those three
 * calls fail (NULL or -1, errno ENOMEM) only if memory runs out while
 * hashing; the transaction keeps its meaning and they may be retried.
 */
#ifndef CANOPY_KVS_TXN_H
#define CANOPY_KVS_TXN_H

#include <stddef.h>
#include <jansson.h>
#include <canopy/message.h>
#include "blobtab.h"

typedef struct kvs_txn kvs_txn_t;

kvs_txn_t *kvs_txn_create (void);
void kvs_txn_destroy (kvs_txn_t *txn);
int kvs_txn_put_raw (kvs_txn_t *txn, const char *key, const void *data, size_t len);
int kvs_txn_unlink (kvs_txn_t *txn, const char *key);
int kvs_txn_mkdir (kvs_txn_t *txn, const char *key);
int kvs_txn_symlink (kvs_txn_t *txn, const char *key, const char *target);
int kvs_txn_count (const kvs_txn_t *txn);
size_t kvs_txn_bytes (const kvs_txn_t *txn);
/* borrowed */
json_t *kvs_txn_ops (kvs_txn_t *txn);
const blobtab_t *kvs_txn_blobs (kvs_txn_t *txn);
/* Encode as one fence contribution (kvs_wire.h format): into a malloc'd
 * buffer, or straight into msg's payload (replaced; no second copy of the
 * blobs on the way out).  Returns 0, or -1 with errno EINVAL (bad
 * arguments, a name that is not UTF-8), EFBIG (over the message size
 * limit) or ENOMEM; on failure msg is unchanged.
 */
int kvs_txn_encode (kvs_txn_t *txn, const char *name, int nprocs, int flags,
                    void **buf, size_t *len);
int kvs_txn_encode_msg (kvs_txn_t *txn, const char *name, int nprocs, int flags,
                        canopy_msg_t *msg);

#endif
