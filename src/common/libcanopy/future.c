/* future.c - futures (future.h).
 *
 * Design notes:
 * - Results are queued: 'current' is the result visible to get(); reset()
 *   drops it and promotes the next queued one (streaming RPCs).
 * - Continuations: when a result becomes current and a continuation is
 *   set, it is called at once from the fulfilling context (message
 *   dispatch or a timer), never from inside then() itself: then() on a
 *   ready future schedules the call with a zero-delay timer.  A
 *   continuation is not re-entered: results that arrive while it runs wait
 *   for it to return.
 * - destroy() inside the continuation is deferred until it returns.
 * - Synchronous waits pump the future's handle (future_private.h), or run
 *   the reactor one pass at a time for futures not tied to a handle.
 * - Composite (wait-all) futures own their children and become ready when
 *   every child has a result.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/future.h>
#include <canopy/reactor.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/monotime.h"
#include "future_private.h"

struct result {
    struct list_node node;
    void *value;
    canopy_free_f free_fn;
    int errnum;
    char *errstr;
};

/* Aux items: a short list (a future carries one or two: an RPC's entry,
 * a caller's context), cheaper to build and free than a hash table for
 * every RPC.
 */
struct aux_item {
    struct aux_item *next;
    char *name;
    void *value;
    canopy_free_f destroy;
};

struct canopy_future {
    canopy_reactor_t *r;
    canopy_t *h;
    canopy_future_init_f init;
    void *init_arg;
    bool init_done;
    struct result *current;
    struct list_node queue;
    canopy_continuation_f cb;
    void *cb_arg;
    double timeout;
    canopy_watcher_t *timer;        /* then() timeout */
    canopy_watcher_t *deferred;     /* then() on a ready future */
    bool interest;                  /* holds a handle_interest reference */
    struct aux_item *aux;
    int in_cb;
    bool destroy_pending;
    /* composite */
    bool composite;
    hashmap_t *children;
    canopy_future_t *parent;
};

static void result_destroy (struct result *res)
{
    if (res) {
        if (res->free_fn && res->value)
            res->free_fn (res->value);
        free (res->errstr);
        free (res);
    }
}

static void aux_item_destroy (struct aux_item *item)
{
    if (item) {
        if (item->destroy && item->value)
            item->destroy (item->value);
        free (item->name);
        free (item);
    }
}

canopy_future_t *canopy_future_create (canopy_future_init_f init, void *arg)
{
    canopy_future_t *f;

    if (!(f = calloc (1, sizeof (*f)))) {
        errno = ENOMEM;
        return NULL;
    }
    list_init (&f->queue);
    f->init = init;
    f->init_arg = arg;
    f->timeout = -1;
    return f;
}

static void drop_interest (canopy_future_t *f)
{
    if (f->interest) {
        f->interest = false;
        handle_interest_dec (f->h);
    }
}

static void future_free (canopy_future_t *f)
{
    canopy_watcher_destroy (f->timer);
    canopy_watcher_destroy (f->deferred);
    drop_interest (f);
    result_destroy (f->current);
    while (!list_empty (&f->queue)) {
        struct result *res = list_entry (f->queue.next, struct result, node);
        list_del (&res->node);
        result_destroy (res);
    }
    hashmap_destroy (f->children);
    while (f->aux) {
        struct aux_item *item = f->aux;
        f->aux = item->next;
        aux_item_destroy (item);
    }
    free (f);
}

void canopy_future_destroy (canopy_future_t *f)
{
    if (!f)
        return;
    int saved_errno = errno;
    if (f->in_cb > 0)
        f->destroy_pending = true;
    else
        future_free (f);
    errno = saved_errno;
}

bool future_has_then (canopy_future_t *f)
{
    return f && f->cb != NULL;
}

void canopy_future_set_reactor (canopy_future_t *f, canopy_reactor_t *r)
{
    if (f)
        f->r = r;
}

canopy_reactor_t *canopy_future_get_reactor (canopy_future_t *f)
{
    return f ? f->r : NULL;
}

void canopy_future_set_handle (canopy_future_t *f, canopy_t *h)
{
    if (f) {
        f->h = h;
        if (h && !f->r)
            f->r = canopy_get_reactor (h);
    }
}

canopy_t *canopy_future_get_handle (canopy_future_t *f)
{
    return f ? f->h : NULL;
}

bool canopy_future_is_ready (canopy_future_t *f)
{
    return f && f->current != NULL;
}

/* Call the continuation for each current result, as long as the callback
 * consumes results (reset) and more are queued.  Returns false if the
 * future was destroyed by the callback.
 */
