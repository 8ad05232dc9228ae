/* load_batch.c - fuzz loadbatch_foreach (the refs of a content.load-batch
 * request, which a broker takes from its children).
 *
 * Invariants: a buffer is accepted or refused as a whole (EPROTO, no ref
 * delivered); an accepted one delivers 1 to LOAD_BATCH_MAX valid refs in
 * order, and writing each back followed by '\n' gives the buffer again,
 * byte for byte; the check-only walk counts the same refs.
 */
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include "src/common/libutil/blobref.h"
#include "src/modules/content/loadbatch.h"
#include "fuzz.h"

struct rebuild {
    char *out;
    size_t len, cap;
    int calls;
};

static int again (const char *ref, void *arg)
{
    struct rebuild *r = arg;
    size_t n = strlen (ref);
    FUZZ_CHECK (blobref_validate (ref) == 0);
    FUZZ_CHECK (r->len + n + 1 <= r->cap);
    memcpy (r->out + r->len, ref, n);
    r->out[r->len + n] = '\n';
    r->len += n + 1;
    r->calls++;
    return 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct rebuild r = { .cap = size };
    canopy_error_t error;

    if (!(r.out = malloc (size + 1)))
        return 0;
    int n = loadbatch_foreach (data, size, again, &r, &error);
    if (n < 0) {
        FUZZ_CHECK (errno == EPROTO);
        FUZZ_CHECK (r.calls == 0);
        FUZZ_CHECK (loadbatch_foreach (data, size, NULL, NULL, NULL) < 0);
    }
    else {
        FUZZ_CHECK (n >= 1 && n <= LOAD_BATCH_MAX);
        FUZZ_CHECK (n == r.calls);
        FUZZ_CHECK (r.len == size);
        FUZZ_CHECK (memcmp (r.out, data, size) == 0);
        FUZZ_CHECK (loadbatch_foreach (data, size, NULL, NULL, NULL) == n);
    }
    free (r.out);
    return 0;
}
