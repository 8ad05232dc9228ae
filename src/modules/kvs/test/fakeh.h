/* fakeh.h - a canopy handle over an in-memory connector, for unit tests of
 * the KVS module's files: no broker, no socket, no network.
 *
 * Everything the code under test sends through the handle (requests to
 * other services, responses to its callers, event publications, log
 * records) is kept in an outbox, in order.  The test takes messages out
 * by type and topic, looks at them, and may answer a request
 * (fakeh_respond) or deliver any message (fakeh_inject): those go to an
 * inbox that the handle's reactor dispatches like a broker's messages
 * (fakeh_run runs reactor passes, never blocking).  Sends can be made to
 * fail, one at a time, to test error paths.
 *
 * Ownership: messages taken from the outbox belong to the caller
 * (canopy_msg_decref).  The handle owns its connector; canopy_close frees
 * both and the reactor.
 */
#ifndef CANOPY_KVS_TEST_FAKEH_H
#define CANOPY_KVS_TEST_FAKEH_H

#include <stdbool.h>
#include <canopy/canopy.h>

struct fakeh;

/* A handle (with its reactor created) over a new fake connector. */
canopy_t *fakeh_create (struct fakeh **fp);

/* The first message in the outbox of one of the types in 'typemask'
 * whose topic matches 'glob' (fnmatch; NULL: any), removed; NULL if none.
 */
canopy_msg_t *fakeh_take (struct fakeh *f, int typemask, const char *glob);
/* The first "event.pub" request (canopy_event_publish*) of an event with
 * this topic, removed; NULL if none.  Its payload is the topic, a NUL,
 * then the event's payload.
 */
canopy_msg_t *fakeh_take_publication (struct fakeh *f, const char *topic);
/* The nth (from 0) message in the outbox matching (as fakeh_take), or
 * the first publication of 'topic' (as fakeh_take_publication), left
 * there (borrowed); NULL if none.
 */
const canopy_msg_t *fakeh_peek (struct fakeh *f, int typemask, const char *glob,
                                int nth);
const canopy_msg_t *fakeh_peek_publication (struct fakeh *f, const char *topic);
/* The response to the request with this matchtag, removed; NULL if none. */
canopy_msg_t *fakeh_take_response (struct fakeh *f, uint32_t matchtag);
/* How many messages in the outbox match (as fakeh_take). */
int fakeh_count (struct fakeh *f, int typemask, const char *glob);
/* Drop everything in the outbox. */
void fakeh_clear (struct fakeh *f);

/* Deliver a response to 'req' (a request from the outbox) with raw
 * payload data/len (NULL: none), or the error errnum.
 */
void fakeh_respond (struct fakeh *f, const canopy_msg_t *req, int errnum,
                    const void *data, size_t len);
/* Deliver any message (a reference is taken). */
void fakeh_inject (struct fakeh *f, const canopy_msg_t *msg);
/* Messages waiting in the inbox. */
int fakeh_pending (struct fakeh *f);

/* Of the messages whose topic matches 'glob' (NULL: all), let 'skip' more
 * be sent, then fail the next 'count' sends with 'errnum'.  count 0
 * cancels.
 */
void fakeh_fail_send (struct fakeh *f, const char *glob, int skip, int count,
                      int errnum);
/* Sends that failed so far. */
int fakeh_failed_sends (struct fakeh *f);

/* Run reactor passes (never blocking) until the inbox is empty and two
 * more passes (for prepare watchers started by the last dispatch) ran.
 */
void fakeh_run (canopy_t *h, struct fakeh *f);

/* A client request as a broker would deliver it: 'sender' is the route
 * the response goes back to (canopy_msg_route_last), payload raw bytes.
 */
canopy_msg_t *fakeh_request (const char *topic, uint32_t matchtag,
                             const char *sender, const void *data, size_t len);
/* The same with a JSON payload (a string, or NULL: none). */
canopy_msg_t *fakeh_request_json (const char *topic, uint32_t matchtag,
                                  const char *sender, const char *json);

#endif
