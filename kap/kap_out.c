/* kap_out.c - KAP's JSON document file (see kap_out.h).
 *
 * Design notes: the temporary file is made with mkstemp as PATH.XXXXXX in
 * the same directory, so the final rename cannot cross file systems; it
 * is held open (a FILE) from kap_out_open to kap_out_commit.  Its mode is
 * widened to what a plain creat would give (0666 less the umask), since
 * mkstemp makes it 0600.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "kap_out.h"

struct kap_out {
    char *path;
    char *tmp;
    FILE *f;
};

static void say (char *errbuf, size_t errlen, const char *what,
                 const char *path, int errnum)
{
    if (errbuf && errlen > 0)
        snprintf (errbuf, errlen, "%s %s: %s", what, path, strerror (errnum));
}

static void out_free (kap_out_t *o)
{
    if (o) {
        int saved_errno = errno;
        if (o->f) {
            fclose (o->f);
            (void)unlink (o->tmp);
        }
        free (o->path);
        free (o->tmp);
        free (o);
        errno = saved_errno;
    }
}

kap_out_t *kap_out_open (const char *path, char *errbuf, size_t errlen)
{
    kap_out_t *o;
    mode_t mask;
    int fd;

    if (!path || !*path) {
        errno = EINVAL;
        say (errbuf, errlen, "cannot write", "''", errno);
        return NULL;
    }
    if (!(o = calloc (1, sizeof (*o)))
        || !(o->path = strdup (path))
        || asprintf (&o->tmp, "%s.XXXXXX", path) < 0) {
        if (o)
            o->tmp = NULL;
        errno = ENOMEM;
        goto error;
    }
    if ((fd = mkstemp (o->tmp)) < 0)
        goto error;
    mask = umask (0);
    umask (mask);
    if (fchmod (fd, 0666 & ~mask) < 0 || !(o->f = fdopen (fd, "w"))) {
        int e = errno;
        close (fd);
        (void)unlink (o->tmp);
        errno = e;
        goto error;
    }
    return o;
error:
    say (errbuf, errlen, "cannot write", path, errno);
    out_free (o);
    return NULL;
}

int kap_out_commit (kap_out_t *o, const json_t *doc, char *errbuf,
                    size_t errlen)
{
    FILE *f;

    if (!o || !doc) {
        errno = EINVAL;
        say (errbuf, errlen, "cannot write", o ? o->path : "(none)", errno);
        out_free (o);
        return -1;
    }
    f = o->f;
    o->f = NULL;
    errno = 0;
    if (json_dumpf (doc, f, JSON_INDENT (2)) < 0 || fputc ('\n', f) == EOF) {
        int e = errno ? errno : EIO;
        fclose (f);
        errno = e;
        goto error;
    }
    if (fclose (f) != 0)
        goto error;
    if (rename (o->tmp, o->path) < 0)
        goto error;
    out_free (o);
    return 0;
error:
    say (errbuf, errlen, "cannot write", o->path, errno);
    (void)unlink (o->tmp);
    out_free (o);
    return -1;
}

void kap_out_abandon (kap_out_t *o)
{
    out_free (o);
}
