/* heap.h - how a long-running, many-threaded daemon's malloc keeps memory.
 *
 * A broker's memory grows with what its caches hold: every collective
 * fence of 512 values of 1 KiB leaves ~0.5 MiB more on each broker.  Fresh
 * memory costs a page fault (a trap, a zeroed page, a cgroup charge: 2-3 us
 * a page on a virtual machine) the first time it is written, and glibc
 * gives each thread its own arena: the ZeroMQ thread that receives an
 * event and the module thread that builds one grow different heaps, and
 * blocks of 128 KiB or more are mmap'd and unmapped one by one.  A fence
 * on 8 brokers took ~2 300 faults, most of them inside the fence.
 *
 * heap_share: from now on all threads allocate from one arena, blocks of
 * up to 32 MiB come from it (not from mmap), and up to 'keep' bytes of
 * free memory stay with the process instead of going back to the kernel.
 * Memory one thread frees, and pages touched ahead by heap_prefault,
 * then serve the next allocation of any thread without faults.  Call it
 * before other threads exist (threads keep the arena they have).
 * Returns 0, or -1 with errno EINVAL (keep 0, or beyond HEAP_KEEP_MAX,
 * or the allocator refused a setting: a sanitizer's does) or ENOSYS (not
 * glibc).  glibc may have taken some of the settings before refusing
 * another.
 *
 * heap_prefault: touch 'size' bytes of free memory now (allocate, write a
 * byte per page, free), so that the next allocations of about that much
 * find their pages present.  For a quiet moment: it costs the faults it
 * saves later.  Useful only after heap_share (elsewhere the pages may be
 * returned at once); sizes are capped at HEAP_KEEP_MAX.  Best effort: no
 * error if the memory cannot be had.
 *
 * heap_cache_exec: have every thread keep up to 'count' freed blocks of
 * each small size (up to ~1 KiB) for itself, glibc's tcache (7 by
 * default).  A thread then allocates and frees such blocks without the
 * arena's lock, which with heap_share is one lock for all threads.
 * glibc reads this setting only when a program starts (the
 * glibc.malloc.tcache_count tunable), so the call re-executes the running
 * program (/proc/self/exe: the same file, argv, pid and open descriptors)
 * with it added to GLIBC_TUNABLES.  Call it first thing in main, before
 * any thread, socket or connection exists; it does not return then.  In
 * the re-executed program the same call puts GLIBC_TUNABLES back as it
 * was (the program's children do not inherit the setting), gives the
 * program its name back (comm, which ps shows) and returns the count in
 * effect.  Returns the count in effect: 0 for count 0 (nothing done), the
 * one GLIBC_TUNABLES already sets (the environment's choice is kept, no
 * re-execution), or 'count'; -1 with errno EINVAL (count beyond
 * HEAP_CACHE_MAX, no argv), ENOSYS (malloc is not glibc's: a sanitizer's,
 * or valgrind runs the program, and re-executing would leave it), or the
 * errno of a failed setenv (ENOMEM) or execv; the environment is then
 * as it was.
 */
#ifndef CANOPY_UTIL_HEAP_H
#define CANOPY_UTIL_HEAP_H

#include <stddef.h>

#define HEAP_KEEP_MAX ((size_t)1 << 30)
#define HEAP_CACHE_MAX 65535        /* glibc's limit for tcache_count */

int heap_share (size_t keep);
void heap_prefault (size_t size);
int heap_cache_exec (unsigned int count, char **argv);

#endif
