/* reactor.c - the event loop (reactor.h).
 *
 * Design notes:
 * - I/O: active zmq watchers are gathered into a zmq_pollitem_t array,
 *   rebuilt only when the set changes (items_dirty).  Descriptors go into
 *   an epoll set (level-triggered, as zmq_poll), which is one more item of
 *   that array, so a pass costs O(zmq sockets + ready descriptors) rather
 *   than O(every descriptor): a broker with thousands of local clients
 *   does not poll them all on each wake-up, and connecting one does not
 *   rebuild the array.  The kernel knows a watcher by a slot number with
 *   a generation, never by pointer, so a stale registration (an fd closed
 *   before its watcher was stopped, still open in a child) cannot reach
 *   freed memory.  A descriptor epoll refuses (a second watcher on the
 *   same fd, a regular file) is polled through the array instead.
 *   When the array is only the epoll set (no zmq socket: module threads,
 *   clients), a pass waits in epoll_wait directly.
 * - Timers: a binary min-heap of active timers keyed by expiry.
 * - Prepare/check/idle watchers live on lists and run in creation order.
 * - Lifetime: callbacks may stop or destroy any watcher.  A watcher
 *   destroyed while the loop runs becomes a zombie (inactive, still in
 *   memory) and is freed at the end of the pass, so iterators never see
 *   freed memory.  Stopped watchers stay on their lists; passes skip them.
 * - The loop keeps going while a referenced watcher is active
 *   (active_refs > 0), like libev/libuv.
 * Threads: one reactor per thread; nothing here is locked.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <limits.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <zmq.h>
#include <canopy/reactor.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/monotime.h"

enum wtype { W_FD, W_ZMQ, W_TIMER, W_PREPARE, W_CHECK, W_IDLE };

struct canopy_watcher {
    canopy_reactor_t *r;
    enum wtype type;
    bool active;
    bool referenced;
    bool zombie;
    canopy_watcher_f cb;
    void *arg;
    struct list_node node;      /* on io/prepare/check/idle list */
    struct list_node zombie_node;
    int fd;
    void *zsock;
    int events;
    double after;
    double repeat;
    double expiry;
    size_t heap_index;
    int slot;                   /* W_FD in the epoll set: its slot, else -1 */
};

struct epslot {
    canopy_watcher_t *w;        /* NULL: free */
    uint32_t gen;
};

struct canopy_reactor {
    struct list_node io;
    struct list_node prepare;
    struct list_node check;
    struct list_node idle;
    struct list_node zombies;
    canopy_watcher_t **heap;
    size_t heap_count;
    size_t heap_alloc;
    zmq_pollitem_t *items;
    canopy_watcher_t **item_w;
    int nitems;
    int items_alloc;
    bool items_dirty;
    int active_refs;
    int idle_active;
    bool stop;
    int stop_rc;
    int depth;              /* nesting of canopy_reactor_run */
    unsigned int generation; /* bumped whenever items is rebuilt */
    unsigned int passes;    /* bumped by every pass, nested ones too */
    double now;
    int epfd;               /* -1 until the first fd watcher starts */
    struct epslot *slots;
    int nslots;
    int free_slot;          /* a free slot to try first, or -1 */
    int nepoll;             /* watchers in the epoll set */
};

canopy_reactor_t *canopy_reactor_create (void)
{
    canopy_reactor_t *r;

    if (!(r = calloc (1, sizeof (*r)))) {
        errno = ENOMEM;
        return NULL;
    }
    list_init (&r->io);
    list_init (&r->prepare);
    list_init (&r->check);
    list_init (&r->idle);
    list_init (&r->zombies);
    r->now = monotime ();
    r->epfd = -1;
    r->free_slot = -1;
    return r;
}

static void free_zombies (canopy_reactor_t *r)
{
    struct list_node *pos, *tmp;
    list_for_each_safe (pos, tmp, &r->zombies) {
        canopy_watcher_t *w = list_entry (pos, canopy_watcher_t, zombie_node);
        list_del (&w->zombie_node);
        if (list_node_linked (&w->node))
            list_del (&w->node);
        free (w);
    }
}

void canopy_reactor_destroy (canopy_reactor_t *r)
{
    if (r) {
        int saved_errno = errno;
        struct list_node *heads[] = { &r->io, &r->prepare, &r->check, &r->idle };
        free_zombies (r);
        /* Orphan watchers the caller forgot: they keep a dangling reactor
         * pointer, so unlink them to at least not corrupt memory here.
         */
        for (int i = 0; i < 4; i++) {
            while (!list_empty (heads[i])) {
                canopy_watcher_t *w = list_entry (heads[i]->next,
                                                  canopy_watcher_t, node);
                list_del (&w->node);
                w->active = false;
                w->r = NULL;
            }
        }
        for (size_t i = 0; i < r->heap_count; i++) {
            r->heap[i]->active = false;
            r->heap[i]->r = NULL;
        }
        free (r->heap);
        free (r->items);
        free (r->item_w);
        free (r->slots);
        if (r->epfd >= 0)
            close (r->epfd);
        free (r);
        errno = saved_errno;
    }
}

double canopy_reactor_now (canopy_reactor_t *r)
{
    return r ? r->now : monotime ();
}

void canopy_reactor_now_update (canopy_reactor_t *r)
{
    if (r)
        r->now = monotime ();
}

void canopy_reactor_stop (canopy_reactor_t *r)
{
    if (r) {
        r->stop = true;
        r->stop_rc = 0;
    }
}

void canopy_reactor_stop_error (canopy_reactor_t *r)
{
    if (r) {
        r->stop = true;
        r->stop_rc = -1;
    }
}

/* Timer heap */

static void heap_swap (canopy_reactor_t *r, size_t a, size_t b)
{
    canopy_watcher_t *tmp = r->heap[a];
    r->heap[a] = r->heap[b];
    r->heap[b] = tmp;
    r->heap[a]->heap_index = a;
    r->heap[b]->heap_index = b;
}

static void heap_up (canopy_reactor_t *r, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (r->heap[parent]->expiry <= r->heap[i]->expiry)
            break;
        heap_swap (r, parent, i);
        i = parent;
    }
}

static void heap_down (canopy_reactor_t *r, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1;
        size_t m = i;
        if (l < r->heap_count && r->heap[l]->expiry < r->heap[m]->expiry)
            m = l;
        if (l + 1 < r->heap_count && r->heap[l + 1]->expiry < r->heap[m]->expiry)
            m = l + 1;
        if (m == i)
            break;
        heap_swap (r, m, i);
        i = m;
    }
}

static int heap_insert (canopy_reactor_t *r, canopy_watcher_t *w)
{
    if (r->heap_count == r->heap_alloc) {
        size_t n = r->heap_alloc ? r->heap_alloc * 2 : 16;
        canopy_watcher_t **h = realloc (r->heap, n * sizeof (*h));
        if (!h)
            return -1;
        r->heap = h;
        r->heap_alloc = n;
    }
    w->heap_index = r->heap_count;
    r->heap[r->heap_count++] = w;
    heap_up (r, w->heap_index);
    return 0;
}

static void heap_remove (canopy_reactor_t *r, canopy_watcher_t *w)
{
    size_t i = w->heap_index;
    if (i >= r->heap_count || r->heap[i] != w)
        return;
    r->heap_count--;
    if (i != r->heap_count) {
        r->heap[i] = r->heap[r->heap_count];
        r->heap[i]->heap_index = i;
        heap_down (r, i);
        heap_up (r, i);
    }
}

/* Watchers */

static canopy_watcher_t *watcher_create (canopy_reactor_t *r,
                                         enum wtype type,
                                         canopy_watcher_f cb,
                                         void *arg)
{
    canopy_watcher_t *w;

    if (!r || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(w = calloc (1, sizeof (*w)))) {
        errno = ENOMEM;
        return NULL;
    }
    w->r = r;
    w->type = type;
    w->cb = cb;
    w->arg = arg;
    w->referenced = true;
    w->fd = -1;
    w->slot = -1;
    list_node_init (&w->node);
    list_node_init (&w->zombie_node);
    switch (type) {
        case W_FD:
        case W_ZMQ:
            list_add_tail (&r->io, &w->node);
            break;
        case W_PREPARE:
            list_add_tail (&r->prepare, &w->node);
            break;
        case W_CHECK:
            list_add_tail (&r->check, &w->node);
            break;
        case W_IDLE:
            list_add_tail (&r->idle, &w->node);
            break;
        case W_TIMER:
            break;
    }
    return w;
}

