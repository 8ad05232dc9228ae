#!/bin/sh
test_description='canopy-broker --config: a permanent cluster instance booted
from one file; bad files are refused with their line; ranks may start in any
order; canopy shutdown stops everything'

. $(dirname $0)/sharness.sh

always_cleanup config_cleanup

refused () {
	test_must_fail canopy_broker --config="$PWD/$1" --rank=0 \
		--rundir="$CONFIG_RUNDIR/refused" 2>err &&
	cat err &&
	grep -F "$PWD/$1:$2" err &&
	test ! -e "$CONFIG_RUNDIR/refused/local"
}

test_expect_success 'setup' '
	config_rundir &&
	canopy keygen "$PWD/curve.cert" >/dev/null
'
test_expect_success 'a misspelt key is refused, naming file, line and field' '
	cat >bad1.toml <<-EOF &&
	[tbon]
	k = 2
	lost-timout = "5s"
	[[hosts]]
	host = "a"
	EOF
	refused bad1.toml "3: tbon.lost-timout: unknown key"
'
test_expect_success 'a bad port is refused with its line' '
	cat >bad2.toml <<-EOF &&
	[security]
	curve-cert = "$PWD/curve.cert"
	[[hosts]]
	host = "a"
	[[hosts]]
	host = "b"
	port = 99999
	EOF
	refused bad2.toml "7: hosts[1].port: must be an integer from 1 to 65535"
'
test_expect_success 'a syntax error is refused with line and column' '
	printf "[broker]\nrundir = /run/x\n[[hosts]]\nhost = \"a\"\n" >bad3.toml &&
	refused bad3.toml "2:10: invalid value (strings need quotes)"
'
test_expect_success 'a missing certificate is required for more than one host' '
	printf "[[hosts]]\nhost = \"a\"\n[[hosts]]\nhost = \"b\"\n" >bad4.toml &&
	test_must_fail canopy_broker --config="$PWD/bad4.toml" --rank=0 2>err &&
	grep "security.curve-cert: is required" err
'
test_expect_success 'an unreadable certificate is refused, naming it' '
	cat >bad5.toml <<-EOF &&
	[security]
	curve-cert = "$PWD/nonexistent.cert"
	[broker]
	rundir = "$CONFIG_RUNDIR/bad5"
	[[hosts]]
	host = "a"
	[[hosts]]
	host = "b"
	EOF
	test_must_fail canopy_broker --config="$PWD/bad5.toml" --rank=1 2>err &&
	cat err &&
	grep "security.curve-cert: .*nonexistent.cert: No such file" err
'
test_expect_success 'a host that is not listed needs --rank' '
	printf "[[hosts]]\nhost = \"no-such-host.invalid\"\n" >bad6.toml &&
	test_must_fail canopy_broker --config="$PWD/bad6.toml" 2>err &&
	grep "is not in hosts; use --rank" err &&
	test_must_fail canopy_broker --config="$PWD/bad6.toml" --rank=1 2>err &&
	grep "not below the number of hosts" err &&
	test_must_fail canopy_broker --config="$PWD/bad6.toml" --size=1 2>err &&
	grep "size comes from the configuration file" err
'
test_expect_success 'a missing file is refused' '
	test_must_fail canopy_broker --config=/nonexistent.toml 2>err &&
	grep "/nonexistent.toml: No such file" err
'
test_expect_success 'one broker alone needs no certificate; attributes come from the file' '
	cat >solo.toml <<-EOF &&
	[broker]
	rundir = "$CONFIG_RUNDIR/solo"
	statedir = "$PWD/state"
	log = "$PWD/solo.log"
	log-level = "info"
	[tbon]
	lost-timeout = "40s"
	[attributes]
	site = "test"
	[[hosts]]
	host = "whatever"
	EOF
	canopy_broker --config="$PWD/solo.toml" --rank=0 &
	pid=$! &&
	wait_broker "$CONFIG_RUNDIR/solo/local" &&
	export CANOPY_URI=local://$CONFIG_RUNDIR/solo/local &&
	test "$(canopy getattr statedir)" = "$PWD/state" &&
	test "$(canopy getattr tbon.lost-timeout)" = 40s &&
	test "$(canopy getattr site)" = test &&
	test "$(canopy getattr broker.boot-method)" = config &&
	test "$(canopy getattr local-uri)" = "$CANOPY_URI" &&
	canopy shutdown &&
	wait $pid &&
	unset CANOPY_URI &&
	grep "shutdown: requested by canopy shutdown" solo.log
