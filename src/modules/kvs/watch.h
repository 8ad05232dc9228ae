/* watch.h - streaming watches of keys.
 *
 * A watch answers its request with the key's current value, then again
 * each time the value changes (checked on every new root: the key's tree
 * object is compared with the last one sent), until kvs.unwatch names its
 * matchtag or the client disconnects; the stream then ends with ENODATA.
 * Response payload: {"val": base64 | null} (null: no such key).
 */
#ifndef CANOPY_KVS_WATCH_H
#define CANOPY_KVS_WATCH_H

#include "kvs_ctx.h"

struct watch_table *watch_table_create (struct kvs_ctx *ctx);
void watch_table_destroy (struct watch_table *wt);
void watch_request (struct watch_table *wt, const canopy_msg_t *msg);
void watch_unwatch (struct watch_table *wt, const canopy_msg_t *msg);
void watch_disconnect (struct watch_table *wt, const char *sender);
/* A new root: re-check every watch. */
void watch_setroot (struct watch_table *wt);
int watch_count (struct watch_table *wt);

#endif
