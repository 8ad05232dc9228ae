/* snapshot.h - glue shared by canopy dump and canopy fsck: pick the root
 * of a KVS snapshot, and load its blobs from the content service (a
 * loader for kvswalk, keeping up to KVSWALK_WINDOW loads in flight).
 * Command helpers: they exit with a clear message on fatal errors.
 */
#ifndef CANOPY_CMD_SNAPSHOT_H
#define CANOPY_CMD_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <canopy/canopy.h>
#include "src/common/libutil/blobref.h"

struct snapshot_root {
    char rootref[BLOBREF_MAX];
    int version;
    double timestamp;           /* checkpoints only, else 0 */
};

/* The current root on rank 0, or (checkpoint) the newest checkpoint. */
void snapshot_root (canopy_t *h, bool checkpoint, struct snapshot_root *root);

/* kvswalk loader; arg is the canopy_t handle. */
int snapshot_load (const char **refs, int n, void **data, size_t *len, int *errnum,
                   void *arg);

#endif
