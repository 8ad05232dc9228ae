/* kvs_path.h - KVS keys: normalisation, validation and splitting.
 *
 * A key is a dotted path.  Normalisation drops leading, trailing and
 * repeated dots ("..a..b." -> "a.b"); the empty result is the root ".".
 * Components are 1..KVS_MAX_COMPONENT bytes of printable characters other
 * than '.' (bytes >= 0x80 are allowed, for UTF-8); control characters are
 * EINVAL.  Keys longer than KVS_MAX_KEY are ENAMETOOLONG.
 */
#ifndef CANOPY_KVS_PATH_H
#define CANOPY_KVS_PATH_H

#include <stdbool.h>

/* Returns a malloc'd normalised key, or NULL (EINVAL, ENAMETOOLONG). */
char *kvs_path_normalize (const char *key);
bool kvs_path_is_root (const char *normalized);
/* Split a normalised key into components: a malloc'd array of pointers
 * into a malloc'd copy (*buf); returns the count (0 for the root).
 */
int kvs_path_split (const char *normalized, char ***components, char **buf);
/* "a.b" + "c.d" -> "a.b.c.d" (either may be the root "."); malloc'd. */
char *kvs_path_join (const char *a, const char *b);

#endif
