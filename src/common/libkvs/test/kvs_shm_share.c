/* test/kvs_shm_share.c - handing a segment to a client (kvs_shm_share.h):
 * the memory file is sealed and its client descriptor read-only; a
 * client attaches through a UNIX socket served by a thread and sees what
 * was written; the ways an attach fails (nobody listens, no descriptor,
 * something else sent, no answer in time, a path too long).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "src/common/libkvs/kvs_shm_share.h"

static void test_memfd (void **state)
{
    void *mem;
    int rofd, fd;
    struct stat st;

    assert_int_equal (kvs_shm_memfd_create (0, &mem, &rofd), -1);
    assert_int_equal (errno, EINVAL);
    fd = kvs_shm_memfd_create (100000, &mem, &rofd);
    assert_true (fd >= 0);
    memcpy (mem, "hello", 5);
    assert_int_equal (fstat (rofd, &st), 0);
    assert_int_equal (st.st_size, 100000);
    /* the client's descriptor cannot write, nor map writable */
    assert_int_equal (write (rofd, "x", 1), -1);
    errno = 0;
    assert_true (mmap (NULL, 100000, PROT_READ | PROT_WRITE, MAP_SHARED, rofd, 0)
                 == MAP_FAILED);
    assert_int_equal (errno, EACCES);
    void *ro = mmap (NULL, 100000, PROT_READ, MAP_SHARED, rofd, 0);
    assert_true (ro != MAP_FAILED);
    assert_memory_equal (ro, "hello", 5);
    /* sealed: no shrinking under a reader's mapping */
    assert_int_equal (ftruncate (fd, 10), -1);
    assert_int_equal (errno, EPERM);
    munmap (ro, 100000);
    kvs_shm_unmap (mem, 100000);
    kvs_shm_unmap (NULL, 0);
    close (rofd);
    close (fd);
}

static void test_path (void **state)
{
    char buf[108], longpath[200];

    assert_int_equal (kvs_shm_socket_path (buf, sizeof (buf), "/tmp/x/local-0"), 0);
    assert_string_equal (buf, "/tmp/x/local-0-kvs-shm");
    memset (longpath, 'a', sizeof (longpath) - 1);
    longpath[sizeof (longpath) - 1] = '\0';
    assert_int_equal (kvs_shm_socket_path (buf, sizeof (buf), longpath), -1);
    assert_int_equal (errno, ENAMETOOLONG);
    assert_int_equal (kvs_shm_socket_path (NULL, 0, "x"), -1);
    assert_int_equal (errno, EINVAL);
}

/* A one-connection server: 'mode' says what it answers. */
enum { SEND_FD, SEND_NOTHING, SEND_BYTE, STAY_SILENT };

struct server {
    int lfd;
    int mode;
    int fd;             /* the descriptor to send */
};

static void *serve (void *arg)
{
    struct server *sv = arg;
    int c = accept (sv->lfd, NULL, NULL);

    if (c < 0)
        return NULL;
    switch (sv->mode) {
        case SEND_FD:
            (void)kvs_shm_send_fd (c, sv->fd);
            break;
        case SEND_BYTE:
            (void)write (c, "S", 1);
            break;
        case STAY_SILENT:
            usleep (300 * 1000);
            break;
    }
    close (c);
    return NULL;
}

static void listen_on (struct server *sv, const char *path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };

    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", path);
    (void)unlink (path);
    assert_true ((sv->lfd = socket (AF_UNIX, SOCK_STREAM, 0)) >= 0);
    assert_int_equal (bind (sv->lfd, (struct sockaddr *)&addr, sizeof (addr)), 0);
    assert_int_equal (listen (sv->lfd, 4), 0);
}

static void *attach_with (int mode, int fd, const char *path, double timeout,
                          size_t *size, int *sock)
{
    struct server sv = { .mode = mode, .fd = fd };
    pthread_t t;
    void *mem;
    int saved_errno;

    listen_on (&sv, path);
    assert_int_equal (pthread_create (&t, NULL, serve, &sv), 0);
    mem = kvs_shm_attach (path, timeout, size, sock);
    saved_errno = errno;
    assert_int_equal (pthread_join (t, NULL), 0);
    close (sv.lfd);
    unlink (path);
    errno = saved_errno;
    return mem;
}

static void test_attach (void **state)
{
    char dir[] = "/tmp/kvs-shm-test-XXXXXX";
    char path[128];
    void *mem, *got;
    size_t size = 0;
    int rofd, fd, sock = -1;

    assert_non_null (mkdtemp (dir));
    snprintf (path, sizeof (path), "%s/sock", dir);
    assert_true ((fd = kvs_shm_memfd_create (65536, &mem, &rofd)) >= 0);
    strcpy (mem, "the segment");

    got = attach_with (SEND_FD, rofd, path, 5.0, &size, &sock);
    assert_non_null (got);
    /* the server thread closed its end when done: the module is gone */
    assert_false (kvs_shm_alive (sock));
    close (sock);
    assert_int_equal (size, 65536);
    assert_string_equal (got, "the segment");
    strcpy (mem, "changed");        /* shared, not a copy */
    assert_string_equal (got, "changed");
    kvs_shm_unmap (got, size);

    assert_null (attach_with (SEND_NOTHING, -1, path, 5.0, &size, &sock));
    assert_int_equal (errno, EPERM);
    assert_null (attach_with (SEND_BYTE, -1, path, 5.0, &size, &sock));
    assert_int_equal (errno, EPROTO);
    assert_null (attach_with (STAY_SILENT, -1, path, 0.05, &size, &sock));
    assert_int_equal (errno, ETIMEDOUT);

    errno = 0;
    assert_null (kvs_shm_attach (path, 1.0, &size, &sock));    /* nobody listens */
    assert_true (errno == ENOENT || errno == ECONNREFUSED);
    char longpath[200];
    memset (longpath, 'a', sizeof (longpath) - 1);
    longpath[sizeof (longpath) - 1] = '\0';
    assert_null (kvs_shm_attach (longpath, 1.0, &size, &sock));
    assert_int_equal (errno, ENAMETOOLONG);
    assert_null (kvs_shm_attach (path, -1, &size, &sock));
    assert_int_equal (errno, EINVAL);

    kvs_shm_unmap (mem, 65536);
    close (rofd);
    close (fd);
    rmdir (dir);
}

/* kvs_shm_alive: true while the other end is open and silent */
static void test_alive (void **state)
{
    int sv[2];

    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_true (kvs_shm_alive (sv[0]));
    assert_int_equal (write (sv[1], "x", 1), 1);    /* not expected: gone */
    assert_false (kvs_shm_alive (sv[0]));
    close (sv[0]);
    close (sv[1]);
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close (sv[1]);
    assert_false (kvs_shm_alive (sv[0]));
    close (sv[0]);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_memfd),
        cmocka_unit_test (test_path),
        cmocka_unit_test (test_attach),
        cmocka_unit_test (test_alive),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
