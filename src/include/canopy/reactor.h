/* canopy/reactor.h - a small event loop for clients, modules and brokers.
 *
 * One reactor per thread.  Watchers observe file descriptors, ZeroMQ
 * sockets, timers, and the loop itself (prepare runs before the loop
 * blocks, check after it wakes, idle keeps it from blocking).  Poll is
 * level-triggered and built on zmq_poll so that descriptors and ZeroMQ
 * sockets mix freely.
 *
 * canopy_reactor_run() returns when canopy_reactor_stop() is called, or when
 * no referenced watcher is active (see canopy_watcher_unref).  It returns 0,
 * or -1 after canopy_reactor_stop_error().
 *
 * Watchers are owned by the caller: destroy them before the reactor.  A
 * callback may stop or destroy any watcher, including its own.
 */
#ifndef CANOPY_REACTOR_H
#define CANOPY_REACTOR_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_reactor canopy_reactor_t;
typedef struct canopy_watcher canopy_watcher_t;

typedef void (*canopy_watcher_f)(canopy_reactor_t *r,
                                 canopy_watcher_t *w,
                                 int revents,
                                 void *arg);

enum canopy_poll_b {
    CANOPY_POLLIN = 1,
    CANOPY_POLLOUT = 2,
    CANOPY_POLLERR = 4,
};

enum canopy_reactor_flags {
    CANOPY_REACTOR_NOWAIT = 1,  /* one pass, never block */
    CANOPY_REACTOR_ONCE = 2,    /* one pass, block until something happens */
};

canopy_reactor_t *canopy_reactor_create (void);
void canopy_reactor_destroy (canopy_reactor_t *r);

int canopy_reactor_run (canopy_reactor_t *r, int flags);
void canopy_reactor_stop (canopy_reactor_t *r);
void canopy_reactor_stop_error (canopy_reactor_t *r);

/* Monotonic time in seconds, cached at the start of each loop pass. */
double canopy_reactor_now (canopy_reactor_t *r);
void canopy_reactor_now_update (canopy_reactor_t *r);

canopy_watcher_t *canopy_fd_watcher_create (canopy_reactor_t *r,
                                            int fd,
                                            int events,
                                            canopy_watcher_f cb,
                                            void *arg);
canopy_watcher_t *canopy_zmq_watcher_create (canopy_reactor_t *r,
                                             void *zsock,
                                             int events,
                                             canopy_watcher_f cb,
                                             void *arg);
/* Fires 'after' seconds from now, then every 'repeat' seconds (0 = once). */
canopy_watcher_t *canopy_timer_watcher_create (canopy_reactor_t *r,
                                               double after,
                                               double repeat,
                                               canopy_watcher_f cb,
                                               void *arg);
void canopy_timer_watcher_reset (canopy_watcher_t *w,
                                 double after,
                                 double repeat);
canopy_watcher_t *canopy_prepare_watcher_create (canopy_reactor_t *r,
                                                 canopy_watcher_f cb,
                                                 void *arg);
canopy_watcher_t *canopy_check_watcher_create (canopy_reactor_t *r,
                                               canopy_watcher_f cb,
                                               void *arg);
canopy_watcher_t *canopy_idle_watcher_create (canopy_reactor_t *r,
                                              canopy_watcher_f cb,
                                              void *arg);

void canopy_watcher_start (canopy_watcher_t *w);
void canopy_watcher_stop (canopy_watcher_t *w);
bool canopy_watcher_is_active (canopy_watcher_t *w);
/* Change the poll events of an fd or zmq watcher. */
void canopy_watcher_set_events (canopy_watcher_t *w, int events);
/* An unreferenced watcher does not keep canopy_reactor_run() going. */
void canopy_watcher_unref (canopy_watcher_t *w);
void canopy_watcher_ref (canopy_watcher_t *w);
void canopy_watcher_destroy (canopy_watcher_t *w);

#ifdef __cplusplus
}
#endif
#endif
