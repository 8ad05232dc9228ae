#!/bin/sh
test_description='CURVE on TCP overlay links: canopy keygen, an allow-list of
broker keys, and strangers get nothing'

. $(dirname $0)/sharness.sh

always_cleanup config_cleanup

test_expect_success 'canopy keygen writes a private certificate and prints its key' '
	canopy keygen "$PWD/curve.cert" >pubkey &&
	test $(wc -c <pubkey) -eq 41 &&
	test "$(stat -c %a curve.cert)" = 600 &&
	grep -F "public-key = \"$(cat pubkey)\"" curve.cert &&
	grep "secret-key" curve.cert
'
test_expect_success 'canopy keygen does not replace a certificate unless forced' '
	test_must_fail canopy keygen "$PWD/curve.cert" 2>err &&
	grep "exists (use --force" err &&
	canopy keygen --force "$PWD/other.cert" >/dev/null &&
	canopy keygen --force "$PWD/other.cert" >otherkey &&
	! test_cmp pubkey otherkey &&
	test_must_fail canopy keygen 2>/dev/null &&
	test_must_fail canopy keygen "$PWD/no/such/dir/c" 2>err &&
	grep "No such file" err
'
test_expect_success 'three brokers over TCP with CURVE, started in reverse order' '
	loopback_config sys.toml 3 &&
	config_start sys.toml 2 &&
	config_start sys.toml 1 &&
	config_start sys.toml 0 &&
	config_wait 0 &&
	CANOPY_URI=$(config_uri 0) canopy overlay status --wait full --timeout 60 &&
	CANOPY_URI=$(config_uri 0) canopy ping --count 1 --rank 2
'
test_expect_success 'the links are TCP' '
	ep=$(CANOPY_URI=$(config_uri 0) canopy getattr tbon.endpoint) &&
	echo $ep >endpoint &&
	grep "^tcp://" endpoint &&
	CANOPY_URI=$(config_uri 2) canopy getattr tbon.parent-endpoint | grep "^tcp://127.0.0.1:"
'
ep () {
	sed "s|tcp://\*|tcp://127.0.0.1|" endpoint
}
test_expect_success 'a NULL-security peer gets nothing within 1 s' '
	zpeer --identity=stranger1 --wait=1 $(ep) >null.out &&
	cat null.out &&
	grep "nothing received" null.out &&
	! grep "handshake ok" null.out
'
test_expect_success 'a CURVE peer with an unknown key is refused by the allow-list' '
	zpeer --identity=stranger2 --server-key="$(cat pubkey)" --random-key \
		--wait=1 $(ep) >unknown.out &&
	cat unknown.out &&
	grep "handshake failed" unknown.out &&
	grep "nothing received" unknown.out &&
	CANOPY_URI=$(config_uri 0) canopy dmesg | grep "overlay auth: denied CURVE"
'
test_expect_success 'a peer with the wrong server key gets nothing' '
	zpeer --identity=stranger3 --server-key="$(cat otherkey)" \
		--cert="$PWD/curve.cert" --wait=1 $(ep) >wrong.out &&
	cat wrong.out &&
	grep "nothing received" wrong.out &&
	! grep "handshake ok" wrong.out
'
test_expect_success 'none of them reached the overlay' '
	! CANOPY_URI=$(config_uri 0) canopy dmesg | grep "stranger"
'
test_expect_success 'with the instance key a peer is admitted (the control case)' '
	zpeer --identity=insider --server-key="$(cat pubkey)" --cert="$PWD/curve.cert" \
		--wait=1 $(ep) >insider.out &&
	grep "handshake ok" insider.out &&
	n=0 &&
	while ! CANOPY_URI=$(config_uri 0) canopy dmesg | grep "unknown peer .insider."; do
		n=$((n+1)) && test $n -lt 300 && sleep 0.1 || return 1
	done
'
test_expect_success 'a killed leaf restarted with the same arguments rejoins over TCP' '
	kill -9 $(cat pid.2) &&
	CANOPY_URI=$(config_uri 0) canopy overlay status --rank 2 --wait lost --timeout 60 &&
	config_start sys.toml 2 &&
	CANOPY_URI=$(config_uri 0) canopy overlay status --wait full --timeout 60
'
test_expect_success 'canopy shutdown stops every broker, with status 0' '
	CANOPY_URI=$(config_uri 0) canopy shutdown &&
	for r in 0 1 2; do
		timeout 60 sh -c "while kill -0 $(cat pid.$r) 2>/dev/null; do sleep 0.1; done" ||
			return 1
	done &&
	wait $(cat pid.0) && wait $(cat pid.1) && wait $(cat pid.2)
'
test_done
