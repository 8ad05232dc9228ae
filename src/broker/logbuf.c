/* logbuf.c - log ring buffer (logbuf.h). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <errno.h>
#include <syslog.h>
#include "src/common/libutil/monotime.h"
#include "logbuf.h"

struct record {
    uint64_t seq;
    double time;
    int level;
    char name[32];
    char *text;
};

struct logbuf {
    struct record *ring;
    int capacity;
    int count;
    int head;           /* index of the oldest record */
    uint64_t seq;
    uint32_t rank;
    int stderr_level;
};

logbuf_t *logbuf_create (int capacity, uint32_t rank)
{
    logbuf_t *lb;
    if (capacity < 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!(lb = calloc (1, sizeof (*lb)))
        || !(lb->ring = calloc (capacity, sizeof (struct record)))) {
        free (lb);
        errno = ENOMEM;
        return NULL;
    }
    lb->capacity = capacity;
    lb->rank = rank;
    lb->stderr_level = LOG_ERR;
    return lb;
}

void logbuf_clear (logbuf_t *lb)
{
    for (int i = 0; i < lb->count; i++) {
        struct record *r = &lb->ring[(lb->head + i) % lb->capacity];
        free (r->text);
        r->text = NULL;
    }
    lb->count = 0;
    lb->head = 0;
}

void logbuf_destroy (logbuf_t *lb)
{
    if (lb) {
        int saved_errno = errno;
        logbuf_clear (lb);
        free (lb->ring);
        free (lb);
        errno = saved_errno;
    }
}

void logbuf_set_stderr_level (logbuf_t *lb, int level)
{
    lb->stderr_level = level;
}

static const char *levelstr (int level)
{
    static const char *names[] = { "emerg", "alert", "crit", "err",
                                   "warning", "notice", "info", "debug" };
    return level >= 0 && level <= 7 ? names[level] : "?";
}

void logbuf_append (logbuf_t *lb, int level, const char *name, double time,
                    const char *text)
{
    struct record *r;
    char *cpy = strdup (text ? text : "");

    if (!cpy)
        return;
    if (lb->count == lb->capacity) {
        r = &lb->ring[lb->head];
        free (r->text);
        lb->head = (lb->head + 1) % lb->capacity;
        lb->count--;
    }
    r = &lb->ring[(lb->head + lb->count) % lb->capacity];
    r->seq = ++lb->seq;
    r->time = time;
    r->level = level;
    snprintf (r->name, sizeof (r->name), "%s", name ? name : "broker");
    r->text = cpy;
    lb->count++;
    if (level <= lb->stderr_level)
        fprintf (stderr, "canopy-broker[%u]: %s.%s: %s\n",
                 lb->rank, r->name, levelstr (level), cpy);
}

void logbuf_printf (logbuf_t *lb, int level, const char *name, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    int saved_errno = errno;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    logbuf_append (lb, level, name, walltime (), buf);
    errno = saved_errno;
}

json_t *logbuf_dump (logbuf_t *lb)
{
    json_t *a = json_array ();
    if (!a)
        return NULL;
    for (int i = 0; i < lb->count; i++) {
        struct record *r = &lb->ring[(lb->head + i) % lb->capacity];
        json_t *o = json_pack ("{s:I s:f s:i s:I s:s s:s}",
                               "seq", (json_int_t)r->seq,
                               "time", r->time,
                               "level", r->level,
                               "rank", (json_int_t)lb->rank,
                               "name", r->name,
                               "text", r->text);
        if (!o || json_array_append_new (a, o) < 0) {
            json_decref (o);
            json_decref (a);
            errno = ENOMEM;
            return NULL;
        }
    }
    return a;
}

uint64_t logbuf_seq (logbuf_t *lb)
{
    return lb->seq;
}
