#!/bin/sh
test_description='KVS basics: typed values, large and binary values, directories, symlinks'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2

test_expect_success 'the C API: typed round trips, write-back, dirs, symlinks' '
	kvs-api api >api.out &&
	grep "^1\.\." api.out
'
test_expect_success 'put and get a string' '
	canopy kvs put test.a=hello &&
	test "$(canopy kvs get test.a)" = hello
'
test_expect_success 'put several keys in one atomic commit' '
	v0=$(canopy kvs version) &&
	canopy kvs put test.m1=1 test.m2=2 test.m3=3 &&
	v1=$(canopy kvs version) &&
	test $v1 -eq $((v0 + 1)) &&
	test "$(canopy kvs get test.m1 test.m2 test.m3 | tr "\n" " ")" = "1 2 3 "
'
test_expect_success 'JSON values' '
	canopy kvs put -j test.j="{\"x\":[1,2]}" &&
	canopy kvs get -j test.j >j.out &&
	grep "\"x\"" j.out &&
	test_must_fail canopy kvs put -j test.bad="not json"
'
test_expect_success 'an empty value' '
	canopy kvs put test.empty= &&
	canopy kvs get -r test.empty >empty.out &&
	test ! -s empty.out
'
test_expect_success 'a 3 MiB binary value round-trips, read from another rank' '
	dd if=/dev/urandom of=big.bin bs=1024 count=3072 2>/dev/null &&
	canopy kvs put -r test.big=- <big.bin &&
	canopy kvs --rank 3 get -r test.big >big.out &&
	cmp big.bin big.out
'
test_expect_success 'a 1 MiB value of identical chunks is stored as one chunk' '
	head -c 1048576 /dev/zero >zeros.bin &&
	canopy kvs put -r test.zeros=- <zeros.bin &&
	canopy kvs get -r test.zeros | cmp - zeros.bin &&
	rpc kvs.lookup "{\"key\":\"test.zeros\",\"flags\":4}" >zeros.treeobj &&
	test $(grep -o "sha256-[0-9a-f]*" zeros.treeobj | sort -u | wc -l) = 1
'
test_expect_success 'keys with the characters MPI uses' '
	canopy kvs put "pmi.-bcast-1-0=a" "pmi.hostname[3]=b" "pmi.x-seg-1/2=c" &&
	test "$(canopy kvs get pmi.-bcast-1-0)" = a &&
	test "$(canopy kvs get "pmi.hostname[3]")" = b &&
	test "$(canopy kvs get pmi.x-seg-1/2)" = c
'
test_expect_success 'directories: ls, ls -R, dir' '
	canopy kvs put d.x.y=1 d.x.z=2 d.w=3 &&
	canopy kvs ls d >ls.out &&
	printf "w\nx.\n" >ls.exp &&
	test_cmp ls.exp ls.out &&
	canopy kvs ls -R d >lsr.out &&
	grep "  y" lsr.out &&
	canopy kvs dir -R d >dir.out &&
	grep "d.x.z = 2" dir.out
'
test_expect_success 'a directory read as a value is EISDIR, a value as a dir ENOTDIR' '
	test_must_fail canopy kvs get d 2>err1 &&
	grep "is a directory" err1 &&
	test_must_fail canopy kvs ls d.w 2>err2 &&
	grep "not a directory" err2 &&
	test_must_fail canopy kvs get d.w.q 2>err3 &&
	grep "not a directory" err3
'
test_expect_success 'a missing key is ENOENT' '
	test_must_fail canopy kvs get no.such.key 2>err &&
	grep "no such key" err
'
test_expect_success 'mkdir makes an empty directory' '
	canopy kvs mkdir emptydir &&
	canopy kvs ls emptydir >out &&
	test ! -s out
'
test_expect_success 'unlink a key; unlink refuses a non-empty dir without -R' '
	canopy kvs unlink d.w &&
	test_must_fail canopy kvs get d.w &&
	test_must_fail canopy kvs unlink d 2>err &&
	grep "not empty" err &&
	canopy kvs unlink -R d &&
	test_must_fail canopy kvs ls d &&
	canopy kvs unlink -f no.such.key
'
test_expect_success 'putting through a value replaces it with a directory' '
	canopy kvs put over=1 &&
	canopy kvs put over.sub=2 &&
	test "$(canopy kvs get over.sub)" = 2
