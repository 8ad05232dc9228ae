/* kvs_path.c - see kvs_path.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/kvs.h>
#include "kvs_path.h"

char *kvs_path_normalize (const char *key)
{
    size_t len;
    char *out, *p;
    size_t comp = 0;

    if (!key) {
        errno = EINVAL;
        return NULL;
    }
    len = strlen (key);
    if (len > KVS_MAX_KEY) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if (!(out = malloc (len + 2))) {
        errno = ENOMEM;
        return NULL;
    }
    p = out;
    for (const unsigned char *s = (const unsigned char *)key; *s; s++) {
        if (*s == '.') {
            comp = 0;
            if (p > out && p[-1] != '.')
                *p++ = '.';
            continue;
        }
        if (*s < 0x20 || *s == 0x7f) {
            free (out);
            errno = EINVAL;
            return NULL;
        }
        if (++comp > KVS_MAX_COMPONENT) {
            free (out);
            errno = ENAMETOOLONG;
            return NULL;
        }
        *p++ = *s;
    }
    if (p > out && p[-1] == '.')
        p--;
    if (p == out)
        *p++ = '.';
    *p = '\0';
    return out;
}

bool kvs_path_is_root (const char *normalized)
{
    return normalized && !strcmp (normalized, ".");
}

int kvs_path_split (const char *normalized, char ***componentsp, char **bufp)
{
    char *buf;
    char **v;
    int n = 0;

    if (!normalized || !componentsp || !bufp) {
        errno = EINVAL;
        return -1;
    }
    if (!(buf = strdup (normalized))) {
        errno = ENOMEM;
        return -1;
    }
    if (kvs_path_is_root (buf)) {
        *componentsp = NULL;
        *bufp = buf;
        return 0;
    }
    int count = 1;
    for (const char *s = buf; *s; s++)
        if (*s == '.')
            count++;
    if (!(v = calloc (count + 1, sizeof (char *)))) {
        free (buf);
        errno = ENOMEM;
        return -1;
    }
    char *saveptr = NULL;
    for (char *tok = strtok_r (buf, ".", &saveptr); tok;
         tok = strtok_r (NULL, ".", &saveptr))
        v[n++] = tok;
    *componentsp = v;
    *bufp = buf;
    return n;
}

char *kvs_path_join (const char *a, const char *b)
{
    char *tmp, *out;
    size_t la, lb;

    if (!a || !b) {
        errno = EINVAL;
        return NULL;
    }
    la = strlen (a);
    lb = strlen (b);
    if (!(tmp = malloc (la + lb + 2))) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy (tmp, a, la);
    tmp[la] = '.';
    memcpy (tmp + la + 1, b, lb + 1);
    out = kvs_path_normalize (tmp);
    free (tmp);
    return out;
}
