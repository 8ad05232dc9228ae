/* test_skip.h - leave a cmocka test that cannot run here as a pass.
 *
 * cmocka 1.1's skip() prints "not ok N # SKIP", which automake's TAP
 * driver counts as a failure: a test skipped on a machine without some
 * feature (a kernel before 6.12 has no scheduler slices: Debian 12's)
 * failed the suite there.  TEST_SKIP says why, as a TAP comment, and
 * returns from the test function: it passes without checking anything.
 * Use it only for what the machine lacks, never for what the code under
 * test got wrong.
 */
#ifndef CANOPY_TEST_SKIP_H
#define CANOPY_TEST_SKIP_H

#define TEST_SKIP(why) do { \
        print_message ("# skipped: %s\n", (why)); \
        return; \
    } while (0)

#endif
