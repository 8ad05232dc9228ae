/* msg_queue.h - a one-way queue of messages between two threads of one
 * process, with a descriptor that is readable while messages wait.
 *
 * The broker and each module thread talk over a pair of these (one each
 * way).  A message crosses as a pointer: the sender gives up a private
 * reference (msg_queue_send copies, msg_queue_send_owned takes the
 * caller's own reference when it is the only one), and the receiver takes
 * it over.  No encoding, no ZeroMQ, and no system call at all on either
 * side while the receiver is busy: the sender writes the descriptor (an
 * eventfd) only when the receiver has seen the queue empty since the
 * last write.
 *
 * Readiness: the descriptor is level-triggered in the usual sense: it
 * stays readable until a msg_queue_recv finds the queue empty, so a
 * receiver that stops after a batch is woken again for the rest.  It may
 * also be readable once with nothing queued (a spurious wake-up, answered
 * by EAGAIN); it is never unreadable while a message waits.
 *
 * Lifetime: reference counted; both threads hold one.  Messages still
 * queued when the last reference goes are released.  Either side may
 * close the queue: further sends fail with ECONNRESET, and the receiver,
 * once it has drained what was queued before the close, gets ECONNRESET
 * too (and the descriptor stays readable, so it finds out).
 *
 * Threads: any number of senders and one receiver; everything is under
 * one mutex held for a few instructions (never across a system call).
 */
#ifndef CANOPY_MSG_QUEUE_H
#define CANOPY_MSG_QUEUE_H

#include <stdbool.h>
#include <canopy/message.h>

typedef struct msg_queue msg_queue_t;

/* Create an empty queue with one reference.  NULL with errno (ENOMEM,
 * EMFILE... from eventfd) on failure.
 */
msg_queue_t *msg_queue_create (void);

/* Take or drop a reference.  decref accepts NULL and keeps errno. */
msg_queue_t *msg_queue_incref (msg_queue_t *q);
void msg_queue_decref (msg_queue_t *q);

/* Queue a private copy of 'msg' (the caller keeps its message).
 * Returns 0, or -1 with errno: EINVAL, ENOMEM, ECONNRESET (closed).
 * On failure nothing was queued.
 */
int msg_queue_send (msg_queue_t *q, const canopy_msg_t *msg);

/* The same, consuming the caller's reference to 'msg' whether or not the
 * send succeeds.  When that reference is the only one the message itself
 * is queued, without a copy.
 */
int msg_queue_send_owned (msg_queue_t *q, canopy_msg_t *msg);

/* Take the oldest message (the caller owns one reference).  Never
 * blocks: NULL with errno EAGAIN when nothing is queued, ECONNRESET when
 * the queue is closed and drained, EINVAL for a NULL queue.
 */
canopy_msg_t *msg_queue_recv (msg_queue_t *q);

/* Wait up to 'timeout_ms' (-1: forever) for the descriptor to become
 * readable.  Returns 1 (readable), 0 (timed out) or -1 with errno (EINTR
 * from poll is returned as 0).
 */
int msg_queue_wait (msg_queue_t *q, int timeout_ms);

/* The descriptor to watch for reading; owned by the queue. */
int msg_queue_pollfd (msg_queue_t *q);

/* Close: no more sends; the receiver is woken.  Idempotent. */
void msg_queue_close (msg_queue_t *q);

/* Messages queued now (a snapshot). */
int msg_queue_count (msg_queue_t *q);

#endif
