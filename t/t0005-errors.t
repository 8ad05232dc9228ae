#!/bin/sh
test_description='bad input on the local socket is dropped; the broker keeps serving'

. $(dirname $0)/sharness.sh

test_under_canopy 2 2

sock () {
	rundir=$(canopy getattr rundir) && echo "$rundir/local-0"
}

test_expect_success 'garbage bytes get the connection dropped' '
	printf "this is not a canopy message at all, not even close" |
		rawsock $(sock) >out &&
	grep "closed by broker" out
'
test_expect_success 'the broker still serves other clients' '
	canopy ping --count 1
'
test_expect_success 'a frame claiming 4 GiB is dropped at once' '
	printf "\377\377\377\377" | rawsock $(sock) >out &&
	grep "closed by broker" out &&
	canopy ping --count 1
'
test_expect_success 'a well-framed record that does not decode is dropped' '
	printf "\000\000\000\005hello" | rawsock $(sock) >out &&
	grep "closed by broker" out &&
	canopy ping --count 1
'
test_expect_success 'random junk many times: the broker survives' '
	for i in $(seq 1 50); do
		head -c $((i * 37)) /dev/urandom | rawsock $(sock) >/dev/null || return 1
	done &&
	canopy ping --count 1 --rank 1
'
test_expect_success 'the drops are logged' '
	canopy dmesg | grep "dropped client"
'
test_expect_success 'a request with no payload where one is required gets EPROTO' '
	test_must_fail canopy getattr "" 2>err
'
# Regression: under ASan, a command that gave up with log_msg_exit() was
# sometimes (depending on stack garbage) reported as leaking its handle and
# aborted with status 134 instead of 1.
test_expect_success 'a failing command exits 1 every time (no leak report at exit)' '
	for i in $(seq 1 20); do
		test_expect_code 1 canopy getattr no.such.attribute 2>err ||
			{ cat err; return 1; }
	done
'
test_expect_success 'changing an immutable attribute is refused' '
	test_must_fail canopy setattr rank 5 2>err &&
	grep "cannot be changed" err
'
test_expect_success 'a mutable attribute can be set and read back' '
	canopy setattr --rank 1 test.attr hello &&
	test $(canopy getattr --rank 1 test.attr) = hello
'
test_done
