/* test/randdir.h - random directory entries for the tests of the
 * encoded-directory readers (treeobj_scan.c, treeobj_index.c): names of
 * every printable character but escapes, and values, valrefs, symlinks,
 * dirrefs and (above depth 2, none) nested directories.  Static: each
 * test program includes it once.
 */
#ifndef CANOPY_TEST_RANDDIR_H
#define CANOPY_TEST_RANDDIR_H

#include <stdlib.h>
#include "src/common/libkvs/treeobj.h"

static const char *ref1 = "sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static void randname (char *buf, size_t size, unsigned *seed)
{
    static const char chars[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+=:;,/#@!~";
    int n = 1 + rand_r (seed) % (int)(size - 1 < 12 ? size - 1 : 12);
    for (int i = 0; i < n; i++)
        buf[i] = chars[rand_r (seed) % (sizeof (chars) - 1)];
    buf[n] = '\0';
}

static json_t *randentry (unsigned *seed, int depth)
{
    char data[64];
    int len = rand_r (seed) % 40;
    for (int i = 0; i < len; i++)
        data[i] = (char)rand_r (seed);
    switch (rand_r (seed) % (depth < 2 ? 5 : 3)) {
        case 0:
            return treeobj_create_val (data, len);
        case 1: {
            json_t *v = treeobj_create_valref ();
            assert_int_equal (treeobj_append_blobref (v, ref1), 0);
            return v;
        }
        case 2:
            return treeobj_create_symlink ("a.b.c");
        case 3:
            return treeobj_create_dirref (ref1);
        default: {
            json_t *d = treeobj_create_dir ();
            char name[16];
            for (int i = rand_r (seed) % 4; i > 0; i--) {
                randname (name, sizeof (name), seed);
                assert_int_equal (treeobj_dir_set (d, name, randentry (seed, depth + 1)), 0);
            }
            return d;
        }
    }
}

/* A directory of n random entries (fewer if names repeat). */
static json_t *randdir (int n, unsigned *seed)
{
    json_t *dir = treeobj_create_dir ();
    char name[16];

    assert_non_null (dir);
    for (int i = 0; i < n; i++) {
        randname (name, sizeof (name), seed);
        assert_int_equal (treeobj_dir_set (dir, name, randentry (seed, 0)), 0);
    }
    return dir;
}

#endif
