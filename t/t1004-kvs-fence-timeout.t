#!/bin/sh
test_description='a fence participant that never joins: the fence times out'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2 -S kvs.fence-timeout=2

test_expect_success 'the others fail with ETIMEDOUT instead of hanging' '
	canopy kvs --rank 3 fence never 3 never.a=1 2>err.a &
	pid=$! &&
	test_must_fail canopy kvs --rank 1 fence never 3 never.b=1 2>err.b &&
	test_must_fail wait $pid &&
	grep "only 2 of 3 participants joined" err.a &&
	grep "only 2 of 3 participants joined" err.b &&
	test_must_fail canopy kvs get never.a
'
test_expect_success 'a participant killed before joining: the others do not hang' '
	canopy kvs --rank 2 fence killed 2 k.a=1 2>err.k &
	pid=$! &&
	{ sh -c "sleep 30; canopy kvs fence killed 2" & } &&
	victim=$! &&
	sleep 0.2 &&
	kill -9 $victim &&
	test_must_fail wait $pid &&
	grep "participants joined" err.k
'
test_expect_success 'fences that complete in time are unaffected' '
	canopy kvs --rank 3 fence ok 2 ok.a=1 &
	pid=$! &&
	canopy kvs --rank 0 fence ok 2 ok.b=1 &&
	wait $pid &&
	test "$(canopy kvs get ok.a)" = 1
'
test_done
