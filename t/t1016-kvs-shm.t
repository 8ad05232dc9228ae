#!/bin/sh
test_description='KVS shared read cache: local clients read values from the memory their KVS module publishes

Each KVS module publishes its root and the objects it holds in a memory
segment that it hands to local clients (of the owner, or of guests who may read) through the
socket PATH-kvs-shm; their plain value gets are resolved there without a
message, and anything not found there is asked of the KVS as before.
Checked: the socket and counters; hits on every rank, through plain
directories, hdirs, multi-chunk values and an empty value, with the
answers of CANOPY_KVS_SHM=0; misses (absent keys, directories, symlinks,
bad keys) answered by the KVS with the same errors; read-your-writes; a
fence primes every rank; resets of a small segment; the module unloaded
and loaded again under a reading client; kvs.shm-size=0 and bad sizes.'

. $(dirname $0)/sharness.sh

test_under_canopy 3 2

# A counter of rank R's segment (default 0)
shm () {
	canopy kvs --rank ${2:-0} stats | jq -r ".shm.\"$1\""
}
# The counter NAME from kvs-read's last line in FILE
count () {
	tail -n 1 $2 | tr " " "\n" | sed -n "s/^$1=//p"
}

test_expect_success 'every KVS module publishes a segment beside its broker' '
	rundir=$(canopy getattr rundir) &&
	test -S $rundir/local-0-kvs-shm &&
	test -S $rundir/local-2-kvs-shm &&
	test $(shm size) -eq 8388608 &&
	test $(shm size 2) -eq 8388608
'
test_expect_success 'a get after a put is read from the segment on rank 0' '
	canopy kvs put s.a=1 s.b=hello &&
	l0=$(canopy kvs stats | jq .counters.lookups) &&
	kvs-read s.a s.b >r0.out &&
	cat r0.out &&
	grep "^s.a=1$" r0.out && grep "^s.b=hello$" r0.out &&
	test $(count hits r0.out) -eq 2 &&
	test $(count rpc r0.out) -eq 0 &&
	test $(count attached r0.out) -eq 1 &&
	test $(canopy kvs stats | jq .counters.lookups) -eq $l0
'
test_expect_success 'on another rank the first get loads, then the segment answers' '
	on_rank 2 kvs-read s.a >r2a.out &&
	on_rank 2 kvs-read s.a s.b >r2b.out &&
	cat r2a.out r2b.out &&
	grep "^s.a=1$" r2b.out &&
	test $(count hits r2b.out) -eq 2 &&
	test $(count rpc r2b.out) -eq 0
'
test_expect_success 'kvs_read_attach attaches before any get, or says why not' '
	kvs-read --attach s.a >ra.out &&
	cat ra.out &&
	grep "^attach: ok" ra.out &&
	test $(count hits ra.out) -eq 1 &&
	test $(count attaches ra.out) -eq 1 &&
	CANOPY_KVS_SHM=0 kvs-read --attach s.a >ra0.out &&
	grep "^attach: 2 No such file or directory" ra0.out &&
	test $(count rpc ra0.out) -eq 1
'
test_expect_success 'hdir, multi-chunk and empty values read the same either way' '
	for i in $(seq 300); do echo "s.h.k$i=v$i"; done >puts &&
	canopy kvs put $(cat puts) &&
	canopy kvs put s.big=$(head -c 100000 /dev/zero | tr "\\0" x) s.empty= &&
	keys="s.h.k1 s.h.k77 s.h.k300 s.big s.empty s.a" &&
	kvs-read $keys >rs.out &&
	kvs-read $keys >rs2.out &&
	CANOPY_KVS_SHM=0 kvs-read $keys >rr.out &&
	head -n -1 rs2.out >rs2.vals && head -n -1 rr.out >rr.vals &&
	test_cmp rr.vals rs2.vals &&
	grep "^s.h.k77=v77$" rs2.vals &&
	grep "^s.empty=$" rs2.vals &&
	test $(grep "^s.big=" rs2.vals | wc -c) -eq $((100000 + 7)) &&
	test $(count hits rs2.out) -eq 6 &&
	test $(count hits rr.out) -eq 0 &&
	test $(count rpc rr.out) -eq 6 &&
	test $(count attaches rr.out) -eq 0
'
test_expect_success 'misses are asked of the KVS, with its errors' '
	canopy kvs link s.a s.ln &&
	kvs-read s.ln >ln.out &&
	grep "^s.ln=1$" ln.out &&
	test $(count misses ln.out) -eq 1 &&
	test $(count rpc ln.out) -eq 1 &&
	for k in s.none s.h s "" s.a.x; do
		test_must_fail canopy kvs get "$k" 2>e.shm &&
		test_must_fail env CANOPY_KVS_SHM=0 canopy kvs get "$k" 2>e.rpc &&
		test_cmp e.rpc e.shm || return 1
	done
