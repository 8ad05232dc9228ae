/* canopy/msg_handler.h - dispatch of messages to callbacks.
 *
 * A message handler matches messages by type and topic glob.  While the
 * handle's reactor runs, each message is given to the most recently started
 * handler that matches (responses go to their RPC future first).  A request
 * that matches no handler is answered with ENOSYS; a request whose sender
 * lacks a role the handler admits is answered with EPERM.  By default a
 * handler admits only CANOPY_ROLE_OWNER.
 *
 * Every started handler keeps the reactor running.
 */
#ifndef CANOPY_MSG_HANDLER_H
#define CANOPY_MSG_HANDLER_H

#include "handle.h"
#include "message.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_msg_handler canopy_msg_handler_t;

typedef void (*canopy_msg_handler_f)(canopy_t *h,
                                     canopy_msg_handler_t *mh,
                                     const canopy_msg_t *msg,
                                     void *arg);

canopy_msg_handler_t *canopy_msg_handler_create (canopy_t *h,
                                                 struct canopy_match match,
                                                 canopy_msg_handler_f cb,
                                                 void *arg);
void canopy_msg_handler_destroy (canopy_msg_handler_t *mh);
void canopy_msg_handler_start (canopy_msg_handler_t *mh);
void canopy_msg_handler_stop (canopy_msg_handler_t *mh);
void canopy_msg_handler_allow_rolemask (canopy_msg_handler_t *mh, uint32_t rolemask);

struct canopy_msg_handler_spec {
    int typemask;
    const char *topic_glob;
    canopy_msg_handler_f cb;
    uint32_t rolemask;          /* extra roles admitted besides OWNER */
};
#define CANOPY_MSGHANDLER_TABLE_END { 0, NULL, NULL, 0 }

/* Create and start one handler per table row.  *handlers is a
 * NULL-terminated array to pass to canopy_msg_handler_delvec().
 */
int canopy_msg_handler_addvec (canopy_t *h,
                               const struct canopy_msg_handler_spec tab[],
                               void *arg,
                               canopy_msg_handler_t ***handlers);
void canopy_msg_handler_delvec (canopy_msg_handler_t **handlers);

/* Answer 'request' (no-op success if it has the NORESPONSE flag).
 * canopy_respond_error: errnum must be non-zero; errstr may be NULL.
 */
int canopy_respond (canopy_t *h, const canopy_msg_t *request, const char *json_str);
int canopy_respond_pack (canopy_t *h, const canopy_msg_t *request, const char *fmt, ...);
int canopy_respond_raw (canopy_t *h,
                        const canopy_msg_t *request,
                        const void *data,
                        size_t size);
int canopy_respond_error (canopy_t *h,
                          const canopy_msg_t *request,
                          int errnum,
                          const char *errstr);

/* Decode a request: topic (optional) and JSON payload (required). */
int canopy_request_unpack (const canopy_msg_t *msg,
                           const char **topic,
                           const char *fmt,
                           ...);

#ifdef __cplusplus
}
#endif
#endif
