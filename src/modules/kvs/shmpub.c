/* shmpub.c - see shmpub.h.
 *
 * - The memory file's pages are allocated as they are first written, and
 *   on this kind of machine that costs several microseconds a page (a
 *   1 KiB KAP fence's values are 128 of them on every broker).  So the
 *   module faults pages in ahead of the writer (MADV_POPULATE_WRITE) a
 *   chunk at a time from a timer, mostly while it waits between
 *   requests: the window ahead grows with what has been published, up
 *   to FAULT_AHEAD_MAX, so a broker that publishes little holds little;
 *   once the arena has been filled (reset) every page is in.  The
 *   header and the table are made resident at once, when the segment is
 *   made, and the segment says so (kvs_shm_set_filled) for readers to
 *   map the table in one call.
 * Design notes:
 * - The listening socket is non-blocking and watched by the module's
 *   reactor; each connection is answered at once (the owner gets one
 *   byte and the read-only descriptor, and so does anyone when guests
 *   may read; anyone else nothing, and is closed).  A send on a new UNIX
 *   connection of one byte cannot block.
 *   An owner's connection stays open, watched, until the client closes
 *   it (or sends anything: it is closed then) or the module ends: that
 *   end is how a client learns the module is gone (kvs_shm_alive).
 * - The read-write descriptor is kept only to close it at the end; the
 *   memory lives until every client has unmapped it too.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/list.h"
#include "src/common/libkvs/kvs_shm.h"
#include "src/common/libkvs/kvs_shm_share.h"
#include "shmpub.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define FAULT_AHEAD_MIN (64 * 1024)
#define FAULT_AHEAD_MAX (2 * 1024 * 1024)
#define FAULT_CHUNK (256 * 1024)    /* per timer call: ~0.3 ms of faults */
#define FAULT_DELAY 0.005

struct attached {
    struct list_node node;
    int fd;
    canopy_watcher_t *w;
    struct shmpub *p;
};

struct shmpub {
    canopy_t *h;
    kvs_shm_t *w;
    void *mem;
    size_t size;
    int fd;                 /* read-write, ours */
    int rofd;               /* what clients get */
    int lfd;                /* the listening socket */
    char path[108];
    canopy_watcher_t *listen_w;
    canopy_watcher_t *fault_w;
    size_t faulted;         /* bytes from the start known to be in memory */
    size_t fault_want;
    uid_t owner;
    bool guests;            /* anyone may have it, not only the owner */
    struct list_node clients;   /* struct attached */
    int nclients;
    uint64_t attaches;
    uint64_t refused;
};

static void detach (struct attached *a)
{
    list_del (&a->node);
    a->p->nclients--;
    canopy_watcher_destroy (a->w);
    close (a->fd);
    free (a);
}

/* A client's end closed (or it sent something it should not have). */
static void client_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                       void *arg)
{
    detach (arg);
}

/* Keep an owner's connection, once the descriptor is sent on it. */
static int keep (struct shmpub *p, int fd)
{
    struct attached *a = calloc (1, sizeof (*a));

    if (!a || !(a->w = canopy_fd_watcher_create (canopy_get_reactor (p->h), fd,
                                                 CANOPY_POLLIN, client_cb, a))) {
        free (a);
        return -1;
    }
    a->fd = fd;
    a->p = p;
    canopy_watcher_unref (a->w);
    canopy_watcher_start (a->w);
    list_add_tail (&p->clients, &a->node);
    p->nclients++;
    return 0;
}

static void listen_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                       void *arg)
{
    struct shmpub *p = arg;

    for (int i = 0; i < 64; i++) {
        struct ucred cred;
        socklen_t len = sizeof (cred);
        int fd = accept4 (p->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                canopy_log (p->h, LOG_ERR, "kvs shm: accept: %s", strerror (errno));
            return;
        }
        if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0
            && (cred.uid == p->owner || p->guests)
            && kvs_shm_send_fd (fd, p->rofd) == 0
            && keep (p, fd) == 0) {
            p->attaches++;
            continue;
        }
        p->refused++;
        close (fd);
    }
}

/* Make n bytes from start resident (start page-aligned); without
 * MADV_POPULATE_WRITE (kernels before 5.14) by writing each page's first
 * byte back as it is.
 */
static void make_resident (char *start, size_t n)
{
    if (madvise (start, n, MADV_POPULATE_WRITE) < 0) {
        for (size_t off = 0; off < n; off += 4096)
            ((volatile char *)start)[off] = ((volatile char *)start)[off];
    }
}

/* Fault in one chunk of what the writer will need next. */
static void fault_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                      void *arg)
{
    struct shmpub *p = arg;
    size_t n = p->fault_want - p->faulted;
    char *start = (char *)p->mem + p->faulted;

    if (n > FAULT_CHUNK)
        n = FAULT_CHUNK;
    make_resident (start, n);
    p->faulted += n;
    if (p->faulted < p->fault_want) {
        canopy_timer_watcher_reset (p->fault_w, FAULT_DELAY, 0);
        canopy_watcher_start (p->fault_w);
    }
}

/* After a put: want the next window faulted in. */
static void fault_ahead (struct shmpub *p)
{
    struct kvs_shm_stats st;
    size_t ahead, want;

    kvs_shm_stats (p->w, &st);
    if (st.resets > 0)
        return;             /* the whole arena has been written */
    ahead = st.used < FAULT_AHEAD_MIN ? FAULT_AHEAD_MIN
            : st.used > FAULT_AHEAD_MAX ? FAULT_AHEAD_MAX : st.used;
    want = st.end + ahead < p->size ? (st.end + ahead) & ~(size_t)4095 : p->size;
    if (want <= p->faulted || want <= p->fault_want)
        return;
    p->fault_want = want;
    if (!canopy_watcher_is_active (p->fault_w)) {
        canopy_timer_watcher_reset (p->fault_w, FAULT_DELAY, 0);
        canopy_watcher_start (p->fault_w);
    }
}

