/* tarball.c - see tarball.h.
 *
 * Layout reminders (POSIX.1-1988 ustar header, 512 bytes): name[100]
 * mode[8] uid[8] gid[8] size[12] mtime[12] chksum[8] typeflag[1]
 * linkname[100] magic[6] version[2] uname[32] gname[32] devmajor[8]
 * devminor[8] prefix[155].  Numbers are octal text; the checksum is the
 * byte sum of the header with the checksum field taken as spaces.  Data
 * follows in 512-byte blocks; the archive ends with two zero blocks.
 * A pax extended header (type 'x') carries "LEN key=value\n" records that
 * override fields of the next entry.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdbool.h>
#include <unistd.h>
#include "tarball.h"

#define BLOCK 512
#define MAX_ENTRY ((uint64_t)1 << 34)

struct tar_writer {
    int fd;
    char error[256];
};

struct tar_reader {
    int fd;
    char error[256];
    char *name;
    char *linkname;
    void *data;
    /* overrides for the next entry */
    char *pax_path;
    char *pax_linkpath;
    bool pax_size_set;
    uint64_t pax_size;
    bool at_end;
};

static int seterr (char *buf, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, 256, fmt, ap);
    va_end (ap);
    errno = errnum;
    return -1;
}

/* Writer */

static int write_all (tar_writer_t *w, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write (w->fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return seterr (w->error, errno, "write: %s", strerror (errno));
        }
        p += n;
        len -= n;
    }
    return 0;
}

static int write_padded (tar_writer_t *w, const void *data, size_t len)
{
    static const char zeros[BLOCK];
    if (len > 0 && write_all (w, data, len) < 0)
        return -1;
    if (len % BLOCK)
        return write_all (w, zeros, BLOCK - len % BLOCK);
    return 0;
}

static void put_octal (char *field, size_t width, uint64_t v)
{
    char buf[32];
    snprintf (buf, sizeof (buf), "%0*llo", (int)width - 1, (unsigned long long)v);
    memcpy (field, buf, width - 1);
    field[width - 1] = '\0';
}

static unsigned int header_sum (const unsigned char *h)
{
    unsigned int sum = 0;
    for (int i = 0; i < BLOCK; i++)
        sum += (i >= 148 && i < 156) ? ' ' : h[i];
    return sum;
}

static int write_header (tar_writer_t *w, const char *name, char type, uint64_t size,
                         const char *linkname, time_t mtime, int mode)
{
    unsigned char h[BLOCK];
    char sum[8];

    memset (h, 0, sizeof (h));
    strncpy ((char *)h, name, 100);
    put_octal ((char *)h + 100, 8, mode);
    put_octal ((char *)h + 108, 8, 0);
    put_octal ((char *)h + 116, 8, 0);
    put_octal ((char *)h + 124, 12, size);
    put_octal ((char *)h + 136, 12, mtime > 0 ? (uint64_t)mtime : 0);
    h[156] = type;
    if (linkname)
        strncpy ((char *)h + 157, linkname, 100);
    memcpy (h + 257, "ustar", 6);
    memcpy (h + 263, "00", 2);
    snprintf (sum, sizeof (sum), "%06o", header_sum (h));
    memcpy (h + 148, sum, 7);
    h[155] = ' ';
    return write_all (w, h, sizeof (h));
}

