/* kvsenv.h - a KVS module context for unit tests: the context kvs.c's
 * mod_main would build (cache, load table, limits), over a fake handle
 * (fakeh.h), with a pretend content service.
 *
 * The content service is a table of blobs by ref, filled by the test
 * (kvsenv_store_*); kvsenv_serve_loads answers the content.load requests
 * the code under test sent, from that table (ENOENT if missing), as the
 * real service would.  Objects can also be put straight into the object
 * cache, as if loaded before.
 *
 * The fence table, applier and watch table are not created: tests that
 * need them create them on env->ctx.
 */
#ifndef CANOPY_KVS_TEST_KVSENV_H
#define CANOPY_KVS_TEST_KVSENV_H

#include <stdbool.h>
#include <jansson.h>
#include "src/modules/kvs/kvs_ctx.h"
#include "fakeh.h"

struct kvsenv {
    struct kvs_ctx ctx;
    struct fakeh *fake;
    json_t *content;            /* ref -> base64 of the bytes */
    int stored_blobs;           /* blobs received in content.store-local */
};

struct kvsenv *kvsenv_create (uint32_t rank, uint32_t size);
/* Destroys the load table and cache and closes the handle (the caller
 * destroys what it added to the context first).
 */
void kvsenv_destroy (struct kvsenv *env);

/* Store a directory-like object (dir or hdir); its ref in 'ref'
 * (BLOBREF_MAX).  With 'cache', it is also put into the object cache.
 */
void kvsenv_store_dir (struct kvsenv *env, json_t *dir, bool cache, char *ref);
/* Store value bytes; ref as above. */
void kvsenv_store_raw (struct kvsenv *env, const void *data, size_t len,
                       bool cache, char *ref);
/* Answer every content.load request in the outbox; returns how many. */
int kvsenv_serve_loads (struct kvsenv *env);
/* Answer every content.store-local request (errnum 0: keep its blobs,
 * then answer success); returns how many.
 */
int kvsenv_serve_stores (struct kvsenv *env, int errnum);
/* Answer every content.load request with an error; returns how many. */
int kvsenv_fail_loads (struct kvsenv *env, int errnum);

/* Run the reactor (fakeh_run). */
void kvsenv_run (struct kvsenv *env);

/* The JSON payload of a message (new reference) or NULL. */
json_t *kvsenv_msg_json (const canopy_msg_t *msg);
/* The payload of the first event published with this topic (an
 * "event.pub" request in the outbox, answered and removed), or NULL.
 */
json_t *kvsenv_take_event (struct kvsenv *env, const char *topic);
/* Build a client's kvs.fence (or commit) request with one put. */
canopy_msg_t *kvsenv_txn_request (const char *topic, uint32_t matchtag,
                                  const char *sender, const char *name,
                                  int nprocs, int flags, const char *key,
                                  const void *val, size_t len);

#endif
