/* msg_queue.c - a one-way queue of messages between threads (msg_queue.h).
 *
 * Design notes:
 * - The queue is a ring of message pointers that doubles when full; it
 *   never shrinks (a module's queue holds a few hundred entries at most).
 * - Wake-ups: 'signalled' is true from the moment a sender owes an
 *   eventfd write until the receiver has read that write back.  A sender
 *   writes only when it turns the flag on, so a busy receiver costs its
 *   senders no system call, and at most one write is owed at a time.
 *   The receiver reads the eventfd only when it finds the queue empty,
 *   and does so under the mutex: the flag goes off in the same critical
 *   section as the read, so a message queued after it finds the flag off
 *   and writes again.  A write not yet made when the receiver reads (the
 *   sender sets the flag under the mutex and writes after it) leaves the
 *   flag on; the write, when it lands, wakes the receiver once more.
 *   Invariant: while a message is queued, a write is owed or unread, so
 *   the descriptor is (or is about to be) readable, even for a receiver
 *   that stops after a batch; and while the flag is off the descriptor
 *   is not readable, so there are no empty wake-ups but that one.
 *   (Regression: the read used to happen outside the mutex after the
 *   flag went off; a sender in between had its write read away while its
 *   message stayed queued, and a receiver that stopped after a batch
 *   slept on a queue that was not empty.)
 * - The sender writes outside the mutex; the receiver's read, a
 *   non-blocking read of a counter, is the one system call made under it.
 * - Each message in the ring has exactly one owner (the queue), and is
 *   never touched by two threads at once: that is why senders queue a
 *   private copy, as msg_queue.h says.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include "message_private.h"
#include "msg_queue.h"

#define QUEUE_INITIAL 64

struct msg_queue {
    pthread_mutex_t lock;
    int refcount;               /* under lock */
    canopy_msg_t **ring;
    int cap;
    int head;                   /* oldest */
    int count;
    bool signalled;
    bool closed;
    int efd;
};

