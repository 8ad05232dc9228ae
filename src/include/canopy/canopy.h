/* canopy/canopy.h - umbrella header of libcanopy. */
#ifndef CANOPY_CANOPY_H
#define CANOPY_CANOPY_H

#include "types.h"
#include "message.h"
#include "reactor.h"
#include "future.h"
#include "handle.h"
#include "msg_handler.h"
#include "rpc.h"
#include "event.h"
#include "log.h"
#include "module.h"
#include "kvs.h"

#endif
