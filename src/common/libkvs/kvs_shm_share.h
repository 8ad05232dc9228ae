/* kvs_shm_share.h - how a KVS read-cache segment (kvs_shm.h) gets from the
 * KVS module to its local clients.
 *
 * The segment is an anonymous memory file (memfd, sealed against shrinking
 * and growing, so a mapping never faults past its end).  The module
 * listens on a UNIX socket beside the broker's ("PATH-kvs-shm", as
 * direct_path names it); a client connects and receives one byte and a
 * read-only descriptor of the file (SCM_RIGHTS), then maps it, and keeps
 * the connection: the module holds its end open while it lives, so a
 * client learns of a module (or broker) that died without closing the
 * segment when the connection ends (kvs_shm_alive).  Only the
 * instance owner gets a descriptor (SO_PEERCRED), unless
 * kvs.guest-access lets guests read the whole namespace anyway: without
 * it a guest's gets go to the KVS, which refuses them.  No name in a
 * shared directory is involved, so nobody else can plant a segment, and
 * the memory goes away with the last mapping.
 *
 * All functions return -1 (or NULL) with errno on failure and leave
 * nothing behind (no descriptor, no mapping).
 */
#ifndef CANOPY_KVS_SHM_SHARE_H
#define CANOPY_KVS_SHM_SHARE_H

#include <stddef.h>
#include <stdbool.h>

/* The socket path for a broker whose local socket is local_path
 * (ENAMETOOLONG if it does not fit in size or in a sockaddr_un).
 */
int kvs_shm_socket_path (char *buf, size_t size, const char *local_path);

/* Module: a new memory file of 'size' bytes mapped read-write at *mem,
 * sealed; *rofd is a read-only descriptor of it for clients.  Returns the
 * read-write descriptor.  Undo with kvs_shm_unmap (*mem, size) and close.
 */
int kvs_shm_memfd_create (size_t size, void **mem, int *rofd);

/* Module: send fd over the connected socket 'sock' with one byte. */
int kvs_shm_send_fd (int sock, int fd);

/* Client: connect to 'path', wait up to timeout seconds for the
 * descriptor, and map the file read-only (*size: its size; *sock: the
 * connection, to keep open and test with kvs_shm_alive, then close).
 * ECONNREFUSED or ENOENT: no module listens; EPERM: the module sent no
 * descriptor (not the owner); ETIMEDOUT; EPROTO: something else came.
 */
void *kvs_shm_attach (const char *path, double timeout, size_t *size, int *sock);

/* Client: whether the module still holds the other end of sock (a poll
 * that does not wait).
 */
bool kvs_shm_alive (int sock);

/* munmap; accepts NULL, keeps errno. */
void kvs_shm_unmap (void *mem, size_t size);

#endif
