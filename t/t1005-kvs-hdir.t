#!/bin/sh
test_description='hashed directories: conversion, lookup, unlink, listing, watch, bytes moved'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2

# the stored object a directory key refers to (dir or hdir)
dirobj () {
	ref=$(rpc kvs.lookup "{\"key\":\"$1\",\"flags\":4}" | grep -o "sha256-[0-9a-f]*") &&
	rpc content.load "$ref"
}

test_expect_success 'a directory at the threshold (128) stays a plain dir' '
	for i in $(seq 1 128); do echo "h1.k$i=$i"; done >kv &&
	canopy kvs put $(cat kv) &&
	dirobj h1 | grep "\"type\":\"dir\""
'
test_expect_success 'one more entry turns it into an hdir' '
	canopy kvs put h1.k129=129 &&
	dirobj h1 >obj &&
	grep "\"type\":\"hdir\"" obj &&
	grep "\"count\":129" obj
'
# a KAP round's directory: 120 short names of directory references
# (~13 KiB) is one plain directory, which a setroot can carry whole
test_expect_success 'a directory of 120 references under hdir-bytes stays plain' '
	for i in $(seq 1 120); do echo "plain.run$i.k=$i"; done >plain.kv &&
	canopy kvs put $(cat plain.kv) &&
	dirobj plain >plain.obj &&
	grep "\"type\":\"dir\"" plain.obj &&
	test $(wc -c <plain.obj) -gt 8192 &&
	test "$(canopy kvs --rank 3 get plain.run99.k)" = 99
'
# 120 entries of ~170 bytes: a long name and a directory reference
P=-a-name-long-enough-to-pass-the-byte-bound-of-16k
test_expect_success 'fewer entries but over hdir-bytes (16384) also make an hdir (regression: never primed)' '
	for i in $(seq 1 120); do echo "ns.run$i$P.k=$i"; done >ns.kv &&
	canopy kvs put $(cat ns.kv) &&
	dirobj ns >ns.obj &&
	grep "\"type\":\"hdir\"" ns.obj &&
	grep "\"count\":120" ns.obj &&
	test "$(canopy kvs --rank 3 get ns.run77$P.k)" = 77 &&
	test $(canopy kvs ls ns | wc -l) = 120
'
test_expect_success 'a collective fence into it primes a leaf: its get loads nothing' '
	canopy kvs --rank 3 wait $(canopy kvs version) &&
	before=$(rpc --rank 3 kvs.stats | grep -o "\"load-bytes\": *[0-9]*" | grep -o "[0-9]*$") &&
	{ canopy kvs --rank 1 fence nsf 2 ns.run121$P.k=121 & } &&
	pid=$! &&
	canopy kvs --rank 2 fence nsf 2 ns.run122$P.k=122 &&
	wait $pid &&
	canopy kvs --rank 3 wait $(canopy kvs version) &&
	test "$(canopy kvs --rank 3 get ns.run121$P.k)" = 121 &&
	test "$(canopy kvs --rank 3 get ns.run122$P.k)" = 122 &&
	after=$(rpc --rank 3 kvs.stats | grep -o "\"load-bytes\": *[0-9]*" | grep -o "[0-9]*$") &&
	echo "loaded $((after - before)) bytes" &&
	test $((after - before)) = 0
'
test_expect_success 'every key reads back, from another rank' '
	for i in 1 17 64 128 129; do
		test "$(canopy kvs --rank 3 get h1.k$i)" = $i || return 1
	done
'
test_expect_success 'listing is complete and in sorted order' '
	canopy kvs ls h1 >ls &&
	test $(wc -l <ls) = 129 &&
	sort ls >ls.sorted &&
	test_cmp ls.sorted ls
'
test_expect_success 'unlink inside an hdir' '
	canopy kvs unlink h1.k64 &&
	test_must_fail canopy kvs get h1.k64 &&
	test $(canopy kvs ls h1 | wc -l) = 128 &&
	dirobj h1 | grep "\"count\":128"
'
test_expect_success 'a put changes only its own bucket' '
	dirobj h1 >before &&
	canopy kvs put h1.k5=changed &&
	dirobj h1 >after &&
	tr "," "\n" <before | grep -c sha256 >nb &&
	diff before after | grep -c "^[<>]" >nd &&
	test $(cat nd) = 2
'
test_expect_success 'watch a key inside an hdir' '
	canopy kvs --rank 2 wait $(canopy kvs version) &&
	{ timeout 60 canopy kvs --rank 2 watch -c 3 h1.k7 >w.out & } &&
	pid=$! &&
	wait_lines w.out 1 &&
	canopy kvs put h1.k7=a &&
	wait_lines w.out 2 &&
	canopy kvs put h1.k7=b &&
	wait $pid &&
	printf "7\na\nb\n" >w.exp &&
	test_cmp w.exp w.out
'
test_expect_success 'a 100000-entry directory in one commit' '
	awk "BEGIN { for (i = 0; i < 100000; i++) print \"big.k\" i \"=v\" i }" >big.kv &&
	xargs -n 20000 canopy kvs put <big.kv &&
	test "$(canopy kvs get big.k99999)" = v99999
'
test_expect_success 'reading one key of it from a leaf moves a few KiB' '
	canopy kvs dropcache --all &&
	rpc --rank 3 content.dropcache >/dev/null &&
	rpc --rank 1 content.dropcache >/dev/null &&
	before=$(rpc --rank 3 kvs.stats | grep -o "\"load-bytes\": *[0-9]*" | grep -o "[0-9]*$") &&
	test "$(canopy kvs --rank 3 get big.k54321)" = v54321 &&
	after=$(rpc --rank 3 kvs.stats | grep -o "\"load-bytes\": *[0-9]*" | grep -o "[0-9]*$") &&
	moved=$((after - before)) &&
	echo "moved $moved bytes" &&
	test $moved -lt 16384
'
test_expect_success 'the listing of the big directory is complete' '
	test $(canopy kvs ls big | wc -l) = 100000
'
test_expect_success 'listing it right after every cache was dropped (regression: broker and KVS module blocked sending to each other)' '
	canopy kvs dropcache --all &&
	test $(canopy kvs ls big | wc -l) = 100000 &&
	canopy kvs dropcache --all &&
	test $(canopy kvs --rank 3 ls big | wc -l) = 100000
'
test_expect_success 'no KVS requests are left pending' '
	for r in 0 1 2 3; do
		rpc --rank $r kvs.stats | grep "\"pending-requests\": *0" || return 1
	done
'
test_done
