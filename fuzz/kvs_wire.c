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
 * leaks on any error path.  kvs_wire_scan(), the kvs module's shortcut
 * for the form clients write, only accepts what the general path accepts
 * and the module takes, with the same fence, operations and blobs.
 */
#include <string.h>
#include <errno.h>
#include <limits.h>
#include "src/common/libkvs/kvs_wire.h"
#include "src/common/libkvs/kvs_wire_scan.h"
#include "src/common/libkvs/blobtab.h"
#include "src/common/libutil/blobref.h"
#include "fuzz.h"

/* The scan accepted the payload: the general path agrees. */
static void check_scan (const uint8_t *data, size_t size, bool verify,
                        const struct kvs_wire_txn *t, const blobtab_t *sblobs)
{
    json_t *fences, *f, *ops, *op, *parsed;
    blobtab_t *blobs;
    canopy_error_t error;
    size_t i;
    char *text;

    FUZZ_CHECK (kvs_wire_decode (data, size, verify, &fences, &blobs, &error) == 0);
    FUZZ_CHECK (json_array_size (fences) == 1);
    f = json_array_get (fences, 0);
    FUZZ_CHECK (!strcmp (json_string_value (json_object_get (f, "name")), t->name));
    FUZZ_CHECK (json_integer_value (json_object_get (f, "nprocs")) == t->nprocs);
    FUZZ_CHECK (json_integer_value (json_object_get (f, "flags")) == t->flags);
    FUZZ_CHECK (json_integer_value (json_object_get (f, "count")) == 1);
    FUZZ_CHECK (!json_object_get (f, "errnum"));
    ops = json_object_get (f, "ops");
    FUZZ_CHECK (json_array_size (ops) == (size_t)t->nops);
    json_array_foreach (ops, i, op)
        FUZZ_CHECK (kvs_wire_check_op (op, blobs, &error) == 0);
    if ((text = malloc (t->opslen + 3))) {
        text[0] = '[';
        memcpy (text + 1, t->ops, t->opslen);
        strcpy (text + 1 + t->opslen, "]");
        if ((parsed = json_loads (text, 0, NULL))) {
            FUZZ_CHECK (json_equal (parsed, ops));
            json_decref (parsed);
        }
        free (text);
    }
    FUZZ_CHECK (blobtab_count (sblobs) == blobtab_count (blobs));
    FUZZ_CHECK (blobtab_bytes (sblobs) == blobtab_bytes (blobs));
    for (int k = 0; k < blobtab_count (sblobs); k++) {
        const char *ref;
        const void *a, *b;
        size_t alen, blen;
        FUZZ_CHECK (blobtab_at (sblobs, k, &ref, &a, &alen) == 0);
        FUZZ_CHECK (blobtab_get (blobs, ref, &b, &blen) == 0);
        FUZZ_CHECK (alen == blen && (alen == 0 || !memcmp (a, b, alen)));
    }
    json_decref (fences);
    blobtab_destroy (blobs);
}

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
    struct kvs_wire_txn t;
    blobtab_t *sblobs;
    int rc = kvs_wire_scan (data + 1, size - 1, verify, &t, &sblobs);
    FUZZ_CHECK (rc == 0 || rc == 1 || (rc == -1 && errno == ENOMEM));
    if (rc == 1) {
        check_scan (data + 1, size - 1, verify, &t, sblobs);
        blobtab_destroy (sblobs);
    }
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
