#!/bin/sh
test_description='fence internals: self-clocked relays, ops merged as text, setroot priming

The values of a collective fence follow its setroot in a kvs.prime
event; until it comes a broker holds the value loads its lookups would
start (a lost one is given up on after a second).'

. $(dirname $0)/sharness.sh

test_under_canopy 8 2

KAPCROWD=$SHARNESS_BUILD_DIRECTORY/kap/kap-crowd

counter () {	# RANK NAME
	canopy kvs --rank $1 stats | jq ".counters.\"$2\""
}

test_expect_success 'a collective fence over every broker commits every key' '
	$KAPCROWD -N 64 -p 100 -C 0 -n 1 >out &&
	for p in 0 17 63; do
		canopy kvs get -r kap.1.0.0.$p | wc -c >len &&
		test $(cat len) = 100 || return 1
	done
'
test_expect_success 'leaves relayed, and no more than one message per contribution' '
	relays=$(counter 7 relays-sent) &&
	test $relays -ge 1 && test $relays -le 16
'
test_expect_success 'the setroot event primed the caches of other brokers' '
	test $(counter 7 primed) -gt 0 &&
	test $(counter 0 primed) -gt 0
'
encoded () {	# RANK
	canopy kvs --rank $1 stats | jq ".cache.encoded"
}
test_expect_success 'primed directories wait encoded until a lookup needs one' '
	test $(encoded 6) -gt 0 &&
	test $(encoded 0) = 0
'
test_expect_success 'a get decodes the primed directories on its path' '
	before=$(encoded 6) &&
	test "$(canopy kvs --rank 6 get -r kap.1.0.0.9 | wc -c)" = 100 &&
	after=$(encoded 6) &&
	echo "encoded: $before -> $after" &&
	test $after -lt $before
'
cache () {	# RANK FIELD
	canopy kvs --rank $1 stats | jq ".cache.\"$2\""
}
test_expect_success 'a primed directory read again is indexed, not decoded again' '
	i0=$(cache 5 indexed) && d0=$(cache 5 decodes) && s0=$(cache 5 scans) &&
	for p in 3 4 5 6; do
		test "$(canopy kvs --rank 5 get -r kap.1.0.0.$p | wc -c)" = 100 ||
		return 1
	done &&
	i1=$(cache 5 indexed) && d1=$(cache 5 decodes) && s1=$(cache 5 scans) &&
	echo "indexed $i0 -> $i1, decodes $d0 -> $d1, scans $s0 -> $s1" &&
	test $i1 -gt $i0 && test $s1 -gt $s0 &&
	for p in 7 8 9 10; do
		canopy kvs --rank 5 get -r kap.1.0.0.$p >/dev/null || return 1
	done &&
	test $(cache 5 indexed) = $i1 && test $(cache 5 decodes) = $d1
'
# Without priming, the get loads root, kap, kap.1, kap.1.0, kap.1.0.0 and
# the value's blob; with priming at most the 64-entry directory (7 KiB,
# under kvs.prime-max but maybe over what is left of kvs.prime-budget) is
# loaded: the 100-byte value came with the setroot too (kvs.prime-values).
test_expect_success 'so a leaf reads a fresh key without faulting its path in' '
	before=$(counter 7 loads) &&
	test "$(canopy kvs --rank 7 get -r kap.1.0.0.5 | wc -c)" = 100 &&
	after=$(counter 7 loads) &&
	echo "loads: $before -> $after" &&
	test $((after - before)) -le 1
'
test_expect_success 'the values of a collective fence follow its setroot (kvs.prime)' '
	test $(counter 7 primed-values) -ge 64 &&
	test $(counter 3 primed-values) -ge 64 &&
	test $(counter 0 primed-values) -ge 64 &&
	for p in 1 33 62; do
		canopy kvs --rank 7 get -r kap.1.0.0.$p | wc -c >len &&
		test $(cat len) = 100 || return 1
	done
'
test_expect_success 'a consumer phase right after the fence loads no value' '
	for r in 0 1 4 7; do counter $r loads; done >loads.before &&
	$KAPCROWD -N 64 -p 100 -c 4 -n 11 >out &&
	for r in 0 1 4 7; do counter $r loads; done >loads.after &&
	paste loads.before loads.after &&
	test_cmp loads.before loads.after &&
	for r in 1 4 7; do
		canopy kvs --rank $r stats |
		jq -e ".counters.\"held-hits\" <= .counters.\"held-loads\"
		       and .timing.\"prime-lag\".count > 0" ||
		return 1
	done
