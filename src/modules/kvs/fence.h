/* fence.h - collecting fence and commit contributions on one broker.
 *
 * Every broker keeps a table of open fences by name.  Contributions from
 * local clients (kvs.fence / kvs.commit, which is a fence of one with a
 * unique name) and from child brokers (kvs.relay) are merged: operations
 * appended, blobs de-duplicated by hash, participant counts added.
 *
 * On a rank > 0, merged contributions are sent upstream in kvs.relay
 * messages (several fences may share one), with at most one relay in
 * flight: the first leaves at the end of the reactor pass in which
 * something was merged, and what is merged while it travels leaves, as
 * one message, when the parent acknowledges it (a parent acknowledges a
 * relay once it has decoded it, before merging).  A relay holds at most
 * relay_max bytes: fences that do not fit wait for the next one, and a
 * fence too large alone fails (E2BIG).  The table then keeps only the
 * local requests to answer.  A contribution that cannot be relayed (too
 * large, out of memory, a failed send, a relay the parent refused)
 * becomes an error contribution, carried by the next relay, so its fence
 * fails everywhere.
 * On rank 0, a fence whose count reaches nprocs is ready to be applied
 * (apply.c).
 *
 * Completion: every broker answers its local requests when the
 * kvs.setroot event names the fence (success, with the new version) or
 * lists it among its errors.  Failures (mismatched nprocs/flags, too many
 * participants, a participant that disconnected, a timeout, an abort, a
 * bad transaction) are decided on rank 0, which remembers finished names
 * for FENCE_FINISHED_KEEP seconds so that late joiners get the same answer: a
 * fence name cannot be reused for that long (EINVAL "fence already
 * complete: too many participants", or the fence's own error).
 */
#ifndef CANOPY_KVS_FENCE_H
#define CANOPY_KVS_FENCE_H

#include <stdbool.h>
#include <jansson.h>
#include "src/common/libkvs/blobtab.h"
#include "kvs_ctx.h"

#define FENCE_FINISHED_KEEP 300     /* seconds a finished name is remembered */

struct fence_table;

/* A complete fence handed to the applier (rank 0). */
struct ready_fence {
    char *name;
    int flags;
    int nprocs;
    json_t *ops;
    blobtab_t *blobs;
};

struct fence_table *fence_table_create (struct kvs_ctx *ctx);
void fence_table_destroy (struct fence_table *ft);

/* Requests. */
void fence_request (struct fence_table *ft, const canopy_msg_t *msg, bool commit);
void fence_relay (struct fence_table *ft, const canopy_msg_t *msg);
void fence_abort_request (struct fence_table *ft, const canopy_msg_t *msg);
void fence_disconnect (struct fence_table *ft, const char *sender);

/* rank 0: take up to 'max' ready fences (in readiness order; a NO_MERGE
 * fence is taken alone).  Returns the count (fewer, possibly 0, if memory
 * ran out: the others stay ready); caller frees with ready_fence_free and
 * must report every fence taken with fence_finished.
 */
int fence_take_ready (struct fence_table *ft, struct ready_fence **out, int max);
void ready_fence_free (struct ready_fence *rf);
bool fence_have_ready (struct fence_table *ft);
int fence_ready_count (struct fence_table *ft);
/* rank 0: the collective fence (nprocs > 1) merged last, if it is still
 * incomplete and has not failed: its name and its operations so far
 * (borrowed; the same array grows as contributions arrive, and becomes
 * the ready_fence's 'ops' when the fence is complete).  The applier
 * applies them ahead (apply.c, drafts).  False if there is none.
 * name and ops may be NULL (only whether there is one).
 */
bool fence_draft_candidate (struct fence_table *ft, const char **name, json_t **ops);
/* rank 0: record the outcome and tell everyone (a failure: publishes
 * kvs.setroot; a success is published by the applier, with the new root).
 * An outcome that cannot be published (out of memory, a failed send) is
 * kept on the fence's entry and published again by fence_timer, so every
 * waiter is still answered, once.
 */
void fence_finished (struct fence_table *ft, const char *name, int errnum,
                     const char *errstr);
/* rank 0: the applier could not publish the success of 'name': publish it
 * again from fence_timer (with the then current version).
 */
void fence_publish_failed (struct fence_table *ft, const char *name);
/* rank 0: fail every open fence (e.g. a broker was lost). */
void fence_fail_all (struct fence_table *ft, int errnum, const char *errstr);

/* Every rank: the setroot event arrived. */
void fence_setroot (struct fence_table *ft, json_t *names, json_t *errors,
                    int version, const char *rootref);

/* rank 0: publish outcomes that could not be published before, expire
 * old finished names, time out open fences.
 */
void fence_timer (struct fence_table *ft, double now);

/* rank 0: what is known of fence 'name', as a new JSON object in *out:
 * {name, state, nprocs, first, ready, ...} with times in CLOCK_REALTIME
 * seconds (0: not reached).  state "open" (with count, the participants
 * joined so far) or "applying" (complete, being applied), or, for
 * FINISHED_KEEP seconds after, "complete" or "failed" (with errnum,
 * errstr and decided, when the outcome was published).  Returns 0, or -1
 * with ENOENT (no such fence, or forgotten), EINVAL (not rank 0) or
 * ENOMEM.
 */
int fence_status (struct fence_table *ft, const char *name, json_t **out);

struct fence_stats {
    int open;           /* fences with waiters or unsent content */
    int waiters;        /* local requests waiting */
    int ready;
};
void fence_stats (struct fence_table *ft, struct fence_stats *st);

/* Ranks > 0: what relay-hold has learned (fence_shape.h), most recent
 * first, as [{"userid", "nprocs", "count", "span"}, ...] (span in
 * seconds); rank 0: [].  Returns a new reference, or NULL with ENOMEM.
 */
json_t *fence_shapes_json (struct fence_table *ft);

#endif
