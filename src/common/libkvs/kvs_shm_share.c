/* kvs_shm_share.c - see kvs_shm_share.h.
 *
 * Design notes:
 * - The read-only descriptor is the memfd opened again through
 *   /proc/self/fd with O_RDONLY: a client holding it cannot map the
 *   segment writable, so the module's segment is written by the module
 *   alone.
 * - The client's wait is a poll with a deadline: the module answers from
 *   its reactor, at once unless it is busy, and a client never waits
 *   longer than it would for an answer it can do without (it then asks
 *   the KVS as before).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "src/common/libcanopy/direct.h"
#include "kvs_shm_share.h"

int kvs_shm_socket_path (char *buf, size_t size, const char *local_path)
{
    if (!buf || !local_path) {
        errno = EINVAL;
        return -1;
    }
    return direct_path (buf, size, local_path, "kvs-shm");
}

void kvs_shm_unmap (void *mem, size_t size)
{
    if (mem) {
        int saved_errno = errno;
        (void)munmap (mem, size);
        errno = saved_errno;
    }
}

int kvs_shm_memfd_create (size_t size, void **mem, int *rofd)
{
    char proc[64];
    int fd, ro = -1;
    void *p = MAP_FAILED;

    if (!mem || !rofd || size == 0) {
        errno = EINVAL;
        return -1;
    }
    if ((fd = memfd_create ("canopy-kvs", MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0)
        return -1;
    if (ftruncate (fd, (off_t)size) < 0
        || fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
        goto error;
    snprintf (proc, sizeof (proc), "/proc/self/fd/%d", fd);
    if ((ro = open (proc, O_RDONLY | O_CLOEXEC)) < 0)
        goto error;
    if ((p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        goto error;
    *mem = p;
    *rofd = ro;
    return fd;
error: {
        int saved_errno = errno;
        if (ro >= 0)
            close (ro);
        close (fd);
        errno = saved_errno;
        return -1;
    }
}

/* A message of one byte with room for one descriptor. */
struct fdmsg {
    char byte;
    struct iovec iov;
    union {
        char buf[CMSG_SPACE (sizeof (int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh;
};

static void fdmsg_init (struct fdmsg *m)
{
    memset (m, 0, sizeof (*m));
    m->byte = 'S';
    m->iov.iov_base = &m->byte;
    m->iov.iov_len = 1;
    m->mh.msg_iov = &m->iov;
    m->mh.msg_iovlen = 1;
    m->mh.msg_control = m->u.buf;
    m->mh.msg_controllen = sizeof (m->u.buf);
}

int kvs_shm_send_fd (int sock, int fd)
{
    struct fdmsg m;
    struct cmsghdr *cm;

    fdmsg_init (&m);
    cm = CMSG_FIRSTHDR (&m.mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN (sizeof (int));
    memcpy (CMSG_DATA (cm), &fd, sizeof (int));
    if (sendmsg (sock, &m.mh, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
        return -1;
    return 0;
}

/* One byte and, with it, one descriptor. */
static int recv_fd (int sock, double timeout)
{
    struct fdmsg m;
    struct pollfd pfd = { .fd = sock, .events = POLLIN };
    ssize_t n;
    int rc, fd = -1;

    while ((rc = poll (&pfd, 1, (int)(timeout * 1000))) < 0 && errno == EINTR)
        ;
    if (rc < 0)
        return -1;
    if (rc == 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    fdmsg_init (&m);
    m.byte = 0;
    while ((n = recvmsg (sock, &m.mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR (&m.mh); cm; cm = CMSG_NXTHDR (&m.mh, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS
            && cm->cmsg_len == CMSG_LEN (sizeof (int)))
            memcpy (&fd, CMSG_DATA (cm), sizeof (int));
    }
    if (n == 0 && fd < 0) {
        errno = EPERM;      /* closed without a descriptor: refused */
        return -1;
    }
    if (n != 1 || m.byte != 'S' || fd < 0 || (m.mh.msg_flags & MSG_CTRUNC)) {
        if (fd >= 0)
            close (fd);
        errno = EPROTO;
        return -1;
    }
    return fd;
}

void *kvs_shm_attach (const char *path, double timeout, size_t *size, int *sockp)
{
    struct sockaddr_un addr;
    struct stat st;
    void *mem = NULL;
    int sock, fd = -1;

    if (!path || !size || !sockp || timeout < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (strlen (path) >= sizeof (addr.sun_path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if ((sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return NULL;
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, path);
    if (connect (sock, (struct sockaddr *)&addr, sizeof (addr)) < 0
        || (fd = recv_fd (sock, timeout)) < 0)
        goto done;
    if (fstat (fd, &st) < 0)
        goto done;
    if (!S_ISREG (st.st_mode) || st.st_size <= 0) {
        errno = EPROTO;
        goto done;
    }
    if ((mem = mmap (NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0))
        == MAP_FAILED) {
        mem = NULL;
        goto done;
    }
    *size = (size_t)st.st_size;
    *sockp = sock;
done: {
        int saved_errno = errno;
        if (fd >= 0)
            close (fd);
        if (!mem)
            close (sock);
        errno = saved_errno;
    }
    return mem;
}

bool kvs_shm_alive (int sock)
{
    struct pollfd pfd = { .fd = sock, .events = POLLIN | POLLRDHUP };

    /* the module sends nothing after the descriptor: any event is its end */
    return poll (&pfd, 1, 0) == 0;
}
