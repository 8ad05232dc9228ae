#!/bin/sh
test_description='canopy start: instances of many shapes start and stop cleanly'

. $(dirname $0)/sharness.sh

for size in 1 2 16 64; do
	for k in 2 3; do
		test_expect_success "start -n $size -k $k runs a command" "
			canopy start -n $size -k $k -- canopy getattr size >size.out &&
			test \$(cat size.out) = $size
		"
	done
done
test_expect_success 'the exit status of the command is returned' '
	test_expect_code 7 canopy start -n 2 -- sh -c "exit 7"
'
test_expect_success 'a command killed by a signal gives 128+signal' '
	test_expect_code 143 canopy start -n 2 -- sh -c "kill -TERM \$\$"
'
test_expect_success 'a missing command is reported' '
	test_expect_code 127 canopy start -n 1 -- /nonexistent/cmd 2>err &&
	grep "nonexistent" err
'
test_expect_success 'CANOPY_URI points at rank 0' '
	canopy start -n 4 -- sh -c "canopy getattr rank" >rank.out &&
	test $(cat rank.out) = 0
'
test_expect_success 'the run directory is removed afterwards' '
	canopy start -n 4 -- canopy getattr rundir >rundir.out &&
	test ! -e $(cat rundir.out)
'
test_expect_success 'a broker that dies ends the instance with an error, not a hang' '
	test_must_fail timeout 60 canopy start -n 4 -- \
		sh -c "kill -9 \$(canopy getattr --rank 3 broker.pid); sleep 30" 2>err &&
	grep "rank 3" err
'
test_expect_success 'bad options are refused' '
	test_must_fail canopy start -n 0 true &&
	test_must_fail canopy start -k 0 true &&
	test_must_fail canopy start --exit-mode=bogus true &&
	test_must_fail canopy start --exit-timeout=0 true &&
	test_must_fail canopy start --wrap=, true
'
# Regression: the temporary run directory was made before --wrap was
# checked, and an empty --wrap left it behind.
test_expect_success 'an instance that refuses to start leaves no run directory' '
	own=$(mktemp -d) &&
	test_must_fail env TMPDIR=$own canopy start --wrap=, true 2>err &&
	grep "needs a command" err &&
	test_must_fail env TMPDIR=$own/$(printf "%080d" 0) canopy start true 2>err &&
	grep "too long" err &&
	ls -A $own >left &&
	rmdir $own &&
	test_must_be_empty left
'
test_expect_success '--wrap runs every broker under another program' '
	canopy start -n 2 --wrap=env,CANOPY_T0001_WRAPPED=yes -- \
		sh -c "echo \$CANOPY_T0001_WRAPPED" >wrap.out &&
	test "$(cat wrap.out)" = yes
'
test_expect_success '--wrap with a missing program fails the instance (127)' '
	test_expect_code 127 canopy start -n 1 --wrap=/nonexistent/wrapper true 2>err &&
	grep "nonexistent" err
'
test_done
