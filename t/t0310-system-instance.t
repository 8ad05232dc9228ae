#!/bin/sh
test_description='a system instance on four "hosts": network namespaces on a
private bridge, one broker each booted from one configuration file with CURVE
on its TCP links; restarts, a cut link, and a clean shutdown'

. $(dirname $0)/sharness.sh

# Names are unique to this run; nothing here is visible outside it (the
# bridge has no address in the host's namespace).
tag=$(( $$ % 100000 ))
ns () { echo cnp${tag}n$1; }
hostveth () { echo cv${tag}h$1; }
bridge=cb$tag
N=4

if test "$(id -u)" != 0; then
	skip_all='network namespaces need root'
	test_done
fi
if ! ip netns add "$(ns probe)" 2>/dev/null; then
	skip_all='cannot create network namespaces here (ip netns add failed)'
	test_done
fi
ip netns del "$(ns probe)"
if ! unshare --uts true 2>/dev/null; then
	skip_all='cannot make UTS namespaces (unshare --uts) for per-host names'
	test_done
fi

broker=${CANOPY_TEST_BROKER:-$SHARNESS_BUILD_DIRECTORY/src/broker/canopy-broker}

teardown () {
	for i in $(seq 0 $((N - 1))); do
		test -f pid.$i && kill -9 $(cat pid.$i) 2>/dev/null
		ip netns del $(ns $i) 2>/dev/null
		ip link del $(hostveth $i) 2>/dev/null
	done
	ip link del $bridge 2>/dev/null
	config_cleanup
	return 0
}
always_cleanup teardown

# Run broker R in its namespace, with its own host name (rank by name).
start_host () {
	_r=$1
	rm -f "$CONFIG_RUNDIR/host$_r/local"
	ip netns exec $(ns $_r) unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' \
		sh cnp-node$_r "$broker" --config="$PWD/system.toml" \
		--rundir="$CONFIG_RUNDIR/host$_r" 2>>host$_r.err &
	echo $! >pid.$_r
}
uri () {
	echo "local://$CONFIG_RUNDIR/host$1/local"
}

test_expect_success 'make four hosts on a private bridge' '
	config_rundir &&
	ip link add $bridge type bridge &&
	ip link set $bridge up &&
	for i in $(seq 0 $((N - 1))); do
		ip netns add $(ns $i) &&
		ip link add $(hostveth $i) type veth peer name cv${tag}n$i &&
		ip link set $(hostveth $i) master $bridge up &&
		ip link set cv${tag}n$i netns $(ns $i) &&
		ip -n $(ns $i) link set cv${tag}n$i name eth0 &&
		ip -n $(ns $i) addr add 10.99.0.$((i + 1))/24 dev eth0 &&
		ip -n $(ns $i) link set eth0 up &&
		ip -n $(ns $i) link set lo up || return 1
	done
'
test_expect_success 'one configuration file for the whole instance' '
	canopy keygen "$PWD/curve.cert" >pubkey &&
	{
		cat <<-EOF
		# canopy system instance for t0310
		[tbon]
		k = 2
		keepalive-period = "100ms"
		torpid-timeout = "500ms"
		lost-timeout = "1.5s"
		tcp-user-timeout = "2s"

		[broker]
		rundir = "$CONFIG_RUNDIR/unused"
		statedir = "$PWD/state"
		log-level = "debug"

		[security]
		curve-cert = "$PWD/curve.cert"
		EOF
		for i in $(seq 0 $((N - 1))); do
			printf "\n[[hosts]]\nhost = \"cnp-node%d\"\naddr = \"10.99.0.%d\"\n" \
				$i $((i + 1)) &&
			printf "bind = \"10.99.0.%d\"\n" $((i + 1))
		done
	} >system.toml &&
	cat system.toml
'
test_expect_success 'start the brokers in reverse order; the tree becomes full' '
	for i in $(seq $((N - 1)) -1 0); do
		start_host $i
	done &&
	wait_broker "$CONFIG_RUNDIR/host0/local" &&
	CANOPY_URI=$(uri 0) canopy overlay status --wait full --timeout 60 &&
	CANOPY_URI=$(uri 0) canopy overlay status
