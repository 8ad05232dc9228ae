/* logbuf.c - log ring buffer (logbuf.h). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <errno.h>
#include <syslog.h>
#include <time.h>
#include "src/common/libutil/monotime.h"
#include "logbuf.h"

struct record {
    uint64_t seq;
    double time;
    int level;
    char name[32];
    char *text;
};

enum output {
    OUT_STDERR,
    OUT_SYSLOG,
    OUT_FILE,
};

struct logbuf {
    struct record *ring;
    int capacity;
    int count;
    int head;           /* index of the oldest record */
    uint64_t seq;
    uint32_t rank;
    int stderr_level;   /* level for the output, whichever it is */
    enum output out;
    FILE *file;
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
        if (lb->file)
            fclose (lb->file);
        if (lb->out == OUT_SYSLOG)
            closelog ();
        free (lb->ring);
        free (lb);
        errno = saved_errno;
    }
}

void logbuf_set_stderr_level (logbuf_t *lb, int level)
{
    lb->stderr_level = level;
}

int logbuf_set_output (logbuf_t *lb, const char *spec)
{
    FILE *f = NULL;
    enum output out;

    if (!lb || !spec) {
        errno = EINVAL;
        return -1;
    }
    if (!strcmp (spec, "stderr"))
        out = OUT_STDERR;
    else if (!strcmp (spec, "syslog"))
        out = OUT_SYSLOG;
    else if (spec[0] == '/') {
        if (!(f = fopen (spec, "ae")))
            return -1;
        setvbuf (f, NULL, _IOLBF, 0);
        out = OUT_FILE;
    }
    else {
        errno = EINVAL;
        return -1;
    }
    if (lb->file)
        fclose (lb->file);
    if (lb->out == OUT_SYSLOG && out != OUT_SYSLOG)
        closelog ();
    if (out == OUT_SYSLOG && lb->out != OUT_SYSLOG)
        openlog ("canopy-broker", LOG_PID | LOG_NDELAY, LOG_DAEMON);
    lb->file = f;
    lb->out = out;
    return 0;
}

static const char *levelstr (int level)
{
    static const char *names[] = { "emerg", "alert", "crit", "err",
                                   "warning", "notice", "info", "debug" };
    return level >= 0 && level <= 7 ? names[level] : "?";
}

static void output (logbuf_t *lb, const struct record *r)
{
    switch (lb->out) {
        case OUT_STDERR:
            fprintf (stderr, "canopy-broker[%u]: %s.%s: %s\n",
                     lb->rank, r->name, levelstr (r->level), r->text);
            break;
        case OUT_SYSLOG:
            syslog (r->level < LOG_EMERG || r->level > LOG_DEBUG ? LOG_INFO : r->level,
                    "rank %u: %s.%s: %s", lb->rank, r->name, levelstr (r->level), r->text);
            break;
        case OUT_FILE: {
            char stamp[64];
            struct tm tm;
            time_t sec = (time_t)r->time;
            if (!gmtime_r (&sec, &tm)
                || strftime (stamp, sizeof (stamp), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                snprintf (stamp, sizeof (stamp), "%.6f", r->time);
            fprintf (lb->file, "%s.%06dZ canopy-broker[%u]: %s.%s: %s\n", stamp,
                     (int)((r->time - (double)sec) * 1e6), lb->rank, r->name,
                     levelstr (r->level), r->text);
            break;
        }
    }
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
        output (lb, r);
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
