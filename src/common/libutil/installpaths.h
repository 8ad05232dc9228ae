/* installpaths.h - where canopy's pieces live, for this very executable.
 *
 * A program running from the build tree (its /proc/self/exe is below the
 * build directory configured at build time) uses the build tree's
 * programs, modules and libraries; an installed one uses the installed
 * locations.  Environment variables the user set take precedence where the
 * callers choose so (see src/cmd/canopy.c).
 */
#ifndef CANOPY_UTIL_INSTALLPATHS_H
#define CANOPY_UTIL_INSTALLPATHS_H

#include <stdbool.h>

enum canopy_path {
    CANOPY_PATH_EXEC,           /* directory of canopy-* commands */
    CANOPY_PATH_BROKER,         /* canopy-broker */
    CANOPY_PATH_MODULES,        /* module directory */
    CANOPY_PATH_PMI_LIBRARY,    /* libpmi.so */
    CANOPY_PATH_KAP,            /* KAP scripts and program */
};

bool canopy_in_build_tree (void);
const char *canopy_path (enum canopy_path which);

#endif
