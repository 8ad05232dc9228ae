/* fuzz.h - shared by the libFuzzer targets (fuzz/TARGET.c) and the replay
 * driver (replay.c) that runs saved inputs through the same entry point
 * under 'make check' with the ordinary compiler.
 *
 * FUZZ_CHECK states an invariant of the code under test (a round trip,
 * a documented guarantee); when it does not hold the harness aborts, which
 * libFuzzer reports as a crash and saves the input.  Malformed input being
 * refused is never a failure: only crashes, leaks, sanitizer reports and
 * broken invariants are.
 */
#ifndef CANOPY_FUZZ_H
#define CANOPY_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond) do { \
    if (!(cond)) { \
        fprintf (stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
        abort (); \
    } \
} while (0)

#endif
