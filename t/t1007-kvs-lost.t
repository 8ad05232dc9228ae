#!/bin/sh
test_description='KVS and lost brokers: open fences fail with EHOSTUNREACH, the KVS works again after a rejoin'

. $(dirname $0)/sharness.sh

# 0 -> 1,2; 1 -> 3,4; 2 -> 5,6
test_under_canopy 7 2 --exit-mode=leader $fast_liveness

W="--timeout=60"

test_expect_success 'a fence with participants on rank 0 and rank 5' '
	canopy kvs fence lost.f1 3 a.x=1 >f0.out 2>f0.err &
	echo $! >p0 &&
	{ canopy kvs --rank 5 fence lost.f1 3 a.y=2 >f5.out 2>f5.err & } &&
	echo $! >p5 &&
	n=0 &&
	while test "$(canopy kvs stats | jq ".fences.waiters")" != 1; do
		n=$((n+1)) && test $n -lt 300 && sleep 0.1 || return 1
	done
'
test_expect_success 'rank 5 dies before the third participant joins' '
	kill -9 $(broker_pid 5) &&
	canopy overlay status --rank 5 --wait lost $W
'
test_expect_success 'the fence fails for the participant on rank 0, saying why' '
	test_expect_code 1 wait $(cat p0) &&
	grep -i "lost" f0.err &&
	grep "rank 5" f0.err
'
test_expect_success 'the participant whose broker died gets an error too' '
	! wait $(cat p5)
'
test_expect_success 'nothing of the failed fence was committed' '
	test_must_fail canopy kvs get a.x &&
	test $(canopy kvs stats | jq ".counters.\"lost-events\"") -ge 1
'
test_expect_success 'rank 5 rejoins and fences across it work again' '
	restart_broker 5 &&
	canopy overlay status --wait full $W &&
	{ canopy kvs --rank 5 fence lost.f2 2 b.y=2 >g5.out & } &&
	p=$! &&
	canopy kvs fence lost.f2 2 b.x=1 &&
	wait $p &&
	test "$(canopy kvs --rank 5 get b.x)" = 1 &&
	test "$(canopy kvs get b.y)" = 2
'
test_expect_success 'an unrelated commit during the loss was not disturbed' '
	canopy kvs put c.z=3 &&
	test "$(canopy kvs --rank 6 get c.z)" = 3
'
test_expect_success 'no KVS requests are left pending' '
	for r in 0 1 2 3 4 5 6; do
		canopy kvs --rank $r stats | jq -e ".\"pending-requests\" == 0" || return 1
	done
'
test_done
