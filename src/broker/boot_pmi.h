/* boot_pmi.h - bootstrap the broker tree through a launcher's PMI-1.
 *
 * When canopy-broker is started without --rank/--size by a launcher that
 * offers PMI (mpiexec.hydra, srun, pmi-launch, another canopy instance:
 * PMI_FD, PMI_PORT or CANOPY_PMI_LIBRARY in the environment), each broker
 * learns its rank and size from PMI, binds its ROUTER on TCP (address from
 * the attribute tbon.interface-hint, default 127.0.0.1, on a free port),
 * publishes that endpoint as "canopy.<rank>.uri", commits, enters the PMI
 * barrier, reads its parent's endpoint and connects to it.  Then PMI is
 * finalized and the PMI_* variables are removed from the environment so
 * the initial program does not inherit them.
 *
 * Two steps because main() needs the rank before it builds anything, and
 * the overlay before it can bind:
 *   boot_pmi_create()  PMI init; rank and size
 *   boot_pmi_wire()    bind, exchange endpoints, connect, finalize
 * On a failure after PMI init, boot_pmi_wire() asks the launcher to abort
 * the job, so that the other brokers do not wait for this one forever.
 *
 * Errors: -1 (or NULL) with errno and a sentence in *error.
 */
#ifndef CANOPY_BROKER_BOOT_PMI_H
#define CANOPY_BROKER_BOOT_PMI_H

#include <stdint.h>
#include <stdbool.h>
#include <canopy/types.h>

struct broker;
struct boot_pmi;

/* Whether the environment offers a PMI to boot from. */
bool boot_pmi_wanted (void);

struct boot_pmi *boot_pmi_create (uint32_t *rank, uint32_t *size,
                                  canopy_error_t *error);

/* b->overlay must exist; b->attrs is read (tbon.interface-hint) and
 * written (tbon.endpoint, tbon.parent-endpoint, broker.boot-method).
 */
int boot_pmi_wire (struct boot_pmi *bp, struct broker *b, canopy_error_t *error);

void boot_pmi_destroy (struct boot_pmi *bp);

#endif
