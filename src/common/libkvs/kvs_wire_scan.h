/* kvs_wire_scan.h - read a client's transaction (kvs_wire.h) in the form
 * the client library writes it, without building JSON values.
 *
 * The KVS checked every kvs.fence and kvs.commit by decoding the header
 * with jansson (each operation an array, a string and an object of three
 * members), checking each operation (kvs_wire_check_op), then writing the
 * operations back out as text for the relay: with 32 ranks entering an
 * 8 B fence, a third of the KVS threads' CPU, most of it malloc and free.
 * A scan reads the text once and keeps it: the operations the relay sends
 * on are the client's own bytes.
 *
 * Only the exact form kvs_txn_encode writes is read:
 *
 *   {"fences":[{MEMBERS,"ops":[OP,...]}],"blobs":[["REF",LEN],...]}
 *
 * MEMBERS are "count":1, "flags":INT, "name":STR and "nprocs":INT, each
 * once, in any order; an OP is ["KEY",null] or ["KEY",VAL] where VAL is
 * {"data":"BASE64","type":"val","ver":1} or a valref,
 * {"ver":1,"type":"valref","data":["REF",...]} or with its members in
 * canonical order.  Strings are printable ASCII without escapes; keys
 * must be valid and not the root (kvs_path.h); every valref's blobs must
 * be in the table; with 'verify', every blob must hash to its ref.
 *
 * Anything else is declined (0), never refused: the caller then takes the
 * general path (kvs_wire_decode, kvs_wire_check_op), which accepts the
 * rest of the format and reports every error.  So a scan may only be a
 * shortcut to that path's answer: what it accepts, the general path
 * accepts, with the same name, nprocs, flags, operations and blobs (the
 * kvs_wire fuzz target checks this on every input).
 */
#ifndef CANOPY_KVS_WIRE_SCAN_H
#define CANOPY_KVS_WIRE_SCAN_H

#include <stddef.h>
#include <stdbool.h>
#include "blobtab.h"

struct kvs_wire_txn {
    char name[256];         /* NUL-terminated */
    int nprocs;             /* >= 1 */
    int flags;
    const char *ops;        /* OP,OP,... (no brackets), borrowed from buf */
    size_t opslen;
    int nops;
};

/* Scan the transaction buf[0..len-1].  Returns 1 with *txn filled and
 * *blobs a new table that borrows its bytes from buf (buf must outlive
 * it; the caller destroys it), 0 if declined (nothing is allocated; also
 * for a NULL or short buf), or -1 with errno EINVAL (txn or blobs NULL)
 * or ENOMEM.
 */
int kvs_wire_scan (const void *buf, size_t len, bool verify,
                   struct kvs_wire_txn *txn, blobtab_t **blobs);

#endif