'
test_expect_success 'read-your-writes: each get after a commit sees that commit' '
	kvs-read --rw 300 s.rw >rw.out &&
	cat rw.out &&
	test $(count hits rw.out) -ge 290 &&
	on_rank 1 kvs-read --rw 100 s.rw1 >rw1.out &&
	cat rw1.out
'
test_expect_success 'after a collective fence every rank reads the new values at once' '
	{ on_rank 1 canopy kvs fence s.f 2 s.f.one=1 & } && pid=$! &&
	on_rank 2 canopy kvs fence s.f 2 s.f.two=2 &&
	wait $pid &&
	on_rank 1 kvs-read s.f.two >f1.out &&
	on_rank 2 kvs-read s.f.one >f2.out &&
	cat f1.out f2.out &&
	grep "^s.f.two=2$" f1.out && grep "^s.f.one=1$" f2.out &&
	test $(count hits f1.out) -eq 1 &&
	test $(count hits f2.out) -eq 1
'
test_expect_success 'a KVS stats request shows what was published and handed out' '
	canopy kvs stats | jq -e ".shm.puts > 0 and .shm.objects > 0 and .shm.attaches > 0
		and .shm.used > 0 and .shm.arena < .shm.size and .shm.refused == 0"
'
test_expect_success 'unloading the module closes the segment under a reading client' '
	rundir=$(canopy getattr rundir) &&
	rm -f go &&
	{ on_rank 2 kvs-read --until go s.a s.b >rl.out & } && pid=$! &&
	wait_lines rl.out 2 &&
	on_rank 2 canopy module remove kvs &&
	i=0 && while test -e $rundir/local-2-kvs-shm; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done &&
	n=$(wc -l <rl.out) && wait_lines rl.out $((n + 2)) &&
	on_rank 2 canopy module load kvs &&
	i=0 && while ! grep -q "attaches=2" rl.out; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done &&
	touch go &&
	wait $pid &&
	tail -n 3 rl.out &&
	grep "^s.b=hello$" rl.out &&
	test $(count attaches rl.out) -eq 2 &&
	test $(count attached rl.out) -eq 1
'
test_expect_success 'a killed broker: its clients stop reading the segment it left' '
	rm -f kuri kgo &&
	test_when_finished "touch kgo" &&
	{ canopy start -n 1 -- sh -c "canopy kvs put k.x=1 &&
		canopy getattr local-uri >kuri.tmp && mv kuri.tmp kuri &&
		while ! test -e kgo; do sleep 0.1; done" &
	} && spid=$! &&
	i=0 && while ! test -s kuri; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done &&
	bpid=$(CANOPY_URI=$(cat kuri) canopy getattr broker.pid) &&
	{ CANOPY_URI=$(cat kuri) kvs-read --until kgo k.x >killed.out & } && rpid=$! &&
	wait_lines killed.out 2 &&
	grep "attaches=1" killed.out &&
	kill -9 $bpid &&
	i=0 && while ! grep -q "^k.x: " killed.out; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done &&
	touch kgo &&
	test_must_fail wait $rpid &&
	tail -n 2 killed.out | grep "^k.x: " &&
	{ wait $spid || :; }
'
test_expect_success 'a small segment starts over when full, and reads stay right' '
	canopy start -n 1 -S kvs.shm-size=64k -- sh -c "
		for i in \$(seq 40); do
			canopy kvs put r.\$i=\$(head -c 9000 /dev/zero | tr \"\\\\0\" \$((i % 10))) ||
				exit 1
		done &&
		kvs-read r.1 r.40 r.1 r.40 >rsmall.out &&
		canopy kvs stats | jq .shm >rsmall.json" &&
	cat rsmall.json &&
	jq -e ".resets > 0 and .size == 65536" rsmall.json &&
	test $(grep -c "^r.40=0000" rsmall.out) -eq 2 &&
	test $(grep -c "^r.1=1111" rsmall.out) -eq 2
'
test_expect_success 'kvs.shm-size=0: no segment, gets are requests' '
	canopy start -n 1 -S kvs.shm-size=0 -- sh -c "
		test ! -e \$(canopy getattr rundir)/local-0-kvs-shm &&
		canopy kvs put x=1 &&
		kvs-read x >noshm.out &&
		canopy kvs stats | jq -e \".shm == null\"" &&
	grep "^x=1$" noshm.out &&
	test $(count hits noshm.out) -eq 0 &&
	test $(count rpc noshm.out) -eq 1
'
test_expect_success 'a size too small for a segment keeps the module from loading, saying why' '
	test_must_fail canopy start -n 1 -S kvs.shm-size=1000 -- true 2>bad.err;
	cat bad.err &&
	grep "kvs: option shm-size=1000: expected 0 (off) or from 65536" bad.err
'
test_done
