/* pmi_client.h - canopy's own thin wrapper around a launcher's PMI-1.
 *
 * One small interface, two implementations chosen from the environment:
 *   1. CANOPY_PMI_LIBRARY=PATH: dlopen PATH, a libpmi.so with the PMI-1 C
 *      API (Slurm's, ours, anyone's) -- see pmi_dl.h;
 *   2. PMI_FD or PMI_PORT: speak the simple wire protocol ourselves --
 *      see simple_client.h (hydra, Flux, Slurm's pmi2 plugin, canopy).
 * The broker's PMI bootstrap (src/broker/boot_pmi.c) is the user.
 *
 * Keys and values: keys are tokens (no spaces, no '='), values have no
 * control characters; both must respect the server's maxima.  Puts are
 * visible to other ranks after commit + barrier.
 *
 * Errors: -1 (or NULL) with errno; pmi_client_get fails with ENOENT for a
 * missing key.  Not thread-safe.
 */
#ifndef CANOPY_PMI_CLIENT_H
#define CANOPY_PMI_CLIENT_H

#include <stddef.h>
#include <stdbool.h>
#include <canopy/types.h>

typedef struct pmi_client pmi_client_t;

/* Whether the environment offers a PMI (CANOPY_PMI_LIBRARY, PMI_FD or
 * PMI_PORT is set and not empty).
 */
bool pmi_client_available (void);

/* Connect and initialize.  NULL with errno (ENOENT: no PMI in the
 * environment) and a sentence in *error.
 */
pmi_client_t *pmi_client_create (canopy_error_t *error);
/* Free; does not finalize. */
void pmi_client_destroy (pmi_client_t *c);

int pmi_client_rank (pmi_client_t *c);
int pmi_client_size (pmi_client_t *c);
/* "simple" or "dlopen" (for logs). */
const char *pmi_client_method (pmi_client_t *c);

int pmi_client_put (pmi_client_t *c, const char *key, const char *value);
int pmi_client_commit (pmi_client_t *c);
int pmi_client_barrier (pmi_client_t *c);
int pmi_client_get (pmi_client_t *c, const char *key, char *buf, size_t size);
int pmi_client_finalize (pmi_client_t *c);
/* Ask the launcher to end the job with exitcode ('msg' may be NULL).
 * A PMI library may exit the process here.
 */
int pmi_client_abort (pmi_client_t *c, int exitcode, const char *msg);

/* The ranks on this node (from the library's clique functions, else from
 * PMI_process_mapping; {self} if neither is available): fills up to max
 * entries of ranks[] and returns the count.
 */
int pmi_client_clique (pmi_client_t *c, int *ranks, int max);

#endif
