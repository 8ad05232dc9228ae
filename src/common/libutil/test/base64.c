/* test/base64.c - unit tests for base64.c: known texts, every length and
 * byte through the codec, malformed and non-canonical text refused,
 * buffer bounds, and both directions checked against libsodium's codec
 * (the one canopy used before) on random data and random text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "src/common/libutil/base64.h"

static void expect_text (const char *data, size_t len, const char *text)
{
    char *s = base64_encode (data, len);
    size_t n;
    char *back;

    assert_non_null (s);
    assert_string_equal (s, text);
    assert_int_equal (strlen (s) + 1, base64_encoded_len (len));
    assert_non_null ((back = base64_decode (s, strlen (s), &n)));
    assert_int_equal (n, len);
    assert_memory_equal (back, data, len);
    assert_int_equal (back[n], '\0');
    free (back);
    free (s);
}

static void test_known (void **state)
{
    expect_text ("", 0, "");
    expect_text ("f", 1, "Zg==");
    expect_text ("fo", 2, "Zm8=");
    expect_text ("foo", 3, "Zm9v");
    expect_text ("foob", 4, "Zm9vYg==");
    expect_text ("fooba", 5, "Zm9vYmE=");
    expect_text ("foobar", 6, "Zm9vYmFy");
    expect_text ("\xff\xfe\xfd", 3, "//79");
    expect_text ("\xfb\xff", 2, "+/8=");
}

static void expect_bad (const char *text)
{
    size_t n = 99;
    errno = 0;
    assert_null (base64_decode (text, strlen (text), &n));
    assert_int_equal (errno, EINVAL);
}

static void test_bad (void **state)
{
    expect_bad ("Z");                /* not a multiple of 4 */
    expect_bad ("Zg=");
    expect_bad ("Zm9vY");
    expect_bad ("Zg");               /* pads are required */
    expect_bad ("Zh==");             /* bits left over */
    expect_bad ("Zm9=");
    expect_bad ("Z===");             /* three pads */
    expect_bad ("====");
    expect_bad ("Zg==Zg==");         /* a pad inside */
    expect_bad ("Z=g=");
    expect_bad ("Zm9v\n");
    expect_bad ("Zm 9v");
    expect_bad ("Zm9-");             /* the URL alphabet */
    expect_bad ("Zm9_");
    expect_bad ("\xa6\x92\xc6\x89\xd7\x92\xb9\x8a");   /* libsodium took these */
    expect_bad ("Zm9\xff");
    char nul[] = "Zm\0v";
    size_t n;
    assert_null (base64_decode (nul, 4, &n));
    assert_null (base64_decode (NULL, 0, &n));
    assert_null (base64_decode ("Zg==", 4, NULL));
    errno = 0;
    assert_null (base64_encode (NULL, 1));
    assert_int_equal (errno, EINVAL);
    char *s = base64_encode (NULL, 0);
    assert_string_equal (s, "");
    free (s);
}

static void test_bounds (void **state)
{
    unsigned char out[8];
    size_t n = 0;

    memset (out, 0xaa, sizeof (out));
    assert_int_equal (base64_decode_to (out, 3, "Zm9v", 4, &n), 0);
    assert_int_equal (n, 3);
    assert_memory_equal (out, "foo", 3);
    assert_int_equal (out[3], 0xaa);                /* nothing beyond */
    errno = 0;
    assert_int_equal (base64_decode_to (out, 2, "Zm9v", 4, &n), -1);
    assert_int_equal (errno, EOVERFLOW);
    assert_int_equal (base64_decode_to (out, 1, "Zg==", 4, &n), 0);
    assert_int_equal (n, 1);
    assert_int_equal (base64_decode_to (NULL, 0, "", 0, &n), 0);
    assert_int_equal (n, 0);
    assert_int_equal (base64_decoded_max (8), 6);
    errno = 0;
    assert_int_equal (base64_decode_to (NULL, 4, "Zg==", 4, &n), -1);
    assert_int_equal (errno, EINVAL);
}

/* Every length to 300 and every byte value: the same text as libsodium,
 * and back.
 */
static void test_like_sodium_encode (void **state)
{
    unsigned char data[300];
    char mine[401];
    char theirs[401];

    for (size_t i = 0; i < sizeof (data); i++)
        data[i] = (unsigned char)(i * 7 + 3);
    for (int round = 0; round < 4; round++) {
        for (size_t len = 0; len <= sizeof (data); len++) {
            base64_encode_to (mine, data, len);
            sodium_bin2base64 (theirs, sizeof (theirs), data, len,
                               sodium_base64_VARIANT_ORIGINAL);
            assert_string_equal (mine, theirs);
            unsigned char back[300];
            size_t n;
            assert_int_equal (base64_decode_to (back, sizeof (back), mine,
                                                strlen (mine), &n), 0);
            assert_int_equal (n, len);
            assert_memory_equal (back, data, len);
        }
        randombytes_buf (data, sizeof (data));
    }
}

/* Random texts over the alphabet, '=' and a few others: accepted and
 * decoded exactly when libsodium accepts them, to the same bytes.
 */
static void test_like_sodium_decode (void **state)
{
    static const char pool[] = "AQgw+/Zz09==\n-_";
    char text[16];
    unsigned char mine[16], theirs[16];
    int accepted = 0;

    for (int i = 0; i < 200000; i++) {
        size_t slen = randombytes_uniform (13);
        for (size_t j = 0; j < slen; j++)
            text[j] = pool[randombytes_uniform (sizeof (pool) - 1)];
        size_t n1 = 0, n2 = 0;
        int rc1 = base64_decode_to (mine, sizeof (mine), text, slen, &n1);
        int rc2 = sodium_base642bin (theirs, sizeof (theirs), text, slen, NULL,
                                     &n2, NULL, sodium_base64_VARIANT_ORIGINAL);
        if (rc1 != rc2)
            fail_msg ("'%.*s': %d here, %d in libsodium", (int)slen, text, rc1, rc2);
        if (rc1 == 0) {
            accepted++;
            assert_int_equal (n1, n2);
            assert_memory_equal (mine, theirs, n1);
        }
    }
    assert_true (accepted > 1000);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_known),
        cmocka_unit_test (test_bad),
        cmocka_unit_test (test_bounds),
        cmocka_unit_test (test_like_sodium_encode),
        cmocka_unit_test (test_like_sodium_decode),
    };
    if (sodium_init () < 0)
        return 1;
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
