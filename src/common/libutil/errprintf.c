/* errprintf.c - see errprintf.h */
#include <stdio.h>
#include <stdarg.h>
#include <errno.h>
#include "errprintf.h"

int errprintf (canopy_error_t *error, const char *fmt, ...)
{
    if (error) {
        int saved_errno = errno;
        va_list ap;
        va_start (ap, fmt);
        (void)vsnprintf (error->text, sizeof (error->text), fmt, ap);
        va_end (ap);
        errno = saved_errno;
    }
    return -1;
}