static bool call_continuation (canopy_future_t *f)
{
    while (f->cb && f->current && f->in_cb == 0) {
        struct result *before = f->current;
        if (f->timer)
            canopy_watcher_stop (f->timer);
        f->in_cb++;
        f->cb (f, f->cb_arg);
        f->in_cb--;
        if (f->destroy_pending) {
            future_free (f);
            return false;
        }
        if (f->current == before)
            break;          /* not consumed; wait for reset */
    }
    return true;
}

/* A composite is ready once every child has a result. */
static void composite_check (canopy_future_t *p)
{
    void *val;
    if (!p || !p->composite || p->current)
        return;
    for (const char *k = hashmap_first (p->children, &val); k;
         k = hashmap_next (p->children, &val)) {
        if (!canopy_future_is_ready (val))
            return;
    }
    canopy_future_fulfill (p, NULL, NULL);
}

static void post_result (canopy_future_t *f, struct result *res)
{
    if (!f->current)
        f->current = res;
    else
        list_add_tail (&f->queue, &res->node);
    if (f->parent)
        composite_check (f->parent);
    if (f->cb && f->current == res) {
        drop_interest (f);
        (void)call_continuation (f);
    }
}

void canopy_future_fulfill (canopy_future_t *f, void *result, canopy_free_f free_fn)
{
    struct result *res;

    if (!f)
        return;
    if (!(res = calloc (1, sizeof (*res)))) {
        if (free_fn && result)
            free_fn (result);
        return;
    }
    list_node_init (&res->node);
    res->value = result;
    res->free_fn = free_fn;
    post_result (f, res);
}

void canopy_future_fulfill_error (canopy_future_t *f, int errnum, const char *errstr)
{
    struct result *res;

    if (!f)
        return;
    if (!(res = calloc (1, sizeof (*res))))
        return;
    list_node_init (&res->node);
    res->errnum = errnum ? errnum : EINVAL;
    if (errstr)
        res->errstr = strdup (errstr);
    post_result (f, res);
}

void canopy_future_reset (canopy_future_t *f)
{
    if (!f)
        return;
    if (f->current) {
        result_destroy (f->current);
        f->current = NULL;
    }
    if (!list_empty (&f->queue)) {
        f->current = list_entry (f->queue.next, struct result, node);
        list_del (&f->current->node);
    }
    /* waiting again: re-arm the timeout, keep the reactor alive */
    if (f->cb && !f->current) {
        if (f->timer && f->timeout >= 0) {
            canopy_timer_watcher_reset (f->timer, f->timeout, 0);
            canopy_watcher_start (f->timer);
        }
        if (!f->interest && f->h) {
            f->interest = true;
            handle_interest_inc (f->h);
        }
    }
    else if (f->cb && f->current && f->in_cb == 0 && f->deferred)
        canopy_watcher_start (f->deferred);
}

int canopy_future_get (canopy_future_t *f, const void **result)
{
    if (!f) {
        errno = EINVAL;
        return -1;
    }
    if (!f->current) {
        if (canopy_future_wait_for (f, -1) < 0)
            return -1;
    }
    if (f->current->errnum) {
        errno = f->current->errnum;
        return -1;
    }
    if (result)
        *result = f->current->value;
    return 0;
}

const char *canopy_future_error_string (canopy_future_t *f)
{
    if (!f || !f->current || !f->current->errnum)
        return NULL;
    if (f->current->errstr)
        return f->current->errstr;
    return strerror (f->current->errnum);
}

static void timeout_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    canopy_future_t *f = arg;
    if (!f->current)
        canopy_future_fulfill_error (f, ETIMEDOUT, NULL);
}

static void deferred_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    canopy_future_t *f = arg;
    (void)call_continuation (f);
}

static void wakeup_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
}

static void call_init (canopy_future_t *f)
{
    if (!f->init_done) {
        f->init_done = true;
        if (f->init)
            f->init (f, f->init_arg);
    }
}