static int digits (size_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* Append "LEN key=value\n" to *buf. */
static int pax_record (char **buf, size_t *len, const char *key, const char *val)
{
    size_t body = strlen (key) + strlen (val) + 3;   /* ' ' '=' '\n' */
    size_t n = body + 1;
    while (digits (n) + body != n)
        n = digits (n) + body;
    char *nb = realloc (*buf, *len + n + 1);
    if (!nb) {
        errno = ENOMEM;
        return -1;
    }
    snprintf (nb + *len, n + 1, "%zu %s=%s\n", n, key, val);
    *buf = nb;
    *len += n;
    return 0;
}

static bool fits (const char *s)
{
    return strlen (s) < 100;
}

static int write_entry (tar_writer_t *w, const char *name, char type, const void *data,
                        size_t len, const char *linkname, time_t mtime, int mode)
{
    char *pax = NULL;
    size_t paxlen = 0;
    int rc = -1;

    if (!name || !*name)
        return seterr (w->error, EINVAL, "an entry needs a name");
    if ((uint64_t)len >= ((uint64_t)1 << 33))
        return seterr (w->error, EFBIG, "%s: too large for a tar entry", name);
    if (!fits (name) && pax_record (&pax, &paxlen, "path", name) < 0)
        goto nomem;
    if (linkname && !fits (linkname)
        && pax_record (&pax, &paxlen, "linkpath", linkname) < 0)
        goto nomem;
    if (pax) {
        if (write_header (w, "././@PaxHeader", 'x', paxlen, NULL, mtime, 0644) < 0
            || write_padded (w, pax, paxlen) < 0)
            goto done;
    }
    if (write_header (w, name, type, len, linkname, mtime, mode) < 0
        || (type == '0' && write_padded (w, data, len) < 0))
        goto done;
    rc = 0;
done:
    free (pax);
    return rc;
nomem:
    free (pax);
    return seterr (w->error, ENOMEM, "out of memory");
}

tar_writer_t *tar_writer_create (int fd)
{
    tar_writer_t *w = calloc (1, sizeof (*w));
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    w->fd = fd;
    return w;
}

int tar_write_file (tar_writer_t *w, const char *name, const void *data, size_t len,
                    time_t mtime)
{
    return write_entry (w, name, '0', data, len, NULL, mtime, 0644);
}

int tar_write_dir (tar_writer_t *w, const char *name, time_t mtime)
{
    return write_entry (w, name, '5', NULL, 0, NULL, mtime, 0755);
}

int tar_write_symlink (tar_writer_t *w, const char *name, const char *target,
                       time_t mtime)
{
    return write_entry (w, name, '2', NULL, 0, target, mtime, 0777);
}

int tar_writer_finish (tar_writer_t *w)
{
    static const char zeros[2 * BLOCK];
    int rc = write_all (w, zeros, sizeof (zeros));
    int saved = errno;
    free (w);
    errno = saved;
    return rc;
}

void tar_writer_destroy (tar_writer_t *w)
{
    if (w) {
        int saved = errno;
        free (w);
        errno = saved;
    }
}

const char *tar_writer_error (tar_writer_t *w)
{
    return w->error;
}

/* Reader */

tar_reader_t *tar_reader_create (int fd)
{
    tar_reader_t *r = calloc (1, sizeof (*r));
    if (!r) {
        errno = ENOMEM;
        return NULL;
    }
    r->fd = fd;
    return r;
}

static void clear_entry (tar_reader_t *r)
{
    free (r->name);
    free (r->linkname);
    free (r->data);
    r->name = r->linkname = NULL;
    r->data = NULL;
}

static void clear_pax (tar_reader_t *r)
{
    free (r->pax_path);
    free (r->pax_linkpath);
    r->pax_path = r->pax_linkpath = NULL;
    r->pax_size_set = false;
}

void tar_reader_destroy (tar_reader_t *r)
{
    if (r) {
        int saved = errno;
        clear_entry (r);
        clear_pax (r);
        free (r);
        errno = saved;
    }
}

const char *tar_reader_error (tar_reader_t *r)
{
    return r->error;
}

/* Read exactly len bytes: 1, 0 at a clean EOF (nothing read), -1. */
static int read_all (tar_reader_t *r, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read (r->fd, p + got, len - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return seterr (r->error, errno, "read: %s", strerror (errno));
        }
        if (n == 0) {
            if (got == 0)
                return 0;
            return seterr (r->error, EPROTO, "the archive is truncated");
        }
        got += n;
    }
    return 1;
}

static int read_data (tar_reader_t *r, uint64_t size, void **out)
{
    char pad[BLOCK];
    char *buf;
    int rc;

    if (size > MAX_ENTRY)
        return seterr (r->error, EFBIG, "an entry of %llu bytes is too large",
                       (unsigned long long)size);
    if (!(buf = malloc (size + 1)))
        return seterr (r->error, ENOMEM, "out of memory");
    if (size > 0 && (rc = read_all (r, buf, size)) <= 0) {
        free (buf);
        if (rc == 0)
            return seterr (r->error, EPROTO, "the archive is truncated");
        return -1;
    }
    buf[size] = '\0';
    if (size % BLOCK && (rc = read_all (r, pad, BLOCK - size % BLOCK)) <= 0) {
        free (buf);
        if (rc == 0)
            return seterr (r->error, EPROTO, "the archive is truncated");
        return -1;
    }
    *out = buf;
    return 0;
}

static int parse_number (const unsigned char *field, size_t width, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;

    if (field[0] & 0x80) {      /* base-256 (GNU) */
        v = field[0] & 0x3f;
        for (i = 1; i < width; i++)
            v = (v << 8) | field[i];
        *out = v;
        return 0;
    }
    while (i < width && field[i] == ' ')
        i++;
    for (; i < width && field[i] >= '0' && field[i] <= '7'; i++)
        v = v * 8 + (field[i] - '0');
    if (i < width && field[i] != ' ' && field[i] != '\0')
        return -1;
    *out = v;
    return 0;
}

static bool all_zero (const unsigned char *b)
{
    for (int i = 0; i < BLOCK; i++) {
        if (b[i])
            return false;
    }
    return true;
}

static char *field_string (const unsigned char *f, size_t width)
{
    size_t n = strnlen ((const char *)f, width);
    char *s = malloc (n + 1);
    if (s) {
        memcpy (s, f, n);
        s[n] = '\0';
    }
    return s;
}

