#!/bin/sh
test_description='modules load, list and remove on one rank and on all ranks'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2

testmod=$SHARNESS_BUILD_DIRECTORY/t/helpers/.libs/testmod.so

test_expect_success 'load a module by path on rank 0' '
	canopy module load $testmod &&
	canopy module list >list &&
	grep "^testmod .*running" list
'
test_expect_success 'the module answers its ping and its own methods' '
	canopy ping --count 1 testmod | grep "hops=0" &&
	canopy ping --count 1 --rank 0 testmod
'
test_expect_success 'a second load of the same module fails with EEXIST' '
	test_must_fail canopy module load $testmod 2>err &&
	grep "already loaded" err
'
test_expect_success 'remove it' '
	canopy module remove testmod &&
	canopy module list >list &&
	! grep testmod list
'
test_expect_success 'removing a module that is not loaded fails' '
	test_must_fail canopy module remove testmod 2>err &&
	grep "not loaded" err
'
test_expect_success 'load on all ranks, with arguments' '
	canopy module load --rank all $testmod greeting=hi &&
	canopy module list --rank all >list &&
	test $(grep -c testmod list) = 4
'
test_expect_success 'module arguments reach mod_main' '
	canopy ping --count 1 --rank 2 testmod | grep "rank=2\|^2!" &&
	on_rank 2 canopy getattr rank
'
test_expect_success 'a request from rank 3 for testmod is served on rank 3' '
	on_rank 3 canopy ping --count 1 testmod | grep "^3!testmod.*hops=0"
'
test_expect_success 'remove from ranks 1-3 only' '
	canopy module remove --rank 1-3 testmod &&
	canopy module list --rank all >list &&
	test $(grep -c testmod list) = 1
'
test_expect_success 'with the module gone on rank 3, its requests go upstream' '
	on_rank 3 canopy ping --count 1 testmod | grep "^0!testmod.*hops=2"
'
test_expect_success 'a module that is not there is ENOENT' '
	test_must_fail canopy module load nosuchmodule 2>err &&
	grep "not found" err
'
test_expect_success 'a file that is not a module is refused' '
	test_must_fail canopy module load /etc/passwd 2>err &&
	cat err
'
test_expect_success 'a module that exits with a request unanswered: the broker answers it (ENOSYS)' '
	{ canopy module list | grep -q "^testmod " || canopy module load $testmod; } &&
	{ rpc testmod.hold >hold1.out 2>hold1.err & } && pid=$! &&
	sleep 0.3 &&
	rpc testmod.quit &&
	test_expect_code 1 wait $pid &&
	grep "module testmod exited before answering" hold1.err
'
test_expect_success 'a module removed with a request unanswered: the broker answers it' '
	canopy module load $testmod &&
	{ rpc testmod.hold >hold2.out 2>hold2.err & } && pid=$! &&
	sleep 0.3 &&
	canopy module remove testmod &&
	test_expect_code 1 wait $pid &&
	grep "module testmod exited before answering" hold2.err &&
	canopy dmesg | grep "module testmod left 1 request unanswered"
'
test_expect_success 'answered requests are forgotten: many echoes, then a clean unload' '
	canopy module load $testmod &&
	canopy dmesg --clear >/dev/null &&
	for i in $(seq 1 50); do rpc testmod.echo "{\"i\":$i}" >/dev/null || return 1; done &&
	canopy module remove testmod &&
	canopy dmesg >dmesg.out &&
	! grep "unanswered" dmesg.out
'
test_expect_success 'a load is answered only once the module has set up and runs' '
	canopy module load $testmod setup-delay=1 &&
	canopy module list >list &&
	grep "^testmod .*running" list &&
	canopy module remove testmod
'
test_expect_success 'overlay status shows a rank whose module is setting up as starting' '
	{ canopy module load --rank 1 $testmod setup-delay=4 & } && pid=$! &&
	i=0 &&
	while ! canopy overlay status | grep "1: full starting"; do
		i=$((i + 1)) && test $i -lt 300 || return 1
		sleep 0.1
	done &&
	canopy overlay status >starting.out &&
	test $(grep -c starting starting.out) -eq 1 &&
	wait $pid &&
	canopy overlay status >started.out &&
	cat started.out &&
	! grep starting started.out &&
	canopy module remove --rank 1 testmod
'
test_expect_success 'a module that returns 0 while setting up (nothing to do here): its load succeeds' '
	on_rank 1 canopy module load content-sqlite &&
	on_rank 1 canopy module list >list1 &&
	! grep "content-sqlite" list1
'
test_expect_success 'a module that fails while setting up: its load fails with its errno' '
	test_must_fail canopy module load $testmod fail=22 2>err &&
	cat err &&
	grep "exited while loading" err &&
	grep "Invalid argument" err &&
	canopy module list >list &&
	! grep "^testmod " list
'
test_expect_success 'the initial program starts once every rank'"'"'s modules have set up' '
	rm -f mark.* &&
	TESTMOD_SETUP_DELAY=1 TESTMOD_SETUP_MARK=$PWD/mark canopy start -n 3 \
		-S broker.modules=content,content-sqlite,kvs,resource,exec,$testmod -- \
		sh -c "ls mark.*; canopy module list --rank all" >ready.out &&
	cat ready.out &&
	test $(grep -c "^mark\.[012]$" ready.out) -eq 3 &&
	test $(grep -c " testmod  *running " ready.out) -eq 3
'
test_expect_success 'a module slow to set up is logged while the instance waits for it' '
	TESTMOD_SETUP_DELAY=1.5 canopy start -n 2 -S broker.module-setup-warn=0.3 \
		-S broker.modules=content,content-sqlite,kvs,resource,exec,$testmod -- \
		canopy dmesg >slow.out &&
	grep "module testmod has been setting up for" slow.out &&
	grep "this broker is not ready until it does" slow.out
'
test_expect_success 'a bad broker.module-setup-warn keeps the broker from starting' '
	test_must_fail canopy start -n 1 -S broker.module-setup-warn=soon -- true 2>bad.err &&
	cat bad.err &&
	grep "invalid broker.module-setup-warn .soon." bad.err
'
test_done
