/* logbuf.h - the broker's log ring buffer (canopy dmesg).
 *
 * Holds the last 'capacity' records; older ones are dropped.  Records at
 * or below 'stderr_level' (syslog levels: lower is more severe) are also
 * written to the log output: stderr (the default), syslog (facility
 * daemon, ident "canopy-broker"), or a file (appended, one line per
 * record with an ISO 8601 time stamp).
 */
#ifndef CANOPY_BROKER_LOGBUF_H
#define CANOPY_BROKER_LOGBUF_H

#include <stdint.h>
#include <jansson.h>

typedef struct logbuf logbuf_t;

logbuf_t *logbuf_create (int capacity, uint32_t rank);
void logbuf_destroy (logbuf_t *lb);
void logbuf_set_stderr_level (logbuf_t *lb, int level);
/* "stderr", "syslog", or an absolute file path.  -1 with EINVAL (not one
 * of those) or the error from opening the file; the output is unchanged.
 */
int logbuf_set_output (logbuf_t *lb, const char *spec);
void logbuf_append (logbuf_t *lb, int level, const char *name, double time,
                    const char *text);
void logbuf_printf (logbuf_t *lb, int level, const char *name, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* Array of {seq, time, level, rank, name, text}, oldest first. */
json_t *logbuf_dump (logbuf_t *lb);
void logbuf_clear (logbuf_t *lb);
uint64_t logbuf_seq (logbuf_t *lb);

#endif
