/* test/kvs_shm_share.c - handing a segment to a client (kvs_shm_share.h):
 * the memory file is sealed and its client descriptor read-only; a
 * client attaches through a UNIX socket served by a thread and sees what
 * was written; the ways an attach fails (nobody listens, no descriptor,
 * something else sent, no answer in time, a path too long); a reader
 * maps at once, and as it grows, what the writer says is in memory.
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
#include "src/common/libkvs/kvs_shm.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

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

/* Bytes of the mapping that starts at addr that are in this process's
 * page table (smaps' Rss), or -1.
 */
static long mapped_bytes (const void *addr)
{
    FILE *f = fopen ("/proc/self/smaps", "r");
    char line[512];
    bool in = false;
    long kb = -1;

    if (!f)
        return -1;
    while (fgets (line, sizeof (line), f)) {
        unsigned long lo, hi;
        if (sscanf (line, "%lx-%lx ", &lo, &hi) == 2)
            in = lo == (unsigned long)(uintptr_t)addr;
        else if (in && sscanf (line, "Rss: %ld kB", &kb) == 1)
            break;
    }
    fclose (f);
    return kb < 0 ? -1 : kb * 1024;
}

static void test_populate (void **state)
{
    size_t size = 1024 * 1024;
    void *mem, *ro;
    int rofd, fd;
    kvs_shm_t *w;
    kvs_shm_reader_t *r;
    void *data;
    size_t len;

    fd = kvs_shm_memfd_create (size, &mem, &rofd);
    assert_true (fd >= 0);
    assert_non_null ((w = kvs_shm_format (mem, size, true)));
    memset ((char *)mem + 4096, 0, 512 * 1024 - 4096); /* resident, as a writer's */
    kvs_shm_set_filled (w, 512 * 1024);
    ro = mmap (NULL, size, PROT_READ, MAP_SHARED, rofd, 0);
    assert_true (ro != MAP_FAILED);
    long before = mapped_bytes (ro);
    if (before < 0 || madvise (ro, 4096, MADV_POPULATE_READ) < 0) {
        /* no smaps, or a kernel (or valgrind) without it: faults as before */
        print_message ("populate not checked: %s\n",
                       before < 0 ? "no smaps" : strerror (errno));
    }
    else {
        assert_true (before == 0);
        assert_non_null ((r = kvs_shm_reader_create (ro, size)));
        assert_true (mapped_bytes (ro) >= 512 * 1024);
        assert_true (mapped_bytes (ro) < (long)size);  /* not beyond filled */
        /* the writer goes further: the next get maps the rest */
        memset ((char *)mem + 512 * 1024, 0, 256 * 1024);
        kvs_shm_set_filled (w, 768 * 1024);
        kvs_shm_set_filled (w, 4096);                  /* it only grows */
        assert_int_equal (kvs_shm_get (r, "a", 0, &data, &len), KVS_SHM_MISS);
        assert_true (mapped_bytes (ro) >= 768 * 1024);
        /* beyond the segment is the segment */
        kvs_shm_set_filled (w, 2 * size);
        assert_int_equal (kvs_shm_get (r, "a", 0, &data, &len), KVS_SHM_MISS);
        assert_true (mapped_bytes (ro) == (long)size);
        kvs_shm_reader_destroy (r);
    }
    kvs_shm_set_filled (NULL, 0);
    kvs_shm_destroy (w);
    munmap (ro, size);
    kvs_shm_unmap (mem, size);
    close (rofd);
    close (fd);
}

/* Records written move `filled`: a reader maps their pages. */
static void test_populate_put (void **state)
{
    size_t size = 1024 * 1024;
    const char *ref = "sha256-0123456789abcdef0123456789abcdef"
                      "0123456789abcdef0123456789abcdef";
    static char blob[200 * 1024];
    void *mem, *ro;
    int rofd, fd;
    kvs_shm_t *w;
    kvs_shm_reader_t *r;

    fd = kvs_shm_memfd_create (size, &mem, &rofd);
    assert_true (fd >= 0);
    assert_non_null ((w = kvs_shm_format (mem, size, true)));
    assert_int_equal (kvs_shm_put (w, ref, blob, sizeof (blob)), 1);
    ro = mmap (NULL, size, PROT_READ, MAP_SHARED, rofd, 0);
    assert_true (ro != MAP_FAILED);
    if (mapped_bytes (ro) < 0 || madvise (ro, 4096, MADV_POPULATE_READ) < 0)
        print_message ("populate not checked\n");
    else {
        assert_non_null ((r = kvs_shm_reader_create (ro, size)));
        assert_true (mapped_bytes (ro) >= (long)sizeof (blob));
        assert_true (mapped_bytes (ro) < (long)size);
        kvs_shm_reader_destroy (r);
    }
    kvs_shm_destroy (w);
    munmap (ro, size);
    kvs_shm_unmap (mem, size);
    close (rofd);
    close (fd);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_memfd),
        cmocka_unit_test (test_path),
        cmocka_unit_test (test_attach),
        cmocka_unit_test (test_alive),
        cmocka_unit_test (test_populate),
        cmocka_unit_test (test_populate_put),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