struct shmpub *shmpub_create (canopy_t *h, const char *local_path, size_t size,
                              bool guests, canopy_error_t *error)
{
    struct shmpub *p;
    struct sockaddr_un addr;
    canopy_reactor_t *r;
    struct kvs_shm_stats st;

    if (!h || !local_path || size < KVS_SHM_MIN_SIZE || size >= ((size_t)1 << 40)) {
        errno = EINVAL;
        errprintf (error, "kvs.shm-size must be 0 (off) or from %d to 2^40-1 bytes",
                   KVS_SHM_MIN_SIZE);
        return NULL;
    }
    if (!(p = calloc (1, sizeof (*p)))) {
        errno = ENOMEM;
        errprintf (error, "out of memory");
        return NULL;
    }
    p->h = h;
    p->fd = p->rofd = p->lfd = -1;
    list_init (&p->clients);
    p->owner = getuid ();
    p->guests = guests;
    if (kvs_shm_socket_path (p->path, sizeof (p->path), local_path) < 0) {
        errprintf (error, "socket path too long");
        goto error;
    }
    if ((p->fd = kvs_shm_memfd_create (size, &p->mem, &p->rofd)) < 0) {
        errprintf (error, "memfd of %zu bytes: %s", size, strerror (errno));
        goto error;
    }
    p->size = size;
    if (!(p->w = kvs_shm_format (p->mem, size, true))) {     /* a new memfd */
        errprintf (error, "formatting the segment: %s", strerror (errno));
        goto error;
    }
    /* The header and the table, in memory before anyone reads them: the
     * table is probed at random, so left to fault it costs the writer a
     * fault per page at first (6% of the KVS thread's CPU in the first
     * KAP fences) and every reader one per 16 pages (kvs_shm.c).
     */
    kvs_shm_stats (p->w, &st);              /* st.end: the arena's start */
    p->faulted = p->fault_want = (st.end + 4095) & ~(size_t)4095;
    make_resident (p->mem, p->faulted);
    kvs_shm_set_filled (p->w, p->faulted);
    if ((p->lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
        errprintf (error, "socket: %s", strerror (errno));
        goto error;
    }
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, p->path);
    (void)unlink (p->path);
    if (bind (p->lfd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        errprintf (error, "bind %s: %s", p->path, strerror (errno));
        close (p->lfd);
        p->lfd = -1;
        goto error;
    }
    /* anyone may ask; only the owner is given the segment (listen_cb) */
    (void)chmod (p->path, 0777);
    if (listen (p->lfd, 1024) < 0) {
        errprintf (error, "listen %s: %s", p->path, strerror (errno));
        goto error;
    }
    if (!(r = canopy_get_reactor (h))
        || !(p->listen_w = canopy_fd_watcher_create (r, p->lfd, CANOPY_POLLIN,
                                                     listen_cb, p))
        || !(p->fault_w = canopy_timer_watcher_create (r, FAULT_DELAY, 0,
                                                       fault_cb, p))) {
        errprintf (error, "watcher: %s", strerror (errno));
        goto error;
    }
    canopy_watcher_unref (p->listen_w);
    canopy_watcher_unref (p->fault_w);
    canopy_watcher_start (p->listen_w);
    return p;
error:
    shmpub_destroy (p);
    return NULL;
}

void shmpub_destroy (struct shmpub *p)
{
    if (!p)
        return;
    int saved_errno = errno;
    kvs_shm_close (p->w);       /* mapped clients stop reading it */
    canopy_watcher_destroy (p->listen_w);
    canopy_watcher_destroy (p->fault_w);
    while (!list_empty (&p->clients))
        detach (list_first_entry (&p->clients, struct attached, node));
    if (p->lfd >= 0) {
        close (p->lfd);
        (void)unlink (p->path);
    }
    kvs_shm_destroy (p->w);
    kvs_shm_unmap (p->mem, p->size);
    if (p->rofd >= 0)
        close (p->rofd);
    if (p->fd >= 0)
        close (p->fd);
    free (p);
    errno = saved_errno;
}

void shmpub_put (struct shmpub *p, const char *ref, const void *data, size_t len)
{
    if (p && kvs_shm_put (p->w, ref, data, len) == 1)
        fault_ahead (p);
}

bool shmpub_has (struct shmpub *p, const char *ref)
{
    return p && kvs_shm_has (p->w, ref);
}

void shmpub_root (struct shmpub *p, int version, const char *rootref)
{
    if (p)
        kvs_shm_set_root (p->w, version, rootref);
}

json_t *shmpub_stats (struct shmpub *p)
{
    struct kvs_shm_stats st;

    json_t *o;

    if (!p)
        return json_null ();
    kvs_shm_stats (p->w, &st);
    o = json_pack ("{s:I s:I s:I s:I s:I s:I s:I s:i s:I s:I}",
                      "size", (json_int_t)st.size,
                      "arena", (json_int_t)st.arena,
                      "used", (json_int_t)st.used,
                      "objects", (json_int_t)st.objects,
                      "puts", (json_int_t)st.puts,
                      "resets", (json_int_t)st.resets,
                      "too-big", (json_int_t)st.too_big,
                      "clients", p->nclients,
                      "attaches", (json_int_t)p->attaches,
                      "refused", (json_int_t)p->refused);
    return o ? o : json_null ();
}
