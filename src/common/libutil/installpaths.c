/* installpaths.c - see installpaths.h.  The directories are compiled in by
 * src/common/Makefile.am.
 */
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include "installpaths.h"

bool canopy_in_build_tree (void)
{
    static int cached = -1;
    if (cached < 0) {
        char exe[PATH_MAX];
        ssize_t n = readlink ("/proc/self/exe", exe, sizeof (exe) - 1);
        size_t len = strlen (ABS_TOP_BUILDDIR);
        cached = 0;
        if (n > 0) {
            exe[n] = '\0';
            cached = !strncmp (exe, ABS_TOP_BUILDDIR, len) && exe[len] == '/';
        }
    }
    return cached;
}

const char *canopy_path (enum canopy_path which)
{
    bool build = canopy_in_build_tree ();
    switch (which) {
        case CANOPY_PATH_EXEC:
            return build ? ABS_TOP_BUILDDIR "/src/cmd" : INSTALL_CMD_DIR;
        case CANOPY_PATH_BROKER:
            return build ? ABS_TOP_BUILDDIR "/src/broker/canopy-broker"
                         : INSTALL_BROKER_PATH;
        case CANOPY_PATH_MODULES:
            return build ? ABS_TOP_BUILDDIR "/src/modules/.libs" : INSTALL_MODULE_DIR;
        case CANOPY_PATH_PMI_LIBRARY:
            return build ? ABS_TOP_BUILDDIR "/src/lib/libpmi/.libs/libpmi.so"
                         : INSTALL_PMI_LIBRARY;
        case CANOPY_PATH_KAP:
            return build ? ABS_TOP_BUILDDIR "/kap" : INSTALL_KAP_DIR;
    }
    return NULL;
}
