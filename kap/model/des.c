/* des.c - see des.h
 *
 * The queue is a binary min-heap ordered by (time, sequence number); the
 * sequence number makes the order of simultaneous events deterministic
 * (first scheduled, first run), so a simulation is repeatable.
 */
#include <stdlib.h>
#include <errno.h>
#include "des.h"

struct event {
    double t;
    uint64_t seq;
    des_f cb;
    void *arg;
    int64_t a, b;
};

struct des {
    struct event *heap;
    size_t n, cap;
    uint64_t seq;
    double now;
    int stop;
};

des_t *des_create (void)
{
    des_t *d = calloc (1, sizeof (*d));
    if (!d)
        errno = ENOMEM;
    return d;
}

void des_destroy (des_t *d)
{
    if (d) {
        int saved_errno = errno;
        free (d->heap);
        free (d);
        errno = saved_errno;
    }
}

static int before (const struct event *x, const struct event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int des_schedule (des_t *d, double delay, des_f cb, void *arg, int64_t a,
                  int64_t b)
{
    if (!d || !cb || !(delay >= 0)) {
        errno = EINVAL;
        return -1;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        struct event *h = realloc (d->heap, cap * sizeof (*h));
        if (!h) {
            errno = ENOMEM;
            return -1;
        }
        d->heap = h;
        d->cap = cap;
    }
    struct event e = { .t = d->now + delay, .seq = d->seq++, .cb = cb,
                       .arg = arg, .a = a, .b = b };
    size_t i = d->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before (&e, &d->heap[parent]))
            break;
        d->heap[i] = d->heap[parent];
        i = parent;
    }
    d->heap[i] = e;
    return 0;
}

static struct event pop (des_t *d)
{
    struct event top = d->heap[0];
    struct event last = d->heap[--d->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct event *best = &last;
        if (l < d->n && before (&d->heap[l], best)) {
            m = l;
            best = &d->heap[l];
        }
        if (r < d->n && before (&d->heap[r], best))
            m = r;
        if (m == i)
            break;
        d->heap[i] = d->heap[m];
        i = m;
    }
    if (d->n > 0)
        d->heap[i] = last;
    return top;
}

double des_now (const des_t *d)
{
    return d ? d->now : 0;
}

uint64_t des_run (des_t *d)
{
    uint64_t count = 0;
    if (!d)
        return 0;
    d->stop = 0;
    while (d->n > 0 && !d->stop) {
        struct event e = pop (d);
        d->now = e.t;
        e.cb (d, e.arg, e.a, e.b);
        count++;
    }
    return count;
}

void des_stop (des_t *d)
{
    if (d)
        d->stop = 1;
}

uint64_t des_pending (const des_t *d)
{
    return d ? d->n : 0;
}
