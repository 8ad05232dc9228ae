#!/bin/sh
test_description='two brokers under valgrind memcheck run a workload cleanly (T15)

Both brokers of "canopy start -n 2" run under valgrind --leak-check=full
(canopy start --wrap) while rank 0 runs t/valgrind/workload.sh: KVS
put/get/fence/watch/unlink across ranks, module load/remove, pings across
ranks, malformed input on the socket, and "canopy run" jobs.  The test
passes if memcheck reports no errors and no definitely lost blocks in any
broker process.

It takes about 10 s on an idle 2-core machine (the brokers mostly wait),
so it runs by default; CANOPY_TEST_VALGRIND=no skips it.  It cannot run on
a sanitized (ASan) build.  Verified to fail on a planted 100-byte leak.'

. $(dirname $0)/sharness.sh

if test "$CANOPY_TEST_VALGRIND" = no; then
	skip_all="CANOPY_TEST_VALGRIND=no"
	test_done
fi
if ! command -v valgrind >/dev/null; then
	skip_all="valgrind is not installed"
	test_done
fi
if ! test_have_prereq NO_SANITIZER; then
	skip_all="the build is sanitized (ASan): valgrind cannot run it"
	test_done
fi

supp=$SHARNESS_TEST_SRCDIR/valgrind/valgrind.supp
workload=$SHARNESS_TEST_SRCDIR/valgrind/workload.sh
testmod=$SHARNESS_BUILD_DIRECTORY/t/helpers/.libs/testmod.so
export testmod

# %p: one log per process (the brokers, and any child valgrind follows
# until it execs), relative to the brokers' working directory, the trash
# directory (whose name has a space, which --wrap would not mind but the
# shell's word splitting here would).
VALGRIND_WRAP="valgrind,--leak-check=full,--errors-for-leak-kinds=definite"
VALGRIND_WRAP="$VALGRIND_WRAP,--error-exitcode=1,--num-callers=30"
VALGRIND_WRAP="$VALGRIND_WRAP,--suppressions=$supp,--log-file=vg.%p.log"

test_expect_success 'run the workload on 2 brokers under valgrind' '
	timeout --kill-after=30 ${CANOPY_VALGRIND_TIMEOUT:-1800} \
		canopy start -n 2 --exit-timeout=600 "--wrap=$VALGRIND_WRAP" \
		-- sh $workload >workload.out 2>&1
	rc=$? &&
	cat workload.out &&
	test $rc = 0 &&
	grep "^workload done$" workload.out
'
# Processes the brokers fork and that then exec (the initial program, job
# tasks) leave a log with no summary: valgrind stops following at exec.
test_expect_success 'both brokers ran to the end under memcheck' '
	grep -l "ERROR SUMMARY" vg.*.log >logs &&
	grep -l "Command: .*canopy-broker" $(cat logs) >brokers &&
	test $(wc -l <brokers) = 2
'
test_expect_success 'memcheck found no errors' '
	for f in $(cat logs); do
		grep -q "ERROR SUMMARY: 0 errors" $f || { cat $f; return 1; }
	done
'
test_expect_success 'no block was definitely lost' '
	for f in $(cat logs); do
		if grep -q "definitely lost:" $f; then
			grep -q "definitely lost: 0 bytes in 0 blocks" $f ||
				{ cat $f; return 1; }
		fi
	done
'
test_expect_success 'summary' '
	for f in $(cat brokers); do
		echo "== $f: $(sed -n "s/.*Command: //p" $f | cut -c1-60)" &&
		grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|in use at exit|total heap usage" $f
	done
'
test_done