'
test_expect_success NO_SANITIZER 'broker.heap-cache from the file is not used, and the log says so' '
	cat >cache.toml <<-EOF &&
	[broker]
	rundir = "$CONFIG_RUNDIR/cache"
	log = "$PWD/cache.log"
	log-level = "info"
	[attributes]
	"broker.heap-cache" = "0"
	[[hosts]]
	host = "whatever"
	EOF
	canopy_broker --config="$PWD/cache.toml" --rank=0 &
	pid=$! &&
	wait_broker "$CONFIG_RUNDIR/cache/local" &&
	test "$(CANOPY_URI=local://$CONFIG_RUNDIR/cache/local canopy getattr broker.heap-cache)" = 2048 &&
	CANOPY_URI=local://$CONFIG_RUNDIR/cache/local canopy shutdown &&
	wait $pid &&
	grep "broker.heap-cache=0 is not used: only --setattr sets it" cache.log
'
test_expect_success 'the command line overrides the file' '
	canopy_broker --config="$PWD/solo.toml" --rank=0 -Stbon.lost-timeout=50s \
		--rundir="$CONFIG_RUNDIR/solo2" &
	pid=$! &&
	wait_broker "$CONFIG_RUNDIR/solo2/local" &&
	test "$(CANOPY_URI=local://$CONFIG_RUNDIR/solo2/local canopy getattr tbon.lost-timeout)" = 50s &&
	CANOPY_URI=local://$CONFIG_RUNDIR/solo2/local canopy shutdown &&
	wait $pid
'
test_expect_success 'ranks start in any order; the missing ones are reported offline' '
	loopback_config four.toml 4 &&
	config_start four.toml 2 &&
	config_start four.toml 0 &&
	config_wait 0 &&
	export CANOPY_URI=$(config_uri 0) &&
	canopy overlay status --rank 2 --wait full --timeout 60 &&
	canopy overlay status --summary >summary &&
	cat summary &&
	grep "^partial 2/4" summary &&
	grep "^offline: 1,3$" summary &&
	canopy overlay status >tree &&
	grep "1: offline" tree
'
test_expect_success 'the rest join when they start' '
	config_start four.toml 3 &&
	config_start four.toml 1 &&
	canopy overlay status --wait full --timeout 60 &&
	canopy ping --count 1 --rank 3
'
test_expect_success 'canopy shutdown stops the instance, children first, all with status 0' '
	canopy shutdown &&
	for r in 3 2 1 0; do
		wait $(cat pid.$r) || return 1
	done &&
	grep "rank 3 left" broker.1.err &&
	grep "rank 1 left" broker.0.err
'
test_expect_success 'a broker finds its rank by its host name' '
	unshare --uts true 2>/dev/null || { echo "cannot unshare --uts: skipped"; return 0; }
	loopback_config named.toml 2 &&
	sed -i "0,/host = \"localhost\"/s//host = \"cnp-named-a\"/" named.toml &&
	sed -i "0,/host = \"localhost\"/s//host = \"cnp-named-b.example.org\"/" named.toml &&
	b=${CANOPY_TEST_BROKER:-$SHARNESS_BUILD_DIRECTORY/src/broker/canopy-broker} &&
	as_host="hostname \"\$1\" && shift && exec \"\$@\"" &&
	{ unshare --uts sh -c "$as_host" sh cnp-named-a "$b" --config="$PWD/named.toml" \
		--rundir=$CONFIG_RUNDIR/named.0 & } &&
	p0=$! &&
	{ unshare --uts sh -c "$as_host" sh cnp-named-b "$b" --config="$PWD/named.toml" \
		--rundir=$CONFIG_RUNDIR/named.1 & } &&
	p1=$! &&
	CONFIG_PIDS="$CONFIG_PIDS $p0 $p1" &&
	wait_broker $CONFIG_RUNDIR/named.0/local &&
	wait_broker $CONFIG_RUNDIR/named.1/local &&
	test "$(CANOPY_URI=local://$CONFIG_RUNDIR/named.1/local canopy getattr rank)" = 1 &&
	CANOPY_URI=local://$CONFIG_RUNDIR/named.0/local canopy overlay status --wait full --timeout 60 &&
	CANOPY_URI=local://$CONFIG_RUNDIR/named.0/local canopy shutdown &&
	wait $p0 && wait $p1
'
test_done
