/* pmi_client.c - choose and drive a PMI-1 implementation (pmi_client.h).
 *
 * Design notes: a pmi_client holds exactly one of a simple wire client or
 * a dlopened library; every call dispatches on which.  Clique lookup
 * prefers the library's own functions and falls back to parsing
 * PMI_process_mapping, then to {self}.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/errprintf.h"
#include "pmi_client.h"
#include "simple_client.h"
#include "pmi_dl.h"
#include "pmi_mapping.h"

struct pmi_client {
    pmi_simple_client_t *simple;
    pmi_dl_t *dl;
};

static bool env_set (const char *name)
{
    const char *s = getenv (name);
    return s && *s;
}

bool pmi_client_available (void)
{
    return env_set ("CANOPY_PMI_LIBRARY") || env_set ("PMI_FD") || env_set ("PMI_PORT");
}

void pmi_client_destroy (pmi_client_t *c)
{
    if (c) {
        int saved_errno = errno;
        pmi_simple_client_destroy (c->simple);
        pmi_dl_destroy (c->dl);
        free (c);
        errno = saved_errno;
    }
}

pmi_client_t *pmi_client_create (canopy_error_t *error)
{
    pmi_client_t *c;
    const char *lib = getenv ("CANOPY_PMI_LIBRARY");

    if (!(c = calloc (1, sizeof (*c)))) {
        errno = ENOMEM;
        errprintf (error, "out of memory");
        return NULL;
    }
    if (lib && *lib) {
        char buf[CANOPY_ERROR_TEXT_MAX];
        if (!(c->dl = pmi_dl_create (lib, buf, sizeof (buf)))) {
            errprintf (error, "%s", buf);
            goto error;
        }
        return c;
    }
    if (!(c->simple = pmi_simple_client_create ())) {
        if (errno == ENOENT)
            errprintf (error, "no PMI in the environment "
                       "(set PMI_FD, PMI_PORT or CANOPY_PMI_LIBRARY)");
        else
            errprintf (error, "cannot reach the PMI server: %s", strerror (errno));
        goto error;
    }
    if (pmi_simple_client_init (c->simple) < 0) {
        errprintf (error, "PMI init handshake failed: %s", strerror (errno));
        goto error;
    }
    return c;
error:
    pmi_client_destroy (c);
    return NULL;
}

#define DISPATCH(c, simple_call, dl_call) \
    ((c) == NULL ? (errno = EINVAL, -1) : (c)->simple ? (simple_call) : (dl_call))

int pmi_client_rank (pmi_client_t *c)
{
    return DISPATCH (c, pmi_simple_client_rank (c->simple), pmi_dl_rank (c->dl));
}

int pmi_client_size (pmi_client_t *c)
{
    return DISPATCH (c, pmi_simple_client_size (c->simple), pmi_dl_size (c->dl));
}

const char *pmi_client_method (pmi_client_t *c)
{
    if (!c)
        return NULL;
    return c->simple ? "simple" : "dlopen";
}

int pmi_client_put (pmi_client_t *c, const char *key, const char *value)
{
    return DISPATCH (c, pmi_simple_client_put (c->simple, NULL, key, value),
                     pmi_dl_put (c->dl, key, value));
}

int pmi_client_commit (pmi_client_t *c)
{
    /* the simple protocol has no commit: puts are sent as they are made */
    return DISPATCH (c, 0, pmi_dl_commit (c->dl));
}

int pmi_client_barrier (pmi_client_t *c)
{
    return DISPATCH (c, pmi_simple_client_barrier (c->simple), pmi_dl_barrier (c->dl));
}

int pmi_client_get (pmi_client_t *c, const char *key, char *buf, size_t size)
{
    return DISPATCH (c, pmi_simple_client_get (c->simple, NULL, key, buf, size),
                     pmi_dl_get (c->dl, key, buf, size));
}

int pmi_client_finalize (pmi_client_t *c)
{
    return DISPATCH (c, pmi_simple_client_finalize (c->simple), pmi_dl_finalize (c->dl));
}

int pmi_client_abort (pmi_client_t *c, int exitcode, const char *msg)
{
    if (c && c->simple && msg)
        fprintf (stderr, "PMI abort (exit code %d): %s\n", exitcode, msg);
    return DISPATCH (c, pmi_simple_client_abort (c->simple, exitcode),
                     pmi_dl_abort (c->dl, exitcode, msg));
}

int pmi_client_clique (pmi_client_t *c, int *ranks, int max)
{
    char *mapping;
    int n;

    if (!c || max < 0 || (max > 0 && !ranks)) {
        errno = EINVAL;
        return -1;
    }
    if (c->dl && (n = pmi_dl_clique (c->dl, ranks, max)) > 0)
        return n;
    if (!(mapping = malloc (4096))) {
        errno = ENOMEM;
        return -1;
    }
    n = -1;
    if (pmi_client_get (c, "PMI_process_mapping", mapping, 4096) == 0)
        n = pmi_mapping_clique (mapping, pmi_client_rank (c), ranks, max);
    free (mapping);
    if (n < 1) {
        if (max > 0)
            ranks[0] = pmi_client_rank (c);
        n = 1;
    }
    return n;
}
