/* json_fast_dump.c - fuzz json_fast_dumps(), which encodes every JSON
 * payload canopy packs, every transaction and relay batch, and every
 * lookup answer.
 *
 * Input: a JSON text; jansson decodes it into the value to encode (an
 * input it refuses is skipped).
 *
 * Invariants: for JSON_COMPACT, with and without JSON_ENCODE_ANY, and
 * for JSON_COMPACT | JSON_SORT_KEYS (which must go to jansson),
 * json_fast_dumps returns exactly the bytes json_dumps returns, or NULL
 * when json_dumps does.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/common/libcanopy/json_fast_dump.h"
#include "fuzz.h"

static void same (const json_t *o, size_t flags)
{
    char *a = json_dumps (o, flags);
    char *b = json_fast_dumps (o, flags);

    FUZZ_CHECK ((a == NULL) == (b == NULL));
    if (a)
        FUZZ_CHECK (strcmp (a, b) == 0);
    free (a);
    free (b);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *o = json_loadb ((const char *)data, size, JSON_DECODE_ANY, NULL);

    if (o) {
        same (o, JSON_COMPACT);
        same (o, JSON_COMPACT | JSON_ENCODE_ANY);
        same (o, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref (o);
    }
    return 0;
}
