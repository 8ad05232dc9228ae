/* hwinfo.c - see hwinfo.h.  Each call loads the topology afresh: it is
 * used at module start and at task launch, not on a hot path.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <hwloc.h>
#include "hwinfo.h"

static hwloc_topology_t load (void)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init (&topo) < 0)
        return NULL;
    if (hwloc_topology_load (topo) < 0) {
        hwloc_topology_destroy (topo);
        return NULL;
    }
    return topo;
}

int hwinfo_get (struct hwinfo *info)
{
    hwloc_topology_t topo;
    hwloc_obj_t root;

    if (!info) {
        errno = EINVAL;
        return -1;
    }
    if (!(topo = load ())) {
        errno = EIO;
        return -1;
    }
    memset (info, 0, sizeof (*info));
    info->sockets = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_PACKAGE);
    info->cores = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_CORE);
    info->pus = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_PU);
    root = hwloc_get_root_obj (topo);
    /* hwloc sums the NUMA nodes it can see, which some virtual machines
     * under-report; the kernel's page count is the machine's memory
     */
    long pages = sysconf (_SC_PHYS_PAGES), pagesize = sysconf (_SC_PAGESIZE);
    info->memory = root ? root->total_memory : 0;
    if (pages > 0 && pagesize > 0 && (uint64_t)pages * pagesize > info->memory)
        info->memory = (uint64_t)pages * pagesize;
    if (root && root->cpuset)
        (void)hwloc_bitmap_list_snprintf (info->cpuset, sizeof (info->cpuset),
                                          root->cpuset);
    if (info->sockets < 0)
        info->sockets = 0;
    if (info->cores < 0)
        info->cores = 0;
    if (info->pus < 0)
        info->pus = 0;
    hwloc_topology_destroy (topo);
    return 0;
}

int hwinfo_bind_core (pid_t pid, int index)
{
    hwloc_topology_t topo;
    hwloc_obj_t core;
    int n, rc;

    if (index < 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(topo = load ())) {
        errno = EIO;
        return -1;
    }
    n = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_CORE);
    if (n <= 0 || !(core = hwloc_get_obj_by_type (topo, HWLOC_OBJ_CORE, index % n))) {
        hwloc_topology_destroy (topo);
        errno = ENOTSUP;
        return -1;
    }
    rc = hwloc_set_proc_cpubind (topo, pid, core->cpuset, HWLOC_CPUBIND_PROCESS);
    hwloc_topology_destroy (topo);
    if (rc < 0) {
        errno = errno ? errno : ENOTSUP;
        return -1;
    }
    return 0;
}
