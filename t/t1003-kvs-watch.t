#!/bin/sh
test_description='KVS watch and wait_version'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2

test_expect_success 'wait unblocks after commits' '
	v=$(canopy kvs version) &&
	{ canopy kvs --rank 3 wait $((v + 2)) & } &&
	pid=$! &&
	canopy kvs put wv.a=1 &&
	canopy kvs put wv.b=2 &&
	wait $pid
'
test_expect_success 'watch sees every change, on another rank' '
	canopy kvs --rank 2 watch -c 6 w.key >watch.out &
	pid=$! &&
	sleep 0.5 &&
	for i in 1 2 3 4; do canopy kvs put w.key=$i || return 1; sleep 0.1; done &&
	canopy kvs unlink w.key &&
	wait $pid &&
	printf "(absent)\n1\n2\n3\n4\n(absent)\n" >watch.exp &&
	test_cmp watch.exp watch.out
'
test_expect_success 'a watcher that disconnects is cleaned up' '
	canopy kvs --rank 1 watch w.gone >/dev/null &
	pid=$! &&
	sleep 0.3 &&
	kill $pid &&
	wait $pid;
	sleep 0.3 &&
	rpc --rank 1 kvs.stats >stats &&
	grep "\"watchers\": *0" stats
'
test_expect_success 'no KVS requests are left pending on any rank' '
	for r in 0 1 2 3; do
		rpc --rank $r kvs.stats >stats.$r &&
		grep "\"pending-requests\": *0" stats.$r || return 1
	done
'
test_done
