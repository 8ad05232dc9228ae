/* cpulist.h - sets of CPUs as text, in the kernel's list syntax
 * ("0-3,8,10-11", as in /proc/PID/status Cpus_allowed_list and taskset -c).
 *
 * cpulist_parse: fills 'set' from 's': comma-separated CPU numbers and
 * ranges A-B (A <= B), no spaces.  Returns 0, or -1 with errno EINVAL
 * (empty text, bad syntax, a range backwards, a CPU of CPU_SETSIZE or
 * more); 'set' is unchanged on failure.
 *
 * cpulist_format: writes 'set' into buf (len bytes) with ranges joined
 * ("" for an empty set).  Returns 0, or -1 with errno EOVERFLOW (buf too
 * small: buf then holds "") or EINVAL (NULL arguments).
 *
 * cpulist_nth: the number of the n-th CPU of 'set' (n from 0, in
 * increasing order), or -1 with errno EINVAL if the set has n CPUs or
 * fewer.
 *
 * All three are pure: no system calls, nothing allocated.
 */
#ifndef CANOPY_UTIL_CPULIST_H
#define CANOPY_UTIL_CPULIST_H

#include <sched.h>
#include <stddef.h>

/* Enough for any set of a 1 024-CPU machine written as single CPUs. */
#define CPULIST_MAX 5120

int cpulist_parse (const char *s, cpu_set_t *set);
int cpulist_format (const cpu_set_t *set, char *buf, size_t len);
int cpulist_nth (const cpu_set_t *set, int n);

#endif
