/* procwatch.h - notice when a child process exits, from a reactor.
 *
 * Uses a pidfd (Linux >= 5.3), so no process-wide SIGCHLD handler is
 * needed and several threads can each watch their own children; falls
 * back to polling waitpid(pid, WNOHANG) every 20 ms without pidfds.
 * The callback gets the wait status; the child is reaped.
 */
#ifndef CANOPY_PROCWATCH_H
#define CANOPY_PROCWATCH_H

#include <sys/types.h>
#include <canopy/reactor.h>

struct procwatch;
typedef void (*procwatch_f)(struct procwatch *pw, pid_t pid, int status, void *arg);

struct procwatch *procwatch_create (canopy_reactor_t *r, pid_t pid,
                                    procwatch_f cb, void *arg);
void procwatch_destroy (struct procwatch *pw);

#endif
