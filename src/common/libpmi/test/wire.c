/* test/wire.c - unit tests for pmi_wire.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "src/common/libpmi/pmi_wire.h"

static int parse (struct pmi_wire_msg *msg, const char *s)
{
    return pmi_wire_parse (msg, s, strlen (s));
}

static void test_basic (void **state)
{
    struct pmi_wire_msg msg;
    int v;

    assert_int_equal (parse (&msg, "cmd=init pmi_version=1 pmi_subversion=1\n"), 0);
    assert_int_equal (msg.nfields, 3);
    assert_string_equal (pmi_wire_cmd (&msg), "init");
    assert_string_equal (pmi_wire_get (&msg, "pmi_version"), "1");
    assert_int_equal (pmi_wire_get_int (&msg, "pmi_subversion", &v), 0);
    assert_int_equal (v, 1);
    assert_null (pmi_wire_get (&msg, "nope"));
    assert_int_equal (pmi_wire_get_int (&msg, "nope", &v), -1);
    assert_int_equal (errno, ENOENT);

    /* no trailing newline, extra spaces, empty value */
    assert_int_equal (parse (&msg, "  cmd=get_maxes   x=  y=-3"), 0);
    assert_string_equal (pmi_wire_cmd (&msg), "get_maxes");
    assert_string_equal (pmi_wire_get (&msg, "x"), "");
    assert_int_equal (pmi_wire_get_int (&msg, "y", &v), 0);
    assert_int_equal (v, -3);
    assert_int_equal (pmi_wire_get_int (&msg, "x", &v), -1);
    assert_int_equal (errno, EPROTO);

    /* mcmd and a first token that is not a command */
    assert_int_equal (parse (&msg, "mcmd=spawn\n"), 0);
    assert_string_equal (pmi_wire_cmd (&msg), "spawn");
    assert_int_equal (parse (&msg, "nprocs=2\n"), 0);
    assert_null (pmi_wire_cmd (&msg));
    assert_null (pmi_wire_cmd (NULL));
}

static void test_value_to_end_of_line (void **state)
{
    struct pmi_wire_msg msg;

    /* OpenMPI pads its base64 with spaces */
    assert_int_equal (parse (&msg, "cmd=put kvsname=k key=1234-0-key0 "
                             "value=AAB  cd=ef x\n"), 0);
    assert_int_equal (msg.nfields, 4);
    assert_string_equal (pmi_wire_get (&msg, "value"), "AAB  cd=ef x");
    assert_null (pmi_wire_get (&msg, "cd"));
    /* trailing spaces belong to the value */
    assert_int_equal (parse (&msg, "cmd=get_result rc=0 value=a b  \n"), 0);
    assert_string_equal (pmi_wire_get (&msg, "value"), "a b  ");
    /* value first in the line still runs to the end */
    assert_int_equal (parse (&msg, "value=cmd=x y=z"), 0);
    assert_int_equal (msg.nfields, 1);
    assert_string_equal (pmi_wire_get (&msg, "value"), "cmd=x y=z");
    /* empty value */
    assert_int_equal (parse (&msg, "cmd=put key=k value="), 0);
    assert_string_equal (pmi_wire_get (&msg, "value"), "");
    /* keys with the characters MPICH uses */
    assert_int_equal (parse (&msg, "cmd=get kvsname=kvs_1 key=-allgather-shm-1-2-seg-1/2"), 0);
    assert_string_equal (pmi_wire_get (&msg, "key"), "-allgather-shm-1-2-seg-1/2");
    assert_int_equal (parse (&msg, "cmd=get key=hostname[3]"), 0);
    assert_string_equal (pmi_wire_get (&msg, "key"), "hostname[3]");
}

static void test_garbage (void **state)
{
    struct pmi_wire_msg msg;
    const char *bad[] = {
        "",
        "\n",
        "   \n",
        "cmd",
        "cmd=init garbage",
        "=x",
        "cmd=init =1",
        "cmd=a\tb=c",
        "cmd=init\r\n",
        "cmd=init\n\n",
        "cmd=a cmd=b",
        "cmd=init x=1 x=2",
        "cmd=init \x7f=1",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        errno = 0;
        assert_int_equal (parse (&msg, bad[i]), -1);
        assert_int_equal (errno, EPROTO);
        assert_int_equal (msg.nfields, 0);
    }
    /* embedded NUL */
    assert_int_equal (pmi_wire_parse (&msg, "cmd=a\0b=c\n", 10), -1);
    assert_int_equal (errno, EPROTO);
    /* too many tokens */
    char line[PMI_WIRE_LINE_MAX];
    int n = snprintf (line, sizeof (line), "cmd=x");
    for (int i = 0; i < PMI_WIRE_FIELDS_MAX; i++)
        n += snprintf (line + n, sizeof (line) - n, " k%d=v", i);
    assert_int_equal (parse (&msg, line), -1);
    assert_int_equal (errno, EPROTO);
    /* bad arguments */
    assert_int_equal (pmi_wire_parse (NULL, "cmd=x", 5), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_wire_parse (&msg, NULL, 5), -1);
    assert_int_equal (errno, EINVAL);
    /* int overflow */
    assert_int_equal (parse (&msg, "cmd=x n=99999999999"), 0);
    assert_int_equal (pmi_wire_get_int (&msg, "n", NULL), -1);
    assert_int_equal (errno, EPROTO);
}

