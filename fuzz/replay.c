/* replay.c - run saved inputs through a fuzz target's entry point, for
 * 'make check' with the ordinary compiler (no clang or libFuzzer needed).
 *
 * Usage: replay-TARGET [FILE|DIR...]
 * Without arguments it replays every file in FUZZ_SRCDIR/regressions/TARGET
 * (inputs that once crashed, kept as regression tests) and in
 * FUZZ_SRCDIR/corpus/TARGET (the seed corpus).  Prints TAP: one "ok" per
 * input.  A crash, sanitizer report or failed invariant ends the program
 * abnormally, which the TAP driver reports as an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <dirent.h>
#include <sys/stat.h>
#include "fuzz.h"

struct input {
    char **paths;
    int n;
    int alloc;
};

static void add_path (struct input *in, const char *path)
{
    if (in->n == in->alloc) {
        in->alloc = in->alloc ? in->alloc * 2 : 64;
        if (!(in->paths = realloc (in->paths, in->alloc * sizeof (char *)))) {
            perror ("realloc");
            exit (1);
        }
    }
    if (!(in->paths[in->n++] = strdup (path))) {
        perror ("strdup");
        exit (1);
    }
}

static int cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

/* Add a file, or every regular file of a directory (not README*). */
static void add (struct input *in, const char *path, int quiet_missing)
{
    struct stat st;
    if (stat (path, &st) < 0) {
        if (!quiet_missing)
            fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
        return;
    }
    if (!S_ISDIR (st.st_mode)) {
        add_path (in, path);
        return;
    }
    DIR *d = opendir (path);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir (d))) {
        char p[4096];
        if (e->d_name[0] == '.' || !strncmp (e->d_name, "README", 6))
            continue;
        snprintf (p, sizeof (p), "%s/%s", path, e->d_name);
        if (stat (p, &st) == 0 && S_ISREG (st.st_mode))
            add_path (in, p);
    }
    closedir (d);
}

static unsigned char *slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            unsigned char *p = realloc (buf, cap);
            if (!p) {
                free (buf);
                fclose (f);
                return NULL;
            }
            buf = p;
        }
        size_t r = fread (buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose (f);
    *len = n;
    return buf;
}

int main (int argc, char *argv[])
{
    struct input in = { NULL, 0, 0 };

    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            add (&in, argv[i], 0);
    }
    else {
        add (&in, FUZZ_SRCDIR "/regressions/" FUZZ_TARGET, 1);
        add (&in, FUZZ_SRCDIR "/corpus/" FUZZ_TARGET, 1);
    }
    qsort (in.paths, in.n, sizeof (char *), cmp);
    if (in.n == 0) {
        printf ("1..0 # SKIP no inputs for %s\n", FUZZ_TARGET);
        return 0;
    }
    printf ("1..%d\n", in.n);
    fflush (stdout);
    for (int i = 0; i < in.n; i++) {
        size_t len = 0;
        unsigned char *data = slurp (in.paths[i], &len);
        if (!data) {
            printf ("not ok %d - %s: %s\n", i + 1, in.paths[i], strerror (errno));
            continue;
        }
        LLVMFuzzerTestOneInput (data, len);
        const char *name = strrchr (in.paths[i], '/');
        printf ("ok %d - %s (%zu bytes)\n", i + 1, name ? name + 1 : in.paths[i], len);
        fflush (stdout);
        free (data);
        free (in.paths[i]);
    }
    free (in.paths);
    return 0;
}
