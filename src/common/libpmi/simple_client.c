/* simple_client.c - PMI-1 simple wire protocol client (simple_client.h).
 *
 * Design notes:
 * - Blocking I/O on one stream socket.  Reads go through a buffer that
 *   keeps what follows the current line (the initack handshake answers
 *   with four lines at once).  A line longer than PMI_WIRE_LINE_MAX is a
 *   protocol error.
 * - Writes use send(MSG_NOSIGNAL) so a dead server gives EPIPE rather than
 *   killing the process; a PMI_FD that is not a socket falls back to
 *   write().
 * - Requests are formatted with snprintf and checked for length; keys
 *   and values are checked so that nothing the caller passes can inject a
 *   second token or line.
 * Libc only (it is compiled into libpmi.so).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "simple_client.h"

struct pmi_simple_client {
    int fd;
    int rank;
    int size;
    int kvsname_max;
    int keylen_max;
    int vallen_max;
    char kvsname[PMI_WIRE_LINE_MAX];
    char rbuf[PMI_WIRE_LINE_MAX * 2];
    size_t rlen;
};

static int parse_int_env (const char *name, int dflt, int min, int *val)
{
    const char *s = getenv (name);
    char *end;
    long v;

    if (!s || !*s) {
        *val = dflt;
        return 0;
    }
    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || *end || end == s || v < min || v > INT_MAX) {
        errno = EINVAL;
        return -1;
    }
    *val = (int)v;
    return 0;
}

pmi_simple_client_t *pmi_simple_client_create_fd (int fd, int rank, int size)
{
    pmi_simple_client_t *c;

    if (fd < 0 || rank < 0 || size < 1 || rank >= size) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        errno = ENOMEM;
        return NULL;
    }
    c->fd = fd;
    c->rank = rank;
    c->size = size;
    return c;
}

void pmi_simple_client_destroy (pmi_simple_client_t *c)
{
    if (c) {
        int saved_errno = errno;
        if (c->fd >= 0)
            close (c->fd);
        free (c);
        errno = saved_errno;
    }
}

static int write_line (pmi_simple_client_t *c, const char *buf, size_t len)
{
    size_t done = 0;

    if (c->fd < 0) {
        errno = ENOTCONN;
        return -1;
    }
    while (done < len) {
        ssize_t n = send (c->fd, buf + done, len - done, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write (c->fd, buf + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += n;
    }
    return 0;
}

/* Read one line into msg (parsed). */
static int read_msg (pmi_simple_client_t *c, struct pmi_wire_msg *msg)
{
    for (;;) {
        char *nl = memchr (c->rbuf, '\n', c->rlen);
        if (nl) {
            size_t n = nl - c->rbuf + 1;
            int rc = pmi_wire_parse (msg, c->rbuf, n);
            memmove (c->rbuf, c->rbuf + n, c->rlen - n);
            c->rlen -= n;
            if (rc < 0)
                errno = EPROTO;
            return rc;
        }
        if (c->rlen >= PMI_WIRE_LINE_MAX) {
            errno = EPROTO;
            return -1;
        }
        ssize_t n = read (c->fd, c->rbuf + c->rlen, sizeof (c->rbuf) - c->rlen);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        c->rlen += n;
    }
}

