/* cmdutil.h - helpers shared by the canopy-* commands (not libraries: these
 * exit on fatal errors).
 *
 * cmd_open: open a handle to CANOPY_URI (or the system instance) or exit
 *   with a clear message.
 * cmd_parse_rank: "N" -> N; "any" -> CANOPY_NODEID_ANY.
 * cmd_parse_ranks: "all", "0-3,7" -> sorted array of ranks below size.
 * cmd_rpc_check: get a future's result or exit with its error text.
 */
#ifndef CANOPY_CMD_CMDUTIL_H
#define CANOPY_CMD_CMDUTIL_H

#include <stdint.h>
#include <stdbool.h>
#include <canopy/canopy.h>

canopy_t *cmd_open (void);
uint32_t cmd_parse_rank (const char *s);
int cmd_parse_ranks (const char *s, uint32_t size, uint32_t **ranks);
uint32_t cmd_get_size (canopy_t *h);
void cmd_future_check (canopy_future_t *f, const char *what);
double cmd_parse_double (const char *s, const char *what);
long cmd_parse_long (const char *s, const char *what, long min, long max);
/* Print usage text and exit with code (stdout for 0, stderr otherwise). */
void cmd_usage (const char *text, int code) __attribute__ ((noreturn));

#endif
