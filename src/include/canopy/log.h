/* canopy/log.h - logging to the broker's ring buffer (canopy dmesg).
 *
 * canopy_log() never blocks for a reply and never fails loudly: logging is
 * best effort.  Levels follow syslog (LOG_ERR, LOG_WARNING, LOG_INFO,
 * LOG_DEBUG from <syslog.h>).  canopy_log_error() appends ": strerror(errno)".
 */
#ifndef CANOPY_LOG_H
#define CANOPY_LOG_H

#include <syslog.h>
#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

void canopy_log (canopy_t *h, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void canopy_log_error (canopy_t *h, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Name shown with each entry (default: the program or module name). */
void canopy_log_set_appname (canopy_t *h, const char *name);

#ifdef __cplusplus
}
#endif
#endif
