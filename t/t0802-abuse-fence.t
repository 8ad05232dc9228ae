#!/bin/sh
test_description='fence abuse: per-user cap, nprocs limits, malformed headers (T14)

A user may hold kvs.max-pending open fences (here 16); more are refused
with EAGAIN while other users are unaffected; the cap is released when the
fences end.  nprocs above kvs.max-nprocs (here 64) is refused, and headers
whose integers do not fit are malformed.  Mismatched nprocs is covered by
t1001-kvs-fence.t and the timeout by t0803 and t1004.'

. $(dirname $0)/sharness.sh

test_under_canopy 2 2 -S kvs.max-pending=16 -S kvs.max-nprocs=64

S=$(canopy getattr rundir)/local-0

field () {
	sed -n "s/^$1 //p" "$2"
}

# Wait until rank 0 has no open fence (the ones of a closed connection fail
# asynchronously).  Bounded so that a bug fails the test instead of hanging.
wait_no_fences () {
	n=0
	while ! rpc kvs.stats | grep -q "\"open\": *0,"; do
		n=$((n + 1))
		test $n -lt 1200 || return 1
		sleep 0.1
	done
}

# The brokers' own start-up commits (resource.rank.R) are the owner's too:
# one still open when the 20 arrive would take a slot of the 16.
test_expect_success 'one user opening 20 fences: 16 stay open, 4 get EAGAIN' '
	kvs_settled &&
	sockabuse fences 20 cap 2 4 $S >cap.out &&
	cat cap.out &&
	test $(field refused-EAGAIN cap.out) = 4 &&
	grep "\"open\":16," cap.out
'
test_expect_success 'the refusal says why, and killing the holders releases the cap' '
	wait_no_fences &&
	pids="" &&
	for i in $(seq 1 16); do
		canopy kvs fence hold.$i 2 2>/dev/null &
		pids="$pids $!"
	done &&
	n=0 &&
	while ! rpc kvs.stats | grep -q "\"open\": *16,"; do
		n=$((n + 1)) && test $n -lt 1200 || return 1
		sleep 0.1
	done &&
	test_must_fail canopy kvs fence one.more 2 2>err &&
	grep "too many open fences for this user" err &&
	kill $pids &&
	wait_no_fences &&
	sockabuse fences 16 after.kill 2 0 $S >after.out &&
	test $(field refused-EAGAIN after.out) = 0
'
test_expect_success 'the cap is per user: another user is not refused' '
	wait_no_fences &&
	sockabuse fences --as 4242 16 other 2 0 $S >other.out &&
	cat other.out &&
	test $(field refused-EAGAIN other.out) = 0 &&
	grep "\"open\":16," other.out
'
test_expect_success 'closing the connection fails its fences and releases the cap' '
	wait_no_fences &&
	sockabuse fences 16 again 2 0 $S >again.out &&
	test $(field refused-EAGAIN again.out) = 0
'
test_expect_success 'a name refused with EAGAIN fails every participant' '
	wait_no_fences &&
	sockabuse fences 17 dead 2 1 $S >dead.out &&
	test $(field refused-EAGAIN dead.out) = 1 &&
	wait_no_fences &&
	test_must_fail canopy kvs fence dead.16 2 2>err &&
	grep "too many open fences" err
'
test_expect_success 'nprocs above kvs.max-nprocs is refused' '
	test_must_fail canopy kvs fence huge 65 huge.a=1 2>err &&
	grep "nprocs is too large" err &&
	test_must_fail canopy kvs fence huger 1000000000 2>err &&
	grep "nprocs is too large" err &&
	test_must_fail canopy kvs get huge.a
'
fence_hdr () {
	echo "{\"fences\":[{\"name\":\"$1\",\"nprocs\":$2,\"flags\":0,\"count\":$3,\"ops\":[]}],\"blobs\":[]}"
}
test_expect_success 'nprocs 0 or negative is a malformed header' '
	sockabuse kvswire kvs.fence "$(fence_hdr z 0 1)" $S >z.out &&
	grep "^error 71: malformed transaction header" z.out &&
	sockabuse kvswire kvs.fence "$(fence_hdr n -3 1)" $S >n.out &&
	grep "^error 71: malformed transaction header" n.out
'
# Regression: 2^32+5 was read as 5 through a truncating int conversion.
test_expect_success 'nprocs that does not fit an int is a malformed header' '
	sockabuse kvswire kvs.fence "$(fence_hdr w 4294967301 1)" $S >w.out &&
	grep "^error 71: malformed transaction header" w.out &&
	sockabuse kvswire kvs.fence "$(fence_hdr w2 2147483648 1)" $S >w2.out &&
	grep "^error 71: malformed transaction header" w2.out
'
test_expect_success 'a client cannot stand for more than one participant' '
	sockabuse kvswire kvs.fence "$(fence_hdr c 8 4)" $S >c.out &&
	grep "^error 71: malformed transaction" c.out &&
	sockabuse kvswire kvs.fence "$(fence_hdr c2 8 9)" $S >c2.out &&
	grep "^error 71: malformed transaction header" c2.out
'
test_expect_success 'two fences in one request are refused' '
	sockabuse kvswire kvs.fence "{\"fences\":[{\"name\":\"a\",\"nprocs\":2,\"flags\":0,\"count\":1,\"ops\":[]},{\"name\":\"b\",\"nprocs\":2,\"flags\":0,\"count\":1,\"ops\":[]}],\"blobs\":[]}" $S >two.out &&
	grep "^error 71: one transaction per request" two.out
'
# Regression: fence contributions were relayed with the userid as a JSON
# int cast from uid_t, so a uid of 2^31 or more went negative and the
# relay was dropped as malformed (the fence hung) or the uid was lost.
test_expect_success 'a fence of a user with a uid above 2^31 completes across ranks' '
	S1=$(canopy getattr rundir)/local-1 &&
	timeout 60 sockabuse fences --as 4294967294 1 bigu 2 1 $S1 >bigu.1 &
	pid=$! &&
	timeout 60 sockabuse fences --as 4294967294 1 bigu 2 1 $S >bigu.0 &&
	wait $pid &&
	test $(field completed bigu.0) = 1 &&
	test $(field completed bigu.1) = 1
'
test_expect_success 'no KVS requests are left pending on any rank' '
	wait_no_fences &&
	for r in 0 1; do
		rpc --rank $r kvs.stats >stats.$r &&
		grep "\"pending-requests\": *0" stats.$r || return 1
	done
'
test_done