static void test_lengths (void **state)
{
    struct pmi_wire_msg msg;
    char *line = malloc (PMI_WIRE_LINE_MAX + 100);
    size_t hdr;

    /* a 1.2 KiB OpenMPI-style put is fine */
    hdr = sprintf (line, "cmd=put kvsname=kvs_0 key=1234-0-key0 value=");
    memset (line + hdr, 'A', 1200);
    memcpy (line + hdr + 1200, " \n", 3);
    assert_int_equal (pmi_wire_parse (&msg, line, strlen (line)), 0);
    assert_int_equal (strlen (pmi_wire_get (&msg, "value")), 1201);

    /* exactly the limit, newline included */
    memset (line + hdr, 'B', PMI_WIRE_LINE_MAX);
    line[PMI_WIRE_LINE_MAX - 1] = '\n';
    assert_int_equal (pmi_wire_parse (&msg, line, PMI_WIRE_LINE_MAX), 0);
    assert_int_equal (strlen (pmi_wire_get (&msg, "value")),
                      PMI_WIRE_LINE_MAX - 1 - hdr);
    /* one more byte is refused */
    line[PMI_WIRE_LINE_MAX - 1] = 'B';
    line[PMI_WIRE_LINE_MAX] = '\n';
    assert_int_equal (pmi_wire_parse (&msg, line, PMI_WIRE_LINE_MAX + 1), -1);
    assert_int_equal (errno, EMSGSIZE);
    free (line);
}

static void test_validity (void **state)
{
    char buf[16];

    assert_true (pmi_wire_token_valid ("abc-[1]/2"));
    assert_false (pmi_wire_token_valid (""));
    assert_false (pmi_wire_token_valid (NULL));
    assert_false (pmi_wire_token_valid ("a b"));
    assert_false (pmi_wire_token_valid ("a=b"));
    assert_false (pmi_wire_token_valid ("a\nb"));
    assert_true (pmi_wire_value_valid (""));
    assert_true (pmi_wire_value_valid ("a b=c"));
    assert_false (pmi_wire_value_valid ("a\nb"));
    assert_false (pmi_wire_value_valid (NULL));

    assert_string_equal (pmi_wire_sanitize (buf, sizeof (buf), "No such file"),
                         "No_such_file");
    assert_string_equal (pmi_wire_sanitize (buf, sizeof (buf), "a=b\nc"), "a_b_c");
    assert_string_equal (pmi_wire_sanitize (buf, 4, "abcdef"), "abc");
    assert_string_equal (pmi_wire_sanitize (buf, sizeof (buf), NULL), "");
}

/* Random bytes never crash the parser and never yield a field pointing
 * outside the message buffer.
 */
static void test_fuzz (void **state)
{
    struct pmi_wire_msg msg;
    char line[300];
    const char alphabet[] = "cmd=value  abc\n\t\x01=";
    unsigned seed = 12345;

    for (int iter = 0; iter < 20000; iter++) {
        size_t len = rand_r (&seed) % sizeof (line);
        for (size_t i = 0; i < len; i++) {
            if (rand_r (&seed) % 4 == 0)
                line[i] = (char)(rand_r (&seed) % 256);
            else
                line[i] = alphabet[rand_r (&seed) % (sizeof (alphabet) - 1)];
        }
        if (pmi_wire_parse (&msg, line, len) == 0) {
            assert_true (msg.nfields >= 1 && msg.nfields <= PMI_WIRE_FIELDS_MAX);
            for (int i = 0; i < msg.nfields; i++) {
                assert_true (msg.fields[i].key >= msg.buf
                             && msg.fields[i].key < msg.buf + sizeof (msg.buf));
                assert_true (strlen (msg.fields[i].key) > 0);
                assert_true (pmi_wire_value_valid (msg.fields[i].val));
            }
        }
        else
            assert_true (errno == EPROTO);
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_basic),
        cmocka_unit_test (test_value_to_end_of_line),
        cmocka_unit_test (test_garbage),
        cmocka_unit_test (test_lengths),
        cmocka_unit_test (test_validity),
        cmocka_unit_test (test_fuzz),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
