/* sha256.h - SHA-256 of many messages at once.
 *
 * canopy hashes blobs in batches: the values of one transaction on the
 * client, the blobs of one frame on the leaf broker that checks them.
 * sha256_many hashes n independent messages.  On a CPU with AVX-512F it
 * runs sixteen messages side by side, one per 32-bit lane of the vector
 * registers (FIPS 180-4, computed lane-wise); elsewhere, and for a batch
 * too small to fill lanes usefully, each message goes to sha256_one:
 * the CPU's SHA instructions (SHA-NI) where it has them, else libsodium's
 * crypto_hash_sha256.  The digests are identical either way.
 *
 * Thread safe: no state but the CPU check, which is idempotent.
 */
#ifndef CANOPY_UTIL_SHA256_H
#define CANOPY_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define SHA256_BYTES 32

/* out[i] = SHA-256 (data[i], len[i]) for i < n.  data[i] may be NULL only
 * when len[i] is 0.  Returns 0, or -1 with errno EINVAL (bad arguments) or
 * ENOSYS (libsodium failed to initialise); nothing is written then.
 */
int sha256_many (size_t n, const void *const data[], const size_t len[],
                 uint8_t (*out)[SHA256_BYTES]);

/* out = SHA-256 (data, len); data may be NULL only when len is 0.  Returns
 * 0, or -1 with errno EINVAL or ENOSYS (libsodium failed to initialise).
 */
int sha256_one (const void *data, size_t len, uint8_t out[SHA256_BYTES]);

/* What hashes here, for reports: "avx512f x16, sha-ni", "sha-ni",
 * "libsodium", ... (a static string).
 */
const char *sha256_impl (void);

/* How many messages the fast path hashes side by side: 16 with AVX-512F,
 * 1 without (or when disabled).
 */
int sha256_lanes (void);

/* Tests and benchmarks: force libsodium for every message when
 * generic is true.  Not for concurrent use with sha256_many.
 */
void sha256_set_generic (bool generic);

#endif
