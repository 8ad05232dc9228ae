/* canopy/rpc.h - remote procedure calls over a handle.
 *
 * A request goes to the service named by the first word of its topic
 * ("kvs.get" -> "kvs"), on the broker given by nodeid: CANOPY_NODEID_ANY
 * (nearest broker with the service: the local one, else the nearest
 * ancestor), CANOPY_NODEID_UPSTREAM (nearest ancestor), or a rank.
 *
 * The future is fulfilled by the response; an error response sets errno
 * to its errnum and canopy_future_error_string() to its text.
 * With CANOPY_RPC_STREAMING the service may answer many times, ending with
 * an ENODATA error response; reset the future after each result.
 * With CANOPY_RPC_NORESPONSE no future is returned on success... a ready
 * future is returned so that callers may treat both alike.
 */
#ifndef CANOPY_RPC_H
#define CANOPY_RPC_H

#include "handle.h"
#include "future.h"

#ifdef __cplusplus
extern "C" {
#endif

enum canopy_rpc_flags {
    CANOPY_RPC_NORESPONSE = 1,
    CANOPY_RPC_STREAMING = 2,
};

canopy_future_t *canopy_rpc (canopy_t *h,
                             const char *topic,
                             const char *json_str,
                             uint32_t nodeid,
                             int flags);
canopy_future_t *canopy_rpc_pack (canopy_t *h,
                                  const char *topic,
                                  uint32_t nodeid,
                                  int flags,
                                  const char *fmt,
                                  ...);
canopy_future_t *canopy_rpc_raw (canopy_t *h,
                                 const char *topic,
                                 const void *data,
                                 size_t size,
                                 uint32_t nodeid,
                                 int flags);
/* A new request for 'topic' marked as carrying raw bytes, with no payload
 * yet: give it one to fill in place (canopy_msg_payload_reserve), send it
 * with canopy_rpc_message, then drop it.  NULL with errno EINVAL or ENOMEM.
 */
canopy_msg_t *canopy_rpc_raw_request (const char *topic);
/* Send a prepared request message (topic and payload already set). */
canopy_future_t *canopy_rpc_message (canopy_t *h,
                                     const canopy_msg_t *msg,
                                     uint32_t nodeid,
                                     int flags);

int canopy_rpc_get (canopy_future_t *f, const char **json_str);
int canopy_rpc_get_unpack (canopy_future_t *f, const char *fmt, ...);
int canopy_rpc_get_raw (canopy_future_t *f, const void **data, size_t *size);
int canopy_rpc_get_msg (canopy_future_t *f, const canopy_msg_t **msg);
uint32_t canopy_rpc_get_matchtag (canopy_future_t *f);
uint32_t canopy_rpc_get_nodeid (canopy_future_t *f);

#ifdef __cplusplus
}
#endif
#endif
