/* test/cert.c - CURVE certificates: create, save (mode 0600, no silent
 * overwrite), load, and refusal of missing, malformed and public-only
 * files.
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
#include <sys/stat.h>
#include "src/broker/cert.h"

static char dir[256];

static int setup (void **state)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (dir, sizeof (dir), "%s/cert-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null (mkdtemp (dir));
    return 0;
}

static int teardown (void **state)
{
    char cmd[300];
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
    return system (cmd) == 0 ? 0 : -1;
}

static void write_file (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

static void test_roundtrip (void **state)
{
    char path[300], err[256];
    struct stat st;
    cert_t *c = cert_create ();
    cert_t *d;

    assert_non_null (c);
    assert_true (cert_key_valid (cert_public (c)));
    assert_true (cert_key_valid (cert_secret (c)));
    assert_string_not_equal (cert_public (c), cert_secret (c));
    assert_int_equal (cert_set_meta (c, "hostname", "node0"), 0);
    snprintf (path, sizeof (path), "%s/curve.cert", dir);
    assert_int_equal (cert_save (c, path, false, err, sizeof (err)), 0);
    assert_int_equal (stat (path, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);
    /* no silent overwrite */
    assert_int_equal (cert_save (c, path, false, err, sizeof (err)), -1);
    assert_int_equal (errno, EEXIST);
    assert_non_null (strstr (err, "--force"));
    assert_int_equal (cert_save (c, path, true, err, sizeof (err)), 0);

    assert_non_null ((d = cert_load (path, err, sizeof (err))));
    assert_string_equal (cert_public (c), cert_public (d));
    assert_string_equal (cert_secret (c), cert_secret (d));
    cert_destroy (d);
    cert_destroy (c);
    cert_destroy (NULL);
}

static void test_bad_files (void **state)
{
    char path[300], err[256];
    cert_t *c = cert_create ();

    snprintf (path, sizeof (path), "%s/missing", dir);
    assert_null (cert_load (path, err, sizeof (err)));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (err, path));

    snprintf (path, sizeof (path), "%s/garbage", dir);
    write_file (path, "this is not\n  a certificate = \"at all\n");
    assert_null (cert_load (path, err, sizeof (err)));
    assert_int_equal (errno, EINVAL);

    snprintf (path, sizeof (path), "%s/public-only", dir);
    char text[256];
    snprintf (text, sizeof (text), "curve\n    public-key = \"%s\"\n", cert_public (c));
    write_file (path, text);
    assert_null (cert_load (path, err, sizeof (err)));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (err, "secret"));

    assert_int_equal (cert_save (c, "", false, NULL, 0), -1);
    snprintf (path, sizeof (path), "%s/no/such/dir/cert", dir);
    assert_int_equal (cert_save (c, path, false, err, sizeof (err)), -1);
    assert_int_equal (errno, ENOENT);
    cert_destroy (c);
}

static void test_key_valid (void **state)
{
    assert_false (cert_key_valid (NULL));
    assert_false (cert_key_valid (""));
    assert_false (cert_key_valid ("1234"));
    assert_false (cert_key_valid ("0000000000000000000000000000000000000000x"));
    assert_false (cert_key_valid ("000000000000000000000000000000000000000\""));
    assert_true (cert_key_valid ("0000000000000000000000000000000000000000"));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_roundtrip),
        cmocka_unit_test (test_bad_files),
        cmocka_unit_test (test_key_valid),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
