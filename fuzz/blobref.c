/* blobref.c - fuzz blobref_validate, blobref_to_digest, blobref_from_digest
 * and blobref_hash (names of content blobs: "sha256-<64 lowercase hex>").
 *
 * Invariants: validate accepts exactly what to_digest accepts; a valid ref
 * round-trips through its digest to the same string; the hash of any
 * bytes is a valid ref; an invalid ref is EINVAL.
 */
#include <string.h>
#include <errno.h>
#include "src/common/libutil/blobref.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = malloc (size + 1);
    uint8_t digest[BLOBREF_HASHLEN];
    char ref[BLOBREF_MAX];

    if (!s)
        return 0;
    memcpy (s, data, size);
    s[size] = '\0';
    if (blobref_validate (s) == 0) {
        FUZZ_CHECK (strlen (s) == BLOBREF_STRLEN);
        FUZZ_CHECK (blobref_to_digest (s, digest) == 0);
        FUZZ_CHECK (blobref_from_digest (digest, ref, sizeof (ref)) == 0);
        FUZZ_CHECK (strcmp (ref, s) == 0);
    }
    else {
        FUZZ_CHECK (errno == EINVAL);
        FUZZ_CHECK (blobref_to_digest (s, digest) < 0 && errno == EINVAL);
    }
    /* any bytes hash to a valid ref, whose digest round-trips */
    FUZZ_CHECK (blobref_hash (data, size, ref, sizeof (ref)) == 0);
    FUZZ_CHECK (blobref_validate (ref) == 0);
    FUZZ_CHECK (blobref_to_digest (ref, digest) == 0);
    char ref2[BLOBREF_MAX];
    FUZZ_CHECK (blobref_from_digest (digest, ref2, sizeof (ref2)) == 0);
    FUZZ_CHECK (strcmp (ref, ref2) == 0);
    /* too small a buffer is refused, not overrun */
    FUZZ_CHECK (blobref_hash (data, size, ref, BLOBREF_MAX - 1) < 0);
    free (s);
    return 0;
}
