/* module_private.h - helpers shared by module.c and the broker.
 *
 * route_hop_count: number of broker hops recorded in a route stack.
 * ping_response_create: the answer to a "*.ping" request: the request's
 *   JSON object plus "route", "hops" and "rank" (or an error response).
 * module_builtins_register: install <name>.ping and <name>.shutdown on a
 *   module's handle (called by the broker's module host).
 */
#ifndef CANOPY_MODULE_PRIVATE_H
#define CANOPY_MODULE_PRIVATE_H

#include <stdint.h>
#include <canopy/handle.h>

int route_hop_count (const canopy_msg_t *msg);
canopy_msg_t *ping_response_create (const canopy_msg_t *msg, const char *rank);
int module_builtins_register (canopy_t *h, const char *name, uint32_t rank);

#endif
