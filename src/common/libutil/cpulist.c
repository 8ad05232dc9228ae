/* cpulist.c - CPU sets as text (cpulist.h).
 *
 * Design notes: parsing fills a local set and copies it out only on
 * success, so a failed parse leaves the caller's set as it was.  Numbers
 * are read with strtoul after checking for a digit, which rejects signs
 * and spaces that strtoul would otherwise accept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include "cpulist.h"

static int read_cpu (const char **p, unsigned long *cpu)
{
    char *end;

    if (!isdigit ((unsigned char)**p))
        return -1;
    errno = 0;
    *cpu = strtoul (*p, &end, 10);
    if (errno != 0 || *cpu >= CPU_SETSIZE)
        return -1;
    *p = end;
    return 0;
}

int cpulist_parse (const char *s, cpu_set_t *set)
{
    cpu_set_t tmp;
    const char *p = s;

    if (!s || !set || *s == '\0')
        goto error;
    CPU_ZERO (&tmp);
    for (;;) {
        unsigned long lo, hi;
        if (read_cpu (&p, &lo) < 0)
            goto error;
        hi = lo;
        if (*p == '-') {
            p++;
            if (read_cpu (&p, &hi) < 0 || hi < lo)
                goto error;
        }
        for (unsigned long c = lo; c <= hi; c++)
            CPU_SET (c, &tmp);
        if (*p == '\0')
            break;
        if (*p++ != ',')
            goto error;
    }
    memcpy (set, &tmp, sizeof (tmp));
    return 0;
error:
    errno = EINVAL;
    return -1;
}

int cpulist_format (const cpu_set_t *set, char *buf, size_t len)
{
    size_t used = 0;

    if (!set || !buf || len == 0) {
        errno = EINVAL;
        return -1;
    }
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        int end = c, n;
        if (!CPU_ISSET (c, set))
            continue;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET (end + 1, set))
            end++;
        if (end > c)
            n = snprintf (buf + used, len - used, "%s%d-%d", used ? "," : "", c, end);
        else
            n = snprintf (buf + used, len - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used) {
            buf[0] = '\0';
            errno = EOVERFLOW;
            return -1;
        }
        used += n;
        c = end;
    }
    return 0;
}

int cpulist_nth (const cpu_set_t *set, int n)
{
    if (set && n >= 0) {
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET (c, set) && n-- == 0)
                return c;
        }
    }
    errno = EINVAL;
    return -1;
}
