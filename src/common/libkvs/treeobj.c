/* treeobj.c - KVS tree objects (treeobj.h).
 *
 * Validation is strict because tree objects arrive from clients and from
 * other brokers: wrong version, unknown type, a data member of the wrong
 * JSON type, a malformed blobref or base64 string all fail with EINVAL.
 */
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/base64.h"
#include "src/common/libutil/strbuf.h"
#include "treeobj.h"

/* Built member by member: json_pack would parse its format string for
 * every object, and the KVS creates one per value it applies.
 */
static json_t *create (const char *type, json_t *data)
{
    json_t *o;

    if (!data)
        goto nomem;
    if (!(o = json_object ())) {
        json_decref (data);
        goto nomem;
    }
    /* members in the order json_pack gave them; each set takes its
     * value, even when it fails
     */
    if (json_object_set_new_nocheck (o, "ver", json_integer (1)) < 0
        || json_object_set_new_nocheck (o, "type", json_string_nocheck (type)) < 0) {
        json_decref (data);
        json_decref (o);
        goto nomem;
    }
    if (json_object_set_new_nocheck (o, "data", data) < 0) {
        json_decref (o);
        goto nomem;
    }
    return o;
nomem:
    errno = ENOMEM;
    return NULL;
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

json_t *treeobj_create_hdir (int level)
{
    json_t *refs;
    if (level < 0 || level > TREEOBJ_HDIR_MAXLEVEL) {
        errno = EINVAL;
        return NULL;
    }
    if (!(refs = json_array ())) {
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < TREEOBJ_HDIR_FANOUT; i++) {
        if (json_array_append_new (refs, json_null ()) < 0) {
            json_decref (refs);
            errno = ENOMEM;
            return NULL;
        }
    }
    return create ("hdir", json_pack ("{s:i s:i s:o}", "count", 0, "level", level,
                                       "refs", refs));
}

const char *treeobj_type (const json_t *obj)
{
    json_t *t;
    if (!obj || !json_is_object (obj) || !(t = json_object_get (obj, "type"))
        || !json_is_string (t))
        return NULL;
    return json_string_value (t);
}

/* One member lookup and a few byte compares: the KVS asks an object's
 * kind several times per operation it applies, and a strcmp per question
 * cost a tenth of rank 0's apply.
 */
treeobj_kind_t treeobj_kind (const json_t *obj)
{
    const char *t = treeobj_type (obj);
    if (!t)
        return TREEOBJ_NONE;
    switch (t[0]) {
        case 'v':
            if (t[1] == 'a' && t[2] == 'l') {
                if (t[3] == '\0')
                    return TREEOBJ_VAL;
                if (!strcmp (t + 3, "ref"))
                    return TREEOBJ_VALREF;
            }
            break;
        case 'd':
            if (t[1] == 'i' && t[2] == 'r') {
                if (t[3] == '\0')
                    return TREEOBJ_DIR;
                if (!strcmp (t + 3, "ref"))
                    return TREEOBJ_DIRREF;
            }
            break;
        case 'h':
            if (!strcmp (t + 1, "dir"))
                return TREEOBJ_HDIR;
            break;
        case 's':
            if (!strcmp (t + 1, "ymlink"))
                return TREEOBJ_SYMLINK;
            break;
    }
    return TREEOBJ_NONE;
}

bool treeobj_is_val (const json_t *obj) { return treeobj_kind (obj) == TREEOBJ_VAL; }
bool treeobj_is_valref (const json_t *obj) { return treeobj_kind (obj) == TREEOBJ_VALREF; }
bool treeobj_is_dir (const json_t *obj) { return treeobj_kind (obj) == TREEOBJ_DIR; }
bool treeobj_is_dirref (const json_t *obj) { return treeobj_kind (obj) == TREEOBJ_DIRREF; }
bool treeobj_is_symlink (const json_t *obj)
{
    return treeobj_kind (obj) == TREEOBJ_SYMLINK;
}
bool treeobj_is_hdir (const json_t *obj) { return treeobj_kind (obj) == TREEOBJ_HDIR; }

bool treeobj_is_dirlike (const json_t *obj)
{
    treeobj_kind_t k = treeobj_kind (obj);
    return k == TREEOBJ_DIR || k == TREEOBJ_HDIR;
}

bool treeobj_is_directory (const json_t *obj)
{
    treeobj_kind_t k = treeobj_kind (obj);
    return k == TREEOBJ_DIR || k == TREEOBJ_HDIR || k == TREEOBJ_DIRREF;
}

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
        json_int_t level, count;
        size_t i;
        json_t *v;
        /* range-check the JSON integers before they become ints: json_unpack
         * "i" would truncate, so level 2^32+1 validated as level 1
         * (caught by the fuzz/treeobj invariants; regression input in
         * fuzz/regressions/treeobj/hdir-level-truncated)
         */
        if (!json_is_object (data) || json_object_size (data) != 3
            || json_unpack ((json_t *)data, "{s:I s:I s:o}", "count", &count,
                            "level", &level, "refs", &refs) < 0
            || level < 0 || level > TREEOBJ_HDIR_MAXLEVEL || count < 0
            || count > INT_MAX
            || !json_is_array (refs)
            || json_array_size (refs) != TREEOBJ_HDIR_FANOUT)
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

int treeobj_set_blobref (json_t *obj, int index, const char *blobref)
{
    json_t *d = treeobj_data (obj);
    json_t *v;
    if (!treeobj_is_valref (obj) || !d || index < 0
        || !(v = json_array_get (d, index)) || !json_is_string (v)
        || blobref_validate (blobref) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (json_string_set (v, blobref) < 0) {
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

static json_t *hdir_get (const json_t *obj, const char *key)
{
    json_t *d;
    if (!treeobj_is_hdir (obj) || !(d = treeobj_data (obj)) || !json_is_object (d))
        return NULL;
    return json_object_get (d, key);
}

int treeobj_hdir_level (const json_t *obj)
{
    json_t *v = hdir_get (obj, "level");
    if (!v || !json_is_integer (v)) {
        errno = EINVAL;
        return -1;
    }
    return json_integer_value (v);
}

int treeobj_hdir_count (const json_t *obj)
{
    json_t *v = hdir_get (obj, "count");
    if (!v || !json_is_integer (v)) {
        errno = EINVAL;
        return -1;
    }
    return json_integer_value (v);
}

int treeobj_hdir_set_count (json_t *obj, int count)
{
    json_t *d = treeobj_data (obj);
    if (!treeobj_is_hdir (obj) || !d || count < 0) {
        errno = EINVAL;
        return -1;
    }
    return json_object_set_new (d, "count", json_integer (count));
}

uint64_t treeobj_name_hash (const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int bucket_at (int level, const char *name)
{
    return (treeobj_name_hash (name) >> (4 * level)) & (TREEOBJ_HDIR_FANOUT - 1);
}

int treeobj_hdir_bucket_of (const json_t *obj, const char *name)
{
    int level = treeobj_hdir_level (obj);
    if (level < 0 || !name)
        return -1;
    return bucket_at (level, name);
}

/* The buckets' data objects are filled directly: the names come from a
 * dir, so they are valid, and each is hashed once.
 */
json_t *treeobj_hdir_from_dir (const json_t *dir, int level)
{
    json_t *d = treeobj_data (dir);
    json_t *h, *refs;
    json_t *bdata[TREEOBJ_HDIR_FANOUT] = { NULL };
    const char *name;
    json_t *e;
    int count = 0;

    if (!treeobj_is_dir (dir) || !json_is_object (d)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(h = treeobj_create_hdir (level)))
        return NULL;
    refs = hdir_get (h, "refs");
    json_object_foreach (d, name, e) {
        int slot = bucket_at (level, name);
        if (!bdata[slot]) {
            json_t *bucket = treeobj_create_dir ();
            if (!bucket || json_array_set_new (refs, slot, bucket) < 0)
                goto nomem;
            bdata[slot] = treeobj_data (bucket);
        }
        if (json_object_set_new (bdata[slot], name, json_incref (e)) < 0)
            goto nomem;
        count++;
    }
    if (treeobj_hdir_set_count (h, count) < 0)
        goto nomem;
    return h;
nomem:
    json_decref (h);
    errno = ENOMEM;
    return NULL;
}

json_t *treeobj_hdir_slot (const json_t *obj, int slot)
{
    json_t *refs = hdir_get (obj, "refs");
    if (!refs || slot < 0 || slot >= TREEOBJ_HDIR_FANOUT) {
        errno = EINVAL;
        return NULL;
    }
    return json_array_get (refs, slot);
}

const char *treeobj_hdir_ref (const json_t *obj, int slot)
{
    json_t *v = treeobj_hdir_slot (obj, slot);
    if (!v)
        return NULL;
    if (json_is_null (v)) {
        errno = ENOENT;
        return NULL;
    }
    if (!json_is_string (v)) {
        errno = EINVAL;
        return NULL;
    }
    return json_string_value (v);
}

int treeobj_hdir_set_slot (json_t *obj, int slot, json_t *val)
{
    json_t *refs = hdir_get (obj, "refs");
    if (!refs || slot < 0 || slot >= TREEOBJ_HDIR_FANOUT || !val) {
        json_decref (val);
        errno = EINVAL;
        return -1;
    }
    return json_array_set_new (refs, slot, val);
}

json_t *treeobj_hdir_copy (const json_t *obj)
{
    json_t *refs = hdir_get (obj, "refs");
    json_t *copy;
    if (!refs || !json_is_array (refs)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(copy = json_copy (refs))) {
        errno = ENOMEM;
        return NULL;
    }
    return create ("hdir", json_pack ("{s:i s:i s:o}",
                                       "count", treeobj_hdir_count (obj),
                                       "level", treeobj_hdir_level (obj),
                                       "refs", copy));
}

/* Canonical encoding.
 *
 * Written by hand rather than with json_dumps(JSON_SORT_KEYS): the shape
 * of tree objects is fixed, so only directory names need sorting, and this
 * runs for every directory of every commit.  Members are emitted in
 * sorted order ("data", "type", "ver"; "count", "level", "refs";
 * "target"), strings are escaped minimally (quote, backslash, control
 * characters), so the output is valid compact JSON and stable forever.
 */
static int buf_json_string (struct strbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (strbuf_reserve (b, n * 6 + 2) < 0)
        return -1;
    char *p = b->s + b->len;
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = c;
        }
        else if (c < 0x20) {
            *p++ = '\\';
            *p++ = 'u';
            *p++ = '0';
            *p++ = '0';
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        }
        else
            *p++ = c;
    }
    *p++ = '"';
    if (strbuf_over (b, p - b->s)) {
        b->s[b->len] = '\0';
        return -1;
    }
    b->len = p - b->s;
    b->s[b->len] = '\0';
    return 0;
}

struct member {
    const char *name;
    const json_t *value;
};

static int cmp_members (const void *a, const void *b)
{
    return strcmp (((const struct member *)a)->name, ((const struct member *)b)->name);
}

/* Returns 0 (written), 1 (not a tree object: nothing written) or -1. */
static int encode_obj (struct strbuf *b, const json_t *obj);

static int encode_value (struct strbuf *b, const json_t *v)
{
    char num[32];
    if (json_is_null (v))
        return strbuf_put (b, "null", 4);
    if (json_is_string (v))
        return buf_json_string (b, json_string_value (v), json_string_length (v));
    if (json_is_integer (v)) {
        snprintf (num, sizeof (num), "%" JSON_INTEGER_FORMAT, json_integer_value (v));
        return strbuf_str (b, num);
    }
    if (json_is_array (v)) {
        size_t i;
        json_t *e;
        if (strbuf_put (b, "[", 1) < 0)
            return -1;
        json_array_foreach ((json_t *)v, i, e) {
            if ((i > 0 && strbuf_put (b, ",", 1) < 0) || encode_value (b, e) < 0)
                return -1;
        }
        return strbuf_put (b, "]", 1);
    }
    if (json_is_object (v)) {
        /* A tree object has exactly three members, so only a small object
         * is worth a closer look (encode_obj); a bigger one is plain
         * unless it has a string "type" (then it is a broken tree object,
         * which encode_obj refuses).
         */
        size_t size = json_object_size (v);
        if (size <= 3 || json_is_string (json_object_get (v, "type"))) {
            int rc = encode_obj (b, v);
            if (rc <= 0)
                return rc;
        }
        /* a plain object (dir data, hdir data, symlink data): sorted keys */
        size_t n = size, i = 0;
        struct member *m = malloc ((n + 1) * sizeof (*m));
        const char *name;
        json_t *e;
        int rc = -1;
        if (!m)
            return -1;
        /* names and values together: no second lookup per member */
        json_object_foreach ((json_t *)v, name, e) {
            m[i].name = name;
            m[i++].value = e;
        }
        /* A directory decoded from its canonical text keeps that (sorted)
         * order, and a commit appends at most a few names: look before
         * sorting.
         */
        for (i = 1; i < n; i++) {
            if (strcmp (m[i - 1].name, m[i].name) > 0) {
                qsort (m, n, sizeof (*m), cmp_members);
                break;
            }
        }
        if (strbuf_put (b, "{", 1) < 0)
            goto done;
        for (i = 0; i < n; i++) {
            if ((i > 0 && strbuf_put (b, ",", 1) < 0)
                || buf_json_string (b, m[i].name, strlen (m[i].name)) < 0
                || strbuf_put (b, ":", 1) < 0
                || encode_value (b, m[i].value) < 0)
                goto done;
        }
        rc = strbuf_put (b, "}", 1);
done:
        free (m);
        return rc;
    }
    if (json_is_true (v))
        return strbuf_put (b, "true", 4);
    if (json_is_false (v))
        return strbuf_put (b, "false", 5);
    errno = EINVAL;
    return -1;      /* reals do not occur in tree objects */
}

/* An object with a string "type" is written as a tree object, members in
 * canonical order and "ver":1, so it must be exactly one: three members,
 * ver 1.  Validation only looks one level into a dir; deeper objects that
 * merely look like tree objects ("ver":0, an extra member) used to be
 * rewritten silently (found by fuzz/treeobj; regression input
 * fuzz/regressions/treeobj/nested-ver0-lost-in-encode).  Now they fail.
 */
static int encode_obj (struct strbuf *b, const json_t *obj)
{
    const json_t *type = NULL, *data = NULL, *ver = NULL;
    const char *name;
    json_t *e;
    size_t size = json_object_size (obj);

    /* one walk over the (at most three) members instead of a hash lookup
     * per member: this runs for every entry of every directory stored
     */
    if (size <= 3) {
        json_object_foreach ((json_t *)obj, name, e) {
            if (!strcmp (name, "type"))
                type = e;
            else if (!strcmp (name, "data"))
                data = e;
            else if (!strcmp (name, "ver"))
                ver = e;
        }
    }
    else
        type = json_object_get (obj, "type");
    if (!json_is_string (type))
        return 1;           /* not a tree object */
    if (size != 3 || !data || !json_is_integer (ver) || json_integer_value (ver) != 1) {
        errno = EINVAL;
        return -1;
    }
    if (strbuf_put (b, "{\"data\":", 8) < 0
        || encode_value (b, data) < 0
        || strbuf_put (b, ",\"type\":", 8) < 0
        || buf_json_string (b, json_string_value (type), json_string_length (type)) < 0
        || strbuf_put (b, ",\"ver\":1}", 9) < 0)
        return -1;
    return 0;
}

char *treeobj_encode_max (const json_t *obj, size_t max, size_t *len)
{
    struct strbuf b = { .limit = max };
    if (!obj || !treeobj_type (obj)) {
        errno = EINVAL;
        return NULL;
    }
    errno = 0;
    if (encode_obj (&b, obj) < 0) {
        free (b.s);
        if (errno != EINVAL && errno != E2BIG)
            errno = ENOMEM;
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.s;
}

char *treeobj_encode (const json_t *obj, size_t *len)
{
    return treeobj_encode_max (obj, 0, len);
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
    if (!(o = json_fast_loadb (buf, len, 0, NULL))) {
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