'
test_expect_success 'each broker found its rank by its host name; links are TCP' '
	wait_broker "$CONFIG_RUNDIR/host3/local" &&
	test "$(CANOPY_URI=$(uri 3) canopy getattr rank)" = 3 &&
	test "$(CANOPY_URI=$(uri 3) canopy getattr hostname)" = cnp-node3 &&
	test "$(CANOPY_URI=$(uri 3) canopy getattr tbon.parent-endpoint)" = tcp://10.99.0.2:8050 &&
	test "$(CANOPY_URI=$(uri 0) canopy getattr statedir)" = "$PWD/state" &&
	CANOPY_URI=$(uri 0) canopy ping --count 1 --rank 3
'
test_expect_success 'a stranger on the network gets nothing' '
	ip netns exec $(ns 3) zpeer --identity=stranger --server-key="$(cat pubkey)" \
		--random-key --wait=1 tcp://10.99.0.1:8050 >stranger.out &&
	cat stranger.out &&
	grep "nothing received" stranger.out &&
	ip netns exec $(ns 3) zpeer --identity=stranger0 --wait=1 \
		tcp://10.99.0.1:8050 >null.out &&
	grep "nothing received" null.out &&
	! CANOPY_URI=$(uri 0) canopy dmesg | grep stranger
'
test_expect_success 'a killed broker restarted on its host rejoins' '
	kill -9 $(cat pid.3) &&
	CANOPY_URI=$(uri 0) canopy overlay status --rank 3 --wait lost --timeout 60 &&
	start_host 3 &&
	CANOPY_URI=$(uri 0) canopy overlay status --wait full --timeout 60 &&
	CANOPY_URI=$(uri 0) canopy ping --count 1 --rank 3
'
test_expect_success 'cutting host 2 off: rank 0 loses it, and says so' '
	{ CANOPY_URI=$(uri 0) canopy event sub --count=1 --ready-file=ready overlay.lost \
		>lost.out & } &&
	sub=$! &&
	wait_for_file ready 30 &&
	date +%s.%N >cut.time &&
	ip link set $(hostveth 2) down &&
	CANOPY_URI=$(uri 0) canopy overlay status --rank 2 --wait lost --timeout 60 &&
	date +%s.%N >lost.time &&
	wait $sub &&
	grep "\"rank\":2,\"parent\":0,\"ranks\":\[2\]" lost.out &&
	test_must_fail timeout 60 env CANOPY_URI=$(uri 0) canopy ping --count 1 --rank 2 &&
	CANOPY_URI=$(uri 0) canopy overlay status --summary | grep "^lost: 2$"
'
test_expect_success 'host 2 noticed too' '
	n=0 &&
	while ! CANOPY_URI=$(uri 2) canopy dmesg | grep "parent (rank 0) lost"; do
		n=$((n+1)) && test $n -lt 600 && sleep 0.1 || return 1
	done
'
test_expect_success 'the link back up: host 2 rejoins, the tree is full again' '
	ip link set $(hostveth 2) up &&
	CANOPY_URI=$(uri 0) canopy overlay status --wait full --timeout 120 &&
	date +%s.%N >back.time &&
	n=0 &&
	while ! CANOPY_URI=$(uri 0) timeout 60 canopy ping --count 1 --rank 2; do
		# both ends may still be tearing down the connection from before
		n=$((n+1)) && test $n -lt 60 && sleep 1 || return 1
	done &&
	CANOPY_URI=$(uri 0) canopy overlay status --wait full --timeout 120 &&
	awk -v cut=$(cat cut.time) -v lost=$(cat lost.time) -v back=$(cat back.time) \
		"BEGIN { printf \"figures: lost after %.2f s, full again %.2f s after the \" \
		\"link came back (polled every 0.1 s)\\n\", lost - cut, back - lost }"
'
test_expect_success 'a bad configuration file is refused with its line number' '
	sed "s/^k = 2$/k = two/" system.toml >bad.toml &&
	test_must_fail ip netns exec $(ns 1) "$broker" --config="$PWD/bad.toml" --rank=1 \
		2>bad.err &&
	cat bad.err &&
	grep -F "$PWD/bad.toml:3:5: invalid value (strings need quotes)" bad.err
'
test_expect_success 'canopy shutdown stops all four, children first, status 0' '
	CANOPY_URI=$(uri 0) canopy shutdown &&
	for i in 3 2 1 0; do
		wait $(cat pid.$i) || return 1
		rm pid.$i
	done &&
	grep "rank 3 left" host1.err &&
	grep "rank 1 left" host0.err &&
	grep "rank 2 left" host0.err
'
test_done
