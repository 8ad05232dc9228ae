/* kvs_wire.c - fuzz kvs_wire_decode(), the payload of kvs.commit and
 * kvs.fence (a length-prefixed JSON header plus blob bytes; relays between
 * brokers have a format of their own, kvs_relay.h), and
 * kvs_wire_check_op(), which the kvs module applies to every operation a
 * client sends.
 *
 * Input layout: byte 0 bit 0 = verify blob hashes (as the fence code does
 * for client requests) or not (as the guest-access check does); the rest
 * is the payload.  (Seeds named "relay" are kvs_wire batches of the
 * general shape: several entries, one with an errnum.)
 *
 * Invariants: a decoded batch re-encodes and decodes to an equal header
 * and blob table; blob data hashes to its ref when verified; nothing
 * leaks on any error path.
 */
#include <string.h>
#include <errno.h>
#include <limits.h>
#include "src/common/libkvs/kvs_wire.h"
#include "src/common/libkvs/blobtab.h"
#include "src/common/libutil/blobref.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *fences = NULL, *fences2 = NULL;
    blobtab_t *blobs = NULL, *blobs2 = NULL;
    canopy_error_t error;
    bool verify;
    void *buf = NULL;
    size_t len;

    if (size < 1)
        return 0;
    verify = data[0] & 1;
    if (kvs_wire_decode (data + 1, size - 1, verify, &fences, &blobs, &error) < 0) {
        FUZZ_CHECK (errno == EPROTO || errno == ENOMEM);
        FUZZ_CHECK (error.text[0] != '\0' || errno == ENOMEM);
        return 0;
    }
    FUZZ_CHECK (json_is_array (fences));
    /* the checks the kvs module makes on a client's operations */
    size_t i, j;
    json_t *f, *op;
    json_array_foreach (fences, i, f) {
        json_t *ops = json_object_get (f, "ops");
        /* what the kvs module reads back as int must fit one */
        json_int_t nprocs = json_integer_value (json_object_get (f, "nprocs"));
        json_int_t count = json_integer_value (json_object_get (f, "count"));
        json_int_t flags = json_integer_value (json_object_get (f, "flags"));
        FUZZ_CHECK (nprocs >= 1 && nprocs <= INT_MAX);
        FUZZ_CHECK (count >= 0 && count <= nprocs);
        FUZZ_CHECK (flags >= INT_MIN && flags <= INT_MAX);
        json_array_foreach (ops, j, op) {
            if (kvs_wire_check_op (op, blobs, &error) < 0)
                FUZZ_CHECK (errno == EPROTO || errno == EINVAL
                            || errno == ENAMETOOLONG || errno == ENOMEM);
        }
    }
    for (int k = 0; k < blobtab_count (blobs); k++) {
        const char *ref;
        const void *bdata;
        size_t blen;
        char computed[BLOBREF_MAX];
        FUZZ_CHECK (blobtab_at (blobs, k, &ref, &bdata, &blen) == 0);
        FUZZ_CHECK (blobref_validate (ref) == 0);
        FUZZ_CHECK (blobtab_has (blobs, ref));
        if (verify) {
            FUZZ_CHECK (blobref_hash (bdata, blen, computed, sizeof (computed)) == 0);
            FUZZ_CHECK (!strcmp (computed, ref));
        }
    }
    /* re-encode and decode again: same fences, same blobs */
    if (kvs_wire_encode (fences, blobs, &buf, &len) == 0) {
        FUZZ_CHECK (kvs_wire_decode (buf, len, verify, &fences2, &blobs2, &error) == 0);
        FUZZ_CHECK (json_equal (fences, fences2));
        FUZZ_CHECK (blobtab_count (blobs) == blobtab_count (blobs2));
        FUZZ_CHECK (blobtab_bytes (blobs) == blobtab_bytes (blobs2));
        json_decref (fences2);
        blobtab_destroy (blobs2);
        free (buf);
    }
    else
        FUZZ_CHECK (errno == ENOMEM || errno == EFBIG);
    json_decref (fences);
    blobtab_destroy (blobs);
    return 0;
}
