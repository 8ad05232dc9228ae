/* simple_client.h - client side of the PMI-1 simple wire protocol.
 *
 * Talks to a PMI server over a stream socket: the one named by PMI_FD
 * (inherited, already connected), or a TCP connection to PMI_PORT
 * (host:port), optionally announcing PMI_ID with the initack handshake.
 * Every call is a blocking request/response round trip; the client has
 * one outstanding request at most (it is not thread-safe: callers
 * serialize).
 *
 * Used by libpmi.so (the PMI-1 C API for programs) and, through
 * pmi_client.h, by the broker's PMI bootstrap.  Libc only.
 *
 * Errors: -1 with errno.  EPROTO: the server answered garbage or an
 * unexpected command; ECONNRESET: the server closed the connection;
 * ENOENT from get: the key does not exist; EIO: the server answered
 * rc != 0; EOVERFLOW: the caller's buffer is too small; EINVAL: bad
 * arguments (keys or values that cannot travel on the wire, too long).
 */
#ifndef CANOPY_PMI_SIMPLE_CLIENT_H
#define CANOPY_PMI_SIMPLE_CLIENT_H

#include <stddef.h>
#include <stdbool.h>
#include "pmi_wire.h"

typedef struct pmi_simple_client pmi_simple_client_t;

/* Connect as the environment says: PMI_FD, else PMI_PORT (+ PMI_ID);
 * rank and size from PMI_RANK/PMI_SIZE (or the initack handshake).
 * Returns NULL with errno ENOENT (neither PMI_FD nor PMI_PORT set), EINVAL
 * (a malformed variable), or the connect/handshake error.  The file
 * descriptor is made close-on-exec.
 */
pmi_simple_client_t *pmi_simple_client_create (void);

/* Use an already connected descriptor (owned from now on). */
pmi_simple_client_t *pmi_simple_client_create_fd (int fd, int rank, int size);

/* Close the connection (without finalize) and free. */
void pmi_simple_client_destroy (pmi_simple_client_t *c);

/* The PMI_ID handshake (done by create() when PMI_PORT and PMI_ID are
 * set): sends "initack pmiid=id", reads initack and the three "set" lines,
 * and takes rank and size from them.
 */
int pmi_simple_client_initack (pmi_simple_client_t *c, int id);

/* The init handshake: init, get_maxes, get_my_kvsname. */
int pmi_simple_client_init (pmi_simple_client_t *c);

int pmi_simple_client_rank (pmi_simple_client_t *c);
int pmi_simple_client_size (pmi_simple_client_t *c);
/* After init: the job's kvsname and the server's maxima. */
const char *pmi_simple_client_kvsname (pmi_simple_client_t *c);
int pmi_simple_client_kvsname_max (pmi_simple_client_t *c);
int pmi_simple_client_keylen_max (pmi_simple_client_t *c);
int pmi_simple_client_vallen_max (pmi_simple_client_t *c);

/* kvsname NULL means the job's own. */
int pmi_simple_client_put (pmi_simple_client_t *c, const char *kvsname,
                           const char *key, const char *value);
int pmi_simple_client_get (pmi_simple_client_t *c, const char *kvsname,
                           const char *key, char *buf, size_t size);
int pmi_simple_client_barrier (pmi_simple_client_t *c);
int pmi_simple_client_get_universe_size (pmi_simple_client_t *c, int *size);
int pmi_simple_client_get_appnum (pmi_simple_client_t *c, int *appnum);
/* Sends finalize, waits for finalize_ack, and closes the connection. */
int pmi_simple_client_finalize (pmi_simple_client_t *c);
/* Sends abort (no answer is expected).  Does not exit. */
int pmi_simple_client_abort (pmi_simple_client_t *c, int exitcode);

/* Send one request line (without '\n') and read the answer into *rsp,
 * checking that its command is 'expect'.  Returns 0 or -1 with errno.
 * The rc of the answer is not checked.
 */
int pmi_simple_client_rpc (pmi_simple_client_t *c, const char *request,
                           const char *expect, struct pmi_wire_msg *rsp);

#endif
