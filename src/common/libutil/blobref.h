/* blobref.h - names of content-addressed blobs: "sha256-<64 hex digits>".
 *
 * The hash is SHA-256 (libsodium) of the blob's bytes.  blobref_hash fills
 * a caller buffer of at least BLOBREF_MAX bytes.  blobref_validate accepts
 * exactly the canonical form (lowercase hex); anything else is EINVAL.
 */
#ifndef CANOPY_UTIL_BLOBREF_H
#define CANOPY_UTIL_BLOBREF_H

#include <stddef.h>
#include <stdint.h>

#define BLOBREF_PREFIX "sha256-"
#define BLOBREF_HASHLEN 32
#define BLOBREF_STRLEN (7 + 64)
#define BLOBREF_MAX (BLOBREF_STRLEN + 1)

int blobref_hash (const void *data, size_t len, char *ref, size_t refsize);
int blobref_validate (const char *ref);
/* Digest bytes of a valid blobref. */
int blobref_to_digest (const char *ref, uint8_t digest[BLOBREF_HASHLEN]);
int blobref_from_digest (const uint8_t digest[BLOBREF_HASHLEN], char *ref, size_t refsize);

#endif
