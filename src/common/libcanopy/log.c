/* log.c - canopy_log(): best-effort log records to the local broker.
 *
 * Each record is a NORESPONSE "log.append" request, so logging never waits
 * for the broker.  The broker stamps its rank and keeps the record in its
 * ring buffer (canopy dmesg).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <canopy/log.h>
#include <canopy/rpc.h>
#include "src/common/libutil/monotime.h"
#include "handle_private.h"

void canopy_log_set_appname (canopy_t *h, const char *name)
{
    if (h && name) {
        char *cpy = strdup (name);
        if (cpy) {
            free (h->appname);
            h->appname = cpy;
        }
    }
}

static void vlog (canopy_t *h, int level, int errnum, const char *fmt, va_list ap)
{
    char text[2048];
    int n = vsnprintf (text, sizeof (text), fmt, ap);
    if (errnum && n >= 0 && (size_t)n < sizeof (text))
        snprintf (text + n, sizeof (text) - n, ": %s", strerror (errnum));
    if (!h) {
        fprintf (stderr, "%s\n", text);
        return;
    }
    canopy_future_t *f = canopy_rpc_pack (h, "log.append", CANOPY_NODEID_ANY,
                                          CANOPY_RPC_NORESPONSE,
                                          "{s:i s:s s:s s:f}",
                                          "level", level,
                                          "name", h->appname ? h->appname : "client",
                                          "text", text,
                                          "time", walltime ());
    canopy_future_destroy (f);
}

void canopy_log (canopy_t *h, int level, const char *fmt, ...)
{
    int saved_errno = errno;
    va_list ap;
    va_start (ap, fmt);
    vlog (h, level, 0, fmt, ap);
    va_end (ap);
    errno = saved_errno;
}

void canopy_log_error (canopy_t *h, const char *fmt, ...)
{
    int saved_errno = errno;
    va_list ap;
    va_start (ap, fmt);
    vlog (h, LOG_ERR, saved_errno, fmt, ap);
    va_end (ap);
    errno = saved_errno;
}
