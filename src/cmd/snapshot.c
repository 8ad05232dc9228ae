/* snapshot.c - see snapshot.h. */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include "src/common/libutil/log.h"
#include "kvswalk.h"
#include "snapshot.h"

void snapshot_root (canopy_t *h, bool checkpoint, struct snapshot_root *root)
{
    canopy_future_t *f;
    const char *rootref;

    memset (root, 0, sizeof (*root));
    if (!checkpoint) {
        if (!(f = canopy_rpc (h, "kvs.getroot", "{}", 0, 0))
            || canopy_rpc_get_unpack (f, "{s:i s:s}", "version", &root->version,
                                      "rootref", &rootref) < 0)
            log_msg_exit ("cannot get the KVS root: %s",
                          f ? canopy_future_error_string (f) : strerror (errno));
    }
    else {
        json_t *list, *o;
        if (!(f = canopy_rpc (h, "content.checkpoint-get", "{}", 0, 0))
            || canopy_rpc_get_unpack (f, "{s:o}", "checkpoints", &list) < 0)
            log_msg_exit ("cannot read the checkpoints: %s",
                          f ? canopy_future_error_string (f) : strerror (errno));
        if (!(o = json_array_get (list, 0)))
            log_msg_exit ("there is no checkpoint yet");
        if (json_unpack (o, "{s:s s:i s:F}", "rootref", &rootref, "version",
                         &root->version, "timestamp", &root->timestamp) < 0)
            log_msg_exit ("the newest checkpoint is malformed");
    }
    if (blobref_validate (rootref) < 0)
        log_msg_exit ("the root reference '%s' is malformed", rootref);
    snprintf (root->rootref, sizeof (root->rootref), "%s", rootref);
    canopy_future_destroy (f);
}

int snapshot_load (const char **refs, int n, void **data, size_t *len, int *errnum,
                   void *arg)
{
    canopy_t *h = arg;
    canopy_future_t *f[KVSWALK_WINDOW];

    if (n > KVSWALK_WINDOW) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        data[i] = NULL;
        errnum[i] = 0;
        if (!(f[i] = canopy_rpc (h, "content.load", refs[i], CANOPY_NODEID_ANY, 0)))
            errnum[i] = errno ? errno : EIO;
    }
    for (int i = 0; i < n; i++) {
        const void *p;
        size_t plen;
        if (!f[i])
            continue;
        if (canopy_rpc_get_raw (f[i], &p, &plen) < 0)
            errnum[i] = errno ? errno : EIO;
        else if (!(data[i] = malloc (plen + 1)))
            errnum[i] = ENOMEM;
        else {
            if (plen)
                memcpy (data[i], p, plen);
            ((char *)data[i])[plen] = '\0';
            len[i] = plen;
        }
        canopy_future_destroy (f[i]);
    }
    /* a blob that is not there or damaged is the walk's business; losing
     * the broker is not
     */
    for (int i = 0; i < n; i++) {
        if (errnum[i] && errnum[i] != ENOENT && errnum[i] != EIO && errnum[i] != EPROTO) {
            int e = errnum[i];
            for (int k = 0; k < n; k++) {
                free (data[k]);
                data[k] = NULL;
            }
            errno = e;
            return -1;
        }
    }
    return 0;
}
