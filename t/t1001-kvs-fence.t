#!/bin/sh
test_description='KVS fences: collective commits reduced in the tree'

. $(dirname $0)/sharness.sh

test_under_canopy 16 2

test_expect_success 'writers on rank 15 and readers on rank 0 agree after a fence' '
	canopy kvs --rank 15 fence f15 2 w15.a=1 w15.b=2 &
	pid=$! &&
	canopy kvs --rank 0 fence f15 2 &&
	wait $pid &&
	test "$(canopy kvs --rank 0 get w15.a)" = 1 &&
	test "$(canopy kvs --rank 15 get w15.b)" = 2
'
test_expect_success '64 processes on 16 brokers fence together, then read all 64 keys' '
	for i in $(seq 0 63); do
		canopy kvs --rank $((i % 16)) fence f64 64 f64.k$i=v$i &
	done &&
	wait &&
	for i in $(seq 0 63); do
		r=$(( (i * 7) % 16 ))
		test "$(canopy kvs --rank $r get f64.k$i)" = v$i || return 1
	done
'
test_expect_success 'every participant sees the same version' '
	for i in $(seq 0 15); do
		(canopy kvs --rank $i fence fv 16 fv.k$i=$i && canopy kvs --rank $i version >ver.$i) &
	done &&
	wait &&
	test $(cat ver.* | sort -u | wc -l) = 1
'
test_expect_success 'redundant values in a fence are stored once' '
	head -c 200000 /dev/urandom >val.bin &&
	before=$(rpc content.stats | sed "s/.*\"count\": *\([0-9]*\).*/\1/") &&
	for i in $(seq 0 15); do
		canopy kvs --rank $i put -r red.k$i=- <val.bin >/dev/null &
	done &&
	wait &&
	after=$(rpc content.stats | sed "s/.*\"count\": *\([0-9]*\).*/\1/") &&
	# 200000 bytes = 4 chunks; the 16 copies add 4 blobs plus directories
	test $((after - before)) -lt 40
'
test_expect_success 'mismatched nprocs fails every participant with EINVAL' '
	canopy kvs --rank 3 fence bad 2 bad.a=1 2>err.a &
	pid=$! &&
	test_must_fail canopy kvs --rank 9 fence bad 3 bad.b=1 2>err.b &&
	test_must_fail wait $pid &&
	grep "disagree" err.a &&
	grep "disagree" err.b &&
	test_must_fail canopy kvs get bad.a
'
test_expect_success 'a late joiner of a finished fence gets an error' '
	canopy kvs fence once 1 once.a=1 &&
	test_must_fail canopy kvs fence once 1 once.b=1 2>err &&
	grep "already complete" err
'
test_expect_success 'a participant that disconnects fails the fence for the others' '
	canopy kvs --rank 5 fence dis 3 dis.a=1 2>err.dis &
	pid=$! &&
	sleep 0.3 &&
	{ canopy kvs --rank 7 fence dis 3 dis.b=1 2>err.dis2 & } &&
	pid2=$! &&
	sleep 0.3 &&
	kill -9 $pid2 &&
	test_must_fail wait $pid &&
	grep "disconnected" err.dis
'
test_expect_success 'fence abort (as a launcher would) fails the participants' '
	canopy kvs --rank 6 fence ab 2 ab.a=1 2>err.ab &
	pid=$! &&
	sleep 0.3 &&
	rpc --rank 0 kvs.fence-abort "{\"name\":\"ab\",\"errnum\":5}" &&
	test_must_fail wait $pid &&
	grep "aborted" err.ab
'
test_expect_success 'fence-status: an open fence shows who has joined' '
	canopy kvs --rank 5 fence st 2 st.a=1 &
	pid=$! &&
	for i in $(seq 50); do
		canopy kvs fence-status st >st.open 2>/dev/null && break
		sleep 0.1
	done &&
	grep "st: open, 1 of 2 joined" st.open &&
	canopy kvs fence-status -j st | jq -e ".state == \"open\" and .count == 1" &&
	canopy kvs --rank 3 fence st 2 st.b=1 &&
	wait $pid
'
test_expect_success 'fence-status: a complete fence, in words and as JSON' '
	canopy kvs fence-status st >st.done &&
	grep "st: complete, 2 participants" st.done &&
	grep "after the first contribution reached rank 0" st.done &&
	canopy kvs fence-status --json st >st.json &&
	jq -e ".state == \"complete\" and .nprocs == 2 and .errnum == 0
	       and .first > 0 and .first <= .ready and .ready <= .decided" st.json
'
test_expect_success 'fence-status: a failed fence gives its error' '
	canopy kvs fence-status ab >ab.status &&
	grep "ab: failed: .*aborted" ab.status
'
test_expect_success 'fence-status: an unknown fence, and a rank other than 0' '
	test_must_fail canopy kvs fence-status nosuch 2>err.ns &&
	grep "no such fence" err.ns &&
	test_must_fail rpc --rank 3 kvs.fence-status "{\"name\":\"st\"}" 2>err.r3 &&
	grep "answered by rank 0" err.r3 &&
	test_must_fail rpc --rank 0 kvs.fence-status "{}" 2>err.bad &&
	grep "malformed" err.bad
'
test_expect_success 'no KVS requests are left pending on any rank' '
	for r in $(seq 0 15); do
		rpc --rank $r kvs.stats >stats.$r &&
		grep "\"pending-requests\": *0" stats.$r || return 1
	done
'
test_done
