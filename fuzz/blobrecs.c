/* blobrecs.c - fuzz blobrecs_foreach (the blob records of kvs.prime
 * events and content.store-local requests).
 *
 * Invariants: a buffer is accepted or refused as a whole (EPROTO, no
 * record delivered); an accepted one delivers its records in order, each
 * with a valid ref and its bytes in place, and writing them back with
 * blobrecs_put gives the buffer again, byte for byte; the check-only walk
 * counts the same records.
 */
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/blobrecs.h"
#include "fuzz.h"

struct rebuild {
    const uint8_t *base;
    size_t size;
    uint8_t *out;
    uint8_t *p;
    int calls;
};

static int again (const char *ref, const void *data, size_t len, void *arg)
{
    struct rebuild *r = arg;
    FUZZ_CHECK (blobref_validate (ref) == 0);
    FUZZ_CHECK ((const uint8_t *)data >= r->base
                && (const uint8_t *)data + len <= r->base + r->size);
    r->p = blobrecs_put (r->p, ref, data, len);
    r->calls++;
    return 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct rebuild r = { .base = data, .size = size };
    canopy_error_t error;

    if (!(r.out = malloc (size + 1)))
        return 0;
    r.p = r.out;
    int n = blobrecs_foreach (data, size, again, &r, &error);
    if (n < 0) {
        FUZZ_CHECK (errno == EPROTO);
        FUZZ_CHECK (r.calls == 0);
        FUZZ_CHECK (blobrecs_foreach (data, size, NULL, NULL, NULL) < 0);
    }
    else {
        FUZZ_CHECK (n == r.calls);
        FUZZ_CHECK ((size_t)(r.p - r.out) == size);
        FUZZ_CHECK (size == 0 || memcmp (r.out, data, size) == 0);
        FUZZ_CHECK (blobrecs_foreach (data, size, NULL, NULL, NULL) == n);
    }
    free (r.out);
    return 0;
}
