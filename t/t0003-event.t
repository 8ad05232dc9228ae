#!/bin/sh
test_description='events reach every rank, in order'

. $(dirname $0)/sharness.sh

test_under_canopy 8 2

test_expect_success 'subscribe on every rank' '
	for r in $(seq 0 7); do
		on_rank $r canopy event sub --count 20 --seq --ready-file ready.$r test. >sub.$r &
		echo $! >pid.$r
	done &&
	for r in $(seq 0 7); do wait_for_file ready.$r 20 || return 1; done
'
test_expect_success 'publish 20 events from several ranks' '
	for i in $(seq 1 20); do
		on_rank $((i % 8)) canopy event pub test.event "{\"i\":$i}" >/dev/null || return 1
	done
'
test_expect_success 'every rank saw all 20, in publication order' '
	for r in $(seq 0 7); do
		wait $(cat pid.$r) || return 1
		test $(wc -l <sub.$r) = 20 || return 1
		sed "s/.*\"i\":\([0-9]*\).*/\1/" sub.$r >order.$r &&
		seq 1 20 >expected &&
		test_cmp expected order.$r || return 1
		# sequence numbers increase
		cut -d" " -f1 sub.$r | sort -n -c || return 1
	done
'
test_expect_success 'topics not subscribed to are not delivered' '
	on_rank 3 canopy event sub --count 1 --ready-file ready.b only. >sub.b &
	pid=$! &&
	wait_for_file ready.b &&
	canopy event pub other.topic &&
	canopy event pub only.this "{}" &&
	wait $pid &&
	grep "^only.this" sub.b
'
test_expect_success 'a raw payload is carried as is' '
	canopy event sub --count 1 --ready-file ready.r raw. >sub.r &
	pid=$! &&
	wait_for_file ready.r &&
	canopy event pub --raw raw.x "not json at all" &&
	wait $pid &&
	grep "raw.x not json at all" sub.r
'
test_expect_success 'a non-JSON payload without --raw is refused' '
	test_must_fail canopy event pub x.y "not json"
'
test_expect_success 'pub --count publishes the event N times, in order' '
	canopy event sub --count 50 --seq --ready-file ready.n many. >sub.n &
	pid=$! &&
	wait_for_file ready.n &&
	last=$(canopy event pub --count 50 many.x "{\"n\":1}") &&
	wait $pid &&
	test $(wc -l <sub.n) = 50 &&
	test "$(tail -1 sub.n | cut -d" " -f1)" = "$last"
'
test_expect_success 'pub and sub refuse the options of the other' '
	# these were silently ignored
	test_must_fail canopy event sub --raw --count 1 x. 2>err &&
	grep "raw goes with pub" err &&
	test_must_fail canopy event pub --seq x.y 2>err &&
	grep "go with sub" err &&
	test_must_fail canopy event pub --ready-file=rf x.y 2>err &&
	grep "go with sub" err &&
	! test -e rf
'
test_done
