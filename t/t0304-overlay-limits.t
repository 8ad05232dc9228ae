#!/bin/sh
test_description='limits: message size on overlay links and the local socket,
bounded send queues'

. $(dirname $0)/sharness.sh

test_under_canopy 3 2 --exit-mode=leader $fast_liveness \
	-Stbon.maxmsgsize=65536 -Stbon.sndhwm=8 -Stbon.rcvhwm=8

W="--timeout=60"

test_expect_success 'limits are broker attributes, fixed once running' '
	test "$(canopy getattr --rank 1 tbon.maxmsgsize)" = 65536 &&
	test "$(canopy getattr --rank 2 tbon.sndhwm)" = 8 &&
	test "$(canopy getattr tbon.rcvhwm)" = 8 &&
	test_must_fail canopy setattr tbon.sndhwm 0
'
test_expect_success 'a request over tbon.maxmsgsize is refused before it is sent' '
	canopy ping --count 1 --pad 100000 --rank 0 &&
	test_must_fail canopy ping --count 1 --pad 100000 --rank 1 2>err &&
	grep "too large for the overlay" err &&
	canopy ping --count 1 --pad 60000 --rank 1
'
test_expect_success 'an oversized message from a peer is refused: it is disconnected' '
	ep=$(canopy getattr tbon.endpoint) &&
	zpeer --identity=big --pad=200000 --wait=2 $ep >big.out &&
	cat big.out &&
	grep "^disconnected" big.out &&
	grep "nothing received" big.out &&
	zpeer --identity=small --wait=0.5 $ep >small.out &&
	n=0 &&
	while ! canopy dmesg | grep "unknown peer .small."; do
		n=$((n+1)) && test $n -lt 300 && sleep 0.1 || return 1
	done &&
	! canopy dmesg | grep "unknown peer .big."
'
test_expect_success 'a stranger saying hello gets a refusal, not a welcome' '
	ep=$(canopy getattr tbon.endpoint) &&
	zpeer --identity=7 --hello=7 $ep >hello.out &&
	grep "received control" hello.out &&
	canopy dmesg | grep "refused hello from .7.: .7. is not a child of rank 0"
'
test_expect_success 'a full send queue fails requests with EAGAIN instead of growing' '
	pid=$(broker_pid 2) &&
	kill -STOP $pid &&
	test_when_finished "kill -CONT $pid" &&
	rpcflood --pad=65000 broker.ping 2 300 >flood.out &&
	cat flood.out &&
	grep "timeout=0" flood.out &&
	! grep "EAGAIN=0 " flood.out &&
	kill -CONT $pid &&
	canopy overlay status --wait full $W &&
	canopy ping --count 1 --rank 2
'
test_expect_success 'the local socket refuses a frame over the size limit at once' '
	sock=$(canopy getattr rundir)/local-0 &&
	printf "\020\000\000\001" | rawsock $sock >out &&
	grep "closed by broker" out &&
	canopy dmesg | grep "message too large" &&
	canopy ping --count 1
'
test_expect_success 'bad limit values keep a broker from starting' '
	test_must_fail canopy start -n 1 -Stbon.maxmsgsize=12 true 2>err &&
	grep "tbon.maxmsgsize" err &&
	test_must_fail canopy start -n 1 -Stbon.sndhwm=-1 true 2>err &&
	grep "tbon.sndhwm" err &&
	test_must_fail canopy start -n 1 -Stbon.lost-timeout=1 \
		-Stbon.keepalive-period=2 true 2>err &&
	grep "tbon.lost-timeout must be longer" err
'
test_done
