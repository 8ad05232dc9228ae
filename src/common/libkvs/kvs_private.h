/* kvs_private.h - shared by the libkvs client files. */
#ifndef CANOPY_KVS_PRIVATE_H
#define CANOPY_KVS_PRIVATE_H

#include <stdbool.h>
#include <canopy/canopy.h>
#include "kvs_txn.h"

uint32_t kvs_target (canopy_t *h);
kvs_txn_t *kvs_handle_txn (canopy_t *h, bool create);
/* Remember the error text of a failed future on the handle. */
void kvs_set_errstr (canopy_t *h, canopy_future_t *f);

#endif