canopy_watcher_t *canopy_fd_watcher_create (canopy_reactor_t *r,
                                            int fd,
                                            int events,
                                            canopy_watcher_f cb,
                                            void *arg)
{
    canopy_watcher_t *w;
    if (fd < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(w = watcher_create (r, W_FD, cb, arg)))
        return NULL;
    w->fd = fd;
    w->events = events;
    return w;
}

canopy_watcher_t *canopy_zmq_watcher_create (canopy_reactor_t *r,
                                             void *zsock,
                                             int events,
                                             canopy_watcher_f cb,
                                             void *arg)
{
    canopy_watcher_t *w;
    if (!zsock) {
        errno = EINVAL;
        return NULL;
    }
    if (!(w = watcher_create (r, W_ZMQ, cb, arg)))
        return NULL;
    w->zsock = zsock;
    w->events = events;
    return w;
}

canopy_watcher_t *canopy_timer_watcher_create (canopy_reactor_t *r,
                                               double after,
                                               double repeat,
                                               canopy_watcher_f cb,
                                               void *arg)
{
    canopy_watcher_t *w;
    if (after < 0 || repeat < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(w = watcher_create (r, W_TIMER, cb, arg)))
        return NULL;
    w->after = after;
    w->repeat = repeat;
    return w;
}

canopy_watcher_t *canopy_prepare_watcher_create (canopy_reactor_t *r,
                                                 canopy_watcher_f cb,
                                                 void *arg)
{
    return watcher_create (r, W_PREPARE, cb, arg);
}

canopy_watcher_t *canopy_check_watcher_create (canopy_reactor_t *r,
                                               canopy_watcher_f cb,
                                               void *arg)
{
    return watcher_create (r, W_CHECK, cb, arg);
}

canopy_watcher_t *canopy_idle_watcher_create (canopy_reactor_t *r,
                                              canopy_watcher_f cb,
                                              void *arg)
{
    return watcher_create (r, W_IDLE, cb, arg);
}

/* Descriptors in the epoll set */

static uint32_t ep_events (int events)
{
    uint32_t e = 0;
    if (events & CANOPY_POLLIN)
        e |= EPOLLIN;
    if (events & CANOPY_POLLOUT)
        e |= EPOLLOUT;
    return e;
}

static uint64_t ep_key (canopy_reactor_t *r, int slot)
{
    return ((uint64_t)r->slots[slot].gen << 32) | (uint32_t)slot;
}

static int ep_slot_get (canopy_reactor_t *r)
{
    if (r->free_slot >= 0 && !r->slots[r->free_slot].w) {
        int i = r->free_slot;
        r->free_slot = -1;
        return i;
    }
    for (int i = 0; i < r->nslots; i++) {
        if (!r->slots[i].w)
            return i;
    }
    int n = r->nslots ? r->nslots * 2 : 64;
    struct epslot *v = realloc (r->slots, n * sizeof (*v));
    if (!v)
        return -1;
    memset (v + r->nslots, 0, (n - r->nslots) * sizeof (*v));
    r->slots = v;
    r->free_slot = r->nslots + 1 < n ? r->nslots + 1 : -1;
    int i = r->nslots;
    r->nslots = n;
    return i;
}

/* Put an fd watcher in the epoll set.  Returns false if it must be
 * polled through the item array instead.
 */