int canopy_future_then (canopy_future_t *f,
                        double timeout,
                        canopy_continuation_f cb,
                        void *arg)
{
    if (!f || !cb) {
        errno = EINVAL;
        return -1;
    }
    if (!f->r) {
        errno = EINVAL;
        return -1;
    }
    f->cb = cb;
    f->cb_arg = arg;
    f->timeout = timeout;
    if (timeout >= 0) {
        if (!f->timer) {
            if (!(f->timer = canopy_timer_watcher_create (f->r, timeout, 0,
                                                          timeout_cb, f)))
                return -1;
        }
        else
            canopy_timer_watcher_reset (f->timer, timeout, 0);
    }
    call_init (f);
    composite_check (f);
    if (f->current) {
        if (!f->deferred) {
            if (!(f->deferred = canopy_timer_watcher_create (f->r, 0, 0,
                                                             deferred_cb, f)))
                return -1;
        }
        canopy_watcher_start (f->deferred);
    }
    else {
        if (f->timer)
            canopy_watcher_start (f->timer);
        if (f->h && !f->interest) {
            f->interest = true;
            handle_interest_inc (f->h);
        }
    }
    return 0;
}

int canopy_future_wait_for (canopy_future_t *f, double timeout)
{
    double deadline = timeout >= 0 ? monotime () + timeout : -1;

    if (!f) {
        errno = EINVAL;
        return -1;
    }
    call_init (f);
    if (f->composite) {
        void *val;
        const char *k;
        for (k = hashmap_first (f->children, &val); k;
             k = hashmap_next (f->children, &val)) {
            double left = deadline < 0 ? -1 : deadline - monotime ();
            if (deadline >= 0 && left < 0)
                left = 0;
            if (!canopy_future_is_ready (val)
                && canopy_future_wait_for (val, left) < 0)
                return -1;
        }
        composite_check (f);
        return 0;
    }
    while (!f->current) {
        if (f->h) {
            if (handle_pump (f->h, f, deadline) < 0)
                return -1;
        }
        else if (f->r) {
            canopy_watcher_t *w = NULL;
            double now = monotime ();
            int rc;
            if (deadline >= 0) {
                if (now >= deadline) {
                    errno = ETIMEDOUT;
                    return -1;
                }
                /* wake up at the deadline even if nothing else happens */
                if (!(w = canopy_timer_watcher_create (f->r, deadline - now, 0,
                                                       wakeup_cb, NULL)))
                    return -1;
                canopy_watcher_start (w);
            }
            rc = canopy_reactor_run (f->r, CANOPY_REACTOR_ONCE);
            canopy_watcher_destroy (w);
            if (rc < 0)
                return -1;
        }
        else {
            errno = EDEADLK; /* nothing could ever fulfill it */
            return -1;
        }
    }
    return 0;
}

int canopy_future_aux_set (canopy_future_t *f,
                           const char *name,
                           void *aux,
                           canopy_free_f destroy)
{
    struct aux_item *item, **prev;

    if (!f || !name) {
        errno = EINVAL;
        return -1;
    }
    if (!(item = calloc (1, sizeof (*item))) || !(item->name = strdup (name))) {
        free (item);
        errno = ENOMEM;
        return -1;
    }
    item->value = aux;
    item->destroy = destroy;
    /* replace an item of the same name (destroying its value) in place */
    for (prev = &f->aux; *prev; prev = &(*prev)->next) {
        if (!strcmp ((*prev)->name, name)) {
            struct aux_item *old = *prev;
            item->next = old->next;
            *prev = item;
            aux_item_destroy (old);
            return 0;
        }
    }
    item->next = f->aux;
    f->aux = item;
    return 0;
}

void *canopy_future_aux_get (canopy_future_t *f, const char *name)
{
    if (f && name) {
        for (struct aux_item *item = f->aux; item; item = item->next) {
            if (!strcmp (item->name, name))
                return item->value;
        }
    }
    errno = ENOENT;
    return NULL;
}

/* Composite */

static void child_destroy (void *arg)
{
    canopy_future_destroy (arg);
}

canopy_future_t *canopy_future_wait_all_create (void)
{
    canopy_future_t *f;

    if (!(f = canopy_future_create (NULL, NULL)))
        return NULL;
    f->composite = true;
    if (!(f->children = hashmap_create (child_destroy))) {
        canopy_future_destroy (f);
        return NULL;
    }
    return f;
}

int canopy_future_push (canopy_future_t *composite,
                        const char *name,
                        canopy_future_t *child)
{
    if (!composite || !composite->composite || !name || !child || child->parent) {
        errno = EINVAL;
        return -1;
    }
    if (hashmap_insert (composite->children, name, child) < 0)
        return -1;
    child->parent = composite;
    if (!composite->r)
        composite->r = child->r;
    if (!composite->h)
        composite->h = child->h;
    return 0;
}

canopy_future_t *canopy_future_get_child (canopy_future_t *composite,
                                          const char *name)
{
    if (!composite || !composite->composite || !name) {
        errno = EINVAL;
        return NULL;
    }
    return hashmap_lookup (composite->children, name);
}