msg_queue_t *msg_queue_create (void)
{
    msg_queue_t *q = calloc (1, sizeof (*q));
    if (!q)
        goto nomem;
    q->efd = -1;
    if (!(q->ring = calloc (QUEUE_INITIAL, sizeof (*q->ring))))
        goto nomem;
    q->cap = QUEUE_INITIAL;
    if ((q->efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
        goto error;
    if ((errno = pthread_mutex_init (&q->lock, NULL)) != 0)
        goto error;
    q->refcount = 1;
    return q;
nomem:
    errno = ENOMEM;
error:
    if (q) {
        int e = errno;
        if (q->efd >= 0)
            close (q->efd);
        free (q->ring);
        free (q);
        errno = e;
    }
    return NULL;
}

msg_queue_t *msg_queue_incref (msg_queue_t *q)
{
    if (q) {
        pthread_mutex_lock (&q->lock);
        q->refcount++;
        pthread_mutex_unlock (&q->lock);
    }
    return q;
}

void msg_queue_decref (msg_queue_t *q)
{
    if (!q)
        return;
    int saved_errno = errno;
    pthread_mutex_lock (&q->lock);
    int left = --q->refcount;
    pthread_mutex_unlock (&q->lock);
    if (left == 0) {
        for (int i = 0; i < q->count; i++)
            canopy_msg_decref (q->ring[(q->head + i) % q->cap]);
        free (q->ring);
        close (q->efd);
        pthread_mutex_destroy (&q->lock);
        free (q);
    }
    errno = saved_errno;
}

static void efd_write (int efd)
{
    uint64_t one = 1;
    /* EAGAIN only at a count of 2^64-2: the descriptor is readable anyway */
    while (write (efd, &one, sizeof (one)) < 0 && errno == EINTR)
        ;
}

/* Queue 'own' (a reference the queue takes over, or releases on failure). */
static int push (msg_queue_t *q, canopy_msg_t *own)
{
    bool wake = false;

    pthread_mutex_lock (&q->lock);
    if (q->closed) {
        pthread_mutex_unlock (&q->lock);
        canopy_msg_decref (own);
        errno = ECONNRESET;
        return -1;
    }
    if (q->count == q->cap) {
        int ncap = q->cap * 2;
        canopy_msg_t **nring = malloc (ncap * sizeof (*nring));
        if (!nring) {
            pthread_mutex_unlock (&q->lock);
            canopy_msg_decref (own);
            errno = ENOMEM;
            return -1;
        }
        for (int i = 0; i < q->count; i++)
            nring[i] = q->ring[(q->head + i) % q->cap];
        free (q->ring);
        q->ring = nring;
        q->cap = ncap;
        q->head = 0;
    }
    q->ring[(q->head + q->count) % q->cap] = own;
    q->count++;
    if (!q->signalled) {
        q->signalled = true;
        wake = true;
    }
    pthread_mutex_unlock (&q->lock);
    if (wake)
        efd_write (q->efd);
    return 0;
}

int msg_queue_send (msg_queue_t *q, const canopy_msg_t *msg)
{
    canopy_msg_t *cpy;

    if (!q || !msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(cpy = canopy_msg_copy (msg, true))) {
        errno = ENOMEM;
        return -1;
    }
    return push (q, cpy);
}

int msg_queue_send_owned (msg_queue_t *q, canopy_msg_t *msg)
{
    canopy_msg_t *own;

    if (!q || !msg) {
        canopy_msg_decref (msg);
        errno = EINVAL;
        return -1;
    }
    if (msg->refcount == 1)
        own = msg;              /* ours alone: no copy */
    else {
        own = canopy_msg_copy (msg, true);
        canopy_msg_decref (msg);
        if (!own) {
            errno = ENOMEM;
            return -1;
        }
    }
    return push (q, own);
}

/* Under the lock: the oldest message, or NULL. */
static canopy_msg_t *take (msg_queue_t *q)
{
    canopy_msg_t *msg;
    if (q->count == 0)
        return NULL;
    msg = q->ring[q->head];
    q->ring[q->head] = NULL;
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return msg;
}

canopy_msg_t *msg_queue_recv (msg_queue_t *q)
{
    canopy_msg_t *msg;
    uint64_t n;

    if (!q) {
        errno = EINVAL;
        return NULL;
    }
    pthread_mutex_lock (&q->lock);
    if ((msg = take (q)))
        goto out;
    if (q->closed) {
        errno = ECONNRESET;
        goto out;
    }
    /* Empty.  The write owed for the flag is consumed here, under the
     * lock, so no sender can queue between the read and the flag going
     * off.  If the sender has not written yet, the flag stays on and its
     * write wakes us once more to come back here.
     */
    if (q->signalled) {
        ssize_t rc;
        while ((rc = read (q->efd, &n, sizeof (n))) < 0 && errno == EINTR)
            ;
        if (rc == sizeof (n))
            q->signalled = false;
    }
    errno = EAGAIN;
out:
    pthread_mutex_unlock (&q->lock);
    return msg;
}

int msg_queue_wait (msg_queue_t *q, int timeout_ms)
{
    struct pollfd pfd;
    int n;

    if (!q) {
        errno = EINVAL;
        return -1;
    }
    pfd.fd = q->efd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    if ((n = poll (&pfd, 1, timeout_ms)) < 0)
        return errno == EINTR ? 0 : -1;
    return n > 0 ? 1 : 0;
}

int msg_queue_pollfd (msg_queue_t *q)
{
    if (!q) {
        errno = EINVAL;
        return -1;
    }
    return q->efd;
}

void msg_queue_close (msg_queue_t *q)
{
    bool wake = false;

    if (!q)
        return;
    int saved_errno = errno;
    pthread_mutex_lock (&q->lock);
    if (!q->closed) {
        q->closed = true;
        q->signalled = true;
        wake = true;
    }
    pthread_mutex_unlock (&q->lock);
    if (wake)
        efd_write (q->efd);
    errno = saved_errno;
}

int msg_queue_count (msg_queue_t *q)
{
    int n;
    if (!q)
        return 0;
    pthread_mutex_lock (&q->lock);
    n = q->count;
    pthread_mutex_unlock (&q->lock);
    return n;
}
