/* kvs_lookup_wire.h - the payload of kvs.lookup: {"key": s, "flags": i}.
 *
 * A lookup is the commonest request there is, and a general JSON encoder
 * and parser cost more than the lookup itself (a cached get is a few hash
 * probes).  So the common shape has a fast path on both sides, and
 * everything else goes through jansson:
 *
 * - kvs_lookup_wire_encode writes the text directly when the key is plain
 *   (printable ASCII without '"' or '\\'), which every key the KVS accepts
 *   after normalisation is, and uses jansson otherwise.
 * - kvs_lookup_wire_decode accepts, without allocating, a "simple" object
 *   (json_check.h) whose members are exactly "key" (a string) and
 *   optionally "flags" (an integer), each once; anything else is handed to
 *   jansson, which decides.  Both paths give the same answer for every
 *   text (test/kvs_lookup_wire.c checks this on random mutations).
 */
#ifndef CANOPY_KVS_LOOKUP_WIRE_H
#define CANOPY_KVS_LOOKUP_WIRE_H

#include <stddef.h>

/* Returns the JSON text (malloc'd, NUL-terminated; *lenp its length if not
 * NULL), or NULL with errno EINVAL (key NULL) or ENOMEM.
 */
char *kvs_lookup_wire_encode (const char *key, int flags, size_t *lenp);

/* Decode text s[0..len-1] (need not be NUL-terminated).  The key is
 * copied NUL-terminated into keybuf (keysize bytes); flags default to 0.
 * Returns 0, or -1 with errno EPROTO (not an object with a string "key"
 * and an optional integer "flags") or ENAMETOOLONG (the key does not fit).
 */
int kvs_lookup_wire_decode (const char *s, size_t len,
                            char *keybuf, size_t keysize, int *flags);

#endif
