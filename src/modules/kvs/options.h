/* options.h - the KVS module's numeric options: their names, types and
 * bounds, and parsing a value into the module's context.
 *
 * Options come from broker attributes "kvs.NAME" and module arguments
 * NAME=VALUE (kvs.c: arguments override attributes).  A value is refused,
 * never truncated or wrapped: integers must be plain decimal within their
 * bounds (no fraction, exponent or sign beyond the bounds; up to INT_MAX,
 * or SIZE_MAX for byte counts), seconds a finite decimal number >= 0.
 * Pure: no handle, no I/O.
 */
#ifndef CANOPY_KVS_OPTIONS_H
#define CANOPY_KVS_OPTIONS_H

#include <canopy/types.h>
#include "kvs_ctx.h"

/* The option names, NULL-terminated. */
extern const char *const kvs_option_names[];

/* Set option 'name' on ctx from text 'value'.  Returns 0, or -1 with errno
 * EINVAL (unknown name, or a value that is not a number of the option's
 * kind or is out of its bounds) and, if error is not NULL, a sentence
 * naming the option and what it accepts.  A failed call changes nothing.
 */
int kvs_option_set (struct kvs_ctx *ctx, const char *name, const char *value,
                    canopy_error_t *error);

#endif
