#!/bin/sh
test_description='kvs.prime-delay: a collective fence'"'"'s values follow its setroot later

Rank 0 sends the kvs.prime event of a collective fence prime-delay
seconds after its setroot, so the answers the setroot carries spread
through the tree first.  Gets that miss a value meanwhile wait for the
event (held loads) and get the right bytes.  Here the delay is long
(half a second), so the consumers'"'"' gets surely come before the values.'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2 -S kvs.prime-delay=0.5

KAPCROWD=$SHARNESS_BUILD_DIRECTORY/kap/kap-crowd

counter () {	# RANK NAME
	canopy kvs --rank $1 stats | jq ".counters.\"$2\""
}

test_expect_success 'a fence of 1 KiB values and gets right after it: every value checked' '
	$KAPCROWD -N 32 -p 1024 -c 32 -n 1 >out &&
	cat out
'
test_expect_success 'the gets waited for the delayed kvs.prime, which brought them' '
	held=0 && hits=0 &&
	for r in 1 2 3; do
		held=$((held + $(counter $r held-loads))) &&
		hits=$((hits + $(counter $r held-hits))) || return 1
	done &&
	echo "held loads $held, answered by the kvs.prime $hits" &&
	test $held -gt 0 && test $hits -gt 0 &&
	test $(counter 3 primed-values) -ge 32
'
test_expect_success 'fences in a row while a kvs.prime waits: every one brings its values' '
	$KAPCROWD -N 32 -p 1024 -c 32 -n 2 >out2 &&
	$KAPCROWD -N 32 -p 1024 -c 32 -n 3 >out3 &&
	canopy kvs get -r kap.3.0.0.5 | wc -c >len &&
	test $(cat len) = 1024 &&
	test $(counter 3 primed-values) -ge 96
'
test_expect_success 'no kvs.prime failed to go' '
	! canopy dmesg | grep "cannot publish kvs.prime"
'
test_done
