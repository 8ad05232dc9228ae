/* base64.h - standard base64 (RFC 4648 alphabet, with padding).
 *
 * base64_encoded_len: the bytes base64_encode_to writes for len bytes,
 * its NUL included.
 * base64_encode_to: writes the text of data[0..len-1] and a NUL to out,
 * which has room for base64_encoded_len (len) bytes.
 * base64_encode: the same in a new string (free it); NULL with errno
 * EINVAL (data NULL, len > 0) or ENOMEM.
 *
 * Only canonical text decodes: a multiple of 4 digits, '=' only as the
 * last one or two, and the bits a pad leaves over zero.
 * base64_decoded_max: the most bytes slen digits decode to.
 * base64_decode_to: decodes s[0..slen-1] into out (max bytes) and sets
 * *len.  Returns 0, or -1 with errno EINVAL (not canonical base64, or a
 * NULL argument) or EOVERFLOW (more than max bytes, judged from slen
 * before the text is read: malformed text too long for max is EOVERFLOW);
 * out's contents are then unspecified.
 * base64_decode: the bytes in a new buffer (free it), NUL-terminated for
 * convenience (the NUL not counted in *len); NULL with errno EINVAL or
 * ENOMEM.
 */
#ifndef CANOPY_UTIL_BASE64_H
#define CANOPY_UTIL_BASE64_H

#include <stddef.h>

size_t base64_encoded_len (size_t len);
void base64_encode_to (char *out, const void *data, size_t len);
char *base64_encode (const void *data, size_t len);

size_t base64_decoded_max (size_t slen);
int base64_decode_to (void *out, size_t max, const char *s, size_t slen,
                      size_t *len);
void *base64_decode (const char *s, size_t slen, size_t *len);

#endif
