/* canopy/module.h - the interface of a broker module (.so plugin).
 *
 * A module exports:
 *   const char *mod_name = "kvs";                (the service it provides)
 *   int mod_main (canopy_t *h, int argc, char **argv);
 * The broker runs mod_main in a thread of its own with a handle connected
 * to the broker.  mod_main normally runs the handle's reactor and returns 0
 * when the reactor is stopped; the broker stops it by sending the request
 * "<name>.shutdown" (handled by the handle itself).  A non-zero return is
 * logged.  Requests for "<name>.ping" are answered automatically.
 */
#ifndef CANOPY_MODULE_H
#define CANOPY_MODULE_H

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (mod_main_f)(canopy_t *h, int argc, char **argv);

#define CANOPY_MOD_NAME(x) const char *mod_name = x

/* Register an extra service name for this module (answered by its
 * handlers).  EEXIST if another module already provides it.
 */
int canopy_service_register (canopy_t *h, const char *name);

#ifdef __cplusplus
}
#endif
#endif
