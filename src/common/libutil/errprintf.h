/* errprintf.h - fill a canopy_error_t and return -1.
 *
 * The idiom is: return errprintf (error, "bad key '%s'", key);
 * errno is preserved; a NULL error is allowed (nothing is written).
 */
#ifndef CANOPY_UTIL_ERRPRINTF_H
#define CANOPY_UTIL_ERRPRINTF_H

#include <canopy/types.h>

int errprintf (canopy_error_t *error, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif
