#!/bin/sh
test_description='canopy run: layout, output, exit status, signals, job records'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2

test_expect_success 'run one task' '
	canopy run -n 1 echo hello >out &&
	test "$(cat out)" = hello
'
test_expect_success 'tasks are spread over brokers and see PMI_RANK/PMI_SIZE' '
	canopy run -n 8 --label sh -c "echo \$PMI_RANK/\$PMI_SIZE \$(canopy getattr rank)" >out &&
	test $(wc -l <out) = 8 &&
	grep "^0: 0/8 0$" out &&
	grep "^7: 7/8 3$" out &&
	test $(cut -d" " -f3 out | sort -u | wc -l) = 4
'
test_expect_success '--nbrokers and --ranks choose the brokers' '
	canopy run -n 4 -N 1 sh -c "canopy getattr rank" | sort -u >one &&
	test "$(cat one)" = 0 &&
	canopy run -n 4 --ranks 2-3 sh -c "canopy getattr rank" | sort -u >two &&
	printf "2\n3\n" >two.exp &&
	test_cmp two.exp two
'
test_expect_success '--tasks-per-broker fills brokers in order' '
	canopy run -n 5 --tasks-per-broker 2 --label sh -c "canopy getattr rank" >tpb &&
	grep "^4: 2$" tpb &&
	grep "^1: 0$" tpb
'
test_expect_success 'stdout and stderr come back; --label prefixes lines' '
	canopy run -n 2 --label sh -c "echo out; echo err >&2" >o 2>e &&
	grep "^0: out$" o && grep "^1: out$" o &&
	grep "^1: err$" e
'
test_expect_success 'stdin is closed' '
	echo data | canopy run -n 1 cat >o &&
	test ! -s o
'
test_expect_success '--env sets variables; the environment is passed' '
	FOO=bar canopy run -n 2 -e BAZ=qux sh -c "echo \$FOO \$BAZ" | sort -u >o &&
	test "$(cat o)" = "bar qux"
'
test_expect_success 'tasks beyond the CPUs are told to yield (OpenMPI), unless the user says' '
	cpus=$(nproc) &&
	canopy run -n 1 -N 1 sh -c "echo \${OMPI_MCA_mpi_yield_when_idle:-unset}" >y1 &&
	test "$(cat y1)" = unset &&
	canopy run -n $((cpus + 1)) -N 1 sh -c "echo \${OMPI_MCA_mpi_yield_when_idle:-unset}" |
		sort -u >y2 &&
	test "$(cat y2)" = 1 &&
	OMPI_MCA_mpi_yield_when_idle=0 canopy run -n $((cpus + 1)) -N 1 \
		sh -c "echo \${OMPI_MCA_mpi_yield_when_idle:-unset}" | sort -u >y3 &&
	test "$(cat y3)" = 0
'
test_expect_success 'the exit status is the worst task status' '
	test_expect_code 3 canopy run -n 4 sh -c "exit \$(( PMI_RANK == 2 ? 3 : 0 ))"
'
test_expect_success 'a task killed by a signal ends the job with a message' '
	test_expect_code 137 canopy run -n 4 sh -c "test \$PMI_RANK = 1 && kill -9 \$\$; sleep 30" 2>err &&
	grep "task 1.*killed by signal KILL" err
'
test_expect_success 'a missing command is reported, exit 127' '
	test_expect_code 127 canopy run -n 2 /no/such/program 2>err &&
	grep "No such file" err
'
test_expect_success 'SIGTERM to canopy run reaches every task' '
	canopy run -n 4 sh -c "trap \"echo got-term; exit 5\" TERM; while :; do sleep 0.1; done" >o &
	pid=$! &&
	sleep 1 &&
	kill -TERM $pid &&
	test_expect_code 5 wait $pid &&
	test $(grep -c got-term o) = 4
'
test_expect_success 'if canopy run is killed, its tasks are killed too' '
	canopy run -n 2 sh -c "echo \$\$ >pid.\$PMI_RANK; exec sleep 300" &
	pid=$! &&
	wait_for_file pid.0 && wait_for_file pid.1 &&
	kill -9 $pid &&
	for i in $(seq 1 50); do
		kill -0 $(cat pid.0) 2>/dev/null || kill -0 $(cat pid.1) 2>/dev/null || break
		sleep 0.1
	done &&
	! kill -0 $(cat pid.0) 2>/dev/null &&
	! kill -0 $(cat pid.1) 2>/dev/null
'
test_expect_success 'the job is recorded in the KVS' '
	canopy run -n 3 true &&
	id=$(canopy kvs ls job | tr -d . | sort -n | tail -1) &&
	canopy kvs get job.$id.exit >exit &&
	test "$(cat exit)" = "[0,0,0]" &&
	canopy kvs get job.$id.info | grep "\"ntasks\":3"
'
test_expect_success '--bind core pins each task to one core' '
	canopy run -n 2 -N 1 --bind core sh -c "grep Cpus_allowed_list /proc/self/status" >b &&
	test $(wc -l <b) = 2 &&
	! grep -- "-" b
'
test_expect_success 'bad options are refused' '
	test_must_fail canopy run true &&
	test_must_fail canopy run -n 2 -N 9 true &&
	test_must_fail canopy run -n 2 --bind socket true &&
	test_must_fail canopy run -n 9 --tasks-per-broker 2 true
'
test_expect_success 'canopy resource list shows every broker' '
	canopy resource list >res &&
	test $(grep -c "^[0-9]" res) = 4
'
test_expect_success 'no exec jobs are left behind' '
	for r in 0 1 2 3; do
		rpc --rank $r exec.list >l.$r &&
		grep "\"jobs\": *\[\]" l.$r || return 1
	done
'
test_expect_success 'canopy resource list refuses extra arguments' '
	test_must_fail canopy resource list extra 2>res.err &&
	grep "Usage: canopy resource" res.err
'
test_done
