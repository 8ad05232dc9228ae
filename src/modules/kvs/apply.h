/* apply.h - rank 0: turning ready fences into new root versions.
 *
 * All fences ready when a round starts are applied together and produce
 * one new version (commit merging), unless one asks for KVS_NO_MERGE.
 * Each fence is applied copy-on-write relative to the state before it, so
 * a fence that fails (e.g. ELOOP) is dropped without undoing the others.
 * Modified directories are then "unrolled": each becomes a blob named by
 * its hash, and its parent refers to it by dirref.  The new directories
 * and the fences' value blobs are stored in the content service; only
 * then is the root updated and kvs.setroot published, naming the fences
 * that completed and the errors of those that failed.
 *
 * Missing directories are faulted in and the round restarts.
 *
 * Drafts: while a collective fence is incomplete and no round runs, its
 * operations so far are applied ahead (apply.c, draft_advance), and the
 * round that takes it applies only the rest; anything else in between
 * turns the draft into a plain round.
 */
#ifndef CANOPY_KVS_APPLY_H
#define CANOPY_KVS_APPLY_H

#include "kvs_ctx.h"

struct applier *applier_create (struct kvs_ctx *ctx);
void applier_destroy (struct applier *a);
/* Start a round if fences are ready and none is running. */
void applier_kick (struct applier *a);
bool applier_busy (struct applier *a);

#endif
