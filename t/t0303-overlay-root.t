#!/bin/sh
test_description='overlay: the death of rank 0 ends the instance cleanly'

. $(dirname $0)/sharness.sh

brokers_left () {
	pgrep -f "canopy-broker.*--rundir=$1" || true
}

test_expect_success 'killing rank 0 ends the instance with 128+9, leaving no broker' '
	rd=$(mktemp -d) &&
	test_when_finished "rm -rf $rd" &&
	test_expect_code 137 timeout 60 canopy start -n 4 --exit-mode=leader \
		--rundir=$rd/run -- \
		sh -c "kill -9 \$(canopy getattr broker.pid); exec sleep 60" 2>err &&
	cat err &&
	grep "broker rank 0 .* died: signal KILL" err &&
	test -z "$(brokers_left $rd/run)"
'
test_expect_success 'the same with the default exit mode' '
	rd=$(mktemp -d) &&
	test_when_finished "rm -rf $rd" &&
	test_expect_code 137 timeout 60 canopy start -n 4 --rundir=$rd/run -- \
		sh -c "kill -9 \$(canopy getattr broker.pid); exec sleep 60" &&
	test -z "$(brokers_left $rd/run)"
'
test_expect_success 'the initial program does not outlive rank 0' '
	rd=$(mktemp -d) &&
	test_when_finished "rm -rf $rd" &&
	test_expect_code 137 timeout 60 canopy start -n 2 --rundir=$rd/run -- \
		sh -c "echo \$\$ >$rd/prog.pid; kill -9 \$(canopy getattr broker.pid); exec sleep 60" &&
	n=0 &&
	while kill -0 $(cat $rd/prog.pid) 2>/dev/null; do
		n=$((n+1)) && test $n -lt 300 && sleep 0.1 || return 1
	done
'
test_expect_success 'a restart request for rank 0 is ignored' '
	rd=$(mktemp -d) &&
	test_when_finished "rm -rf $rd" &&
	canopy start -n 2 --exit-mode=leader --rundir=$rd/run -- \
		sh -c "echo 0 >>$rd/run/restart-requests && kill -USR1 \$CANOPY_START_PID && canopy ping --count 1 --rank 1"
'
test_done
