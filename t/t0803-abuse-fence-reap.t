#!/bin/sh
test_description='fences that never complete are reaped by kvs.fence-timeout (T14)

A user opens as many never-completing fences as the cap allows; the
timeout fails every one of them for its participant, which frees the cap.
No test depends on how long the timeout takes.'

. $(dirname $0)/sharness.sh

test_under_canopy 2 2 -S kvs.fence-timeout=2 -S kvs.max-pending=8

S=$(canopy getattr rundir)/local-0

field () {
	sed -n "s/^$1 //p" "$2"
}
wait_open () {
	n=0
	while ! rpc kvs.stats | grep -q "\"open\": *$1,"; do
		n=$((n + 1))
		test $n -lt 1200 || return 1
		sleep 0.1
	done
}

# (whether all 8 are open at the same moment depends on timing, so the cap
# itself is tested in t0802; here the point is that reaping releases it)
test_expect_success 'a user opens as many fences as the cap allows, never completed' '
	kvs_settled &&
	pids="" &&
	for i in $(seq 1 8); do
		canopy kvs --rank $((i % 2)) fence reap.$i 2 reap.k$i=v 2>err.$i &
		pids="$pids $!"
	done &&
	echo "$pids" >pids
'
test_expect_success 'the timeout fails every one of them with a clear error' '
	for pid in $(cat pids); do
		test_must_fail wait $pid || return 1
	done &&
	for i in $(seq 1 8); do
		grep "fence reap.$i: only 1 of 2 participants joined" err.$i || return 1
	done &&
	test_must_fail canopy kvs get reap.k1
'
test_expect_success 'the reaped fences released the cap' '
	wait_open 0 &&
	sockabuse fences 8 fresh 2 0 $S >fresh.out &&
	test $(field refused-EAGAIN fresh.out) = 0
'
test_expect_success 'a late joiner of a reaped fence gets the same error' '
	test_must_fail canopy kvs fence reap.3 2 2>late &&
	grep "only 1 of 2 participants joined" late
'
test_expect_success 'no KVS requests are left pending on any rank' '
	wait_open 0 &&
	for r in 0 1; do
		rpc --rank $r kvs.stats >stats.$r &&
		grep "\"pending-requests\": *0" stats.$r || return 1
	done
'
test_done
