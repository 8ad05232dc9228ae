/* cert.c - CURVE certificates (cert.h), wrapping czmq's zcert.
 *
 * Design notes:
 * - czmq installs SIGINT/SIGTERM handlers the first time it initialises
 *   itself; the broker reads signals from a signalfd, so the handlers are
 *   switched off (zsys_handler_set (NULL)) before any zcert call.
 * - zcert_load accepts a public-only certificate and reports an all-zero
 *   secret key; we refuse those, since a broker must prove its identity.
 *   Files are checked for both keys before czmq sees them (its parser
 *   leaks memory and prints to stderr on malformed input).
 * - The file is written to a temporary name beside the target and renamed,
 *   so a crash never leaves half a certificate; its mode is set to 0600
 *   explicitly rather than through the umask.
 */
#include <czmq.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "cert.h"

struct cert {
    zcert_t *z;
};

static void czmq_quiet (void)
{
    static bool done = false;
    if (!done) {
        zsys_handler_set (NULL);
        done = true;
    }
}

static void seterr (char *errbuf, size_t errsize, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static void seterr (char *errbuf, size_t errsize, const char *fmt, ...)
{
    va_list ap;
    if (!errbuf || errsize == 0)
        return;
    va_start (ap, fmt);
    vsnprintf (errbuf, errsize, fmt, ap);
    va_end (ap);
}

bool cert_key_valid (const char *s)
{
    static const char z85[] =
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        ".-:+=^!/*?&<>()[]{}@%$#";
    return s && strlen (s) == 40 && strspn (s, z85) == 40;
}

cert_t *cert_create (void)
{
    cert_t *c;

    czmq_quiet ();
    if (!(c = calloc (1, sizeof (*c)))) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(c->z = zcert_new ())) {
        free (c);
        errno = ENOMEM;
        return NULL;
    }
    return c;
}

void cert_destroy (cert_t *c)
{
    if (c) {
        int saved_errno = errno;
        zcert_destroy (&c->z);
        free (c);
        errno = saved_errno;
    }
}

/* Look for 'NAME = "<40 characters>"' on a line of f. */
static bool has_key (FILE *f, const char *name)
{
    char line[512];
    size_t n = strlen (name);

    rewind (f);
    while (fgets (line, sizeof (line), f)) {
        char *p = line + strspn (line, " \t");
        if (strncmp (p, name, n) != 0)
            continue;
        p += n;
        p += strspn (p, " \t");
        if (*p++ != '=')
            continue;
        p += strspn (p, " \t");
        if (*p == '"' && strlen (p) >= 42 && p[41] == '"') {
            char key[41];
            memcpy (key, p + 1, 40);
            key[40] = '\0';
            if (cert_key_valid (key))
                return true;
        }
    }
    return false;
}

cert_t *cert_load (const char *path, char *errbuf, size_t errsize)
{
    cert_t *c;
    zcert_t *z;
    FILE *f;
    bool pub, sec;

    czmq_quiet ();
    /* zcert_load only says "no" (and czmq leaks on malformed files): find
     * out why first, and hand it only files that look right
     */
    if (!(f = fopen (path, "re"))) {
        int e = errno;
        seterr (errbuf, errsize, "%s: %s", path, strerror (e));
        errno = e;
        return NULL;
    }
    pub = has_key (f, "public-key");
    sec = has_key (f, "secret-key");
    fclose (f);
    if (!pub) {
        seterr (errbuf, errsize, "%s: not a CURVE certificate", path);
        errno = EINVAL;
        return NULL;
    }
    if (!sec) {
        seterr (errbuf, errsize, "%s: the certificate has no secret key", path);
        errno = EINVAL;
        return NULL;
    }
    if (!(z = zcert_load (path))) {
        seterr (errbuf, errsize, "%s: not a CURVE certificate", path);
        errno = EINVAL;
        return NULL;
    }
    if (!cert_key_valid (zcert_public_txt (z))
        || !cert_key_valid (zcert_secret_txt (z))
        || strspn (zcert_secret_txt (z), "0") == 40) {
        seterr (errbuf, errsize, "%s: the certificate has no secret key", path);
        zcert_destroy (&z);
        errno = EINVAL;
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        zcert_destroy (&z);
        errno = ENOMEM;
        return NULL;
    }
    c->z = z;
    return c;
}

int cert_save (cert_t *c, const char *path, bool force, char *errbuf, size_t errsize)
{
    char *tmp = NULL;
    int e;

    if (!c || !path || !*path) {
        errno = EINVAL;
        return -1;
    }
    if (!force && access (path, F_OK) == 0) {
        seterr (errbuf, errsize, "%s exists (use --force to replace it)", path);
        errno = EEXIST;
        return -1;
    }
    if (asprintf (&tmp, "%s.tmpXXXXXX", path) < 0) {
        errno = ENOMEM;
        return -1;
    }
    int fd = mkstemp (tmp);
    if (fd < 0) {
        e = errno;
        seterr (errbuf, errsize, "cannot create %s: %s", tmp, strerror (e));
        goto error;
    }
    close (fd);
    if (zcert_save_secret (c->z, tmp) < 0) {
        e = errno ? errno : EIO;
        seterr (errbuf, errsize, "cannot write %s: %s", tmp, strerror (e));
        goto error_unlink;
    }
    if (chmod (tmp, 0600) < 0 || rename (tmp, path) < 0) {
        e = errno;
        seterr (errbuf, errsize, "cannot write %s: %s", path, strerror (e));
        goto error_unlink;
    }
    free (tmp);
    return 0;
error_unlink:
    (void)unlink (tmp);
error:
    free (tmp);
    errno = e;
    return -1;
}

const char *cert_public (const cert_t *c)
{
    return c ? zcert_public_txt (c->z) : NULL;
}

const char *cert_secret (const cert_t *c)
{
    return c ? zcert_secret_txt (c->z) : NULL;
}

int cert_set_meta (cert_t *c, const char *name, const char *value)
{
    if (!c || !name || !*name || !value) {
        errno = EINVAL;
        return -1;
    }
    zcert_set_meta (c->z, name, "%s", value);
    return 0;
}
