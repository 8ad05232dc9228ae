/* zap.c - ZAP handler with a CURVE allow-list (zap.h).
 *
 * Request frames (after the REP envelope): version "1.0", request id,
 * domain, address, routing id, mechanism, then credentials (CURVE: one
 * 32-byte public key).  Reply: version, request id, status code, status
 * text, user id, metadata.  A request that cannot be parsed still gets a
 * reply (REP must answer before it can receive again), with status 500
 * when even its request id is missing.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <zmq.h>
#include "src/common/libutil/hashmap.h"
#include "zap.h"

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ZAP_MAX_FRAMES 8

struct zap {
    void *sock;
    hashmap_t *allow;       /* Z85 public key -> (void *)1 */
    zap_log_f log;
    void *log_arg;
    uint64_t allowed;
    uint64_t denied;
};

zap_t *zap_create (void *zctx)
{
    zap_t *z = calloc (1, sizeof (*z));
    int linger = 0;

    if (!z) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(z->allow = hashmap_create (NULL))
        || !(z->sock = zmq_socket (zctx, ZMQ_REP))
        || zmq_setsockopt (z->sock, ZMQ_LINGER, &linger, sizeof (linger)) < 0
        || zmq_bind (z->sock, ZAP_ENDPOINT) < 0) {
        zap_destroy (z);
        return NULL;
    }
    return z;
}

void zap_destroy (zap_t *z)
{
    if (z) {
        int saved_errno = errno;
        if (z->sock)
            zmq_close (z->sock);
        hashmap_destroy (z->allow);
        free (z);
        errno = saved_errno;
    }
}

int zap_authorize (zap_t *z, const char *pubkey)
{
    uint8_t bin[32];
    if (!z || !pubkey || strlen (pubkey) != 40 || !zmq_z85_decode (bin, pubkey)) {
        errno = EINVAL;
        return -1;
    }
    if (hashmap_lookup (z->allow, pubkey))
        return 0;
    return hashmap_insert (z->allow, pubkey, (void *)1);
}

void *zap_socket (zap_t *z)
{
    return z ? z->sock : NULL;
}

void zap_set_log (zap_t *z, zap_log_f fn, void *arg)
{
    if (z) {
        z->log = fn;
        z->log_arg = arg;
    }
}

uint64_t zap_allowed_count (const zap_t *z)
{
    return z ? z->allowed : 0;
}

uint64_t zap_denied_count (const zap_t *z)
{
    return z ? z->denied : 0;
}

static bool frame_is (zmq_msg_t *f, const char *s)
{
    size_t len = strlen (s);
    return zmq_msg_size (f) == len && !memcmp (zmq_msg_data (f), s, len);
}

static void frame_str (zmq_msg_t *f, char *buf, size_t size)
{
    size_t n = zmq_msg_size (f);
    if (n >= size)
        n = size - 1;
    memcpy (buf, zmq_msg_data (f), n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (buf[i] < 0x20 || buf[i] > 0x7e)
            buf[i] = '?';
    }
}

static int send_str (void *sock, const void *data, size_t len, bool more)
{
    return zmq_send (sock, data, len, more ? ZMQ_SNDMORE : 0) < 0 ? -1 : 0;
}

/* Receive all frames of one request (at most ZAP_MAX_FRAMES are kept).
 * Returns the number kept, or -1 (EAGAIN: nothing pending).
 */
static int recv_request (void *sock, zmq_msg_t *frames, int *nkept)
{
    int n = 0, more = 1;
    size_t len = sizeof (more);

    *nkept = 0;
    while (more) {
        zmq_msg_t tmp, *f = n < ZAP_MAX_FRAMES ? &frames[n] : &tmp;
        zmq_msg_init (f);
        if (zmq_msg_recv (f, sock, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close (f);
            if (n == 0)
                return -1;
            break;
        }
        if (zmq_getsockopt (sock, ZMQ_RCVMORE, &more, &len) < 0)
            more = 0;
        if (f == &tmp)
            zmq_msg_close (f);
        else
            n++;
    }
    *nkept = n;
    return n;
}

static int handle_one (zap_t *z)
{
    zmq_msg_t f[ZAP_MAX_FRAMES];
    int n;
    const char *code = "400", *text = "No access";
    char mech[32] = "-", addr[64] = "-", key[41] = "-";
    bool allowed = false;

    if (recv_request (z->sock, f, &n) < 0)
        return -1;
    if (n >= 6 && frame_is (&f[0], "1.0")) {
        frame_str (&f[5], mech, sizeof (mech));
        frame_str (&f[3], addr, sizeof (addr));
        if (!strcmp (mech, "CURVE") && n >= 7 && zmq_msg_size (&f[6]) == 32) {
            zmq_z85_encode (key, zmq_msg_data (&f[6]), 32);
            if (hashmap_lookup (z->allow, key)) {
                allowed = true;
                code = "200";
                text = "OK";
            }
        }
    }
    else if (n < 2) {
        code = "500";
        text = "Malformed request";
    }
    if (allowed)
        z->allowed++;
    else
        z->denied++;
    if (z->log)
        z->log (allowed, mech, key, addr, z->log_arg);
    /* reply: version, request id, status code, text, user id, metadata */
    int rc = 0;
    if (send_str (z->sock, "1.0", 3, true) < 0
        || send_str (z->sock, n >= 2 ? zmq_msg_data (&f[1]) : "",
                     n >= 2 ? zmq_msg_size (&f[1]) : 0, true) < 0
        || send_str (z->sock, code, 3, true) < 0
        || send_str (z->sock, text, strlen (text), true) < 0
        || send_str (z->sock, allowed ? key : "", allowed ? 40 : 0, true) < 0
        || send_str (z->sock, "", 0, false) < 0)
        rc = -1;
    for (int i = 0; i < n; i++)
        zmq_msg_close (&f[i]);
    return rc;
}

int zap_handle (zap_t *z)
{
    int count = 0;

    if (!z) {
        errno = EINVAL;
        return -1;
    }
    for (;;) {
        if (handle_one (z) < 0) {
            if (errno == EAGAIN)
                break;
            return -1;
        }
        count++;
    }
    return count;
}
