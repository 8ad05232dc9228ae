/* test/strbuf.c - unit tests for strbuf.h: puts grow the buffer and keep
 * a NUL after the text, reserve leaves room for what an encoder writes
 * itself, a request too large fails with ENOMEM leaving the buffer
 * as it was, and a put past the limit fails with E2BIG the same way.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/strbuf.h"

static void test_put (void **state)
{
    struct strbuf b = { 0 };
    char expect[5000];
    size_t n = 0;

    assert_int_equal (strbuf_str (&b, "{"), 0);
    expect[n++] = '{';
    assert_int_equal (b.len, 1);
    assert_string_equal (b.s, "{");
    /* many small puts: the capacity doubles past 256, the text stays whole */
    for (int i = 0; i < 1000; i++) {
        assert_int_equal (strbuf_put (&b, "abc", 3), 0);
        assert_int_equal (strbuf_putc (&b, ','), 0);
        memcpy (expect + n, "abc,", 4);
        n += 4;
    }
    expect[n] = '\0';
    assert_int_equal (b.len, n);
    assert_true (b.cap > b.len);
    assert_string_equal (b.s, expect);
    /* an empty put still leaves a terminated string */
    assert_int_equal (strbuf_put (&b, "", 0), 0);
    assert_int_equal (b.len, n);
    assert_int_equal (b.s[n], '\0');
    free (b.s);
}

static void test_limit (void **state)
{
    struct strbuf b = { .limit = 8 };

    assert_int_equal (strbuf_put (&b, "abcdef", 6), 0);
    assert_int_equal (strbuf_putc (&b, 'g'), 0);
    errno = 0;
    assert_int_equal (strbuf_put (&b, "hi", 2), -1);
    assert_int_equal (errno, E2BIG);
    assert_int_equal (b.len, 7);
    assert_string_equal (b.s, "abcdefg");
    assert_int_equal (strbuf_putc (&b, 'h'), 0);        /* exactly the limit */
    errno = 0;
    assert_int_equal (strbuf_putc (&b, 'i'), -1);
    assert_int_equal (errno, E2BIG);
    assert_string_equal (b.s, "abcdefgh");
    assert_int_equal (strbuf_over (&b, 8), 0);
    assert_int_equal (strbuf_over (&b, 9), 1);
    b.limit = 0;                                        /* none */
    assert_int_equal (strbuf_put (&b, "ijkl", 4), 0);
    assert_string_equal (b.s, "abcdefghijkl");
    free (b.s);
}

static void test_truncate (void **state)
{
    struct strbuf b = { 0 };
    (void)state;

    strbuf_truncate (&b, 0);                /* nothing written yet */
    assert_null (b.s);
    assert_int_equal (strbuf_str (&b, "abcdef"), 0);
    strbuf_truncate (&b, 10);               /* not longer */
    assert_string_equal (b.s, "abcdef");
    strbuf_truncate (&b, 2);
    assert_int_equal (b.len, 2);
    assert_string_equal (b.s, "ab");
    assert_int_equal (strbuf_putc (&b, 'z'), 0);
    assert_string_equal (b.s, "abz");
    free (b.s);
}

static void test_reserve (void **state)
{
    struct strbuf b = { 0 };

    /* room for exactly what is reserved, and the NUL */
    assert_int_equal (strbuf_reserve (&b, 256), 0);
    assert_true (b.cap >= 257);
    size_t cap = b.cap;
    memset (b.s, 'x', 256);
    b.len = 256;
    b.s[b.len] = '\0';
    assert_int_equal (strbuf_reserve (&b, 0), 0);
    assert_int_equal (strbuf_putc (&b, 'y'), 0);
    assert_int_equal (b.len, 257);
    assert_int_equal (b.s[256], 'y');
    assert_true (b.cap >= cap);

    /* too much: ENOMEM, nothing changed */
    char *s = b.s;
    size_t len = b.len;
    cap = b.cap;
    errno = 0;
    assert_int_equal (strbuf_reserve (&b, SIZE_MAX - 10), -1);
    assert_int_equal (errno, ENOMEM);
    errno = 0;
    assert_int_equal (strbuf_reserve (&b, SIZE_MAX / 2), -1);
    assert_int_equal (errno, ENOMEM);
    assert_ptr_equal (b.s, s);
    assert_int_equal (b.len, len);
    assert_int_equal (b.cap, cap);
    assert_int_equal (b.s[len], '\0');
    free (b.s);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_put),
        cmocka_unit_test (test_reserve),
        cmocka_unit_test (test_truncate),
        cmocka_unit_test (test_limit),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
