/* fdutil.h - file descriptor flags, whole-buffer I/O, the descriptor limit.
 *
 * read_all/write_all retry on EINTR and short transfers; read_all returns
 * the number of bytes read (less than asked only at EOF).
 *
 * fd_raise_limit raises the soft limit on open descriptors to 'want', or
 * to the hard limit if that is lower; it never lowers it.  Returns 0 and
 * the soft limit now in force in *limit (if not NULL; ULONG_MAX for no
 * limit), or -1 with errno (getrlimit/setrlimit's).
 */
#ifndef CANOPY_UTIL_FDUTIL_H
#define CANOPY_UTIL_FDUTIL_H

#include <sys/types.h>

int fd_set_nonblocking (int fd);
int fd_set_blocking (int fd);
int fd_set_cloexec (int fd);
int fd_unset_cloexec (int fd);
ssize_t write_all (int fd, const void *buf, size_t len);
ssize_t read_all (int fd, void *buf, size_t len);
int fd_raise_limit (unsigned long want, unsigned long *limit);

#endif
