/* direct.h - direct channels: a module serves its local clients on a socket
 * of its own, so their requests and responses skip the broker thread.
 *
 * Why: a request from a client to a module normally crosses three threads
 * (client -> broker thread -> module thread, and back the same way), four
 * wake-ups per round trip.  With a direct channel it is two: the client
 * writes to the module's socket, the module answers on it.  The KVS uses
 * it for kvs.* requests addressed to the local broker (NODEID_ANY), which
 * is every get, put, fence and watch of a client; everything else (other
 * services, other ranks, events) still goes through the broker.
 *
 * Naming: the module of service S on a broker whose local socket is PATH
 * listens on "PATH-S" (direct_path()).  A client derives the same name from
 * the URI it connected to, so nothing has to be published.
 *
 * Server side (direct_server_*, used in a module thread):
 * - Each accepted connection gets the credentials the broker would give it
 *   (SO_PEERCRED: the instance owner is OWNER, anyone else USER, plus
 *   LOCAL; only the owner may present other credentials, for tests of
 *   guest access) and a route hop "RANK:dN" pushed on each request, which
 *   is what the module sees as the sender (canopy_msg_route_last).
 * - Requests are dispatched through the handle's message handlers exactly
 *   as if the broker had delivered them.  A response whose top route hop
 *   belongs to a direct connection is written to that connection instead
 *   of going to the broker (the handle asks direct_server_send).  A
 *   response for a connection that has gone is dropped.
 * - When a connection closes, a NORESPONSE "S.disconnect" request with its
 *   hop and credentials is dispatched, as the broker does for its clients.
 * - Writes are buffered per connection and sent when the loop is about to
 *   block (one send per burst); the module never blocks on a client, and a
 *   client whose unsent output passes 1 GiB is dropped.
 * - Anything but a request from a client (a response, an event) is a
 *   protocol error and closes the connection.
 *
 * Client side (direct_client_*, used by the local connector):
 * - The channel connects on first use; if no module listens then, the
 *   handle uses the broker for that service for good.  Once connected it
 *   never falls back to the broker (a watch and its unwatch must travel
 *   the same way): while the module is gone, requests get ENOSYS; when it
 *   listens again, the next request reconnects.
 * - It remembers the matchtag of each request that expects a response
 *   (streaming ones until their error response).  If the connection is lost
 *   those requests get ENOSYS responses made on the spot ("the module went
 *   away before answering"), as the broker's answer would be.
 * - CANOPY_DIRECT=0 in the environment turns direct channels off.
 *
 * Threads: a server belongs to its module's thread, a client channel to
 * its handle's; neither is thread safe.
 */
#ifndef CANOPY_DIRECT_H
#define CANOPY_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <canopy/handle.h>
#include <canopy/message.h>

/* The socket path of service's direct channel for a broker whose local
 * socket is 'local_path'.  Returns 0, or -1 with ENAMETOOLONG if it does
 * not fit in 'size' bytes (or in a sockaddr_un).
 */
int direct_path (char *buf, size_t size, const char *local_path, const char *service);

/* Server */

struct direct_server;

/* Listen on 'path' for clients of 'service' and dispatch their requests on
 * h (a module's handle); 'rank' is the broker's, for the hops.  h's responses for
 * those clients go to them from then on.  Returns NULL with errno set
 * (EADDRINUSE, ENAMETOOLONG, ENOMEM, ...) and a message in 'error'.
 */
struct direct_server *direct_server_create (canopy_t *h,
                                            const char *path,
                                            const char *service,
                                            uint32_t rank,
                                            canopy_error_t *error);
/* Flush what can be sent without blocking, close every connection and the
 * socket, remove its path.  Accepts NULL; keeps errno.
 */
void direct_server_destroy (struct direct_server *ds);

/* Called by the handle for every response it sends: if msg is for one of
 * the server's connections, take it (consuming the caller's reference when
 * 'owned') and return true; otherwise return false and leave msg alone.
 */
bool direct_server_send (struct direct_server *ds, canopy_msg_t *msg, bool owned);

/* Drop a client whose unsent output would pass 'bytes' (default 1 GiB). */
void direct_server_set_out_limit (struct direct_server *ds, size_t bytes);

struct direct_server_stats {
    unsigned long connections;      /* open now */
    unsigned long accepted;         /* since creation */
    unsigned long requests;         /* received */
    unsigned long responses;        /* sent */
};
void direct_server_get_stats (struct direct_server *ds, struct direct_server_stats *st);

/* Client */

struct direct_client;

/* A channel to 'path' for requests of 'service' (not connected yet). */
struct direct_client *direct_client_create (const char *path, const char *service);
void direct_client_destroy (struct direct_client *dc);

/* Offer msg to the channel.  Returns 1 if it is not for the channel (not
 * a request for the service addressed to the local broker with NODEID_ANY,
 * or nobody listened when the channel was first used): send it to the
 * broker.  Returns 0 if the channel took it: sent, or answered with a
 * made-up ENOSYS response (the module is gone) that recv will return.
 * Returns -1 with errno (EAGAIN with 'nonblock' and a full socket, ENOMEM,
 * EMSGSIZE): nothing was sent.  Connects on first use, adding the socket
 * to the epoll set 'epfd'; blocks until the frame is written unless
 * 'nonblock'.
 */
int direct_client_send (struct direct_client *dc, int epfd,
                        const canopy_msg_t *msg, bool nonblock);

/* True while requests sent here await responses. */
bool direct_client_busy (const struct direct_client *dc);

/* Next message from the channel, never blocking: a response read from the
 * socket, or one made because the connection was lost.  NULL with EAGAIN
 * when there is none.  A lost connection is closed and taken out of epfd
 * (the next request reconnects); it is not an error for the caller.
 */
canopy_msg_t *direct_client_recv (struct direct_client *dc, int epfd);

/* True if a whole message is buffered (recv would return one). */
bool direct_client_pending (const struct direct_client *dc);

/* True unless CANOPY_DIRECT is set to "0" or "off". */
bool direct_enabled (void);

#endif