static bool ep_add (canopy_reactor_t *r, canopy_watcher_t *w)
{
    struct epoll_event ev;
    int slot;

    if (r->epfd < 0 && (r->epfd = epoll_create1 (EPOLL_CLOEXEC)) < 0)
        return false;
    if ((slot = ep_slot_get (r)) < 0)
        return false;
    r->slots[slot].w = w;
    memset (&ev, 0, sizeof (ev));
    ev.events = ep_events (w->events);
    ev.data.u64 = ep_key (r, slot);
    if (epoll_ctl (r->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0) {
        r->slots[slot].w = NULL;
        return false;
    }
    w->slot = slot;
    if (r->nepoll++ == 0)
        r->items_dirty = true;      /* the epoll item joins the array */
    return true;
}

static void ep_del (canopy_reactor_t *r, canopy_watcher_t *w)
{
    /* fails harmlessly if the fd was closed already */
    (void)epoll_ctl (r->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    r->slots[w->slot].w = NULL;
    r->slots[w->slot].gen++;
    r->free_slot = w->slot;
    w->slot = -1;
    if (--r->nepoll == 0)
        r->items_dirty = true;
}

static void ep_mod (canopy_reactor_t *r, canopy_watcher_t *w)
{
    struct epoll_event ev;
    memset (&ev, 0, sizeof (ev));
    ev.events = ep_events (w->events);
    ev.data.u64 = ep_key (r, w->slot);
    if (epoll_ctl (r->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0) {
        /* fall back to the item array */
        ep_del (r, w);
        r->items_dirty = true;
    }
}

void canopy_watcher_start (canopy_watcher_t *w)
{
    if (!w || !w->r || w->active || w->zombie)
        return;
    canopy_reactor_t *r = w->r;
    if (w->type == W_TIMER) {
        w->expiry = monotime () + w->after;
        if (heap_insert (r, w) < 0)
            return;     /* ENOMEM: the timer cannot run */
    }
    w->active = true;
    if (w->referenced)
        r->active_refs++;
    if (w->type == W_ZMQ || (w->type == W_FD && !ep_add (r, w)))
        r->items_dirty = true;
    if (w->type == W_IDLE)
        r->idle_active++;
}

void canopy_watcher_stop (canopy_watcher_t *w)
{
    if (!w || !w->r || !w->active)
        return;
    canopy_reactor_t *r = w->r;
    w->active = false;
    if (w->referenced)
        r->active_refs--;
    if (w->type == W_TIMER)
        heap_remove (r, w);
    if (w->type == W_FD && w->slot >= 0)
        ep_del (r, w);
    else if (w->type == W_FD || w->type == W_ZMQ)
        r->items_dirty = true;
    if (w->type == W_IDLE)
        r->idle_active--;
}

bool canopy_watcher_is_active (canopy_watcher_t *w)
{
    return w && w->active;
}

void canopy_watcher_set_events (canopy_watcher_t *w, int events)
{
    if (w && (w->type == W_FD || w->type == W_ZMQ) && w->events != events) {
        w->events = events;
        if (w->r && w->slot >= 0)
            ep_mod (w->r, w);
        else if (w->r)
            w->r->items_dirty = true;
    }
}

void canopy_watcher_unref (canopy_watcher_t *w)
{
    if (w && w->referenced) {
        w->referenced = false;
        if (w->active && w->r)
            w->r->active_refs--;
    }
}

void canopy_watcher_ref (canopy_watcher_t *w)
{
    if (w && !w->referenced) {
        w->referenced = true;
        if (w->active && w->r)
            w->r->active_refs++;
    }
}

void canopy_timer_watcher_reset (canopy_watcher_t *w, double after, double repeat)
{
    if (!w || w->type != W_TIMER)
        return;
    bool was_active = w->active;
    canopy_watcher_stop (w);
    w->after = after < 0 ? 0 : after;
    w->repeat = repeat < 0 ? 0 : repeat;
    if (was_active)
        canopy_watcher_start (w);
}

void canopy_watcher_destroy (canopy_watcher_t *w)
{
    if (!w)
        return;
    int saved_errno = errno;
    canopy_watcher_stop (w);
    if (w->r && w->r->depth > 0) {
        if (!w->zombie) {
            w->zombie = true;
            list_add_tail (&w->r->zombies, &w->zombie_node);
        }
    }
    else {
        if (list_node_linked (&w->node))
            list_del (&w->node);
        free (w);
    }
    errno = saved_errno;
}

/* Loop */

static int rebuild_items (canopy_reactor_t *r)
{
    struct list_node *pos;
    int n = 0;

    list_for_each (pos, &r->io) {
        canopy_watcher_t *w = list_entry (pos, canopy_watcher_t, node);
        if (w->active && w->slot < 0)
            n++;
    }
    if (r->nepoll > 0)
        n++;
    if (n > r->items_alloc) {
        zmq_pollitem_t *items = realloc (r->items, n * sizeof (*items));
        if (!items)
            return -1;
        r->items = items;
        canopy_watcher_t **iw = realloc (r->item_w, n * sizeof (*iw));
        if (!iw)
            return -1;
        r->item_w = iw;
        r->items_alloc = n;
    }
    n = 0;
    if (r->nepoll > 0) {
        /* the epoll set: item_w NULL */
        r->items[n].socket = NULL;
        r->items[n].fd = r->epfd;
        r->items[n].events = ZMQ_POLLIN;
        r->items[n].revents = 0;
        r->item_w[n] = NULL;
        n++;
    }
    list_for_each (pos, &r->io) {
        canopy_watcher_t *w = list_entry (pos, canopy_watcher_t, node);
        if (!w->active || w->slot >= 0)
            continue;
        zmq_pollitem_t *it = &r->items[n];
        it->socket = w->type == W_ZMQ ? w->zsock : NULL;
        it->fd = w->type == W_FD ? w->fd : 0;
        it->events = 0;
        if (w->events & CANOPY_POLLIN)
            it->events |= ZMQ_POLLIN;
        if (w->events & CANOPY_POLLOUT)
            it->events |= ZMQ_POLLOUT;
        it->revents = 0;
        r->item_w[n] = w;
        n++;
    }
    r->nitems = n;
    r->items_dirty = false;
    r->generation++;
    return 0;
}

#define EPOLL_BATCH 256

/* Run the watchers of the ready descriptors in evs[0..n-1].  If a
 * callback runs the reactor itself (a nested pass, which has seen the
 * same readiness), the rest is left to the next pass: the set is
 * level-triggered, so nothing is lost.
 */
static void dispatch_epoll (canopy_reactor_t *r, struct epoll_event *evs, int n)
{
    unsigned int passes = r->passes;

    for (int i = 0; i < n && !r->stop && r->passes == passes; i++) {
        uint32_t slot = (uint32_t)evs[i].data.u64;
        uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
        if ((int)slot >= r->nslots || r->slots[slot].gen != gen)
            continue;   /* stale: its watcher was stopped */
        canopy_watcher_t *w = r->slots[slot].w;
        if (!w || !w->active || w->zombie)
            continue;
        int revents = 0;
        if (evs[i].events & EPOLLIN)
            revents |= CANOPY_POLLIN;
        if (evs[i].events & EPOLLOUT)
            revents |= CANOPY_POLLOUT;
        revents &= w->events;
        /* as zmq_poll reports it: anything else is an error */
        if (evs[i].events & ~(uint32_t)(EPOLLIN | EPOLLOUT))
            revents |= CANOPY_POLLERR;
        if (revents)
            w->cb (r, w, revents, w->arg);
    }
}

static void run_list (canopy_reactor_t *r, struct list_node *head)
{
    struct list_node *pos;
    /* Watchers are never unlinked during a pass (zombies wait), so plain
     * iteration is safe even if callbacks destroy watchers.  New watchers
     * appended during the pass run too, which is harmless.
     */
    list_for_each (pos, head) {
        canopy_watcher_t *w = list_entry (pos, canopy_watcher_t, node);
        if (w->active && !w->zombie)
            w->cb (r, w, 0, w->arg);
    }
}

static void run_timers (canopy_reactor_t *r)
{
    double now = monotime ();
    int budget = 1000;  /* don't starve I/O if timers keep re-arming at 0 */

    while (r->heap_count > 0 && r->heap[0]->expiry <= now && budget-- > 0) {
        canopy_watcher_t *w = r->heap[0];
        heap_remove (r, w);
        if (w->repeat > 0) {
            w->expiry = now + w->repeat;
            if (heap_insert (r, w) < 0)
                canopy_watcher_stop (w);
        }
        else {
            w->active = false;
            if (w->referenced)
                r->active_refs--;
        }
        w->cb (r, w, 0, w->arg);
        if (r->stop)
            break;
    }
}

static long poll_timeout_ms (canopy_reactor_t *r, int flags)
{
    if ((flags & CANOPY_REACTOR_NOWAIT) || r->idle_active > 0 || r->stop)
        return 0;
    if (r->heap_count > 0) {
        double dt = r->heap[0]->expiry - monotime ();
        if (dt <= 0)
            return 0;
        return (long)ceil (dt * 1000.);
    }
    return -1;
}

int canopy_reactor_run (canopy_reactor_t *r, int flags)
{
    int rc = 0;

    if (!r) {
        errno = EINVAL;
        return -1;
    }
    r->stop = false;
    r->stop_rc = 0;
    if (r->active_refs <= 0 && !(flags & (CANOPY_REACTOR_ONCE | CANOPY_REACTOR_NOWAIT)))
        return 0;
    r->depth++;
    for (;;) {
        r->now = monotime ();
        run_list (r, &r->prepare);
        if (r->items_dirty && rebuild_items (r) < 0) {
            errno = ENOMEM;
            rc = -1;
            break;
        }
        long timeout = poll_timeout_ms (r, flags);
        if (r->nitems == 0 && timeout < 0) {
            /* Nothing can wake us: only possible with no active watchers
             * besides prepare/check.  Don't block forever.
             */
            if (r->active_refs == 0 || r->heap_count == 0)
                timeout = 0;
        }
        int n;
        struct epoll_event evs[EPOLL_BATCH];
        bool epoll_only = r->nitems == 1 && !r->item_w[0];
        if (epoll_only) {
            /* Only descriptors (a module thread, a client): wait in the
             * epoll set itself.  zmq_poll would poll(2) it twice and then
             * ask epoll again: three system calls instead of one.
             */
            n = epoll_wait (r->epfd, evs, EPOLL_BATCH,
                            timeout > INT_MAX ? INT_MAX : (int)timeout);
        }
        else if (r->nitems > 0)
            n = zmq_poll (r->items, r->nitems, timeout);
        else
            n = poll (NULL, 0, (int)timeout);   /* zmq_poll rejects 0 items */
        if (n < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        r->now = monotime ();
        run_timers (r);
        r->passes++;
        if (epoll_only) {
            if (n > 0 && !r->stop)
                dispatch_epoll (r, evs, n);
        }
        else if (n > 0) {
            int count = r->nitems;
            unsigned int gen = r->generation;
            for (int i = 0; i < count && !r->stop; i++) {
                if (r->generation != gen)
                    break;      /* a nested run rebuilt the array */
                zmq_pollitem_t *it = &r->items[i];
                canopy_watcher_t *w = r->item_w[i];
                if (!w) {
                    if (it->revents) {
                        int ne = epoll_wait (r->epfd, evs, EPOLL_BATCH, 0);
                        dispatch_epoll (r, evs, ne);
                    }
                    continue;
                }
                if (!it->revents || !w->active || w->zombie)
                    continue;
                int revents = 0;
                if (it->revents & ZMQ_POLLIN)
                    revents |= CANOPY_POLLIN;
                if (it->revents & ZMQ_POLLOUT)
                    revents |= CANOPY_POLLOUT;
                revents &= w->events;   /* events may have changed */
                if (it->revents & ZMQ_POLLERR)
                    revents |= CANOPY_POLLERR;
                if (revents)
                    w->cb (r, w, revents, w->arg);
            }
        }
        run_list (r, &r->check);
        run_list (r, &r->idle);
        if (r->depth == 1)
            free_zombies (r);
        if (r->stop) {
            rc = r->stop_rc;
            break;
        }
        if ((flags & (CANOPY_REACTOR_ONCE | CANOPY_REACTOR_NOWAIT)))
            break;
        if (r->active_refs <= 0)
            break;
    }
    r->stop = false;
    if (--r->depth == 0)
        free_zombies (r);
    return rc;
}
