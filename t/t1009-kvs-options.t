#!/bin/sh
test_description='KVS module options: bad values are refused with a clear message'

. $(dirname $0)/sharness.sh

test_under_canopy 1 2

# Wait until module $1 is no longer listed (it exited).
wait_module_gone () {
	i=0
	while canopy module list | grep -q "^$1 "; do
		i=$((i + 1)) && test $i -lt 300 || return 1
		sleep 0.1
	done
}
test_expect_success 'unload the kvs module' '
	canopy module remove kvs &&
	wait_module_gone kvs
'
for bad in max-nprocs=-1 max-nprocs=2147483648 max-ops=1e6 max-pending=2.5 \
           cache-max=-1 cache-max=184467440737095516150 hdir-threshold=1 \
           prime-budget=lots prime-values=-5 fence-timeout=-2 fence-timeout=inf \
           cache-age=nan cache-max=128MB prime-budget=4G relay-hold=-1 relay-hold=soon \
           prime-delay=-1 prime-delay=later; do
	test_expect_success "kvs $bad is refused, with the reason in the log" "
		test_must_fail canopy module load kvs $bad 2>load.err &&
		grep \"module kvs exited while loading\" load.err &&
		! canopy module list | grep -q \"^kvs \" &&
		canopy dmesg >dmesg.out &&
		grep \"kvs.err: bad argument: kvs: option $bad: expected \" dmesg.out
	"
done
test_expect_success 'an unknown option is refused' '
	test_must_fail canopy module load kvs no-such=1 2>load.err &&
	grep "Invalid argument" load.err &&
	canopy dmesg | grep "kvs.err: bad argument: kvs: unknown option .no-such."
'
test_expect_success 'good values load' '
	canopy module load kvs max-nprocs=2147483647 cache-max=0 fence-timeout=2.5 relay-hold=0.5 \
		prime-delay=0.005 &&
	canopy kvs put opt.a=1 &&
	test "$(canopy kvs get opt.a)" = 1
'
test_expect_success 'byte counts take a binary suffix (k, M, G, T)' '
	canopy module remove kvs &&
	wait_module_gone kvs &&
	canopy module load kvs cache-max=128M prime-budget=512k prime-values=8m &&
	canopy kvs put opt.b=2 &&
	test "$(canopy kvs get opt.b)" = 2
'
test_done
