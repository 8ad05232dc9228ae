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
# Wait until rank $1 has $2 watchers (the watch request was handled).
wait_watchers () {
	i=0
	while ! rpc --rank $1 kvs.stats | grep -q "\"watchers\": *$2[,}]"; do
		i=$((i + 1)) && test $i -lt 300 || return 1
		sleep 0.1
	done
}
# A watch starts from the root its broker has: let rank $1 catch up with
# the local broker first.
catch_up () {
	canopy kvs --rank $1 wait $(canopy kvs version)
}
test_expect_success 'watch sees every change, on another rank' '
	{ canopy kvs --rank 2 watch -c 6 w.key >watch.out & } &&
	pid=$! &&
	wait_lines watch.out 1 &&
	for i in 1 2 3 4; do
		canopy kvs put w.key=$i &&
		wait_lines watch.out $((i + 1)) || return 1
	done &&
	canopy kvs unlink w.key &&
	wait $pid &&
	printf "(absent)\n1\n2\n3\n4\n(absent)\n" >watch.exp &&
	test_cmp watch.exp watch.out
'
test_expect_success 'watch -n reports changes only, not the current value' '
	canopy kvs put w.n=0 &&
	catch_up 2 &&
	{ canopy kvs --rank 2 watch -n -c 2 w.n >watchn.out & } &&
	pid=$! &&
	wait_watchers 2 1 &&
	canopy kvs put w.n=1 &&
	wait_lines watchn.out 1 &&
	canopy kvs put w.n=2 &&
	wait $pid &&
	printf "1\n2\n" >watchn.exp &&
	test_cmp watchn.exp watchn.out
'
test_expect_success 'watch --no-initial is the long form of -n' '
	catch_up 2 &&
	{ canopy kvs --rank 2 watch --no-initial -c 1 w.n >watchn2.out & } &&
	pid=$! &&
	wait_watchers 2 1 &&
	canopy kvs put w.n=3 &&
	wait $pid &&
	echo 3 >watchn2.exp &&
	test_cmp watchn2.exp watchn2.out
'
test_expect_success 'a watch of a directory reports its listing when anything below changes' '
	canopy kvs put wd.a=1 &&
	catch_up 3 &&
	{ canopy kvs --rank 3 watch -c 3 wd >watchd.out & } &&
	pid=$! &&
	wait_lines watchd.out 1 &&
	canopy kvs put wd.sub.deep.x=2 &&
	wait_lines watchd.out 2 &&
	canopy kvs put wd.sub.deep.x=3 &&
	wait $pid &&
	test $(grep -c "^{\"data\":.*\"type\":\"dir\",\"ver\":1}\$" watchd.out) -eq 3 &&
	sed -n 1p watchd.out >line1 && sed -n 2p watchd.out >line2 &&
	sed -n 3p watchd.out >line3 &&
	grep "\"a\":" line1 && ! grep "\"sub\":" line1 &&
	grep "\"a\":" line2 && grep "\"sub\":{\"data\":\[\"sha256-" line2 &&
	grep "\"sub\":" line3 && ! test_cmp line2 line3
'
test_expect_success 'a change elsewhere does not report the directory again' '
	catch_up 3 &&
	{ canopy kvs --rank 3 watch -c 2 wd >watchd2.out & } &&
	pid=$! &&
	wait_lines watchd2.out 1 &&
	canopy kvs put other.key=1 &&
	canopy kvs put wd.b=2 &&
	wait $pid &&
	sed -n 1p watchd2.out >d2line1 &&
	! grep "\"b\":" d2line1 &&
	sed -n 2p watchd2.out | grep "\"b\":" &&
	test $(wc -l <watchd2.out) -eq 2
'
test_expect_success 'a value replaced by a directory (one commit) is reported as one' '
	canopy kvs put wk=1 &&
	catch_up 1 &&
	{ canopy kvs --rank 1 watch -c 2 wk >watchk.out & } &&
	pid=$! &&
	wait_lines watchk.out 1 &&
	canopy kvs put wk.x=1 &&
	wait $pid &&
	echo 1 >watchk.line1 &&
	sed -n 1p watchk.out | test_cmp watchk.line1 - &&
	sed -n 2p watchk.out | grep "\"type\":\"dir\"" &&
	sed -n 2p watchk.out | grep "\"x\":"
'
test_expect_success 'a directory that goes away is reported absent' '
	catch_up 1 &&
	{ canopy kvs --rank 1 watch -n -c 1 wd >watchgone.out & } &&
	pid=$! &&
	wait_watchers 1 1 &&
	canopy kvs unlink -R wd &&
	wait $pid &&
	echo "(absent)" >watchgone.exp &&
	test_cmp watchgone.exp watchgone.out
'
test_expect_success 'a watch with unknown flags is refused' '
	test_must_fail rpc kvs.watch "{\"key\":\"w.n\",\"flags\":1}" 2>flags.err &&
	grep "unknown flags" flags.err
'
test_expect_success 'watch usage errors are clear' '
	test_must_fail canopy kvs watch 2>usage.err &&
	grep -i "usage" usage.err &&
	canopy kvs --help >help.out &&
	grep "watch \[-c N\] \[-n\] KEY" help.out
'
test_expect_success 'a watcher that disconnects is cleaned up' '
	{ canopy kvs --rank 1 watch w.gone >watchdis.out & } &&
	pid=$! &&
	wait_lines watchdis.out 1 &&
	wait_watchers 1 1 &&
	kill $pid &&
	{ wait $pid; true; } &&
	wait_watchers 1 0
'
test_expect_success 'no KVS requests are left pending on any rank' '
	for r in 0 1 2 3; do
		rpc --rank $r kvs.stats >stats.$r &&
		grep "\"pending-requests\": *0" stats.$r || return 1
	done
'
test_done
