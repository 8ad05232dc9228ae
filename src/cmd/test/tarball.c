/* test/tarball.c - tar writer and reader round trips: short and long
 * (pax) names and link targets, empty and binary files, directories;
 * a damaged header and a truncated archive are EPROTO.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include "src/cmd/tarball.h"

static int tmpfile_fd (void)
{
    FILE *f = tmpfile ();
    assert_non_null (f);
    return dup (fileno (f));    /* the FILE may go: the fd keeps the file */
}

static void test_round_trip (void **state)
{
    int fd = tmpfile_fd ();
    tar_writer_t *w = tar_writer_create (fd);
    char longname[300], longtarget[250];
    unsigned char bin[1500];
    struct tar_entry e;
    tar_reader_t *r;

    memset (longname, 'k', sizeof (longname) - 1);
    longname[sizeof (longname) - 1] = '\0';
    longname[10] = '.';
    memset (longtarget, 't', sizeof (longtarget) - 1);
    longtarget[sizeof (longtarget) - 1] = '\0';
    for (size_t i = 0; i < sizeof (bin); i++)
        bin[i] = i * 31;
    assert_non_null (w);
    assert_int_equal (tar_write_file (w, "a.b", "hello", 5, 0), 0);
    assert_int_equal (tar_write_file (w, "empty", "", 0, 0), 0);
    assert_int_equal (tar_write_file (w, longname, bin, sizeof (bin), 12345), 0);
    assert_int_equal (tar_write_dir (w, "d.e", 0), 0);
    assert_int_equal (tar_write_symlink (w, "ln", "a.b", 0), 0);
    assert_int_equal (tar_write_symlink (w, "ln2", longtarget, 0), 0);
    assert_int_equal (tar_write_file (w, "x/y", "slash", 5, 0), 0);
    assert_int_equal (tar_writer_finish (w), 0);
    assert_int_equal (lseek (fd, 0, SEEK_END) % 512, 0);

    assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
    assert_non_null ((r = tar_reader_create (fd)));
    assert_int_equal (tar_read_next (r, &e), 1);
    assert_int_equal (e.type, TAR_FILE);
    assert_string_equal (e.name, "a.b");
    assert_int_equal (e.size, 5);
    assert_memory_equal (e.data, "hello", 5);
    assert_int_equal (tar_read_next (r, &e), 1);
    assert_string_equal (e.name, "empty");
    assert_int_equal (e.size, 0);
    assert_int_equal (tar_read_next (r, &e), 1);
    assert_string_equal (e.name, longname);
    assert_int_equal (e.size, sizeof (bin));
    assert_memory_equal (e.data, bin, sizeof (bin));
    assert_int_equal (e.mtime, 12345);
    assert_int_equal (tar_read_next (r, &e), 1);
    assert_int_equal (e.type, TAR_DIR);
    assert_string_equal (e.name, "d.e");
    assert_int_equal (tar_read_next (r, &e), 1);
    assert_int_equal (e.type, TAR_SYMLINK);
    assert_string_equal (e.linkname, "a.b");
    assert_int_equal (tar_read_next (r, &e), 1);
    assert_string_equal (e.name, "ln2");
    assert_string_equal (e.linkname, longtarget);
    assert_int_equal (tar_read_next (r, &e), 1);
    assert_string_equal (e.name, "x/y");
    assert_int_equal (tar_read_next (r, &e), 0);
    assert_int_equal (tar_read_next (r, &e), 0);
    tar_reader_destroy (r);
    close (fd);
}

static void test_damage (void **state)
{
    int fd = tmpfile_fd ();
    tar_writer_t *w = tar_writer_create (fd);
    struct tar_entry e;
    tar_reader_t *r;
    char buf[4096];

    assert_int_equal (tar_write_file (w, "k", "0123456789", 10, 0), 0);
    assert_int_equal (tar_writer_finish (w), 0);
    /* a flipped byte in the header */
    assert_int_equal (pread (fd, buf, 1, 0), 1);
    buf[0] ^= 1;
    assert_int_equal (pwrite (fd, buf, 1, 0), 1);
    assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
    r = tar_reader_create (fd);
    errno = 0;
    assert_int_equal (tar_read_next (r, &e), -1);
    assert_int_equal (errno, EPROTO);
    assert_non_null (strstr (tar_reader_error (r), "checksum"));
    tar_reader_destroy (r);
    buf[0] ^= 1;
    assert_int_equal (pwrite (fd, buf, 1, 0), 1);
    /* cut in the middle of the data */
    assert_int_equal (ftruncate (fd, 512 + 5), 0);
    assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
    r = tar_reader_create (fd);
    errno = 0;
    assert_int_equal (tar_read_next (r, &e), -1);
    assert_int_equal (errno, EPROTO);
    assert_non_null (strstr (tar_reader_error (r), "truncated"));
    tar_reader_destroy (r);
    /* not a tar file at all */
    memset (buf, 'x', sizeof (buf));
    assert_int_equal (pwrite (fd, buf, sizeof (buf), 0), sizeof (buf));
    assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
    r = tar_reader_create (fd);
    assert_int_equal (tar_read_next (r, &e), -1);
    assert_int_equal (errno, EPROTO);
    tar_reader_destroy (r);
    /* an empty file has no end blocks */
    assert_int_equal (ftruncate (fd, 0), 0);
    assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
    r = tar_reader_create (fd);
    assert_int_equal (tar_read_next (r, &e), -1);
    assert_int_equal (errno, EPROTO);
    tar_reader_destroy (r);
    close (fd);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_round_trip),
        cmocka_unit_test (test_damage),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
