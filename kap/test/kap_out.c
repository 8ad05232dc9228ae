/* test/kap_out.c - unit tests for kap_out.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "kap_out.h"

static char dir[] = "/tmp/kap_out_test.XXXXXX";
static char path[256];

/* the number of entries in dir (not . and ..) */
static int entries (void)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    int n = 0;

    assert_non_null (d);
    while ((e = readdir (d)))
        if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
            n++;
    closedir (d);
    return n;
}

static void put_file (const char *text)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

static int setup (void **state)
{
    (void)state;
    if (!mkdtemp (dir))
        return -1;
    snprintf (path, sizeof (path), "%s/out.json", dir);
    return 0;
}

static int teardown (void **state)
{
    (void)state;
    (void)unlink (path);
    return rmdir (dir);
}

static void test_commit (void **state)
{
    char err[256] = "";
    json_t *doc = json_pack ("{s:i s:s}", "kap", 1, "driver", "crowd");
    json_error_t jerr;
    struct stat st;

    (void)state;
    put_file ("old");
    kap_out_t *o = kap_out_open (path, err, sizeof (err));
    assert_non_null (o);
    assert_int_equal (entries (), 2);       /* the old file, the temporary */
    assert_int_equal (kap_out_commit (o, doc, err, sizeof (err)), 0);
    assert_int_equal (entries (), 1);
    json_t *back = json_load_file (path, 0, &jerr);
    assert_non_null (back);
    assert_true (json_equal (doc, back));
    assert_int_equal (stat (path, &st), 0);
    mode_t mask = umask (0);
    umask (mask);
    assert_int_equal (st.st_mode & 0777, 0666 & ~mask);
    json_decref (back);
    json_decref (doc);
}

/* a failed run leaves the previous document as it was, and no temporary */
static void test_abandon (void **state)
{
    char err[256] = "";
    char buf[16] = "";

    (void)state;
    put_file ("previous");
    kap_out_t *o = kap_out_open (path, err, sizeof (err));
    assert_non_null (o);
    errno = EPERM;
    kap_out_abandon (o);
    assert_int_equal (errno, EPERM);
    kap_out_abandon (NULL);
    assert_int_equal (errno, EPERM);
    assert_int_equal (entries (), 1);
    FILE *f = fopen (path, "r");
    assert_non_null (f);
    assert_non_null (fgets (buf, sizeof (buf), f));
    fclose (f);
    assert_string_equal (buf, "previous");
}

/* a directory that does not exist fails at open, naming the path */
static void test_bad_path (void **state)
{
    char err[512] = "";
    char bad[300];

    (void)state;
    snprintf (bad, sizeof (bad), "%s/no/such/dir/x.json", dir);
    errno = 0;
    assert_null (kap_out_open (bad, err, sizeof (err)));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (err, bad));
    assert_non_null (strstr (err, strerror (ENOENT)));
    assert_null (kap_out_open ("", NULL, 0));
    assert_int_equal (errno, EINVAL);
    assert_null (kap_out_open (NULL, err, sizeof (err)));
    assert_int_equal (errno, EINVAL);
}

/* the target turned into a directory during the run: commit fails, the
 * temporary is removed
 */
static void test_commit_fails (void **state)
{
    char err[512] = "";
    json_t *doc = json_pack ("{s:i}", "kap", 1);

    (void)state;
    (void)unlink (path);
    kap_out_t *o = kap_out_open (path, err, sizeof (err));
    assert_non_null (o);
    assert_int_equal (mkdir (path, 0700), 0);
    assert_int_equal (entries (), 2);
    errno = 0;
    assert_int_equal (kap_out_commit (o, doc, err, sizeof (err)), -1);
    assert_int_equal (errno, EISDIR);
    assert_non_null (strstr (err, path));
    assert_int_equal (entries (), 1);
    assert_int_equal (rmdir (path), 0);
    assert_int_equal (kap_out_commit (NULL, doc, err, sizeof (err)), -1);
    assert_int_equal (errno, EINVAL);
    json_decref (doc);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_commit),
        cmocka_unit_test (test_abandon),
        cmocka_unit_test (test_bad_path),
        cmocka_unit_test (test_commit_fails),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
