/* fdutil.c - see fdutil.h */
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <limits.h>
#include <sys/resource.h>
#include "fdutil.h"

static int set_fl (int fd, int flag, int on)
{
    int fl = fcntl (fd, F_GETFL);
    if (fl < 0)
        return -1;
    fl = on ? (fl | flag) : (fl & ~flag);
    return fcntl (fd, F_SETFL, fl);
}

int fd_set_nonblocking (int fd)
{
    return set_fl (fd, O_NONBLOCK, 1);
}

int fd_set_blocking (int fd)
{
    return set_fl (fd, O_NONBLOCK, 0);
}

static int set_fd (int fd, int on)
{
    int fl = fcntl (fd, F_GETFD);
    if (fl < 0)
        return -1;
    fl = on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC);
    return fcntl (fd, F_SETFD, fl);
}

int fd_set_cloexec (int fd)
{
    return set_fd (fd, 1);
}

int fd_unset_cloexec (int fd)
{
    return set_fd (fd, 0);
}

ssize_t write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write (fd, p + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += n;
    }
    return done;
}

ssize_t read_all (int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = read (fd, p + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        done += n;
    }
    return done;
}

int fd_raise_limit (unsigned long want, unsigned long *limit)
{
    struct rlimit rl;

    if (getrlimit (RLIMIT_NOFILE, &rl) < 0)
        return -1;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)want)
        want = rl.rlim_max;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)want) {
        rl.rlim_cur = want;
        if (setrlimit (RLIMIT_NOFILE, &rl) < 0)
            return -1;
    }
    if (limit)
        *limit = rl.rlim_cur == RLIM_INFINITY ? ULONG_MAX
                                               : (unsigned long)rl.rlim_cur;
    return 0;
}
