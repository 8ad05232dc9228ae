/* attr.c - broker attributes (attr.h). */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include "src/common/libutil/hashmap.h"
#include "attr.h"

struct attr {
    char *value;
    int flags;
};

struct attr_table {
    hashmap_t *map;
};

static void attr_free (void *arg)
{
    struct attr *a = arg;
    if (a) {
        free (a->value);
        free (a);
    }
}

attr_table_t *attr_create (void)
{
    attr_table_t *attrs = calloc (1, sizeof (*attrs));
    if (!attrs) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(attrs->map = hashmap_create (attr_free))) {
        free (attrs);
        return NULL;
    }
    return attrs;
}

void attr_destroy (attr_table_t *attrs)
{
    if (attrs) {
        int saved_errno = errno;
        hashmap_destroy (attrs->map);
        free (attrs);
        errno = saved_errno;
    }
}

int attr_set (attr_table_t *attrs, const char *name, const char *value,
              int flags, bool force)
{
    struct attr *a;
    char *cpy;

    if (!attrs || !name || !*name || !value) {
        errno = EINVAL;
        return -1;
    }
    if ((a = hashmap_lookup (attrs->map, name))) {
        if ((a->flags & (ATTR_IMMUTABLE | ATTR_READONLY)) && !force) {
            errno = EPERM;
            return -1;
        }
        if (!(cpy = strdup (value))) {
            errno = ENOMEM;
            return -1;
        }
        free (a->value);
        a->value = cpy;
        a->flags = flags;
        return 0;
    }
    if (!(a = calloc (1, sizeof (*a))) || !(a->value = strdup (value))) {
        free (a);
        errno = ENOMEM;
        return -1;
    }
    a->flags = flags;
    if (hashmap_insert (attrs->map, name, a) < 0) {
        attr_free (a);
        return -1;
    }
    return 0;
}

int attr_set_uint (attr_table_t *attrs, const char *name, unsigned long value, int flags)
{
    char buf[32];
    snprintf (buf, sizeof (buf), "%lu", value);
    return attr_set (attrs, name, buf, flags, true);
}

const char *attr_get (attr_table_t *attrs, const char *name, int *flags)
{
    struct attr *a;
    if (!attrs || !name) {
        errno = EINVAL;
        return NULL;
    }
    if (!(a = hashmap_lookup (attrs->map, name))) {
        errno = ENOENT;
        return NULL;
    }
    if (flags)
        *flags = a->flags;
    return a->value;
}

static int cmp (const void *a, const void *b)
{
    return strcmp (*(const char **)a, *(const char **)b);
}

json_t *attr_list (attr_table_t *attrs)
{
    size_t n = hashmap_size (attrs->map), i = 0;
    const char **names = calloc (n + 1, sizeof (char *));
    json_t *o = json_object ();
    void *val;

    if (!names || !o)
        goto nomem;
    for (const char *k = hashmap_first (attrs->map, &val); k && i < n;
         k = hashmap_next (attrs->map, &val))
        names[i++] = k;
    qsort (names, i, sizeof (char *), cmp);
    for (size_t j = 0; j < i; j++) {
        struct attr *a = hashmap_lookup (attrs->map, names[j]);
        if (json_object_set_new (o, names[j], json_string (a->value)) < 0)
            goto nomem;
    }
    free (names);
    return o;
nomem:
    free (names);
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}
