/* pmi_dl.c - PMI-1 C API of a dlopened libpmi.so (pmi_dl.h).
 *
 * Design notes: function pointers are resolved once; PMI return codes
 * (PMI_SUCCESS = 0, anything else a failure) become -1 with errno EIO.
 * The kvsname is fetched once after PMI_Init and kept, since every KVS
 * call needs it.  dlerror() text goes to the caller's errbuf.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <dlfcn.h>
#include "pmi_dl.h"

#define PMI_SUCCESS_CODE 0
#define KVSNAME_BUF 1024

struct pmi_dl {
    void *dso;
    int rank;
    int size;
    char kvsname[KVSNAME_BUF];
    int (*init)(int *spawned);
    int (*finalize)(void);
    int (*abort)(int code, const char *msg);
    int (*get_size)(int *size);
    int (*get_rank)(int *rank);
    int (*barrier)(void);
    int (*kvs_get_my_name)(char *name, int len);
    int (*kvs_put)(const char *kvsname, const char *key, const char *val);
    int (*kvs_commit)(const char *kvsname);
    int (*kvs_get)(const char *kvsname, const char *key, char *val, int len);
    int (*get_clique_size)(int *size);
    int (*get_clique_ranks)(int *ranks, int len);
};

void pmi_dl_destroy (pmi_dl_t *dl)
{
    if (dl) {
        int saved_errno = errno;
        if (dl->dso)
            dlclose (dl->dso);
        free (dl);
        errno = saved_errno;
    }
}

static int errset (char *errbuf, size_t errsize, int errnum, const char *fmt,
                   const char *a, const char *b)
{
    if (errbuf && errsize > 0)
        snprintf (errbuf, errsize, fmt, a, b);
    errno = errnum;
    return -1;
}

#define RESOLVE(dl, field, name) \
    (*(void **)(&(dl)->field) = dlsym ((dl)->dso, name))

pmi_dl_t *pmi_dl_create (const char *path, char *errbuf, size_t errsize)
{
    pmi_dl_t *dl;
    int spawned = 0;
    const char *missing = NULL;

    if (!path || !*path) {
        errset (errbuf, errsize, EINVAL, "no PMI library path given%s%s", "", "");
        return NULL;
    }
    if (!(dl = calloc (1, sizeof (*dl)))) {
        errset (errbuf, errsize, ENOMEM, "out of memory%s%s", "", "");
        return NULL;
    }
    if (!(dl->dso = dlopen (path, RTLD_NOW | RTLD_LOCAL))) {
        const char *e = dlerror ();
        errset (errbuf, errsize, ENOENT, "cannot load PMI library %s: %s", path,
                e ? e : "unknown error");
        goto error;
    }
    if (!RESOLVE (dl, init, "PMI_Init"))
        missing = "PMI_Init";
    else if (!RESOLVE (dl, finalize, "PMI_Finalize"))
        missing = "PMI_Finalize";
    else if (!RESOLVE (dl, abort, "PMI_Abort"))
        missing = "PMI_Abort";
    else if (!RESOLVE (dl, get_size, "PMI_Get_size"))
        missing = "PMI_Get_size";
    else if (!RESOLVE (dl, get_rank, "PMI_Get_rank"))
        missing = "PMI_Get_rank";
    else if (!RESOLVE (dl, barrier, "PMI_Barrier"))
        missing = "PMI_Barrier";
    else if (!RESOLVE (dl, kvs_get_my_name, "PMI_KVS_Get_my_name"))
        missing = "PMI_KVS_Get_my_name";
    else if (!RESOLVE (dl, kvs_put, "PMI_KVS_Put"))
        missing = "PMI_KVS_Put";
    else if (!RESOLVE (dl, kvs_commit, "PMI_KVS_Commit"))
        missing = "PMI_KVS_Commit";
    else if (!RESOLVE (dl, kvs_get, "PMI_KVS_Get"))
        missing = "PMI_KVS_Get";
    if (missing) {
        errset (errbuf, errsize, ELIBBAD, "PMI library %s lacks %s", path, missing);
        goto error;
    }
    RESOLVE (dl, get_clique_size, "PMI_Get_clique_size");
    RESOLVE (dl, get_clique_ranks, "PMI_Get_clique_ranks");
    if (dl->init (&spawned) != PMI_SUCCESS_CODE) {
        errset (errbuf, errsize, EIO, "PMI_Init failed (library %s)%s", path, "");
        goto error;
    }
    if (dl->get_rank (&dl->rank) != PMI_SUCCESS_CODE
        || dl->get_size (&dl->size) != PMI_SUCCESS_CODE
        || dl->kvs_get_my_name (dl->kvsname, sizeof (dl->kvsname)) != PMI_SUCCESS_CODE
        || dl->size < 1 || dl->rank < 0 || dl->rank >= dl->size) {
        errset (errbuf, errsize, EIO, "PMI library %s gave no valid rank, size "
                "and kvsname%s", path, "");
        goto error;
    }
    return dl;
error:
    pmi_dl_destroy (dl);
    return NULL;
}

static int check (int pmi_rc)
{
    if (pmi_rc != PMI_SUCCESS_CODE) {
        errno = EIO;
        return -1;
    }
    return 0;
}

int pmi_dl_rank (pmi_dl_t *dl)
{
    return dl ? dl->rank : -1;
}

int pmi_dl_size (pmi_dl_t *dl)
{
    return dl ? dl->size : -1;
}

const char *pmi_dl_kvsname (pmi_dl_t *dl)
{
    return dl ? dl->kvsname : NULL;
}

int pmi_dl_put (pmi_dl_t *dl, const char *key, const char *value)
{
    if (!dl || !key || !value) {
        errno = EINVAL;
        return -1;
    }
    return check (dl->kvs_put (dl->kvsname, key, value));
}

int pmi_dl_commit (pmi_dl_t *dl)
{
    if (!dl) {
        errno = EINVAL;
        return -1;
    }
    return check (dl->kvs_commit (dl->kvsname));
}

int pmi_dl_barrier (pmi_dl_t *dl)
{
    if (!dl) {
        errno = EINVAL;
        return -1;
    }
    return check (dl->barrier ());
}

int pmi_dl_get (pmi_dl_t *dl, const char *key, char *buf, size_t size)
{
    if (!dl || !key || !buf || size == 0) {
        errno = EINVAL;
        return -1;
    }
    if (size > INT_MAX)
        size = INT_MAX;
    buf[0] = '\0';
    if (dl->kvs_get (dl->kvsname, key, buf, (int)size) != PMI_SUCCESS_CODE) {
        errno = ENOENT;
        return -1;
    }
    buf[size - 1] = '\0';
    return 0;
}

int pmi_dl_finalize (pmi_dl_t *dl)
{
    if (!dl) {
        errno = EINVAL;
        return -1;
    }
    return check (dl->finalize ());
}

int pmi_dl_abort (pmi_dl_t *dl, int exitcode, const char *msg)
{
    if (!dl) {
        errno = EINVAL;
        return -1;
    }
    return check (dl->abort (exitcode, msg ? msg : ""));
}

int pmi_dl_clique (pmi_dl_t *dl, int *ranks, int max)
{
    int n = 0;

    if (!dl || max < 0 || (max > 0 && !ranks)) {
        errno = EINVAL;
        return -1;
    }
    if (!dl->get_clique_size || !dl->get_clique_ranks) {
        errno = ENOSYS;
        return -1;
    }
    if (check (dl->get_clique_size (&n)) < 0)
        return -1;
    if (n < 1) {
        errno = EIO;
        return -1;
    }
    /* MPICH's own PMI_Get_clique_ranks returns ranks[0], not PMI_SUCCESS:
     * only PMI_FAIL (-1) is taken as a failure here.
     */
    if (max >= n) {
        if (dl->get_clique_ranks (ranks, n) == -1)
            return check (-1);
    }
    else if (max > 0) {
        int *all = calloc (n, sizeof (int));
        if (!all) {
            errno = ENOMEM;
            return -1;
        }
        if (dl->get_clique_ranks (all, n) == -1) {
            free (all);
            return check (-1);
        }
        memcpy (ranks, all, sizeof (int) * max);
        free (all);
    }
    return n;
}
