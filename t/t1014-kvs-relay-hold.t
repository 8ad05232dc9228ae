#!/bin/sh
test_description='relays held for the participants a subtree brought last time

A broker learns from each collective fence how many participants its
subtree brought, and holds the relay of the next fence of the same user
and size until as many are in (one message instead of one per
contribution), for at most kvs.relay-hold seconds, or twice as long as
they took to arrive last time if that is longer.'

. $(dirname $0)/sharness.sh

# ranks 0-3, k=2: rank 3 is a leaf under rank 1
test_under_canopy 4 2 -S kvs.relay-hold=2

counter () {	# RANK NAME
	canopy kvs --rank $1 stats | jq ".counters.\"$2\""
}

# wait until counter NAME of RANK exceeds VALUE (up to 30 s)
wait_counter () {	# RANK NAME VALUE
	_i=0
	while test $(counter $1 $2) -le $3; do
		_i=$((_i + 1))
		test $_i -le 300 || return 1
		sleep 0.1
	done
}

# wait until RANK has no request in flight to its parent (up to 30 s):
# a kvs.relay-late is answered 0.1 s after its parent merged it
wait_acked () {	# RANK
	_i=0
	while test "$(canopy overlay status --rank $1 --json | jq .pending)" != 0; do
		_i=$((_i + 1))
		test $_i -le 300 || return 1
		sleep 0.1
	done
}

# fence3 NAME R1 R2 R3: three participants of fence NAME (nprocs 3) on
# ranks R1, R2 and R3, each putting NAME.1, NAME.2, NAME.3; all succeed.
fence3 () {
	canopy kvs --rank $2 fence $1 3 $1.1=1 &
	_p1=$!
	canopy kvs --rank $3 fence $1 3 $1.2=2 &
	_p2=$!
	canopy kvs --rank $4 fence $1 3 $1.3=3 &&
	wait $_p1 && wait $_p2
}

# A command started with & must begin its own list: "a && b &" runs a and b
# in the background.
test_expect_success 'kvs stats counts holds' '
	canopy kvs --rank 3 stats | jq -e ".counters.\"relay-holds\" == 0" &&
	canopy kvs --rank 3 stats | jq -e ".counters.\"relay-hold-expired\" == 0"
'
test_expect_success 'a first fence teaches rank 3 that it brings 2 of 3' '
	fence3 s1 3 3 0 &&
	test "$(canopy kvs get s1.1)" = 1 &&
	test $(counter 3 relay-holds) = 0
'
test_expect_success 'kvs stats lists what rank 3 learned, and rank 0 nothing' '
	canopy kvs --rank 3 stats | jq -e ".\"relay-shapes\" | length == 1" &&
	canopy kvs --rank 3 stats | jq -e ".\"relay-shapes\"[0] | .nprocs == 3 and .count == 2 and .span >= 0 and .userid == $(id -u)" &&
	canopy kvs --rank 1 stats | jq -e ".\"relay-shapes\"[0].count == 2" &&
	canopy kvs stats | jq -e ".\"relay-shapes\" == []"
'
test_expect_success 'the next fence of 3 is held at rank 3 until both are in' '
	r0=$(counter 3 relays-sent) &&
	h0=$(counter 3 relay-holds) &&
	r1_0=$(counter 1 relays-sent) || return 1
	canopy kvs --rank 3 fence s2 3 s2.a=1 &
	p1=$!
	wait_counter 3 relay-holds $h0 &&
	test $(counter 3 relays-sent) = $r0 || return 1
	canopy kvs --rank 3 fence s2 3 s2.b=2 &
	p2=$!
	canopy kvs --rank 0 fence s2 3 s2.c=3 &&
	wait $p1 && wait $p2 &&
	echo "rank 3 relays $r0 -> $(counter 3 relays-sent)" &&
	test $(counter 3 relays-sent) = $((r0 + 1)) &&
	test $(counter 1 relays-sent) = $((r1_0 + 1)) &&
	test $(counter 3 relay-hold-expired) = 0 &&
	test "$(canopy kvs --rank 2 get s2.a)" = 1 &&
	test "$(canopy kvs --rank 3 get s2.c)" = 3
'
test_expect_success 'that relay completed the fence at rank 3 and 1: both were kvs.relay-late' '
	canopy kvs --rank 3 stats | jq -e ".counters.\"relays-late\" == 1" &&
	canopy kvs --rank 1 stats | jq -e ".counters.\"relays-late\" == 1" &&
	canopy kvs --rank 2 stats | jq -e ".counters.\"relays-late\" == 0"
'
test_expect_success 'acknowledged later, they leave nothing in flight: the next fences and commits go through' '
	l0=$(counter 3 relays-late) &&
	fence3 s5 3 3 0 &&
	test $(counter 3 relays-late) = $((l0 + 1)) &&
	wait_acked 3 &&
	wait_acked 1 &&
	canopy kvs --rank 3 put s5.after=1 &&
	test "$(canopy kvs get s5.after)" = 1
'
test_expect_success 'a changed layout is held no longer than kvs.relay-hold' '
	e0=$(counter 3 relay-hold-expired) &&
	fence3 s3 3 0 2 &&
	test $(counter 3 relay-hold-expired) = $((e0 + 1)) &&
	test "$(canopy kvs get s3.1)" = 1
'
test_expect_success 'and the new layout is learned: the next fence is not held' '
	e0=$(counter 3 relay-hold-expired) &&
	h0=$(counter 3 relay-holds) &&
	fence3 s4 3 0 2 &&
	test $(counter 3 relay-hold-expired) = $e0 &&
	test $(counter 3 relay-holds) = $h0
'
test_expect_success 'participants that arrived over 3 s are waited for longer than kvs.relay-hold' '
	canopy kvs --rank 3 fence w1 2 w1.a=1 &
	p1=$!
	sleep 3 &&
	canopy kvs --rank 3 fence w1 2 w1.b=2 &&
	wait $p1 &&
	e0=$(counter 3 relay-hold-expired) &&
	h0=$(counter 3 relay-holds) &&
	r0=$(counter 3 relays-sent) || return 1
	canopy kvs --rank 3 fence w2 2 w2.a=1 &
	p1=$!
	wait_counter 3 relay-holds $h0 &&
	sleep 3 &&
	echo "after 3 s: relays $r0 -> $(counter 3 relays-sent), expired $(counter 3 relay-hold-expired)" &&
	test $(counter 3 relays-sent) = $r0 &&
	test $(counter 3 relay-hold-expired) = $e0 &&
	canopy kvs --rank 3 fence w2 2 w2.b=2 &&
	wait $p1 &&
	test $(counter 3 relays-sent) = $((r0 + 1)) &&
	test $(counter 3 relay-hold-expired) = $e0 &&
	test "$(canopy kvs get w2.a)" = 1
'
test_expect_success 'commits are never held' '
	h0=$(counter 3 relay-holds) &&
	canopy kvs --rank 3 put c.a=1 &&
	canopy kvs --rank 3 put c.b=2 &&
	test $(counter 3 relay-holds) = $h0
'
test_done
