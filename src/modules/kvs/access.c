/* access.c - guests' rights in the KVS (access.h).
 *
 * A key is "under" the namespace when, normalized (kvs_path.h), it equals
 * "u.<uid>" or starts with "u.<uid>.".  Keys are checked as written: rank
 * 0 applies an op whose path crosses a symlink at the link's target, so a
 * guest who could put a symlink could write anywhere through it; guests
 * therefore may not put symlinks (checked too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libkvs/kvs_path.h"
#include "access.h"

int kvs_guest_access_parse (const char *s, enum kvs_guest_access *out)
{
    if (!s || !out) {
        errno = EINVAL;
        return -1;
    }
    if (!strcmp (s, "none"))
        *out = KVS_GUEST_NONE;
    else if (!strcmp (s, "read"))
        *out = KVS_GUEST_READ;
    else if (!strcmp (s, "own"))
        *out = KVS_GUEST_OWN;
    else {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int kvs_guest_namespace (uint32_t uid, char *buf, size_t len)
{
    return snprintf (buf, len, "u.%u", uid);
}

static bool under (const char *key, const char *ns)
{
    size_t n = strlen (ns);
    return !strncmp (key, ns, n) && (key[n] == '\0' || key[n] == '.');
}

int kvs_guest_check (uint32_t uid, json_t *fences, bool check_name,
                     canopy_error_t *error)
{
    char ns[32];
    size_t i, j;
    json_t *f, *op;

    kvs_guest_namespace (uid, ns, sizeof (ns));
    if (!json_is_array (fences)) {
        errno = EPROTO;
        return errprintf (error, "malformed transaction");
    }
    json_array_foreach (fences, i, f) {
        const char *name = json_string_value (json_object_get (f, "name"));
        json_t *ops = json_object_get (f, "ops");
        if (check_name && (!name || !under (name, ns))) {
            errno = EPERM;
            return errprintf (error, "fence '%.64s': a guest's fences are named "
                              "under %s.", name, ns);
        }
        json_array_foreach (ops, j, op) {
            const char *key = json_string_value (json_array_get (op, 0));
            json_t *obj = json_array_get (op, 1);
            const char *type = json_string_value (json_object_get (obj, "type"));
            if (type && !strcmp (type, "symlink")) {
                errno = EPERM;
                return errprintf (error, "'%.64s': a guest may not make symlinks",
                                  key ? key : "?");
            }
            char *norm = key ? kvs_path_normalize (key) : NULL;
            bool ok = norm && under (norm, ns);
            free (norm);
            if (!ok) {
                errno = EPERM;
                return errprintf (error, "'%.64s': a guest may only write under %s.",
                                  key ? key : "?", ns);
            }
        }
    }
    return 0;
}
