/* hwinfo.h - the machine's hardware, via hwloc (our only hwloc user).
 *
 * hwinfo_get fills a summary of this machine: sockets, cores, PUs,
 * memory.  hwinfo_bind_core pins a process to one core (round-robin:
 * index modulo the number of cores).  Both return -1 with errno on
 * failure (hwloc errors become EIO; binding unsupported is ENOTSUP).
 */
#ifndef CANOPY_HWINFO_H
#define CANOPY_HWINFO_H

#include <stdint.h>
#include <sys/types.h>

struct hwinfo {
    int sockets;
    int cores;
    int pus;
    uint64_t memory;        /* bytes */
    char cpuset[256];       /* the machine's PUs, hwloc list syntax */
};

int hwinfo_get (struct hwinfo *info);
int hwinfo_bind_core (pid_t pid, int index);

#endif
