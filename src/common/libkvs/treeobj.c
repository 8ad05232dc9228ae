/* treeobj.c - KVS tree objects (treeobj.h).
 *
 * Validation is strict because tree objects arrive from clients and from
 * other brokers: wrong version, unknown type, a data member of the wrong
 * JSON type, a malformed blobref or base64 string all fail with EINVAL.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/base64.h"
#include "treeobj.h"

static json_t *create (const char *type, json_t *data)
{
    json_t *o;
    if (!data) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(o = json_pack ("{s:i s:s s:o}", "ver", 1, "type", type, "data", data))) {
        errno = ENOMEM;
        return NULL;
    }
    return o;
}

json_t *treeobj_create_val (const void *data, size_t len)
{
    char *s = base64_encode (data, len);
    json_t *o;
    if (!s)
        return NULL;
    o = create ("val", json_string (s));
    free (s);
    return o;
}

json_t *treeobj_create_valref (void)
{
    return create ("valref", json_array ());
}

json_t *treeobj_create_dir (void)
{
    return create ("dir", json_object ());
}

json_t *treeobj_create_dirref (const char *blobref)
{
    if (blobref_validate (blobref) < 0)
        return NULL;
    return create ("dirref", json_pack ("[s]", blobref));
}

json_t *treeobj_create_symlink (const char *target)
{
    if (!target || !*target) {
        errno = EINVAL;
        return NULL;
    }
    return create ("symlink", json_pack ("{s:s}", "target", target));
}

json_t *treeobj_create_hdir (int nbuckets)
{
    json_t *refs;
    if (nbuckets < 1 || nbuckets > 65536) {
        errno = EINVAL;
        return NULL;
    }
    if (!(refs = json_array ())) {
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < nbuckets; i++) {
        if (json_array_append_new (refs, json_null ()) < 0) {
            json_decref (refs);
            errno = ENOMEM;
            return NULL;
        }
    }
    return create ("hdir", json_pack ("{s:i s:i s:o}", "buckets", nbuckets,
                                       "count", 0, "refs", refs));
}

const char *treeobj_type (const json_t *obj)
{
    json_t *t;
    if (!obj || !json_is_object (obj) || !(t = json_object_get (obj, "type"))
        || !json_is_string (t))
        return NULL;
    return json_string_value (t);
}

static bool is_type (const json_t *obj, const char *type)
{
    const char *t = treeobj_type (obj);
    return t && !strcmp (t, type);
}

bool treeobj_is_val (const json_t *obj) { return is_type (obj, "val"); }
bool treeobj_is_valref (const json_t *obj) { return is_type (obj, "valref"); }
bool treeobj_is_dir (const json_t *obj) { return is_type (obj, "dir"); }
bool treeobj_is_dirref (const json_t *obj) { return is_type (obj, "dirref"); }
bool treeobj_is_symlink (const json_t *obj) { return is_type (obj, "symlink"); }
bool treeobj_is_hdir (const json_t *obj) { return is_type (obj, "hdir"); }

json_t *treeobj_data (const json_t *obj)
{
    return obj ? json_object_get (obj, "data") : NULL;
}

static int validate_refs (const json_t *a, bool exactly_one)
{
    size_t i;
    json_t *v;
    if (!json_is_array (a) || (exactly_one && json_array_size (a) != 1))
        return -1;
    json_array_foreach (a, i, v) {
        if (!json_is_string (v) || blobref_validate (json_string_value (v)) < 0)
            return -1;
    }
    return 0;
}

static int validate_one (const json_t *obj, int depth)
{
    json_t *ver, *data;
    const char *type;

    if (!json_is_object (obj) || json_object_size (obj) != 3
        || !(ver = json_object_get (obj, "ver")) || !json_is_integer (ver)
        || json_integer_value (ver) != 1
        || !(type = treeobj_type (obj)) || !(data = treeobj_data (obj)))
        return -1;
    if (!strcmp (type, "val")) {
        size_t len;
        void *buf;
        if (!json_is_string (data))
            return -1;
        if (!(buf = base64_decode (json_string_value (data),
                                   json_string_length (data), &len)))
            return -1;
        free (buf);
        return 0;
    }
    if (!strcmp (type, "valref"))
        return validate_refs (data, false);
    if (!strcmp (type, "dirref"))
        return validate_refs (data, true);
    if (!strcmp (type, "symlink")) {
        json_t *t;
        if (!json_is_object (data) || json_object_size (data) != 1
            || !(t = json_object_get (data, "target")) || !json_is_string (t)
            || json_string_length (t) == 0)
            return -1;
        return 0;
    }
    if (!strcmp (type, "dir")) {
        const char *name;
        json_t *entry;
        if (!json_is_object (data))
            return -1;
        json_object_foreach ((json_t *)data, name, entry) {
            if (!*name || strchr (name, '.'))
                return -1;
            if (depth > 0 && validate_one (entry, depth - 1) < 0)
                return -1;
        }
        return 0;
    }
    if (!strcmp (type, "hdir")) {
        json_t *refs;
        int n, count;
        size_t i;
        json_t *v;
        if (json_unpack ((json_t *)data, "{s:i s:i s:o}", "buckets", &n,
                         "count", &count, "refs", &refs) < 0
            || n < 1 || n > 65536 || count < 0 || !json_is_array (refs)
            || json_array_size (refs) != (size_t)n)
            return -1;
        json_array_foreach (refs, i, v) {
            if (!json_is_null (v)
                && (!json_is_string (v)
                    || blobref_validate (json_string_value (v)) < 0))
                return -1;
        }
        return 0;
    }
    return -1;
}

int treeobj_validate (const json_t *obj)
{
    if (validate_one (obj, 1) < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int treeobj_decode_val (const json_t *obj, void **data, size_t *len)
{
    json_t *d;
    void *buf;
    size_t n;

    if (!treeobj_is_val (obj) || !(d = treeobj_data (obj)) || !json_is_string (d)
        || !data || !len) {
        errno = EINVAL;
        return -1;
    }
    if (!(buf = base64_decode (json_string_value (d), json_string_length (d), &n)))
        return -1;
    *data = buf;
    *len = n;
    return 0;
}

int treeobj_blobref_count (const json_t *obj)
{
    json_t *d;
    if ((!treeobj_is_valref (obj) && !treeobj_is_dirref (obj))
        || !(d = treeobj_data (obj)) || !json_is_array (d)) {
        errno = EINVAL;
        return -1;
    }
    return json_array_size (d);
}

const char *treeobj_blobref_at (const json_t *obj, int index)
{
    json_t *d = treeobj_data (obj);
    json_t *v;
    if (!d || !json_is_array (d) || index < 0 || !(v = json_array_get (d, index))
        || !json_is_string (v)) {
        errno = EINVAL;
        return NULL;
    }
    return json_string_value (v);
}

int treeobj_append_blobref (json_t *obj, const char *blobref)
{
    json_t *d = treeobj_data (obj);
    if (!treeobj_is_valref (obj) || !d || blobref_validate (blobref) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (json_array_append_new (d, json_string (blobref)) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int treeobj_dir_count (const json_t *dir)
{
    json_t *d;
    if (!treeobj_is_dir (dir) || !(d = treeobj_data (dir)) || !json_is_object (d)) {
        errno = EINVAL;
        return -1;
    }
    return json_object_size (d);
}

json_t *treeobj_dir_get (const json_t *dir, const char *name)
{
    json_t *d = treeobj_data (dir);
    json_t *e;
    if (!treeobj_is_dir (dir) || !d || !name) {
        errno = EINVAL;
        return NULL;
    }
    if (!(e = json_object_get (d, name))) {
        errno = ENOENT;
        return NULL;
    }
    return e;
}

int treeobj_dir_set (json_t *dir, const char *name, json_t *entry)
{
    json_t *d = treeobj_data (dir);
    if (!treeobj_is_dir (dir) || !d || !name || !*name || strchr (name, '.') || !entry) {
        json_decref (entry);
        errno = EINVAL;
        return -1;
    }
    if (json_object_set_new (d, name, entry) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int treeobj_dir_remove (json_t *dir, const char *name)
{
    json_t *d = treeobj_data (dir);
    if (!treeobj_is_dir (dir) || !d || !name) {
        errno = EINVAL;
        return -1;
    }
    if (json_object_del (d, name) < 0) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

json_t *treeobj_dir_copy (const json_t *dir)
{
    json_t *d = treeobj_data (dir);
    if (!treeobj_is_dir (dir) || !d) {
        errno = EINVAL;
        return NULL;
    }
    return create ("dir", json_copy (d));
}

const char *treeobj_symlink_target (const json_t *obj)
{
    json_t *d = treeobj_data (obj);
    json_t *t;
    if (!treeobj_is_symlink (obj) || !d || !(t = json_object_get (d, "target"))
        || !json_is_string (t)) {
        errno = EINVAL;
        return NULL;
    }
    return json_string_value (t);
}

int treeobj_hdir_buckets (const json_t *obj)
{
    int n;
    if (!treeobj_is_hdir (obj)
        || json_unpack (treeobj_data (obj), "{s:i}", "buckets", &n) < 0) {
        errno = EINVAL;
        return -1;
    }
    return n;
}

int treeobj_hdir_count (const json_t *obj)
{
    int n;
    if (!treeobj_is_hdir (obj)
        || json_unpack (treeobj_data (obj), "{s:i}", "count", &n) < 0) {
        errno = EINVAL;
        return -1;
    }
    return n;
}

/* FNV-1a: stable across platforms and versions (it decides where entries
 * live in stored objects, so it must never change).
 */
