#!/bin/sh
test_description='kap-crowd: KAP phases from many client handles in one process'

. $(dirname $0)/sharness.sh

test_under_canopy 8 2

KAPCROWD=$SHARNESS_BUILD_DIRECTORY/kap/kap-crowd

test_expect_success 'kap-crowd --help lists its options and KAP'"'"'s' '
	$KAPCROWD --help >help &&
	grep -e "--participants" help &&
	grep -e "--value-size" help
'
test_expect_success 'bad options get a sentence, not a run' '
	test_must_fail $KAPCROWD -N 0 2>err &&
	grep "participants needs a count" err &&
	test_must_fail $KAPCROWD --placement=random 2>err &&
	grep "cyclic or block" err &&
	test_must_fail $KAPCROWD -N 4 -P 9 2>err &&
	test -s err
'
test_expect_success 'one participant per broker by default, every value checked' '
	$KAPCROWD --json=one.json >out &&
	grep "8 procs" out &&
	grep "all 8 values read back were checked and correct" out &&
	jq -e ".ok and .driver == \"crowd\" and .brokers == 8" one.json
'
test_expect_success '512 participants, 4 gets each, 64-byte values' '
	$KAPCROWD -N 512 -p 64 -c 4 -n 1 --json=big.json >out &&
	jq -e ".metrics.get.count == 2048 and .metrics.sync.count == 512" big.json &&
	jq -e ".errors == 0" big.json &&
	jq -e ".sync_timeline.ranks == 512
	       and .sync_timeline.last_enter_to_first_answer_us >= 0
	       and .sync_timeline.last_enter_to_complete_us >= 0
	       and .sync_timeline.complete_to_decided_us >= 0
	       and .sync_timeline.decided_to_first_answer_us >= 0" big.json &&
	grep "of which: .* ms until the fence was complete at rank 0" out
'
test_expect_success '--straggler: the last participant enters the fence that much later' '
	$KAPCROWD -N 16 -n 40 --straggler=50 --json=strag.json >out &&
	jq -e ".config.straggler_ms == 50 and .errors == 0
	       and .sync_timeline.enter_spread_us >= 50000
	       and .sync_timeline.last_enter_to_first_answer_us >= 0" strag.json &&
	t0=$(date +%s%N) &&
	$KAPCROWD -N 1 -n 41 --straggler=300 --json=strag1.json >out &&
	t1=$(date +%s%N) &&
	jq -e ".errors == 0" strag1.json &&
	test $(( (t1 - t0) / 1000000 )) -ge 300 &&
	test_must_fail $KAPCROWD --straggler=-5 2>err &&
	grep "straggler must be from 0 to 60000 milliseconds" err
'
test_expect_success 'unique values over 64 KiB are read back chunked' '
	$KAPCROWD -N 16 -p 100k -n 2 >out &&
	grep "all 16 values read back" out
'
test_expect_success 'redundant values, several directories, block placement' '
	$KAPCROWD -N 64 -e -d 4 --placement=block -n 3 -p 1k >out &&
	grep "redundant values" out &&
	grep "all 64 values read back" out
'
test_expect_success 'producer/consumer subsets and intermediate commits' '
	$KAPCROWD -N 40 -P 10 -C 30 -i 3 -f 1 -j 2 -c 3 -n 4 --json=sub.json >out &&
	jq -e ".metrics.commit.count == 30 and .metrics.get.count == 180" sub.json
'
test_expect_success 'serial commits' '
	$KAPCROWD -N 24 -i 2 -f 1 -t s -n 5 --json=ser.json &&
	jq -e ".metrics.commit.count == 48" ser.json
'
test_expect_success 'causal sync: consumers wait for the published version' '
	$KAPCROWD -N 32 -s c -P 8 -C 24 -n 6 --json=causal.json >out &&
	jq -e ".metrics.sync.count == 32 and .errors == 0" causal.json
'
test_expect_success 'only some brokers, with --progress' '
	$KAPCROWD -N 20 --brokers=3 --progress -n 7 2>err >out &&
	grep "20 participants connected to 3 brokers" err &&
	grep "consumer phase: 20 participants done" err
'
test_expect_success 'the brokers of a --uri-file' '
	for r in 0 5; do rank_uri $r; done >uris &&
	$KAPCROWD -N 10 --uri-file=uris -n 8 --json=uri.json &&
	jq -e ".uris == 2" uri.json
'
test_expect_success 'a missing --uri-file is a clear error' '
	test_must_fail $KAPCROWD -N 8 -n 9 --uri-file=/nonexistent 2>err &&
	grep "cannot open --uri-file" err
'
test_expect_success 'an unwritable --json fails before the run, naming the file' '
	test_must_fail $KAPCROWD -N 8 -n 11 --json=/nonexistent/dir/x.json \
		>out 2>err &&
	grep "cannot write /nonexistent/dir/x.json: No such file or directory" err &&
	test_must_fail grep "participants" out
'
test_expect_success 'a failed run leaves the previous --json document alone' '
	echo previous >keep.json &&
	echo "local://$(pwd)/no-such-broker" >baduris &&
	test_must_fail $KAPCROWD -N 2 -n 12 --uri-file=baduris --json=keep.json \
		2>err &&
	grep "cannot connect" err &&
	test "$(cat keep.json)" = previous &&
	$KAPCROWD -N 8 -n 13 --json=keep.json >out &&
	jq -e ".ok" keep.json &&
	test_must_fail ls keep.json.?????? 2>/dev/null
'
test_expect_success 'a descriptor limit too low for the participants is reported' '
	(ulimit -Sn 300 && ulimit -Hn 300 &&
	 $KAPCROWD -N 90 -n 14 >out 2>err) &&
	grep "90 participants need about 334 descriptors, the limit is 300" err &&
	$KAPCROWD -N 90 -n 15 >out 2>err &&
	test_must_fail grep "descriptors" err
'
test_expect_success 'several keys per iteration, read through rank 0' '
	$KAPCROWD -N 16 -K 4 -c 3 -R 0 -n 10 --json=keys.json &&
	jq -e ".metrics.put.count == 64 and .metrics.get.count == 192 and .errors == 0" keys.json
'
test_expect_success 'no KVS requests are left pending on any rank' '
	for r in 0 1 2 3 4 5 6 7; do
		rpc --rank $r kvs.stats | jq -e ".\"pending-requests\" == 0" || return 1
	done
'
test_done
