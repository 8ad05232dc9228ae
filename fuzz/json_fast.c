/* json_fast.c - fuzz json_fast_loadb(), which decodes every JSON payload
 * a broker, a module or a client receives and every directory the KVS
 * faults in.
 *
 * Input: the text.
 *
 * Invariants: with flags 0 and JSON_DECODE_ANY it answers exactly as
 * json_loadb does: both fail with the same error text and position, or
 * both succeed with values that are equal and dump to the same compact
 * text (so types and member order agree too).
 */
#include <string.h>
#include <jansson.h>
#include "src/common/libcanopy/json_fast.h"
#include "fuzz.h"

static void same (const char *s, size_t len, size_t flags)
{
    json_error_t ea, eb;
    json_t *a = json_loadb (s, len, flags, &ea);
    json_t *b = json_fast_loadb (s, len, flags, &eb);

    FUZZ_CHECK ((a == NULL) == (b == NULL));
    if (!a) {
        FUZZ_CHECK (strcmp (ea.text, eb.text) == 0);
        FUZZ_CHECK (ea.position == eb.position);
    }
    else {
        char *da = json_dumps (a, JSON_COMPACT | JSON_ENCODE_ANY);
        char *db = json_dumps (b, JSON_COMPACT | JSON_ENCODE_ANY);
        FUZZ_CHECK (da && db && strcmp (da, db) == 0);
        FUZZ_CHECK (json_equal (a, b));
        free (da);
        free (db);
    }
    json_decref (a);
    json_decref (b);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    same ((const char *)data, size, 0);
    same ((const char *)data, size, JSON_DECODE_ANY);
    return 0;
}
