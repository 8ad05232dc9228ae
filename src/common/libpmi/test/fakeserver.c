/* test/fakeserver.c - a PMI-1 server thread for client tests (fakeserver.h).
 *
 * Design notes: poll() over the server ends of the socketpairs plus a
 * wake-up pipe; complete lines go to pmi_server_request(); gets and
 * barriers are answered synchronously from an in-memory list of keys.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include "src/common/libpmi/pmi_server.h"
#include "src/common/libpmi/pmi_wire.h"
#include "fakeserver.h"

struct conn {
    int fd;
    char buf[PMI_WIRE_LINE_MAX * 2];
    size_t len;
};

struct kv {
    char *key;
    char *val;
    struct kv *next;
};

struct fakeserver {
    int size;
    struct conn *conns;
    int wake[2];
    pthread_t t;
    pmi_server_t *srv;
    struct kv *kvs;
    int finalized;
    int abort_code;
};

static void fs_send (void *arg, int rank, const char *line, size_t len)
{
    struct fakeserver *fs = arg;
    if (fs->conns[rank].fd >= 0)
        (void)send (fs->conns[rank].fd, line, len, MSG_NOSIGNAL);
}

static int fs_put (void *arg, int rank, const char *key, const char *value)
{
    struct fakeserver *fs = arg;
    struct kv *kv = calloc (1, sizeof (*kv));
    if (!kv)
        return -1;
    kv->key = strdup (key);
    kv->val = strdup (value);
    kv->next = fs->kvs;
    fs->kvs = kv;
    return 0;
}

static int fs_get (void *arg, int rank, const char *key)
{
    struct fakeserver *fs = arg;
    for (struct kv *kv = fs->kvs; kv; kv = kv->next) {
        if (!strcmp (kv->key, key))
            return pmi_server_get_respond (fs->srv, rank, 0, kv->val);
    }
    return pmi_server_get_respond (fs->srv, rank, ENOENT, NULL);
}

static int fs_barrier (void *arg)
{
    struct fakeserver *fs = arg;
    return pmi_server_barrier_done (fs->srv, 0);
}

static void fs_finalize (void *arg, int rank)
{
    struct fakeserver *fs = arg;
    fs->finalized++;
}

static void fs_abort (void *arg, int rank, int code, const char *msg)
{
    struct fakeserver *fs = arg;
    fs->abort_code = code;
}

static const struct pmi_server_ops ops = {
    .send = fs_send, .put = fs_put, .get = fs_get, .barrier = fs_barrier,
    .finalize = fs_finalize, .abort = fs_abort,
};

static void conn_close (struct fakeserver *fs, int rank)
{
    close (fs->conns[rank].fd);
    fs->conns[rank].fd = -1;
    (void)pmi_server_disconnect (fs->srv, rank);
}

static void *thread_main (void *arg)
{
    struct fakeserver *fs = arg;
    struct pollfd *pfd = calloc (fs->size + 1, sizeof (*pfd));

    for (;;) {
        int open = 0;
        for (int i = 0; i < fs->size; i++) {
            pfd[i].fd = fs->conns[i].fd;
            pfd[i].events = POLLIN;
            if (pfd[i].fd >= 0)
                open++;
        }
        if (open == 0)
            break;
        pfd[fs->size].fd = fs->wake[0];
        pfd[fs->size].events = POLLIN;
        if (poll (pfd, fs->size + 1, -1) < 0)
            continue;
        if (pfd[fs->size].revents)
            break;
        for (int i = 0; i < fs->size; i++) {
            struct conn *c = &fs->conns[i];
            if (c->fd < 0 || !pfd[i].revents)
                continue;
            ssize_t n = read (c->fd, c->buf + c->len, sizeof (c->buf) - c->len);
            if (n <= 0) {
                conn_close (fs, i);
                continue;
            }
            c->len += n;
            char *nl;
            while (c->fd >= 0 && (nl = memchr (c->buf, '\n', c->len))) {
                size_t l = nl - c->buf + 1;
                if (pmi_server_request (fs->srv, i, c->buf, l) < 0)
                    conn_close (fs, i);
                memmove (c->buf, c->buf + l, c->len - l);
                c->len -= l;
            }
            if (c->fd >= 0 && c->len == sizeof (c->buf))
                conn_close (fs, i);
        }
    }
    free (pfd);
    return NULL;
}

struct fakeserver *fakeserver_start (int size, const char *mapping, int *fds)
{
    struct fakeserver *fs = calloc (1, sizeof (*fs));
    struct pmi_server_config cfg = {
        .size = size,
        .kvsname = "fake_kvs",
        .process_mapping = mapping,
    };
    if (!fs)
        abort ();
    fs->size = size;
    fs->abort_code = -1;
    fs->conns = calloc (size, sizeof (struct conn));
    if (!fs->conns || pipe (fs->wake) < 0)
        abort ();
    for (int i = 0; i < size; i++) {
        int sv[2];
        if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
            abort ();
        fs->conns[i].fd = sv[0];
        fds[i] = sv[1];
    }
    if (!(fs->srv = pmi_server_create (&cfg, &ops, fs)))
        abort ();
    if (pthread_create (&fs->t, NULL, thread_main, fs) != 0)
        abort ();
    return fs;
}

void fakeserver_stop (struct fakeserver *fs, bool force)
{
    if (force)
        (void)write (fs->wake[1], "x", 1);
    pthread_join (fs->t, NULL);
}

int fakeserver_finalized (struct fakeserver *fs)
{
    return fs->finalized;
}

int fakeserver_abort_code (struct fakeserver *fs)
{
    return fs->abort_code;
}

void fakeserver_destroy (struct fakeserver *fs)
{
    if (!fs)
        return;
    for (int i = 0; i < fs->size; i++) {
        if (fs->conns[i].fd >= 0)
            close (fs->conns[i].fd);
    }
    while (fs->kvs) {
        struct kv *kv = fs->kvs;
        fs->kvs = kv->next;
        free (kv->key);
        free (kv->val);
        free (kv);
    }
    pmi_server_destroy (fs->srv);
    close (fs->wake[0]);
    close (fs->wake[1]);
    free (fs->conns);
    free (fs);
}
