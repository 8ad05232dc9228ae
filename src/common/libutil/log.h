/* log.h - messages to stderr for programs (commands and the broker main).
 *
 * log_init() sets the prefix.  log_err* append ": strerror(errno)".
 * The *_exit variants flush stdio and _exit(1) (no atexit handlers, and no
 * leak check of what the giving-up program still holds): for commands
 * only, never in libraries or modules.
 *
 * log_set_exit_hook() names one function the *_exit variants call first
 * (NULL: none), in the process that set it only (not in a child forked
 * later): what a program must undo however it gives up, such as a run
 * directory it made.  The hook must not call the *_exit variants.
 */
#ifndef CANOPY_UTIL_LOG_H
#define CANOPY_UTIL_LOG_H

void log_init (const char *progname);
const char *log_progname (void);
void log_msg (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void log_err (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void log_msg_exit (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));
void log_err_exit (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));
void log_errn_exit (int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3), noreturn));
void log_set_exit_hook (void (*hook) (void));

#endif
