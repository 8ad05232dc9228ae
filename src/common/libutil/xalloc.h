/* xalloc.h - allocation that exits on failure: for commands and tests only.
 * Libraries, the broker and modules must handle ENOMEM instead.
 */
#ifndef CANOPY_UTIL_XALLOC_H
#define CANOPY_UTIL_XALLOC_H

#include <stddef.h>

void *xzmalloc (size_t size);
void *xrealloc (void *ptr, size_t size);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
