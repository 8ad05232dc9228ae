/* kvs_frame.h - the framing shared by the KVS's two message formats.
 *
 * A client's transaction (kvs_wire.h) and a relay between brokers
 * (kvs_relay.h) are both laid out as
 *   u32 hlen (big-endian) | header: JSON, hlen bytes | body | blob data
 * where the header is {"fences": [...], "blobs": [[blobref, len], ...]},
 * the body is format-specific bytes (a relay's operations text; empty for
 * a transaction) and the blob data are the blobs' bytes in table order.
 * This file writes that frame and reads back its header and blob table;
 * what the fences and the body mean is the formats' business.
 */
#ifndef CANOPY_KVS_FRAME_H
#define CANOPY_KVS_FRAME_H

#include <stddef.h>
#include <stdbool.h>
#include <jansson.h>
#include <canopy/types.h>
#include <canopy/message.h>
#include "blobtab.h"

/* Encode 'fences' (borrowed), 'body' (bodylen bytes, may be NULL if 0)
 * and every blob of 'blobs' (may be NULL: none).  The buffer (*bufp,
 * *lenp bytes, malloc'd, the caller frees) is NUL-terminated past its
 * end.  Returns 0, or -1 with EINVAL (bad arguments), EFBIG (longer than
 * max bytes) or ENOMEM; nothing is allocated on failure.
 */
int kvs_frame_encode (json_t *fences, const blobtab_t *blobs,
                      const void *body, size_t bodylen, size_t max,
                      void **bufp, size_t *lenp);
/* The same with the fences given as their JSON text (flen bytes, an
 * array), written as they are: a transaction whose operations are text
 * already (kvs_txn.c) is not decoded to be encoded again.  Returns 0, or
 * -1 with EINVAL, EFBIG or ENOMEM.
 */
int kvs_frame_encode_text (const char *fences, size_t flen, const blobtab_t *blobs,
                           const void *body, size_t bodylen, size_t max,
                           void **bufp, size_t *lenp);
/* The same frame written straight into msg's payload
 * (canopy_msg_payload_reserve), which it replaces: no second copy of a
 * large frame on its way out.  Returns 0, or -1 with EINVAL, EFBIG or
 * ENOMEM, msg unchanged.
 */
int kvs_frame_encode_msg (json_t *fences, const blobtab_t *blobs,
                          const void *body, size_t bodylen, size_t max,
                          canopy_msg_t *msg);
/* kvs_frame_encode_text written into msg's payload the same way (a
 * client's transaction, kvs_txn_encode_msg).
 */
int kvs_frame_encode_text_msg (const char *fences, size_t flen, const blobtab_t *blobs,
                               const void *body, size_t bodylen, size_t max,
                               canopy_msg_t *msg);

/* Read the frame's header: *hdrp (a new reference the caller drops)
 * holds *fencesp and *tablep (both arrays, borrowed from *hdrp); *offp is
 * where the body starts.  'what' names the format in error text
 * ("transaction", "relay").  Returns 0, or -1 with EPROTO and a sentence.
 */
int kvs_frame_header (const void *buf, size_t len, const char *what,
                      json_t **hdrp, json_t **fencesp, json_t **tablep,
                      size_t *offp, canopy_error_t *error);

/* Called for each blob of a frame, in table order, with the blob's bytes
 * inside the frame (valid while the frame is).  Returns 0, or -1 with
 * errno to stop.
 */
typedef int (*kvs_frame_blob_f)(const char *ref, const void *data, size_t len,
                                void *arg);

/* Check the blob data described by 'table', starting at 'off': every
 * entry well formed, the data ending exactly at len, and with 'verify'
 * each blob's bytes hashing to its blobref.  Only then call fn for each
 * blob, so a malformed frame delivers nothing.  Returns 0, or -1 with
 * EPROTO (malformed table, overrun, mismatch, trailing bytes) or fn's
 * errno, and a sentence.
 */
int kvs_frame_foreach_blob (const void *buf, size_t len, size_t off, json_t *table,
                            bool verify, const char *what, kvs_frame_blob_f fn,
                            void *arg, canopy_error_t *error);

/* The same, copying every blob into 'blobs'.  On ENOMEM 'blobs' may hold
 * some of them.
 */
int kvs_frame_blobs (const void *buf, size_t len, size_t off, json_t *table,
                     bool verify, const char *what, blobtab_t *blobs,
                     canopy_error_t *error);

#endif
