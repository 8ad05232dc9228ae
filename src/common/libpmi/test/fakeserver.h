/* test/fakeserver.h - a PMI-1 server in a thread, for client unit tests.
 *
 * fakeserver_start() creates 'size' socketpairs, serves the server ends
 * from a thread with a pmi_server engine backed by an in-memory store,
 * and returns the client ends in fds[] (the caller owns them).  The
 * thread ends when every connection is closed; fakeserver_stop() joins it
 * (closing the server ends first if 'force').  Test-only: asserts freely.
 */
#ifndef CANOPY_TEST_FAKESERVER_H
#define CANOPY_TEST_FAKESERVER_H

#include <stdbool.h>

struct fakeserver;

struct fakeserver *fakeserver_start (int size, const char *mapping, int *fds);
void fakeserver_stop (struct fakeserver *fs, bool force);
/* After stop: how many tasks finalized, and the last abort code (-1: none). */
int fakeserver_finalized (struct fakeserver *fs);
int fakeserver_abort_code (struct fakeserver *fs);
void fakeserver_destroy (struct fakeserver *fs);

#endif