static int expect_cmd (const struct pmi_wire_msg *msg, const char *expect)
{
    const char *cmd = pmi_wire_cmd (msg);
    if (!cmd || strcmp (cmd, expect) != 0) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int pmi_simple_client_rpc (pmi_simple_client_t *c, const char *request,
                           const char *expect, struct pmi_wire_msg *rsp)
{
    char buf[PMI_WIRE_LINE_MAX + 1];
    int n;

    if (!c || !request || !expect || !rsp) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (buf, sizeof (buf), "%s\n", request);
    if (n < 0 || (size_t)n >= sizeof (buf) || memchr (request, '\n', n - 1)) {
        errno = EINVAL;
        return -1;
    }
    if (write_line (c, buf, n) < 0 || read_msg (c, rsp) < 0)
        return -1;
    return expect_cmd (rsp, expect);
}

/* rc=0 in the answer, else EIO. */
static int check_rc (const struct pmi_wire_msg *msg)
{
    int rc;
    if (pmi_wire_get_int (msg, "rc", &rc) < 0) {
        errno = EPROTO;
        return -1;
    }
    if (rc != 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

static int connect_port (const char *port_str)
{
    char host[256];
    const char *colon = strrchr (port_str, ':');
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL, *ai;
    int fd = -1, one = 1, e;

    if (!colon || colon == port_str || !colon[1]
        || (size_t)(colon - port_str) >= sizeof (host)) {
        errno = EINVAL;
        return -1;
    }
    memcpy (host, port_str, colon - port_str);
    host[colon - port_str] = '\0';
    if ((e = getaddrinfo (host, colon + 1, &hints, &res)) != 0) {
        errno = e == EAI_SYSTEM ? errno : EHOSTUNREACH;
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        if ((fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                          ai->ai_protocol)) < 0)
            continue;
        if (connect (fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        e = errno;
        close (fd);
        fd = -1;
        errno = e;
    }
    freeaddrinfo (res);
    if (fd >= 0)
        (void)setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof (one));
    return fd;
}

int pmi_simple_client_initack (pmi_simple_client_t *c, int id)
{
    struct pmi_wire_msg msg;
    char req[64];
    int size, rank;

    if (!c || id < 0) {
        errno = EINVAL;
        return -1;
    }
    snprintf (req, sizeof (req), "cmd=initack pmiid=%d", id);
    if (pmi_simple_client_rpc (c, req, "initack", &msg) < 0)
        return -1;
    if (read_msg (c, &msg) < 0 || expect_cmd (&msg, "set") < 0
        || pmi_wire_get_int (&msg, "size", &size) < 0
        || read_msg (c, &msg) < 0 || expect_cmd (&msg, "set") < 0
        || pmi_wire_get_int (&msg, "rank", &rank) < 0
        || read_msg (c, &msg) < 0 || expect_cmd (&msg, "set") < 0) {
        if (errno != ECONNRESET)
            errno = EPROTO;
        return -1;
    }
    if (size < 1 || rank < 0 || rank >= size) {
        errno = EPROTO;
        return -1;
    }
    c->size = size;
    c->rank = rank;
    return 0;
}

pmi_simple_client_t *pmi_simple_client_create (void)
{
    const char *fd_str = getenv ("PMI_FD");
    const char *port = getenv ("PMI_PORT");
    pmi_simple_client_t *c;
    int fd, rank, size, id = -1;

    if (parse_int_env ("PMI_RANK", 0, 0, &rank) < 0
        || parse_int_env ("PMI_SIZE", 1, 1, &size) < 0)
        return NULL;
    if (rank >= size) {
        errno = EINVAL;
        return NULL;
    }
    if (fd_str && *fd_str) {
        if (parse_int_env ("PMI_FD", -1, 0, &fd) < 0)
            return NULL;
        if (fcntl (fd, F_GETFD) < 0) {
            errno = EBADF;
            return NULL;
        }
        (void)fcntl (fd, F_SETFD, FD_CLOEXEC);
        return pmi_simple_client_create_fd (fd, rank, size);
    }
    if (!port || !*port) {
        errno = ENOENT;
        return NULL;
    }
    if (parse_int_env ("PMI_ID", -1, 0, &id) < 0)
        return NULL;
    if ((fd = connect_port (port)) < 0)
        return NULL;
    if (!(c = pmi_simple_client_create_fd (fd, id >= 0 ? 0 : rank,
                                           id >= 0 ? 1 : size))) {
        close (fd);
        return NULL;
    }
    if (id >= 0 && pmi_simple_client_initack (c, id) < 0) {
        pmi_simple_client_destroy (c);
        return NULL;
    }
    return c;
}

int pmi_simple_client_init (pmi_simple_client_t *c)
{
    struct pmi_wire_msg msg;
    const char *name;

    if (!c) {
        errno = EINVAL;
        return -1;
    }
    if (pmi_simple_client_rpc (c, "cmd=init pmi_version=1 pmi_subversion=1",
                               "response_to_init", &msg) < 0
        || check_rc (&msg) < 0)
        return -1;
    if (pmi_simple_client_rpc (c, "cmd=get_maxes", "maxes", &msg) < 0)
        return -1;
    if (pmi_wire_get_int (&msg, "kvsname_max", &c->kvsname_max) < 0
        || pmi_wire_get_int (&msg, "keylen_max", &c->keylen_max) < 0
        || pmi_wire_get_int (&msg, "vallen_max", &c->vallen_max) < 0
        || c->kvsname_max < 1 || c->keylen_max < 1 || c->vallen_max < 1) {
        errno = EPROTO;
        return -1;
    }
    if (pmi_simple_client_rpc (c, "cmd=get_my_kvsname", "my_kvsname", &msg) < 0)
        return -1;
    if (!(name = pmi_wire_get (&msg, "kvsname")) || !pmi_wire_token_valid (name)) {
        errno = EPROTO;
        return -1;
    }
    snprintf (c->kvsname, sizeof (c->kvsname), "%s", name);
    return 0;
}

int pmi_simple_client_rank (pmi_simple_client_t *c)
{
    return c ? c->rank : -1;
}

int pmi_simple_client_size (pmi_simple_client_t *c)
{
    return c ? c->size : -1;
}

const char *pmi_simple_client_kvsname (pmi_simple_client_t *c)
{
    return c ? c->kvsname : NULL;
}

int pmi_simple_client_kvsname_max (pmi_simple_client_t *c)
{
    return c ? c->kvsname_max : -1;
}

int pmi_simple_client_keylen_max (pmi_simple_client_t *c)
{
    return c ? c->keylen_max : -1;
}

int pmi_simple_client_vallen_max (pmi_simple_client_t *c)
{
    return c ? c->vallen_max : -1;
}

static bool key_ok (pmi_simple_client_t *c, const char *kvsname, const char *key)
{
    return pmi_wire_token_valid (kvsname) && pmi_wire_token_valid (key)
        && (c->keylen_max <= 0 || strlen (key) < (size_t)c->keylen_max);
}

int pmi_simple_client_put (pmi_simple_client_t *c, const char *kvsname,
                           const char *key, const char *value)
{
    struct pmi_wire_msg msg;
    char req[PMI_WIRE_LINE_MAX];
    int n;

    if (!c) {
        errno = EINVAL;
        return -1;
    }
    if (!kvsname)
        kvsname = c->kvsname;
    if (!key_ok (c, kvsname, key) || !pmi_wire_value_valid (value)
        || (c->vallen_max > 0 && strlen (value) >= (size_t)c->vallen_max)) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (req, sizeof (req), "cmd=put kvsname=%s key=%s value=%s",
                  kvsname, key, value);
    if (n < 0 || (size_t)n >= sizeof (req)) {
        errno = EINVAL;
        return -1;
    }
    if (pmi_simple_client_rpc (c, req, "put_result", &msg) < 0)
        return -1;
    return check_rc (&msg);
}

int pmi_simple_client_get (pmi_simple_client_t *c, const char *kvsname,
                           const char *key, char *buf, size_t size)
{
    struct pmi_wire_msg msg;
    char req[PMI_WIRE_LINE_MAX];
    const char *value;
    int rc, n;

    if (!c || !buf) {
        errno = EINVAL;
        return -1;
    }
    if (!kvsname)
        kvsname = c->kvsname;
    if (!key_ok (c, kvsname, key)) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (req, sizeof (req), "cmd=get kvsname=%s key=%s", kvsname, key);
    if (n < 0 || (size_t)n >= sizeof (req)) {
        errno = EINVAL;
        return -1;
    }
    if (pmi_simple_client_rpc (c, req, "get_result", &msg) < 0)
        return -1;
    if (pmi_wire_get_int (&msg, "rc", &rc) < 0) {
        errno = EPROTO;
        return -1;
    }
    if (rc != 0) {
        errno = ENOENT;
        return -1;
    }
    if (!(value = pmi_wire_get (&msg, "value"))) {
        errno = EPROTO;
        return -1;
    }
    if (strlen (value) >= size) {
        errno = EOVERFLOW;
        return -1;
    }
    strcpy (buf, value);
    return 0;
}

int pmi_simple_client_barrier (pmi_simple_client_t *c)
{
    struct pmi_wire_msg msg;
    int rc;

    if (pmi_simple_client_rpc (c, "cmd=barrier_in", "barrier_out", &msg) < 0)
        return -1;
    /* rc is optional in barrier_out (hydra sends none) */
    if (pmi_wire_get_int (&msg, "rc", &rc) == 0 && rc != 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

int pmi_simple_client_get_universe_size (pmi_simple_client_t *c, int *size)
{
    struct pmi_wire_msg msg;

    if (pmi_simple_client_rpc (c, "cmd=get_universe_size", "universe_size", &msg) < 0)
        return -1;
    if (pmi_wire_get_int (&msg, "size", size) < 0) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int pmi_simple_client_get_appnum (pmi_simple_client_t *c, int *appnum)
{
    struct pmi_wire_msg msg;

    if (pmi_simple_client_rpc (c, "cmd=get_appnum", "appnum", &msg) < 0)
        return -1;
    if (pmi_wire_get_int (&msg, "appnum", appnum) < 0) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int pmi_simple_client_finalize (pmi_simple_client_t *c)
{
    struct pmi_wire_msg msg;
    int rc;

    rc = pmi_simple_client_rpc (c, "cmd=finalize", "finalize_ack", &msg);
    if (c && c->fd >= 0) {
        int saved_errno = errno;
        (void)shutdown (c->fd, SHUT_RDWR);
        close (c->fd);
        c->fd = -1;
        errno = saved_errno;
    }
    return rc;
}

int pmi_simple_client_abort (pmi_simple_client_t *c, int exitcode)
{
    char req[64];
    int n;

    if (!c) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (req, sizeof (req), "cmd=abort exitcode=%d\n", exitcode);
    return write_line (c, req, n);
}
