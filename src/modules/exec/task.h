/* task.h - one task process started by the exec service.
 *
 * A task runs in a session of its own (setsid: signals reach its whole
 * process group), with stdin on /dev/null, stdout/stderr on pipes read by
 * the reactor, and optionally one end of a socketpair as PMI_FD (fd 3).
 * Every other descriptor is closed in the child.
 *
 * Callbacks (from the reactor): output chunks as they arrive; PMI request
 * lines (one per call, '\n' stripped); PMI end-of-file; and exit, called
 * once the process has exited AND its output pipes are drained (so all
 * output precedes the exit notice; pipes still held open by descendants
 * are abandoned 1 s after the exit).  status is a wait status; a failed
 * exec is reported as exit code 127 (126 if not executable) with errnum.
 */
#ifndef CANOPY_EXEC_TASK_H
#define CANOPY_EXEC_TASK_H

#include <stddef.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/types.h>
#include <canopy/reactor.h>

struct task;

struct task_ops {
    void (*output) (struct task *t, int stream, const void *data, size_t len, void *arg);
    void (*pmi_line) (struct task *t, const char *line, size_t len, void *arg);
    void (*pmi_eof) (struct task *t, void *arg);
    void (*exit) (struct task *t, int status, int exec_errnum, void *arg);
};

enum { TASK_STDOUT = 1, TASK_STDERR = 2 };

struct task *task_create (canopy_reactor_t *r, int rank,
                          const struct task_ops *ops, void *arg);
void task_destroy (struct task *t);
/* Start: argv[0] is searched in PATH from envp.  bind_core >= 0 pins the
 * task to that core (round-robin); otherwise, if cpus is not NULL, the
 * task runs on those CPUs (the broker's broker.cpus-inherited, so a
 * broker pinned by broker.cpu-affinity does not pin its tasks), and with
 * neither it inherits this thread's.
 */
int task_start (struct task *t, char **argv, char **envp, const char *cwd,
                bool pmi, int bind_core, const cpu_set_t *cpus);
/* Queue a PMI response line (never blocks). */
int task_pmi_send (struct task *t, const char *line, size_t len);
int task_kill (struct task *t, int signum);
int task_rank (const struct task *t);
pid_t task_pid (const struct task *t);
bool task_exited (const struct task *t);

#endif
