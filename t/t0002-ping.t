#!/bin/sh
test_description='ping reaches every rank of a 16-broker tree with the right hop count'

. $(dirname $0)/sharness.sh

test_under_canopy 16 2

test_expect_success 'ping the local broker: zero hops' '
	canopy ping --count 1 >out &&
	grep "hops=0" out
'
test_expect_success 'ping every rank and check the hop count (k=2)' '
	for r in $(seq 0 15); do
		canopy ping --count 1 --rank $r >out.$r || return 1
		# depth of r in a binary tree = hops down from rank 0
		d=0; x=$r; while test $x -gt 0; do x=$(( (x - 1) / 2 )); d=$((d+1)); done
		grep "^$r!broker.ping.*hops=$d " out.$r || return 1
	done
'
test_expect_success 'the route of rank 15 runs through 1, 3 and 7' '
	canopy ping --count 1 --rank 15 | grep "route=0:c[0-9]*!0!1!3!7"
'
test_expect_success 'ping from a leaf to another leaf goes up and down' '
	on_rank 15 canopy ping --count 1 --rank 14 >out &&
	grep "hops=7" out
'
test_expect_success 'padding travels there and back' '
	canopy ping --count 2 --interval 0 --pad 100000 --rank 15 >out &&
	grep -c "pad=100000" out >count && test $(cat count) = 2
'
test_expect_success 'batch of 1000 pings in flight' '
	canopy ping --batch --count 1000 --rank 15 | grep "1000 pings"
'
test_expect_success 'a rank outside the instance is EHOSTUNREACH' '
	test_must_fail canopy ping --count 1 --rank 16 2>err &&
	grep -i "not in this instance" err
'
test_expect_success 'an unknown service gets ENOSYS' '
	test_must_fail canopy ping --count 1 nosuchservice 2>err &&
	grep -i "no service\|function not implemented" err
'
test_expect_success 'an unknown method of a broker service gets ENOSYS' '
	test_must_fail canopy getattr --rank 3 nosuchattr 2>err &&
	grep "no attribute" err
'
test_expect_success 'ping refuses an interval that is not finite, or with --batch' '
	test_must_fail canopy ping --count 1 --interval inf 2>err &&
	grep "invalid interval" err &&
	test_must_fail canopy ping --count 1 --interval nan 2>err &&
	grep "invalid interval" err &&
	test_must_fail canopy ping --count 1 --interval 1e9 2>err &&
	grep "at most a day" err &&
	test_must_fail canopy ping --batch --count 2 --interval 0.5 2>err &&
	grep "interval does not go with it" err
'
test_done