'
# Forge a setroot of the current version announcing a kvs.prime with
# PRIME (JSON: true, or a string of ref prefixes) after dropping rank 7's
# cache, and wait until rank 7 handled it.  The kvs.prime never comes.
forge_setroot () {
	canopy kvs --rank 7 dropcache &&
	rpc kvs.getroot >root.json &&
	v=$(jq .version root.json) && ref=$(jq -r .rootref root.json) &&
	s0=$(counter 7 setroots) &&
	canopy event pub kvs.setroot \
		"{\"version\":$v,\"rootref\":\"$ref\",\"names\":[],\"errors\":[],\"prime\":$1}" &&
	n=0 &&
	while test $(counter 7 setroots) = $s0; do
		n=$((n + 1)) && test $n -lt 300 || return 1
		sleep 0.1
	done
}
HELD=$(printf "%0100d" 7 | tr 0 x)
get_held () {	# rank 7 reads held.v; prints how many value loads it held
	h0=$(counter 7 held-loads) &&
	test "$(canopy kvs --rank 7 get held.v)" = "$HELD" &&
	echo $(($(counter 7 held-loads) - h0))
}
# Lookups of values wait for an announced kvs.prime, then load after a
# second, and the broker says so.
test_expect_success 'a lost kvs.prime holds value loads for a second, no more' '
	canopy kvs put held.v=$HELD &&
	canopy kvs --rank 7 wait $(canopy kvs version) &&
	forge_setroot true &&
	test $(get_held) -gt 0 &&
	canopy dmesg --rank 7 | grep "kvs.prime of version $v did not come"
'
# The setroot lists the values its kvs.prime brings (8 hex digits of each
# ref): a value not listed is loaded at once, not held.
test_expect_success 'only the values a setroot lists are held' '
	forge_setroot "\"00000000\"" &&
	test $(get_held) = 0
'
test_expect_success 'a malformed prime list holds nothing, and says so' '
	forge_setroot "\"xyz\"" &&
	canopy dmesg --rank 7 | grep "malformed prime list" &&
	test $(get_held) = 0
'
test_expect_success 'a malformed kvs.prime is logged, and ends the hold it came for' '
	forge_setroot true &&
	canopy event pub kvs.prime "{}" &&
	canopy event pub --raw kvs.prime "junk" &&
	n=0 &&
	while test $(canopy dmesg --rank 7 | grep -c "malformed kvs.prime") -lt 2; do
		n=$((n + 1)) && test $n -lt 300 || return 1
		sleep 0.1
	done &&
	test $(get_held) = 0 &&
	test "$(canopy kvs --rank 5 get held.v)" = "$HELD"
'
test_expect_success 'single commits do not prime' '
	before=$(counter 7 primed) &&
	canopy kvs put solo.a=1 &&
	canopy kvs put solo.b=2 &&
	canopy kvs --rank 7 wait $(canopy kvs version) &&
	test $(counter 7 primed) = $before
'
test_expect_success 'redundant values travel and are stored once' '
	$KAPCROWD -N 64 -p 4096 -e -C 0 -n 2 &&
	a=$(canopy kvs get -r kap.2.0.0.3 | md5sum) &&
	b=$(canopy kvs --rank 5 get -r kap.2.0.0.60 | md5sum) &&
	test "$a" = "$b"
'
test_expect_success 'contributions from many participants on one broker merge' '
	$KAPCROWD -N 256 -p 8 -C 0 --placement=block -n 3 &&
	test "$(canopy kvs get -r kap.3.0.0.255 | wc -c)" = 8
'
test_expect_success 'a malformed relay gets EPROTO and changes nothing' '
	v=$(canopy kvs version) &&
	test_must_fail rpc --rank 3 kvs.relay "{\"junk\":1}" 2>err &&
	grep -i "relay" err &&
	test_must_fail rpc kvs.relay "[]" &&
	test $(canopy kvs version) = $v &&
	canopy kvs put after.relay=ok &&
	test "$(canopy kvs --rank 3 get after.relay)" = ok
'
test_expect_success 'with kvs.prime-max=0 nothing is primed (a separate instance)' '
	canopy start -n 3 -S kvs.prime-max=0 -- sh -c "
		$KAPCROWD -N 12 -C 0 -n 1 >/dev/null &&
		canopy kvs --rank 2 stats | jq -e \".counters.primed == 0\" &&
		canopy kvs --rank 2 get kap.1.0.0.4 >/dev/null &&
		canopy kvs --rank 2 stats | jq -e \".counters.loads > 0\""
'
# 2 048 keys of 8 bytes in one directory: an hdir of 16 buckets, ~120 KiB
# in all.  The default kvs.prime-budget (512 KiB) carries all of it; with
# 64 KiB a leaf faulted most buckets in, one load each.
test_expect_success 'a 2 048-key hdir rides whole with the setroot: a leaf loads none of it' '
	$KAPCROWD -N 2048 -p 8 -C 0 -n 4 >out &&
	canopy kvs --rank 7 wait $(canopy kvs version) &&
	before=$(counter 7 loads) &&
	for p in 3 200 777 1024 1500 2047; do
		test "$(canopy kvs --rank 7 get -r kap.4.0.0.$p | wc -c)" = 8 ||
		return 1
	done &&
	after=$(counter 7 loads) &&
	echo "loads: $before -> $after" &&
	test $after = $before
'
test_expect_success 'no KVS requests are left pending on any rank' '
	for r in 0 1 2 3 4 5 6 7; do
		rpc --rank $r kvs.stats | jq -e ".\"pending-requests\" == 0" || return 1
	done
'
test_done
