/* log.c - see log.h
 *
 * The *_exit functions flush stdio and end the process with _exit(1)
 * rather than exit(1).  A command that gives up (house rule 6) does not
 * free what it holds, and under LeakSanitizer exit() would then report
 * whatever the stack no longer happened to point at: a false, timing-
 * dependent "leak" that turned the failing command's status 1 into an
 * abort (t0005 under ./quickstart check --sanitize).  No canopy program
 * registers atexit handlers; what must be undone on the way out goes in
 * the one exit hook (the broker's own run directory).
 */
#include <stdio.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "log.h"

static char prog[64] = "canopy";
static void (*exit_hook) (void);
static pid_t exit_hook_pid;

void log_set_exit_hook (void (*hook) (void))
{
    exit_hook = hook;
    exit_hook_pid = getpid ();
}

void log_init (const char *progname)
{
    if (progname) {
        const char *p = strrchr (progname, '/');
        snprintf (prog, sizeof (prog), "%s", p ? p + 1 : progname);
    }
}

const char *log_progname (void)
{
    return prog;
}

static void vlog (int errnum, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf (buf, sizeof (buf), fmt, ap);
    if (errnum)
        fprintf (stderr, "%s: %s: %s\n", prog, buf, strerror (errnum));
    else
        fprintf (stderr, "%s: %s\n", prog, buf);
}

static void __attribute__ ((noreturn)) die (void)
{
    if (exit_hook && getpid () == exit_hook_pid) {
        void (*hook) (void) = exit_hook;
        exit_hook = NULL;   /* once, even if the hook gives up itself */
        hook ();
    }
    fflush (NULL);
    _exit (1);
}

void log_msg (const char *fmt, ...)
{
    int saved_errno = errno;
    va_list ap;
    va_start (ap, fmt);
    vlog (0, fmt, ap);
    va_end (ap);
    errno = saved_errno;
}

void log_err (const char *fmt, ...)
{
    int saved_errno = errno;
    va_list ap;
    va_start (ap, fmt);
    vlog (saved_errno, fmt, ap);
    va_end (ap);
    errno = saved_errno;
}

void log_msg_exit (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vlog (0, fmt, ap);
    va_end (ap);
    die ();
}

void log_err_exit (const char *fmt, ...)
{
    int errnum = errno;
    va_list ap;
    va_start (ap, fmt);
    vlog (errnum, fmt, ap);
    va_end (ap);
    die ();
}

void log_errn_exit (int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vlog (errnum, fmt, ap);
    va_end (ap);
    die ();
}
