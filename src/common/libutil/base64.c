/* base64.c - see base64.h.
 *
 * Design notes:
 * - Table driven, three bytes to four digits at a time.  libsodium's
 *   codec (used before) runs in constant time, which secrets need and
 *   KVS values do not: its encoder was a tenth of a KAP rank's CPU
 *   while it put 16 values of 8 bytes.
 * - The decoder accepts exactly the canonical text the encoder writes:
 *   a multiple of four digits of the standard alphabet, '=' only as one
 *   or two final pads, and zero bits where a pad leaves bits over.  So
 *   every value has one text.  That is what libsodium's decoder accepts
 *   too, but for bytes of 0x80 and above, which it takes for digits
 *   ("\xa6\x92\xc6\x89" decoded to three bytes; found by fuzz/base64):
 *   they are refused here.  test/base64.c checks both directions against
 *   libsodium.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "base64.h"

static const char digits[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of each digit; 0xff for any other byte ('=' included). */
static const unsigned char values[256] = {
    [0 ... 255] = 0xff,
    ['A'] = 0, ['B'] = 1, ['C'] = 2, ['D'] = 3, ['E'] = 4, ['F'] = 5,
    ['G'] = 6, ['H'] = 7, ['I'] = 8, ['J'] = 9, ['K'] = 10, ['L'] = 11,
    ['M'] = 12, ['N'] = 13, ['O'] = 14, ['P'] = 15, ['Q'] = 16, ['R'] = 17,
    ['S'] = 18, ['T'] = 19, ['U'] = 20, ['V'] = 21, ['W'] = 22, ['X'] = 23,
    ['Y'] = 24, ['Z'] = 25,
    ['a'] = 26, ['b'] = 27, ['c'] = 28, ['d'] = 29, ['e'] = 30, ['f'] = 31,
    ['g'] = 32, ['h'] = 33, ['i'] = 34, ['j'] = 35, ['k'] = 36, ['l'] = 37,
    ['m'] = 38, ['n'] = 39, ['o'] = 40, ['p'] = 41, ['q'] = 42, ['r'] = 43,
    ['s'] = 44, ['t'] = 45, ['u'] = 46, ['v'] = 47, ['w'] = 48, ['x'] = 49,
    ['y'] = 50, ['z'] = 51,
    ['0'] = 52, ['1'] = 53, ['2'] = 54, ['3'] = 55, ['4'] = 56, ['5'] = 57,
    ['6'] = 58, ['7'] = 59, ['8'] = 60, ['9'] = 61, ['+'] = 62, ['/'] = 63,
};

size_t base64_encoded_len (size_t len)
{
    return (len + 2) / 3 * 4 + 1;
}

void base64_encode_to (char *out, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i = 0;

    for (; len - i >= 3; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[0] = digits[v >> 18];
        out[1] = digits[(v >> 12) & 63];
        out[2] = digits[(v >> 6) & 63];
        out[3] = digits[v & 63];
        out += 4;
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        out[0] = digits[v >> 18];
        out[1] = digits[(v >> 12) & 63];
        out[2] = '=';
        out[3] = '=';
        out += 4;
    }
    else if (len - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        out[0] = digits[v >> 18];
        out[1] = digits[(v >> 12) & 63];
        out[2] = digits[(v >> 6) & 63];
        out[3] = '=';
        out += 4;
    }
    *out = '\0';
}

char *base64_encode (const void *data, size_t len)
{
    char *s;

    if (!data && len > 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = malloc (base64_encoded_len (len)))) {
        errno = ENOMEM;
        return NULL;
    }
    base64_encode_to (s, data, len);
    return s;
}

size_t base64_decoded_max (size_t slen)
{
    return slen / 4 * 3;
}

int base64_decode_to (void *out, size_t max, const char *s, size_t slen,
                      size_t *lenp)
{
    const unsigned char *in = (const unsigned char *)s;
    unsigned char *o = out;
    size_t pad = 0;
    size_t groups, n;

    if ((!s && slen > 0) || !lenp || (!out && max > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (slen % 4 != 0)
        goto bad;
    if (slen > 0 && s[slen - 1] == '=')
        pad = s[slen - 2] == '=' ? 2 : 1;
    n = slen / 4 * 3 - pad;
    if (n > max) {
        errno = EOVERFLOW;
        return -1;
    }
    groups = slen / 4 - (pad ? 1 : 0);
    for (size_t g = 0; g < groups; g++, in += 4) {
        unsigned int a = values[in[0]], b = values[in[1]];
        unsigned int c = values[in[2]], d = values[in[3]];
        if ((a | b | c | d) & 0xc0)
            goto bad;
        uint32_t v = a << 18 | b << 12 | c << 6 | d;
        o[0] = (unsigned char)(v >> 16);
        o[1] = (unsigned char)(v >> 8);
        o[2] = (unsigned char)v;
        o += 3;
    }
    if (pad == 1) {             /* two bytes: 16 bits of 18, 2 left over */
        unsigned int a = values[in[0]], b = values[in[1]], c = values[in[2]];
        if (((a | b | c) & 0xc0) || (c & 3))
            goto bad;
        o[0] = (unsigned char)(a << 2 | b >> 4);
        o[1] = (unsigned char)((b & 15) << 4 | c >> 2);
    }
    else if (pad == 2) {        /* one byte: 8 bits of 12, 4 left over */
        unsigned int a = values[in[0]], b = values[in[1]];
        if (((a | b) & 0xc0) || (b & 15))
            goto bad;
        o[0] = (unsigned char)(a << 2 | b >> 4);
    }
    *lenp = n;
    return 0;
bad:
    errno = EINVAL;
    return -1;
}

void *base64_decode (const char *s, size_t slen, size_t *lenp)
{
    size_t max = base64_decoded_max (slen);
    unsigned char *buf;

    if (!s || !lenp) {
        errno = EINVAL;
        return NULL;
    }
    if (!(buf = malloc (max + 1))) {
        errno = ENOMEM;
        return NULL;
    }
    if (base64_decode_to (buf, max, s, slen, lenp) < 0) {
        int saved_errno = errno;
        free (buf);
        errno = saved_errno;
        return NULL;
    }
    buf[*lenp] = '\0';
    return buf;
}
