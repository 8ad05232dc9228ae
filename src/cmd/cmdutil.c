/* cmdutil.c - see cmdutil.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <math.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "cmdutil.h"

canopy_t *cmd_open (void)
{
    canopy_error_t error;
    canopy_t *h = canopy_open (NULL, 0, &error);
    if (!h) {
        if (!getenv ("CANOPY_URI"))
            log_msg_exit ("%s (CANOPY_URI is not set and no system instance "
                          "answers at /run/canopy/local: run inside 'canopy start', "
                          "or set it to a broker's local:// URI)", error.text);
        log_msg_exit ("%s", error.text);
    }
    return h;
}

uint32_t cmd_parse_rank (const char *s)
{
    char *end;
    unsigned long v;
    if (!strcmp (s, "any"))
        return CANOPY_NODEID_ANY;
    if (!strcmp (s, "upstream"))
        return CANOPY_NODEID_UPSTREAM;
    errno = 0;
    v = strtoul (s, &end, 10);
    if (errno || *end || end == s || v >= CANOPY_NODEID_UPSTREAM)
        log_msg_exit ("invalid rank '%s'", s);
    return v;
}

uint32_t cmd_get_size (canopy_t *h)
{
    uint32_t size;
    if (canopy_get_size (h, &size) < 0)
        log_err_exit ("cannot get instance size");
    return size;
}

static int cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int cmd_parse_ranks (const char *s, uint32_t size, uint32_t **ranksp)
{
    uint32_t *ranks;
    int n = 0;

    if (!strcmp (s, "all")) {
        ranks = xzmalloc (sizeof (uint32_t) * (size ? size : 1));
        for (uint32_t r = 0; r < size; r++)
            ranks[n++] = r;
        *ranksp = ranks;
        return n;
    }
    char *cpy = xstrdup (s), *saveptr = NULL, *tok;
    ranks = xzmalloc (sizeof (uint32_t) * (size ? size : 1));
    for (tok = strtok_r (cpy, ",", &saveptr); tok; tok = strtok_r (NULL, ",", &saveptr)) {
        char *dash = strchr (tok, '-');
        char *end;
        unsigned long lo, hi;
        errno = 0;
        lo = strtoul (tok, &end, 10);
        if (errno || end == tok || (*end && end != dash))
            log_msg_exit ("invalid rank list '%s'", s);
        hi = lo;
        if (dash) {
            hi = strtoul (dash + 1, &end, 10);
            if (errno || *end || end == dash + 1 || hi < lo)
                log_msg_exit ("invalid rank list '%s'", s);
        }
        if (hi >= size)
            log_msg_exit ("rank %lu is not in this instance (size %u)", hi, size);
        for (unsigned long r = lo; r <= hi; r++) {
            bool dup = false;
            for (int i = 0; i < n; i++)
                if (ranks[i] == r)
                    dup = true;
            if (!dup)
                ranks[n++] = r;
        }
    }
    free (cpy);
    qsort (ranks, n, sizeof (uint32_t), cmp_u32);
    *ranksp = ranks;
    return n;
}

void cmd_future_check (canopy_future_t *f, const char *what)
{
    if (!f)
        log_err_exit ("%s", what);
    if (canopy_future_get (f, NULL) < 0) {
        const char *s = canopy_future_error_string (f);
        log_msg_exit ("%s: %s", what, s ? s : strerror (errno));
    }
}

double cmd_parse_double (const char *s, const char *what)
{
    char *end;
    double v;
    errno = 0;
    v = strtod (s, &end);
    if (errno || *end || end == s || v < 0 || !isfinite (v))
        log_msg_exit ("invalid %s '%s'", what, s);
    return v;
}

long cmd_parse_long (const char *s, const char *what, long min, long max)
{
    char *end;
    long v;
    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        log_msg_exit ("invalid %s '%s' (expected %ld..%ld)", what, s, min, max);
    return v;
}

void cmd_usage (const char *text, int code)
{
    fputs (text, code ? stderr : stdout);
    exit (code);
}
