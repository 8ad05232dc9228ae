/* pmi-probe - exercise libpmi.so the way OpenMPI does: dlopen it by path
 * (test-only).
 *
 * Usage: pmi-probe LIBPMI.so MODE [ARGS]
 *   check             put/commit/barrier/get with awkward values, missing
 *                     keys, lengths, clique, unsupported calls; prints
 *                     "rank R of N: ok clique=..." per task
 *   clique            prints "rank R: clique=a,b,..."
 *   barrier COUNT     COUNT barriers; rank 0 prints the mean round trip
 *   abort CODE RANK   RANK calls PMI_Abort(CODE); the others wait in a
 *                     barrier that never completes
 *   noexit RANK       RANK exits 0 without PMI_Finalize; the others wait
 *                     in a barrier that never completes
 * Exit status 0 if every check passed, 1 otherwise (with messages).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#define PMI_SUCCESS 0
#define PMI_FAIL -1
#define PMI_ERR_INVALID_ARG 3
#define PMI_ERR_INVALID_KEY 4
#define PMI_ERR_INVALID_KEY_LENGTH 5
#define PMI_ERR_INVALID_VAL 6
#define PMI_ERR_INVALID_VAL_LENGTH 7
#define PMI_ERR_INVALID_LENGTH 8
#define PMI_ERR_INVALID_KVS 14

static struct {
    int (*Init)(int *);
    int (*Initialized)(int *);
    int (*Finalize)(void);
    int (*Abort)(int, const char *);
    int (*Get_size)(int *);
    int (*Get_rank)(int *);
    int (*Get_universe_size)(int *);
    int (*Get_appnum)(int *);
    int (*Barrier)(void);
    int (*KVS_Get_my_name)(char *, int);
    int (*KVS_Get_name_length_max)(int *);
    int (*KVS_Get_key_length_max)(int *);
    int (*KVS_Get_value_length_max)(int *);
    int (*KVS_Put)(const char *, const char *, const char *);
    int (*KVS_Commit)(const char *);
    int (*KVS_Get)(const char *, const char *, char *, int);
    int (*Get_clique_size)(int *);
    int (*Get_clique_ranks)(int *, int);
    int (*Publish_name)(const char *, const char *);
    int (*Unpublish_name)(const char *);
    int (*Lookup_name)(const char *, char *);
    int (*Get_id)(char *, int);
    int (*Get_kvs_domain_id)(char *, int);
    int (*Get_id_length_max)(int *);
    int (*KVS_Iter_first)(const char *, char *, int, char *, int);
    int (*KVS_Iter_next)(const char *, char *, int, char *, int);
} pmi;

static int errors;
static int rank = -1, size;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf (stderr, "pmi-probe rank %d: line %d: check failed: %s\n", \
             rank, __LINE__, #cond); errors++; } } while (0)

static void *sym (void *dso, const char *name)
{
    void *p = dlsym (dso, name);
    if (!p) {
        fprintf (stderr, "pmi-probe: %s is missing from the library\n", name);
        exit (1);
    }
    return p;
}

#define LOAD(dso, field) (*(void **)&pmi.field = sym (dso, "PMI_" #field))

static void load (const char *path)
{
    void *dso = dlopen (path, RTLD_NOW | RTLD_GLOBAL);
    if (!dso) {
        fprintf (stderr, "pmi-probe: %s\n", dlerror ());
        exit (1);
    }
    LOAD (dso, Init); LOAD (dso, Initialized); LOAD (dso, Finalize);
    LOAD (dso, Abort); LOAD (dso, Get_size); LOAD (dso, Get_rank);
    LOAD (dso, Get_universe_size); LOAD (dso, Get_appnum); LOAD (dso, Barrier);
    LOAD (dso, KVS_Get_my_name); LOAD (dso, KVS_Get_name_length_max);
    LOAD (dso, KVS_Get_key_length_max); LOAD (dso, KVS_Get_value_length_max);
    LOAD (dso, KVS_Put); LOAD (dso, KVS_Commit); LOAD (dso, KVS_Get);
    LOAD (dso, Get_clique_size); LOAD (dso, Get_clique_ranks);
    LOAD (dso, Publish_name); LOAD (dso, Unpublish_name); LOAD (dso, Lookup_name);
    LOAD (dso, Get_id); LOAD (dso, Get_kvs_domain_id); LOAD (dso, Get_id_length_max);
    LOAD (dso, KVS_Iter_first); LOAD (dso, KVS_Iter_next);
}

static void init (void)
{
    int spawned = -1, initialized = -1;

    CHECK (pmi.Initialized (&initialized) == PMI_SUCCESS && initialized == 0);
    CHECK (pmi.Get_rank (&rank) != PMI_SUCCESS);     /* not yet */
    if (pmi.Init (&spawned) != PMI_SUCCESS) {
        fprintf (stderr, "pmi-probe: PMI_Init failed\n");
        exit (1);
    }
    CHECK (spawned == 0);
    CHECK (pmi.Initialized (&initialized) == PMI_SUCCESS && initialized == 1);
    CHECK (pmi.Get_rank (&rank) == PMI_SUCCESS);
    CHECK (pmi.Get_size (&size) == PMI_SUCCESS);
}