int treeobj_hdir_bucket_of (const json_t *obj, const char *name)
{
    int n = treeobj_hdir_buckets (obj);
    uint32_t h = 2166136261u;
    if (n < 1 || !name)
        return -1;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h % (uint32_t)n;
}

const char *treeobj_hdir_ref (const json_t *obj, int bucket)
{
    json_t *refs, *v;
    if (!treeobj_is_hdir (obj)
        || json_unpack (treeobj_data (obj), "{s:o}", "refs", &refs) < 0
        || !(v = json_array_get (refs, bucket))) {
        errno = EINVAL;
        return NULL;
    }
    if (json_is_null (v)) {
        errno = ENOENT;
        return NULL;
    }
    return json_string_value (v);
}

char *treeobj_encode (const json_t *obj, size_t *len)
{
    char *s;
    if (!obj) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = json_dumps (obj, JSON_COMPACT | JSON_SORT_KEYS))) {
        errno = ENOMEM;
        return NULL;
    }
    if (len)
        *len = strlen (s);
    return s;
}

char *treeobj_encode_ref (const json_t *obj, size_t *len, char *ref, size_t refsize)
{
    size_t n;
    char *s = treeobj_encode (obj, &n);
    if (!s)
        return NULL;
    if (blobref_hash (s, n, ref, refsize) < 0) {
        free (s);
        return NULL;
    }
    if (len)
        *len = n;
    return s;
}

json_t *treeobj_decode (const void *buf, size_t len)
{
    json_t *o;
    if (!buf) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = json_loadb (buf, len, 0, NULL))) {
        errno = EPROTO;
        return NULL;
    }
    if (treeobj_validate (o) < 0) {
        json_decref (o);
        errno = EPROTO;
        return NULL;
    }
    return o;
}
