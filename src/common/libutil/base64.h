/* base64.h - standard base64 (with padding), a thin wrapper of libsodium.
 *
 * base64_encode returns a malloc'd NUL-terminated string.
 * base64_decode returns malloc'd bytes (NUL-terminated for convenience, the
 * NUL not counted in *len); EINVAL on malformed input.
 */
#ifndef CANOPY_UTIL_BASE64_H
#define CANOPY_UTIL_BASE64_H

#include <stddef.h>

char *base64_encode (const void *data, size_t len);
size_t base64_encoded_len (size_t len);
void *base64_decode (const char *s, size_t slen, size_t *len);

#endif