'
test_expect_success 'symlinks: follow, readlink, dangling, cycles, intermediate' '
	canopy kvs put target.leaf=42 &&
	canopy kvs link target alias &&
	test "$(canopy kvs get alias.leaf)" = 42 &&
	test "$(canopy kvs readlink alias)" = target &&
	canopy kvs link nowhere dangling &&
	test_must_fail canopy kvs get dangling 2>err &&
	grep "no such key" err &&
	canopy kvs link cyc2 cyc1 &&
	canopy kvs link cyc1 cyc2 &&
	test_must_fail canopy kvs get cyc1 2>err &&
	grep "too many levels" err
'
test_expect_success 'a put through an intermediate symlink lands in the target' '
	canopy kvs put alias.new=7 &&
	test "$(canopy kvs get target.new)" = 7
'
test_expect_success 'a write on rank 3 is visible on rank 3 at once (read-your-writes)' '
	for i in $(seq 1 20); do
		canopy kvs --rank 3 put ryw=$i &&
		test "$(canopy kvs --rank 3 get ryw)" = $i || return 1
	done
'
test_expect_success 'versions move forward; wait returns at once for old versions' '
	v=$(canopy kvs version) &&
	canopy kvs wait $v &&
	canopy kvs --rank 2 wait $v
'
test_expect_success 'bad keys are refused' '
	test_must_fail canopy kvs put "$(printf "a\001b")=x" 2>err &&
	long=$(head -c 5000 /dev/zero | tr "\\0" a) &&
	test_must_fail canopy kvs get $long 2>err &&
	grep -i "too long" err &&
	test_must_fail canopy kvs put $long=1
'
test_expect_success 'malformed kvs.lookup payloads get EPROTO, oversized keys ENAMETOOLONG' '
	test_must_fail rpc kvs.lookup "{\"flags\":0}" 2>noKey.err &&
	grep "malformed kvs.lookup" noKey.err &&
	test_must_fail rpc kvs.lookup 2>noPayload.err &&
	grep "malformed kvs.lookup" noPayload.err &&
	test_must_fail rpc kvs.lookup "{\"key\":7}" 2>badKey.err &&
	grep "malformed kvs.lookup" badKey.err &&
	long=$(head -c 5000 /dev/zero | tr "\0" a) &&
	test_must_fail rpc kvs.lookup "{\"key\":\"$long\"}" 2>long.err &&
	grep "key too long" long.err &&
	test "$(rpc kvs.lookup "{ \"flags\" : 0 , \"key\" : \"test.a\" }")" = "$(canopy kvs get -r test.a)"
'
test_expect_success 'dropcache on every rank, then read everything back' '
	canopy kvs dropcache --all &&
	canopy kvs --rank 3 get -r test.big | cmp - big.bin &&
	test "$(canopy kvs --rank 1 get target.leaf)" = 42
'
test_expect_success 'no KVS requests are left pending on any rank' '
	for r in 0 1 2 3; do
		rpc --rank $r kvs.stats >stats.$r &&
		grep "\"pending-requests\": *0" stats.$r || return 1
	done
'
test_expect_success 'stats, version and dropcache refuse arguments they do not take' '
	# regression: "kvs stats -r 3" printed the local broker counters
	test_must_fail canopy kvs stats -r 3 2>stats-r.err &&
	grep "unexpected argument .-r. (use --rank=R" stats-r.err &&
	test_must_fail canopy kvs version 3 2>version.err &&
	grep "version: unexpected argument .3." version.err &&
	test_must_fail canopy kvs dropcache --all x 2>dropcache.err &&
	grep "dropcache: unexpected argument .x." dropcache.err &&
	canopy kvs stats --rank=3 | grep "\"rank\": 3"
'
test_expect_success 'mkdir, link and readlink refuse options they do not take' '
	# regression: "kvs mkdir -r 1 a" made keys "-r" and "1" on the local broker
	test_must_fail canopy kvs mkdir -r 1 optdir 2>mkdir.err &&
	grep "mkdir: unexpected argument .-r. (use --rank=R" mkdir.err &&
	test_must_fail canopy kvs ls -- -r 2>/dev/null &&
	test_must_fail canopy kvs ls optdir 2>/dev/null &&
	test_must_fail canopy kvs link -r optdir 2>link.err &&
	grep "link: unexpected argument .-r." link.err &&
	test_must_fail canopy kvs readlink optdir -x 2>readlink.err &&
	grep "readlink: unexpected argument .-x." readlink.err &&
	canopy kvs mkdir -- -optdir &&
	canopy kvs ls | grep "^-optdir\.$" &&
	canopy kvs unlink -- -optdir
'
test_expect_success 'a trailing --rank without a value is an error' '
	test_must_fail canopy kvs mkdir optdir2 --rank 2>rank.err &&
	grep "option .--rank. requires an argument" rank.err &&
	test_must_fail canopy kvs ls optdir2 2>/dev/null
'
test_done
