/* xalloc.c - see xalloc.h */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include "log.h"
#include "xalloc.h"

void *xzmalloc (size_t size)
{
    void *p = calloc (1, size ? size : 1);
    if (!p)
        log_msg_exit ("out of memory");
    return p;
}

void *xrealloc (void *ptr, size_t size)
{
    void *p = realloc (ptr, size ? size : 1);
    if (!p)
        log_msg_exit ("out of memory");
    return p;
}

char *xstrdup (const char *s)
{
    char *p = strdup (s ? s : "");
    if (!p)
        log_msg_exit ("out of memory");
    return p;
}

char *xasprintf (const char *fmt, ...)
{
    char *s;
    va_list ap;
    va_start (ap, fmt);
    if (vasprintf (&s, fmt, ap) < 0)
        log_msg_exit ("out of memory");
    va_end (ap);
    return s;
}
