/* test/toml.c - the configuration file reader: the supported subset,
 * line numbers of values, and clear refusals with line and column.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include "src/broker/toml.h"

static toml_doc_t *parse (const char *text, struct toml_error *err)
{
    return toml_parse (text, strlen (text), err);
}

static void test_document (void **state)
{
    const char *text =
        "# a comment\n"
        "name = \"canopy\"   # trailing comment\n"
        "\n"
        "[tbon]\n"
        "k = 3\n"
        "keepalive-period = \"2s\"\n"
        "ratio = 0.5\n"
        "big = 1_000_000\n"
        "neg = -7\n"
        "on = true\n"
        "off = false\n"
        "\n"
        "[[hosts]]\n"
        "host = 'node0'\n"
        "port = 8050\n"
        "[[hosts]]\n"
        "\"host\" = \"node1\\t\\\"x\\\" \\u00e9\"\n"
        "list = [ 1, 2,\n"
        "   3, # comment inside\n"
        "]\n";
    struct toml_error err;
    toml_doc_t *d = parse (text, &err);
    json_t *root, *hosts;
    const char *name, *h0, *h1, *kp;
    int k, big, neg, port, on, off;
    double ratio;

    assert_non_null (d);
    root = toml_root (d);
    assert_int_equal (json_unpack (root, "{s:s s:{s:i s:s s:f s:i s:i s:b s:b} s:o}",
                                   "name", &name,
                                   "tbon", "k", &k, "keepalive-period", &kp,
                                   "ratio", &ratio, "big", &big, "neg", &neg,
                                   "on", &on, "off", &off,
                                   "hosts", &hosts), 0);
    assert_string_equal (name, "canopy");
    assert_int_equal (k, 3);
    assert_string_equal (kp, "2s");
    assert_true (ratio == 0.5);
    assert_int_equal (big, 1000000);
    assert_int_equal (neg, -7);
    assert_true (on);
    assert_false (off);
    assert_int_equal (json_array_size (hosts), 2);
    assert_int_equal (json_unpack (json_array_get (hosts, 0), "{s:s s:i}", "host", &h0,
                                   "port", &port), 0);
    assert_string_equal (h0, "node0");
    assert_int_equal (port, 8050);
    assert_int_equal (json_unpack (json_array_get (hosts, 1), "{s:s}", "host", &h1), 0);
    assert_string_equal (h1, "node1\t\"x\" \xc3\xa9");
    json_t *list = json_object_get (json_array_get (hosts, 1), "list");
    assert_int_equal (json_array_size (list), 3);

    /* lines */
    assert_int_equal (toml_line (d, "name"), 2);
    assert_int_equal (toml_line (d, "tbon"), 4);
    assert_int_equal (toml_line (d, "tbon.k"), 5);
    assert_int_equal (toml_line (d, "tbon.off"), 11);
    assert_int_equal (toml_line (d, "hosts[0]"), 13);
    assert_int_equal (toml_line (d, "hosts[0].port"), 15);
    assert_int_equal (toml_line (d, "hosts[1]"), 16);
    assert_int_equal (toml_line (d, "hosts[1].host"), 17);
    assert_int_equal (toml_line (d, "hosts[1].list"), 18);
    assert_int_equal (toml_line (d, "hosts[1].list[2]"), 19);
    assert_int_equal (toml_line (d, "nope"), 0);
    toml_destroy (d);
    toml_destroy (NULL);
}

struct bad {
    const char *text;
    int line;
    const char *words;
};

static void test_errors (void **state)
{
    const struct bad bad[] = {
        { "a = 1\nb = \n", 2, "expected a value" },
        { "a = 1\na = 2\n", 2, "set twice" },
        { "[t]\nx=1\n[t]\n", 3, "defined twice" },
        { "x = hello\n", 1, "strings need quotes" },
        { "x = \"open\n", 1, "not closed" },
        { "x = \"\"\"multi\"\"\"\n", 1, "multi-line" },
        { "x = {a = 1}\n", 1, "inline tables" },
        { "a.b = 1\n", 1, "dotted keys" },
        { "x = 1979-05-27\n", 1, "dates" },
        { "x = 007\n", 1, "leading zeros" },
        { "x = 1 2\n", 1, "one statement per line" },
        { "x = [1, 2\n", 2, "not closed" },
        { "x = [1 2]\n", 1, "expected ','" },
        { "[hosts\n", 1, "close the table" },
        { "t = 1\n[[t]]\n", 2, "not an array of tables" },
        { "x = \"\\q\"\n", 1, "invalid escape" },
        { "x = \"\\u12\"\n", 1, "hex digits" },
        { "= 3\n", 1, "expected a key" },
        { "x 3\n", 1, "expected '='" },
        { "x = 99999999999999999999\n", 1, "out of range" },
        { "\n\nx = 1.\n", 3, "invalid number" },
        { NULL, 0, NULL },
    };
    for (int i = 0; bad[i].text; i++) {
        struct toml_error err;
        errno = 0;
        toml_doc_t *d = parse (bad[i].text, &err);
        if (d)
            fail_msg ("accepted: %s", bad[i].text);
        assert_int_equal (errno, EINVAL);
        if (err.line != bad[i].line || !strstr (err.text, bad[i].words))
            fail_msg ("'%s': got line %d '%s', expected line %d '%s'", bad[i].text,
                      err.line, err.text, bad[i].line, bad[i].words);
        assert_true (err.col >= 1);
    }
    /* a NUL byte */
    struct toml_error err;
    assert_null (toml_parse ("a = 1\nb\0 = 2\n", 13, &err));
    assert_int_equal (err.line, 2);
}

static void test_files (void **state)
{
    char path[256];
    struct toml_error err;
    const char *tmp = getenv ("TMPDIR");
    snprintf (path, sizeof (path), "%s/toml-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp (path);
    assert_true (fd >= 0);
    const char *text = "\xef\xbb\xbfk = 2\r\n[s]\r\nv = 'x'\r\n";
    assert_int_equal (write (fd, text, strlen (text)), strlen (text));
    close (fd);
    toml_doc_t *d = toml_parse_file (path, &err);
    assert_non_null (d);
    assert_int_equal (toml_line (d, "s.v"), 3);
    toml_destroy (d);
    unlink (path);
    assert_null (toml_parse_file (path, &err));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (err.text, "No such file"));
    assert_null (toml_parse_file ("/", &err));
    assert_null (toml_parse (NULL, 0, &err));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_document),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_files),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
