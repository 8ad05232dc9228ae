/* failalloc.h - make one calloc fail, to test ENOMEM paths.
 *
 * A test program linked with -Wl,--wrap=calloc has every calloc of its
 * statically linked code (the test, libkvsmod, libcanopy_int, libutil)
 * go through failalloc's wrapper; shared libraries (libc, jansson, zmq)
 * are not affected.  Armed, the wrapper lets 'skip' calls succeed and
 * fails the next one with ENOMEM, once.
 */
#ifndef CANOPY_KVS_TEST_FAILALLOC_H
#define CANOPY_KVS_TEST_FAILALLOC_H

#include <stdbool.h>

void failalloc_arm (int skip);
void failalloc_disarm (void);
/* A failure was injected since the last arm. */
bool failalloc_fired (void);

#endif
