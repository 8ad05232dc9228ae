/* pmi_dl.h - use somebody's libpmi.so (the PMI-1 C API) through dlopen.
 *
 * For brokers launched by a launcher whose PMI is only reachable through
 * its own library (Slurm's srun with libpmi.so.0, for example), or
 * whenever CANOPY_PMI_LIBRARY names a library.  The library is opened
 * RTLD_NOW | RTLD_LOCAL so its symbols cannot clash with ours; the
 * required PMI_* functions are looked up at creation, the optional ones
 * (PMI_Get_clique_size/ranks) when used.
 *
 * Return values follow the canopy convention: 0 or -1 with errno (EIO for
 * a PMI failure code, ENOENT for a missing key from get).  Not
 * thread-safe (neither is PMI-1).
 */
#ifndef CANOPY_PMI_DL_H
#define CANOPY_PMI_DL_H

#include <stddef.h>

typedef struct pmi_dl pmi_dl_t;

/* Open 'path' and call PMI_Init.  Returns NULL with errno (ENOENT or
 * ELIBBAD for dlopen/dlsym failures, EIO if PMI_Init fails) and, if
 * errbuf is not NULL, a sentence in errbuf.
 */
pmi_dl_t *pmi_dl_create (const char *path, char *errbuf, size_t errsize);
/* dlclose (without PMI_Finalize). */
void pmi_dl_destroy (pmi_dl_t *dl);

int pmi_dl_rank (pmi_dl_t *dl);
int pmi_dl_size (pmi_dl_t *dl);
const char *pmi_dl_kvsname (pmi_dl_t *dl);
int pmi_dl_put (pmi_dl_t *dl, const char *key, const char *value);
int pmi_dl_commit (pmi_dl_t *dl);
int pmi_dl_barrier (pmi_dl_t *dl);
int pmi_dl_get (pmi_dl_t *dl, const char *key, char *buf, size_t size);
int pmi_dl_finalize (pmi_dl_t *dl);
int pmi_dl_abort (pmi_dl_t *dl, int exitcode, const char *msg);
/* The ranks on this node: fills up to max, returns the count; -1 with
 * ENOSYS if the library has no clique functions.
 */
int pmi_dl_clique (pmi_dl_t *dl, int *ranks, int max);

#endif
