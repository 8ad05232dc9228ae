#!/bin/sh
test_description='KVS direct channel: local clients talk to the KVS module on its own socket

Each KVS module listens on PATH-kvs beside its broker'"'"'s socket PATH, and
clients send their kvs.* requests for the local broker there (CANOPY_DIRECT=0
sends them through the broker).  Checked: the socket and the counters, that
answers are the same either way, watches and their end, fences across both
ways, a module unloaded under a waiting client, and a broker started with
CANOPY_DIRECT=0.'

. $(dirname $0)/sharness.sh

test_under_canopy 3 2

# gets ask the KVS here (not the shared read cache, t1016): they are
# what crosses the channel
CANOPY_KVS_SHM=0
export CANOPY_KVS_SHM

# A counter of rank R's channel (default 0); --rank makes this request
# go through the broker, so it counts nothing itself.
direct () {
	canopy kvs --rank ${2:-0} stats | jq -r ".direct.$1"
}
wait_module_gone () {
	i=0
	while on_rank $1 canopy module list | grep -q "^kvs "; do
		i=$((i + 1)) && test $i -lt 300 || return 1
		sleep 0.1
	done
}

test_expect_success 'every KVS module listens beside its broker' '
	rundir=$(canopy getattr rundir) &&
	test -S $rundir/local-0-kvs &&
	test -S $rundir/local-1-kvs &&
	test -S $rundir/local-2-kvs &&
	test "$(direct listening)" = true &&
	test "$(direct listening 2)" = true
'
test_expect_success 'a put and a get go over the channel' '
	a0=$(direct accepted) && r0=$(direct requests) &&
	canopy kvs put d.a=1 &&
	test "$(canopy kvs get d.a)" = 1 &&
	test $(direct accepted) -ge $((a0 + 2)) &&
	test $(direct requests) -ge $((r0 + 2))
'
test_expect_success 'CANOPY_DIRECT=0 goes through the broker, with the same answers' '
	a0=$(direct accepted) &&
	CANOPY_DIRECT=0 canopy kvs put d.b=2 &&
	test "$(CANOPY_DIRECT=0 canopy kvs get d.b)" = 2 &&
	test "$(CANOPY_DIRECT=0 canopy kvs get d.a)" = "$(canopy kvs get d.a)" &&
	canopy kvs get d.b >/dev/null &&
	test $(direct accepted) -eq $((a0 + 2))
'
test_expect_success 'errors come back the same way (ENOENT, bad key)' '
	test_must_fail canopy kvs get d.none 2>e1 &&
	test_must_fail env CANOPY_DIRECT=0 canopy kvs get d.none 2>e2 &&
	test_cmp e1 e2 &&
	test_must_fail canopy kvs get "" 2>e3 &&
	test_must_fail env CANOPY_DIRECT=0 canopy kvs get "" 2>e4 &&
	test_cmp e3 e4
'
test_expect_success 'a fence joins callers of both ways, on two ranks' '
	{ canopy kvs fence d.f 3 d.f.a=1 & } && p1=$! &&
	{ CANOPY_DIRECT=0 canopy kvs fence d.f 3 d.f.b=2 & } && p2=$! &&
	on_rank 2 canopy kvs fence d.f 3 d.f.c=3 &&
	wait $p1 && wait $p2 &&
	test "$(on_rank 1 canopy kvs get d.f.a d.f.b d.f.c | tr "\n" " ")" = "1 2 3 "
'
test_expect_success 'a watch over the channel sees changes' '
	{ on_rank 1 canopy kvs watch -c 2 d.w >watch.out & } && pid=$! &&
	wait_lines watch.out 1 &&
	canopy kvs put d.w=changed &&
	wait $pid &&
	tail -n 1 watch.out | grep changed
'
test_expect_success 'a watcher that goes away is forgotten (kvs.disconnect from the channel)' '
	{ CANOPY_URI=$(rank_uri 2) canopy kvs watch d.w >watch2.out & } && pid=$! &&
	wait_lines watch2.out 1 &&
	test $(canopy kvs --rank 2 stats | jq .watchers) -ge 1 &&
	kill $pid && { wait $pid || :; } &&
	i=0 &&
	while test $(canopy kvs --rank 2 stats | jq .watchers) -ne 0; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done
'
test_expect_success 'unloading a KVS module answers its waiting client and removes the socket' '
	{ on_rank 2 canopy kvs wait 1000000 2>wait.err & } && pid=$! &&
	i=0 &&
	while test "$(canopy kvs --rank 2 stats | jq .\"version-waiters\")" != 1; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done &&
	on_rank 2 canopy module remove kvs &&
	test_must_fail wait $pid &&
	cat wait.err &&
	grep -i -e unloading -e "went away" wait.err &&
	wait_module_gone 2 &&
	test ! -e $(canopy getattr rundir)/local-2-kvs
'
test_expect_success 'without the module, requests go up through the broker' '
	test "$(on_rank 2 canopy kvs get d.a)" = 1
'
test_expect_success 'reloaded, the module listens again' '
	on_rank 2 canopy module load kvs &&
	i=0 &&
	while ! test -S $(canopy getattr rundir)/local-2-kvs; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done &&
	test "$(on_rank 2 canopy kvs get d.a)" = 1 &&
	test $(direct accepted 2) -ge 1
'
test_expect_success 'a broker started with CANOPY_DIRECT=0 has no channel' '
	CANOPY_DIRECT=0 canopy start -n 2 -- sh -c "
		test ! -e \$(canopy getattr rundir)/local-0-kvs &&
		canopy kvs put x=1 && test \"\$(canopy kvs get x)\" = 1 &&
		canopy kvs stats | jq -e \".direct.listening == false\""
'
test_expect_success 'out of descriptors, the broker and the KVS pause accepting, then serve again' '
	cat >emfile.sh <<-\EOF &&
	ulimit -n 64 || exit 0
	exec canopy start -n 1 -- sh -c "
		canopy kvs put w=0 &&
		pids= &&
		for i in \$(seq 30); do
			canopy kvs watch w >emw.\$i 2>&1 & pids=\"\$pids \$!\"
		done &&
		sleep 2 &&
		kill \$pids && wait &&
		canopy kvs put w=1 &&
		canopy kvs get w >emfile.get &&
		canopy dmesg >emfile.log"
	EOF
	sh emfile.sh &&
	test "$(cat emfile.get)" = 1 &&
	test $(cat emw.* | grep -c "^0") -ge 1 &&
	n=$(grep -c "accept: Too many open files (retrying" emfile.log) &&
	echo "$n starved episodes logged" &&
	test $n -ge 1 && test $n -le 10 &&
	grep "accepting again after [0-9]* pauses" emfile.log
'
test_done
