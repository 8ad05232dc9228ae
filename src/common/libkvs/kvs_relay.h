/* kvs_relay.h - the payload of kvs.relay: merged fence contributions
 * travelling up the tree, with their operations kept as text.
 *
 * A broker that merges contributions does not need to understand their
 * operations, only to concatenate them, so the operations of a fence
 * travel as one run of JSON text (the elements of the ops array, comma
 * separated, without the brackets).  Only rank 0 parses them, once, when
 * the fence is complete.  The layout:
 *
 *   u32 header length (big-endian) | header JSON | ops text ... | blobs ...
 *   header: {"fences": [{"name": s, "nprocs": i, "flags": i, "count": i,
 *                        "userid": i, "nops": i, "opslen": i,
 *                        "refs": [blobref, ...],
 *                        "errnum"?: i, "errstr"?: s}, ...],
 *            "blobs": [[blobref, length], ...]}
 *   The ops text of each fence follows the header in the order of the
 *   fences ("opslen" bytes each), then the blob bytes in table order.
 *   "refs" names the blobs a fence's operations reference (each must be in
 *   the table); a blob shared by several fences travels once.
 *
 * kvs_relay_decode checks the framing and the header's shape, every
 * length, and every ref; it does not parse the ops text (kvs_opsbuf_parse
 * does, on rank 0).  Malformed input is EPROTO with text in *error.
 *
 * Ownership: a decoded kvs_relay_t points into the buffer given to
 * kvs_relay_decode, for each fence's ops text and for every blob of its
 * table (blobtab_borrow: no copy until a fence merges them): the buffer
 * must outlive the kvs_relay_t.
 */
#ifndef CANOPY_KVS_RELAY_H
#define CANOPY_KVS_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <jansson.h>
#include <canopy/types.h>
#include <canopy/message.h>
#include "blobtab.h"

/* A growing run of ops text and the number of operations in it. */
struct kvs_opsbuf {
    char *data;
    size_t len;
    size_t cap;
    int nops;
};

void kvs_opsbuf_init (struct kvs_opsbuf *ob);
void kvs_opsbuf_clear (struct kvs_opsbuf *ob);      /* frees the text */
/* Append 'nops' operations given as text (elements, comma separated). */
int kvs_opsbuf_append_text (struct kvs_opsbuf *ob, const char *text,
                            size_t len, int nops);
/* Append every element of a JSON array of operations. */
int kvs_opsbuf_append_json (struct kvs_opsbuf *ob, json_t *ops);
/* The operations as a JSON array (new reference), or NULL with errno
 * EPROTO if the text is not nops valid JSON values, ENOMEM.
 */
json_t *kvs_opsbuf_parse (const struct kvs_opsbuf *ob);

/* One fence of a decoded relay.  name, errstr and refs are borrowed from
 * the kvs_relay_t; ops points into the decoded buffer.
 */
struct kvs_relay_fence {
    const char *name;
    int nprocs;
    int flags;
    int count;
    int64_t userid;             /* a uid (0..UINT32_MAX; a uid_t, so not int),
                                   or -1: the relay's sender */
    int errnum;                 /* non-zero: a failure, no operations */
    const char *errstr;         /* "" if none */
    int nops;
    const char *ops;            /* opslen bytes, not NUL-terminated */
    size_t opslen;
    json_t *refs;               /* array of blobref strings */
};

typedef struct kvs_relay kvs_relay_t;

kvs_relay_t *kvs_relay_decode (const void *buf, size_t len,
                               canopy_error_t *error);
void kvs_relay_destroy (kvs_relay_t *r);
int kvs_relay_count (const kvs_relay_t *r);
const struct kvs_relay_fence *kvs_relay_fence (const kvs_relay_t *r, int i);
/* The blobs: copies owned by the kvs_relay_t, borrowed until it is
 * destroyed.
 */
const blobtab_t *kvs_relay_blobs (const kvs_relay_t *r);

/* Encoding: add fences one by one, then take the buffer. */
typedef struct kvs_relay_enc kvs_relay_enc_t;

kvs_relay_enc_t *kvs_relay_enc_create (void);
void kvs_relay_enc_destroy (kvs_relay_enc_t *e);
/* f->ops/opslen/nops are the operations; f->refs is ignored: the refs
 * are those of 'blobs' (the fence's own blob set, which is merged into the
 * message's table).  The blobs' bytes are borrowed, not copied
 * (blobtab_merge_borrow): 'blobs' must stay unchanged until the encoder
 * is finished or destroyed.
 */
int kvs_relay_enc_add (kvs_relay_enc_t *e, const struct kvs_relay_fence *f,
                       const blobtab_t *blobs);
/* The message, written straight into msg's payload (kvs_frame_encode_msg),
 * which it replaces.  Returns 0, or -1 with EINVAL, EFBIG if over the
 * size limit (CANOPY_MSG_SIZE_MAX unless set lower) or ENOMEM; msg is
 * unchanged on failure.
 */
int kvs_relay_enc_finish_msg (kvs_relay_enc_t *e, canopy_msg_t *msg);
/* Lower the size limit of this message (0: CANOPY_MSG_SIZE_MAX). */
void kvs_relay_enc_set_max (kvs_relay_enc_t *e, size_t max);
/* Upper bounds, to fill messages without overflowing them: the size
 * kvs_relay_enc_finish_msg would give now, and what adding f (with its blobs)
 * would add to it.  The real size is never larger (blobs shared between
 * fences travel once).
 */
size_t kvs_relay_enc_bound (const kvs_relay_enc_t *e);
size_t kvs_relay_fence_bound (const struct kvs_relay_fence *f, const blobtab_t *blobs);

#endif
