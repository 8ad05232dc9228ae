/* watch.h - streaming watches of keys.
 *
 * A watch checks its key on every new root: the key's tree object is
 * compared with the last one seen, and if it changed, the watch responds
 * with what the key holds now, until kvs.unwatch names its matchtag or the
 * client disconnects; the stream then ends with ENODATA.  With
 * KVS_WATCH_INITIAL in the request's flags, the first response is what
 * the key holds when the watch starts; without it, the first response is
 * the first change.  Other flags are EINVAL.
 *
 * Responses: {"val": base64} a value; {"val": null} no such key (or not a
 * value or directory any more: a path component became a value);
 * {"dir": treeobj} a directory, as a "dir" tree object listing its
 * entries (the READDIR result kvs_get_dir uses; subdirectories are
 * dirrefs).  A directory is reported again whenever anything below it
 * changes, however deep (its dirref changes with every change below).
 * A watch whose check fails (a load error) or whose report cannot be
 * sent ends with that errno.  Every function answers the request it is
 * given exactly once (a watch: once per report, then its end).
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
