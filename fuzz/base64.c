/* base64.c - fuzz base64_decode_to and base64_encode_to (value text in
 * tree objects and transactions), against libsodium's codec.
 *
 * Invariants: a text decodes exactly when libsodium's decoder accepts it
 * (standard alphabet, padding required), to the same bytes, except that
 * bytes of 0x80 and above, which libsodium takes for digits, are refused; what decodes
 * re-encodes to the same text (one text per value); any bytes encode to
 * libsodium's text, which decodes back to them; a too small buffer is
 * EOVERFLOW, never overrun.
 */
#include <string.h>
#include <stdbool.h>
#include <errno.h>
#include <sodium.h>
#include "src/common/libutil/base64.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    size_t max = base64_decoded_max (size);
    unsigned char *mine = malloc (max + 1);
    unsigned char *theirs = malloc (max + 1);
    char *text = malloc (base64_encoded_len (size));
    char *stext = malloc (base64_encoded_len (size));
    size_t n1 = 0, n2 = 0;

    if (!mine || !theirs || !text || !stext)
        goto done;
    int rc1 = base64_decode_to (mine, max, (const char *)data, size, &n1);
    int errno1 = errno;
    int rc2 = sodium_base642bin (theirs, max + 1, (const char *)data, size,
                                 NULL, &n2, NULL, sodium_base64_VARIANT_ORIGINAL);
    /* libsodium takes bytes of 0x80 and above for digits; they are not */
    bool high = false;
    for (size_t i = 0; i < size; i++)
        high |= data[i] >= 0x80;
    FUZZ_CHECK (high ? rc1 < 0 : rc1 == rc2);
    if (rc1 == 0) {
        FUZZ_CHECK (n1 == n2 && memcmp (mine, theirs, n1) == 0);
        base64_encode_to (text, mine, n1);
        FUZZ_CHECK (strlen (text) == size && memcmp (text, data, size) == 0);
        if (n1 > 0) {
            FUZZ_CHECK (base64_decode_to (mine, n1 - 1, (const char *)data, size,
                                          &n2) < 0 && errno == EOVERFLOW);
        }
    }
    else
        FUZZ_CHECK (errno1 == EINVAL);
    /* the input as bytes */
    base64_encode_to (text, data, size);
    sodium_bin2base64 (stext, base64_encoded_len (size), data, size,
                       sodium_base64_VARIANT_ORIGINAL);
    FUZZ_CHECK (strcmp (text, stext) == 0);
    unsigned char *back = malloc (size + 1);
    if (back) {
        FUZZ_CHECK (base64_decode_to (back, size, text, strlen (text), &n1) == 0);
        FUZZ_CHECK (n1 == size && memcmp (back, data, size) == 0);
        free (back);
    }
done:
    free (mine);
    free (theirs);
    free (text);
    free (stext);
    return 0;
}
