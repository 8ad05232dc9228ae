#!/bin/sh
test_description='KVS under load: 100 threads x 50 commits and fences'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2

test_expect_success '100 threads x 50 commits' '
	tcommit 100 50 tc &&
	canopy kvs ls tc | wc -l >count &&
	test $(cat count) = 100 &&
	test "$(canopy kvs get tc.99.49)" = 49 &&
	test "$(canopy kvs --rank 3 get tc.0.0)" = 0
'
test_expect_success '100 threads x 50 fences' '
	tcommit --fence 100 50 tf &&
	test "$(canopy kvs get tf.57.49)" = 49 &&
	for t in 0 33 99; do
		test $(canopy kvs ls tf.$t | wc -l) = 50 || return 1
	done
'
test_expect_success 'threads on rank 3 commit through the tree' '
	CANOPY_URI=$(rank_uri 3) tcommit 20 20 tr &&
	test "$(canopy kvs get tr.19.19)" = 19
'
test_expect_success 'commits were merged into fewer versions than transactions' '
	rpc kvs.stats >stats &&
	applies=$(grep -o "\"applies\": *[0-9]*" stats | grep -o "[0-9]*$") &&
	txns=$(grep -o "\"applied-txns\": *[0-9]*" stats | grep -o "[0-9]*$") &&
	test $applies -lt $txns
'
test_expect_success 'no KVS requests are left pending on any rank' '
	for r in 0 1 2 3; do
		rpc --rank $r kvs.stats >stats.$r &&
		grep "\"pending-requests\": *0" stats.$r || return 1
	done
'
test_done
