/* kvs_shm_client.c - see kvs_shm_client.h.
 *
 * Design notes:
 * - States: ATTACHED (mapped, a reader on it), DETACHED (try again at
 *   retry_at), OFF (never: not a local broker, switched off, refused).
 *   Counters live on as the state changes.
 * - A module that died without closing the segment (its broker was
 *   killed) leaves it mapped with its last root: the handle checks that
 *   the module still holds the attach connection at most every
 *   ALIVE_CHECK seconds (one poll), so after such a death it reads that
 *   root for no longer than that, then asks the broker, which fails.
 * - The attach waits at most ATTACH_WAIT for the descriptor: the module
 *   answers from its reactor, so a long wait means it is busy, and the
 *   get is better off asking the KVS (it would wait in line there too).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <canopy/canopy.h>
#include "src/common/libutil/monotime.h"
#include "src/common/libcanopy/handle_private.h"
#include "kvs_shm.h"
#include "kvs_shm_share.h"
#include "kvs_shm_client.h"
#include "kvs_private.h"

#define ATTACH_WAIT 1.0     /* seconds for the descriptor */
#define RETRY_ABSENT 5.0    /* seconds before trying again to find one */
#define ALIVE_CHECK 0.1     /* seconds between checks that the module lives */

enum { DETACHED, ATTACHED, OFF };

struct shm_client {
    int state;
    int off_errno;              /* why OFF: ENOENT (none to use), EPERM */
    double retry_at;
    void *mem;
    size_t size;
    int sock;                   /* the attach connection */
    double checked;             /* when the module was last seen alive */
    kvs_shm_reader_t *rd;
    int floor;
    struct kvs_read_stats stats;
    struct kvs_shm_reader_stats past;   /* of readers gone */
};

static void detach (struct shm_client *c)
{
    if (c->rd) {
        struct kvs_shm_reader_stats st;
        kvs_shm_reader_stats (c->rd, &st);
        c->past.hits += st.hits;
        c->past.misses += st.misses;
        c->past.retries += st.retries;
    }
    kvs_shm_reader_destroy (c->rd);
    kvs_shm_unmap (c->mem, c->size);
    if (c->sock >= 0)
        close (c->sock);
    c->sock = -1;
    c->rd = NULL;
    c->mem = NULL;
    c->size = 0;
    if (c->state == ATTACHED)
        c->state = DETACHED;
}

static void client_free (void *arg)
{
    struct shm_client *c = arg;
    if (c) {
        int saved_errno = errno;
        detach (c);
        free (c);
        errno = saved_errno;
    }
}

static bool shm_enabled (void)
{
    const char *s = getenv ("CANOPY_KVS_SHM");
    return !s || (strcmp (s, "0") != 0 && strcmp (s, "off") != 0);
}

static struct shm_client *client_get (canopy_t *h, bool create)
{
    struct shm_client *c = canopy_aux_get (h, "kvs::shm");

    if (c || !create)
        return c;
    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    c->sock = -1;
    c->state = shm_enabled () && handle_local_path (h) ? DETACHED : OFF;
    c->off_errno = ENOENT;
    if (canopy_aux_set (h, "kvs::shm", c, client_free) < 0) {
        free (c);
        return NULL;
    }
    return c;
}

/* Attach if it is time to try; errno says why not (ENOENT: nothing to
 * attach to, or not yet time to try again).
 */
static void attach (canopy_t *h, struct shm_client *c)
{
    char path[108];
    double now = monotime ();

    if (now < c->retry_at) {
        errno = ENOENT;
        return;
    }
    if (kvs_shm_socket_path (path, sizeof (path), handle_local_path (h)) < 0) {
        c->state = OFF;
        errno = ENOENT;
        return;
    }
    if (!(c->mem = kvs_shm_attach (path, ATTACH_WAIT, &c->size, &c->sock))) {
        int e = errno == ECONNREFUSED ? ENOENT : errno;
        if (e == EPERM) {
            c->state = OFF;
            c->off_errno = EPERM;
        }
        else
            c->retry_at = now + (e == ETIMEDOUT ? ATTACH_WAIT : RETRY_ABSENT);
        errno = e;
        return;
    }
    if (!(c->rd = kvs_shm_reader_create (c->mem, c->size))) {
        detach (c);
        c->retry_at = now + RETRY_ABSENT;
        errno = ENOENT;
        return;
    }
    c->state = ATTACHED;
    c->checked = now;
    c->stats.attaches++;
}

int kvs_read_attach (canopy_t *h)
{
    struct shm_client *c;

    if (!h) {
        errno = EINVAL;
        return -1;
    }
    if (!(c = client_get (h, true)))
        return -1;
    if (c->state == ATTACHED)
        return 0;
    if (c->state == OFF || kvs_target (h) != CANOPY_NODEID_ANY) {
        errno = c->state == OFF ? c->off_errno : ENOENT;
        return -1;
    }
    c->retry_at = 0;    /* asked for: try now */
    attach (h, c);
    return c->state == ATTACHED ? 0 : -1;
}

int kvs_shm_client_get (canopy_t *h, const char *key, void **data, size_t *len)
{
    struct shm_client *c;
    int rc;

    if (!h || kvs_target (h) != CANOPY_NODEID_ANY
        || !(c = client_get (h, true)) || c->state == OFF)
        return 0;
    if (c->state == DETACHED)
        attach (h, c);
    if (c->state != ATTACHED)
        return 0;
    double now = monotime ();
    if (now - c->checked > ALIVE_CHECK) {
        if (!kvs_shm_alive (c->sock)) {
            detach (c);
            c->retry_at = now;
            return 0;
        }
        c->checked = now;
    }
    rc = kvs_shm_get (c->rd, key, c->floor, data, len);
    if (rc == KVS_SHM_CLOSED) {
        detach (c);     /* the module went away: find the next one later */
        return 0;
    }
    return rc < 0 ? -1 : rc == KVS_SHM_HIT;
}

void kvs_shm_client_floor (canopy_t *h, int version)
{
    struct shm_client *c = h ? client_get (h, true) : NULL;
    if (c && version > c->floor)
        c->floor = version;
}

void kvs_shm_client_count_rpc (canopy_t *h)
{
    struct shm_client *c = h ? client_get (h, true) : NULL;
    if (c)
        c->stats.rpc_gets++;
}

int kvs_read_stats (canopy_t *h, struct kvs_read_stats *st)
{
    struct shm_client *c;
    struct kvs_shm_reader_stats now = { 0 };

    if (!h || !st) {
        errno = EINVAL;
        return -1;
    }
    memset (st, 0, sizeof (*st));
    if (!(c = client_get (h, false)))
        return 0;
    kvs_shm_reader_stats (c->rd, &now);
    *st = c->stats;
    st->attached = c->state == ATTACHED;
    st->shm_hits = c->past.hits + now.hits;
    st->shm_misses = c->past.misses + now.misses;
    st->shm_retries = c->past.retries + now.retries;
    return 0;
}