/* Apply "LEN key=value\n" records. */
static int parse_pax (tar_reader_t *r, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        char *end;
        unsigned long n = strtoul (buf + off, &end, 10);
        if (end == buf + off || *end != ' ' || n == 0 || n > len - off
            || buf[off + n - 1] != '\n')
            return seterr (r->error, EPROTO, "a pax header is malformed");
        const char *kv = end + 1;
        const char *eq = memchr (kv, '=', buf + off + n - 1 - kv);
        if (!eq)
            return seterr (r->error, EPROTO, "a pax header is malformed");
        size_t klen = eq - kv;
        size_t vlen = buf + off + n - 1 - (eq + 1);
        char *val = strndup (eq + 1, vlen);
        if (!val)
            return seterr (r->error, ENOMEM, "out of memory");
        if (klen == 4 && !strncmp (kv, "path", 4)) {
            free (r->pax_path);
            r->pax_path = val;
        }
        else if (klen == 8 && !strncmp (kv, "linkpath", 8)) {
            free (r->pax_linkpath);
            r->pax_linkpath = val;
        }
        else if (klen == 4 && !strncmp (kv, "size", 4)) {
            r->pax_size = strtoull (val, NULL, 10);
            r->pax_size_set = true;
            free (val);
        }
        else
            free (val);
        off += n;
    }
    return 0;
}

int tar_read_next (tar_reader_t *r, struct tar_entry *e)
{
    unsigned char h[BLOCK];
    int rc;

    clear_entry (r);
    if (r->at_end)
        return 0;
    for (;;) {
        uint64_t size, chksum, mtime;
        if ((rc = read_all (r, h, BLOCK)) < 0) {
            if (errno == EPROTO)
                seterr (r->error, EPROTO, "not a tar archive, or truncated "
                        "(it ends in the middle of a header)");
            return -1;
        }
        if (rc == 0)
            return seterr (r->error, EPROTO, "the archive ends without its end blocks");
        if (all_zero (h)) {
            /* end of archive: a second zero block may follow */
            r->at_end = true;
            clear_pax (r);
            return 0;
        }
        if (parse_number (h + 148, 8, &chksum) < 0 || chksum != header_sum (h))
            return seterr (r->error, EPROTO, "not a tar archive (bad header checksum)");
        if (parse_number (h + 124, 12, &size) < 0 || parse_number (h + 136, 12, &mtime) < 0)
            return seterr (r->error, EPROTO, "a tar header has a bad number");
        char type = h[156];
        if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
            void *data = NULL;
            if (read_data (r, size, &data) < 0)
                return -1;
            if (type == 'x')
                rc = parse_pax (r, data, size);
            else if (type == 'L') {
                free (r->pax_path);
                r->pax_path = strndup (data, size);
                rc = r->pax_path ? 0 : seterr (r->error, ENOMEM, "out of memory");
            }
            else if (type == 'K') {
                free (r->pax_linkpath);
                r->pax_linkpath = strndup (data, size);
                rc = r->pax_linkpath ? 0 : seterr (r->error, ENOMEM, "out of memory");
            }
            else
                rc = 0;
            free (data);
            if (rc < 0)
                return -1;
            continue;
        }
        if (r->pax_size_set)
            size = r->pax_size;
        if (r->pax_path)
            r->name = strdup (r->pax_path);
        else {
            char *name = field_string (h, 100);
            char *prefix = field_string (h + 345, 155);
            if (name && prefix && *prefix && !memcmp (h + 257, "ustar", 5)) {
                if (asprintf (&r->name, "%s/%s", prefix, name) < 0)
                    r->name = NULL;
            }
            else if (name)
                r->name = strdup (name);
            free (name);
            free (prefix);
        }
        r->linkname = r->pax_linkpath ? strdup (r->pax_linkpath)
                                      : field_string (h + 157, 100);
        clear_pax (r);
        if (!r->name || !r->linkname)
            return seterr (r->error, ENOMEM, "out of memory");
        size_t nl = strlen (r->name);
        while (nl > 1 && r->name[nl - 1] == '/')
            r->name[--nl] = '\0';
        memset (e, 0, sizeof (*e));
        switch (type) {
            case '0':
            case '\0':
            case '7':
                e->type = TAR_FILE;
                break;
            case '5':
                e->type = TAR_DIR;
                break;
            case '2':
                e->type = TAR_SYMLINK;
                break;
            default:
                e->type = TAR_OTHER;
                break;
        }
        if (e->type == TAR_DIR || e->type == TAR_SYMLINK)
            size = type == '5' || type == '2' ? 0 : size;
        if (read_data (r, size, &r->data) < 0)
            return -1;
        e->name = r->name;
        e->linkname = r->linkname;
        e->data = r->data;
        e->size = e->type == TAR_FILE ? size : 0;
        e->mtime = (time_t)mtime;
        return 1;
    }
}
