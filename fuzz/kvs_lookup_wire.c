/* kvs_lookup_wire.c - fuzz kvs_lookup_wire_decode(), the payload of
 * kvs.lookup, which every broker's KVS decodes for every get.
 *
 * Input: the payload text.
 *
 * Invariants: the decoder (fast path or not) answers exactly as jansson
 * does with "{s:s s?i}"; a decoded key and flags encode to a text that
 * decodes to them again.
 */
#include <string.h>
#include <errno.h>
#include <jansson.h>
#include "src/common/libkvs/kvs_lookup_wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char key[256], key2[256], ref[256];
    int flags = 0, flags2 = 0, rflags = 0;
    int rc = kvs_lookup_wire_decode ((const char *)data, size, key, sizeof (key), &flags);
    int e = errno;

    /* the reference */
    json_t *o = json_loadb ((const char *)data, size, JSON_DECODE_ANY, NULL);
    const char *k;
    int rrc = -1;
    if (o && json_unpack (o, "{s:s s?i}", "key", &k, "flags", &rflags) == 0) {
        if (strlen (k) < sizeof (ref)) {
            strcpy (ref, k);
            rrc = 0;
        }
        else
            rrc = -2;       /* too long for the buffer: ENAMETOOLONG */
    }
    json_decref (o);

    if (rrc == 0) {
        FUZZ_CHECK (rc == 0);
        FUZZ_CHECK (strcmp (key, ref) == 0);
        FUZZ_CHECK (flags == rflags);
    }
    else if (rrc == -2)
        FUZZ_CHECK (rc == -1 && e == ENAMETOOLONG);
    else
        FUZZ_CHECK (rc == -1 && e == EPROTO);

    if (rc == 0) {
        size_t len;
        char *s = kvs_lookup_wire_encode (key, flags, &len);
        FUZZ_CHECK (s != NULL);
        FUZZ_CHECK (kvs_lookup_wire_decode (s, len, key2, sizeof (key2), &flags2) == 0);
        FUZZ_CHECK (strcmp (key, key2) == 0 && flags == flags2);
        free (s);
    }
    return 0;
}