static char *clique_str (void)
{
    static char buf[4096];
    int n = 0, *ranks;
    size_t len = 0;

    CHECK (pmi.Get_clique_size (&n) == PMI_SUCCESS && n >= 1);
    if (n < 1)
        return "?";
    ranks = calloc (n, sizeof (int));
    CHECK (pmi.Get_clique_ranks (ranks, n) == PMI_SUCCESS);
    buf[0] = '\0';
    for (int i = 0; i < n && len < sizeof (buf) - 16; i++)
        len += snprintf (buf + len, sizeof (buf) - len, "%s%d", i ? "," : "", ranks[i]);
    free (ranks);
    return buf;
}

static void mode_check (void)
{
    char name[256], key[64], val[2048], expect[2048];
    int namemax, keymax, valmax, n;

    CHECK (pmi.KVS_Get_name_length_max (&namemax) == PMI_SUCCESS && namemax > 0);
    CHECK (pmi.KVS_Get_key_length_max (&keymax) == PMI_SUCCESS && keymax > 0);
    CHECK (pmi.KVS_Get_value_length_max (&valmax) == PMI_SUCCESS && valmax > 16);
    CHECK (pmi.KVS_Get_my_name (name, sizeof (name)) == PMI_SUCCESS);
    CHECK (pmi.KVS_Get_my_name (name, 2) == PMI_ERR_INVALID_LENGTH);
    CHECK (pmi.KVS_Get_my_name (name, sizeof (name)) == PMI_SUCCESS);
    CHECK (pmi.Get_id_length_max (&n) == PMI_SUCCESS && n == namemax);
    CHECK (pmi.Get_id (expect, sizeof (expect)) == PMI_SUCCESS && !strcmp (expect, name));
    CHECK (pmi.Get_kvs_domain_id (expect, sizeof (expect)) == PMI_SUCCESS
           && !strcmp (expect, name));
    CHECK (pmi.Get_universe_size (&n) == PMI_SUCCESS && n == size);
    CHECK (pmi.Get_appnum (&n) == PMI_SUCCESS && n == 0);

    /* probing a key that nobody put fails at once */
    CHECK (pmi.KVS_Get (name, "never-put", val, sizeof (val)) == PMI_FAIL);

    /* values with spaces (OpenMPI's base64 pads with spaces) and a value
     * of vallen_max - 1 characters */
    snprintf (key, sizeof (key), "probe-%d-a", rank);
    snprintf (val, sizeof (val), "rank %d  with = and spaces ", rank);
    CHECK (pmi.KVS_Put (name, key, val) == PMI_SUCCESS);
    snprintf (key, sizeof (key), "probe-%d-b", rank);
    n = valmax - 1 < (int)sizeof (val) - 1 ? valmax - 1 : (int)sizeof (val) - 1;
    for (int i = 0; i < n; i++)
        val[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/ "[(i + rank) % 39];
    val[n] = '\0';
    CHECK (pmi.KVS_Put (name, key, val) == PMI_SUCCESS);
    /* invalid puts */
    CHECK (pmi.KVS_Put (name, "a key", "v") == PMI_ERR_INVALID_KEY);
    CHECK (pmi.KVS_Put (name, "k", "two\nlines") == PMI_ERR_INVALID_VAL);
    memset (expect, 'k', keymax);
    expect[keymax] = '\0';
    CHECK (pmi.KVS_Put (name, expect, "v") == PMI_ERR_INVALID_KEY_LENGTH);
    CHECK (pmi.KVS_Put ("not-my-kvs", "k", "v") == PMI_ERR_INVALID_KVS);
    CHECK (pmi.KVS_Put (name, NULL, "v") == PMI_ERR_INVALID_ARG);
    if (valmax < (int)sizeof (expect)) {
        memset (expect, 'v', valmax);
        expect[valmax] = '\0';
        CHECK (pmi.KVS_Put (name, "k", expect) == PMI_ERR_INVALID_VAL_LENGTH);
    }
    CHECK (pmi.KVS_Commit (name) == PMI_SUCCESS);
    CHECK (pmi.Barrier () == PMI_SUCCESS);

    for (int r = 0; r < size; r++) {
        snprintf (key, sizeof (key), "probe-%d-a", r);
        snprintf (expect, sizeof (expect), "rank %d  with = and spaces ", r);
        CHECK (pmi.KVS_Get (name, key, val, sizeof (val)) == PMI_SUCCESS);
        CHECK (!strcmp (val, expect));
        CHECK (pmi.KVS_Get (name, key, val, 5) == PMI_ERR_INVALID_LENGTH);
        snprintf (key, sizeof (key), "probe-%d-b", r);
        CHECK (pmi.KVS_Get (name, key, val, sizeof (val)) == PMI_SUCCESS);
        CHECK ((int)strlen (val) == n);
        CHECK (val[0] == "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/ "[r % 39]);
    }
    /* not supported, failing cleanly */
    CHECK (pmi.Publish_name ("svc", "port") == PMI_FAIL);
    CHECK (pmi.Unpublish_name ("svc") == PMI_FAIL);
    CHECK (pmi.Lookup_name ("svc", val) == PMI_FAIL);
    CHECK (pmi.KVS_Iter_first (name, key, sizeof (key), val, sizeof (val)) != PMI_SUCCESS);
    CHECK (pmi.KVS_Iter_next (name, key, sizeof (key), val, sizeof (val)) != PMI_SUCCESS);

    const char *clique = clique_str ();
    CHECK (pmi.Barrier () == PMI_SUCCESS);
    CHECK (pmi.Finalize () == PMI_SUCCESS);
    printf ("rank %d of %d: %s clique=%s\n", rank, size, errors ? "FAILED" : "ok", clique);
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void mode_barrier (int count)
{
    double t0;

    CHECK (pmi.Barrier () == PMI_SUCCESS);      /* line everyone up */
    t0 = now ();
    for (int i = 0; i < count; i++)
        CHECK (pmi.Barrier () == PMI_SUCCESS);
    if (rank == 0)
        printf ("barrier: %d tasks, %d rounds, mean %.1f us\n", size, count,
                (now () - t0) / count * 1e6);
    CHECK (pmi.Finalize () == PMI_SUCCESS);
}

int main (int argc, char *argv[])
{
    const char *mode;

    if (argc < 3) {
        fprintf (stderr, "Usage: pmi-probe LIBPMI.so check|clique|barrier COUNT|"
                 "abort CODE RANK|noexit RANK\n");
        return 1;
    }
    load (argv[1]);
    mode = argv[2];
    init ();
    if (!strcmp (mode, "check"))
        mode_check ();
    else if (!strcmp (mode, "clique")) {
        printf ("rank %d: clique=%s\n", rank, clique_str ());
        CHECK (pmi.Finalize () == PMI_SUCCESS);
    }
    else if (!strcmp (mode, "barrier") && argc == 4)
        mode_barrier (atoi (argv[3]));
    else if (!strcmp (mode, "abort") && argc == 5) {
        if (rank == atoi (argv[4]))
            pmi.Abort (atoi (argv[3]), "pmi-probe aborts on purpose");
        pmi.Barrier ();
        fprintf (stderr, "pmi-probe: rank %d: the barrier completed after an abort\n", rank);
        return 1;
    }
    else if (!strcmp (mode, "noexit") && argc == 4) {
        if (rank == atoi (argv[3]))
            return 0;
        pmi.Barrier ();
        fprintf (stderr, "pmi-probe: rank %d: the barrier completed\n", rank);
        return 1;
    }
    else {
        fprintf (stderr, "pmi-probe: unknown mode '%s'\n", mode);
        return 1;
    }
    return errors ? 1 : 0;
}
