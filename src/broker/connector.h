/* connector.h - local clients on the broker's UNIX-domain socket.
 *
 * Each connection is an endpoint with id "<rank>:c<n>"; its uid comes from
 * SO_PEERCRED and is stamped on every message it sends.  The instance
 * owner gets the OWNER role, other users the USER role (services admit
 * USER only where they choose to).  A connection that sends a malformed
 * frame, or lets more than the output limit pile up, is dropped; the
 * broker never blocks writing to a client.
 */
#ifndef CANOPY_BROKER_CONNECTOR_H
#define CANOPY_BROKER_CONNECTOR_H

#include <stddef.h>

struct broker;
struct connector;

struct connector *connector_create (struct broker *b, const char *path);
void connector_destroy (struct connector *c);
int connector_client_count (struct connector *c);
/* Set the cap on bytes queued to one client before it is dropped. */
void connector_set_outq_limit (struct connector *c, size_t bytes);

#endif
