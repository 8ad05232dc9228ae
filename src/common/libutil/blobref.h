/* blobref.h - names of content-addressed blobs: "sha256-<64 hex digits>".
 *
 * The hash is SHA-256 of the blob's bytes (sha256.h: libsodium, or sixteen
 * messages at a time with AVX-512).  blobref_hash fills
 * a caller buffer of at least BLOBREF_MAX bytes.  blobref_validate accepts
 * exactly the canonical form (lowercase hex); anything else is EINVAL.
 */
#ifndef CANOPY_UTIL_BLOBREF_H
#define CANOPY_UTIL_BLOBREF_H

#include <stddef.h>
#include <stdint.h>

#define BLOBREF_PREFIX "sha256-"
#define BLOBREF_PREFIX_LEN (sizeof (BLOBREF_PREFIX) - 1)   /* where the digest starts */
#define BLOBREF_HASHLEN 32
#define BLOBREF_STRLEN (BLOBREF_PREFIX_LEN + 2 * BLOBREF_HASHLEN)
#define BLOBREF_MAX (BLOBREF_STRLEN + 1)

int blobref_hash (const void *data, size_t len, char *ref, size_t refsize);
/* refs[i] = the blobref of (data[i], len[i]) for i < n, hashed in a batch
 * (sha256_many: sixteen at a time where the CPU allows).  Returns 0, or -1
 * with errno EINVAL or ENOMEM (nothing written then).
 */
int blobref_hash_many (size_t n, const void *const data[], const size_t len[],
                       char (*refs)[BLOBREF_MAX]);
/* Whether refs[i] names (data[i], len[i]) for every i < n, hashed in a
 * batch as blobref_hash_many does; each refs[i] has at least
 * BLOBREF_STRLEN characters, compared over those (it need not be
 * NUL-terminated).  Returns 0
 * if all match, or -1 with errno EPROTO and *bad (if not NULL) the index
 * of the first that does not, or EINVAL, ENOMEM.
 */
int blobref_verify_many (size_t n, const void *const data[], const size_t len[],
                         const char *const refs[], size_t *bad);
int blobref_validate (const char *ref);
/* The value of a digit of a blobref's hex part ('0'-'9', 'a'-'f'), or -1. */
int blobref_hexval (char c);
/* Digest bytes of a valid blobref. */
int blobref_to_digest (const char *ref, uint8_t digest[BLOBREF_HASHLEN]);
int blobref_from_digest (const uint8_t digest[BLOBREF_HASHLEN], char *ref, size_t refsize);

#endif
