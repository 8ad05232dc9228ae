#!/bin/sh
test_description='the PMI-1 wire server (pmi-launch) and libpmi.so, alone and under real MPI

pmi-launch serves N tasks with canopy'"'"'s pmi_server engine and an
in-memory map (no broker).  pmi-probe dlopens libpmi.so like OpenMPI does.
MPICH speaks the wire protocol itself; OpenMPI goes through libpmi.so
(FLUX_JOB_ID + FLUX_PMI_LIBRARY_PATH).  Every MPI run is bounded by timeout.'

. $(dirname $0)/sharness.sh

libpmi=$SHARNESS_BUILD_DIRECTORY/src/lib/libpmi/.libs/libpmi.so
hello_src=$SHARNESS_TEST_SRCDIR/mpi/hello.c
T=${CANOPY_MPI_TIMEOUT:-60}

command -v mpicc.mpich >/dev/null && test_set_prereq MPICH
command -v mpicc.openmpi >/dev/null && test_set_prereq OPENMPI
ldd $libpmi 2>/dev/null | grep -q libasan || test_set_prereq NOSANITIZER
command -v bash >/dev/null && test_set_prereq BASH

if ! test_have_prereq MPICH; then
	say "mpicc.mpich not found: skipping the MPICH tests (apt-get install mpich libmpich-dev)"
fi
if ! test_have_prereq OPENMPI; then
	say "mpicc.openmpi not found: skipping the OpenMPI tests (apt-get install openmpi-bin libopenmpi-dev)"
fi
if ! test_have_prereq NOSANITIZER; then
	say "libpmi.so is built with ASan: skipping the tests that dlopen it from uninstrumented programs (OpenMPI)"
fi

test_expect_success 'pmi-launch --help' '
	pmi-launch --help >help &&
	grep "Usage: pmi-launch -n N" help
'
test_expect_success 'pmi-launch refuses bad options' '
	test_must_fail pmi-launch true &&
	test_must_fail pmi-launch -n 0 true &&
	test_must_fail pmi-launch -n 2 --clique=1,2 true 2>err &&
	grep "layout has 3 tasks, not 2" err &&
	test_must_fail pmi-launch -n 2 --vallen-max=8 true
'
test_expect_success 'a program that does not speak PMI just runs' '
	pmi-launch -n 3 sh -c "echo \$PMI_RANK/\$PMI_SIZE" | sort >out &&
	printf "0/3\n1/3\n2/3\n" >expect &&
	test_cmp expect out
'
test_expect_success 'the worst exit status wins' '
	test_expect_code 3 pmi-launch -n 3 sh -c "exit \$((PMI_RANK + 1))"
'
test_expect_success 'a missing program is reported' '
	test_expect_code 127 pmi-launch -n 2 /nonexistent/prog 2>err &&
	grep nonexistent err
'
test_expect_success NOSANITIZER 'libpmi.so needs nothing but libc' '
	ldd $libpmi | grep -v -e linux-vdso -e ld-linux -e "libc\.so" >deps;
	test_must_be_empty deps
'
test_expect_success 'libpmi.so exports only PMI_* functions' '
	nm -D --defined-only $libpmi | grep -v " PMI_" >extra;
	test_must_be_empty extra &&
	nm -D --defined-only $libpmi | grep -c " PMI_" >count &&
	test $(cat count) -ge 30
'
for n in 1 2 4; do
	test_expect_success "libpmi.so: put/barrier/get, lengths, clique over PMI_FD (N=$n)" "
		timeout $T pmi-launch -n $n pmi-probe $libpmi check >out &&
		test \$(grep -c ': ok clique=' out) = $n
	"
done
test_expect_success 'libpmi.so over PMI_PORT with the PMI_ID handshake' '
	timeout $T pmi-launch -n 4 --port pmi-probe $libpmi check >out &&
	test $(grep -c ": ok clique=0,1,2,3" out) = 4
'
test_expect_success 'libpmi.so over PMI_PORT with PMI_RANK/PMI_SIZE' '
	timeout $T pmi-launch -n 3 --port=noid pmi-probe $libpmi check >out &&
	test $(grep -c ": ok" out) = 3
'
test_expect_success 'libpmi.so with a small vallen_max' '
	timeout $T pmi-launch -n 2 --vallen-max=100 pmi-probe $libpmi check >out &&
	test $(grep -c ": ok" out) = 2
'
test_expect_success 'libpmi.so without a launcher runs as a singleton' '
	env -u PMI_FD -u PMI_PORT pmi-probe $libpmi check >out &&
	grep "rank 0 of 1: ok clique=0" out
'
test_expect_success 'the clique follows PMI_process_mapping' '
	timeout $T pmi-launch -n 5 --clique=2,0,3 pmi-probe $libpmi clique >out &&
	sort out >sorted &&
	cat >expect <<-EOT &&
	rank 0: clique=0,1
	rank 1: clique=0,1
	rank 2: clique=2,3,4
	rank 3: clique=2,3,4
	rank 4: clique=2,3,4
	EOT
	test_cmp expect sorted
'
test_expect_success 'without PMI_process_mapping the clique is the task itself' '
	timeout $T pmi-launch -n 2 --clique=none pmi-probe $libpmi clique | sort >out &&
	printf "rank 0: clique=0\nrank 1: clique=1\n" >expect &&
	test_cmp expect out
'
test_expect_success 'PMI_Abort ends the job with its exit code' '
	test_expect_code 7 timeout $T pmi-launch -n 4 pmi-probe $libpmi abort 7 2 2>err &&
	grep "rank 2 called abort with exit code 7" err
'
test_expect_success 'a task leaving without finalize ends the job' '
	test_expect_code 1 timeout $T pmi-launch -n 3 pmi-probe $libpmi noexit 1 2>err &&
	grep "rank 1 closed its PMI connection without finalize" err
'
test_expect_success BASH 'garbage on the wire ends the job cleanly' '
	test_expect_code 1 timeout $T pmi-launch -n 2 \
		bash -c "echo garbage >&\$PMI_FD; sleep 30" 2>err &&
	grep "bad PMI request: Protocol error" err
'
test_expect_success BASH 'an endless line ends the job cleanly' '
	test_expect_code 1 timeout $T pmi-launch -n 1 \
		bash -c "head -c 5000 /dev/zero | tr \"\\\\0\" a >&\$PMI_FD; sleep 30" 2>err &&
	grep "PMI line too long" err
'
# Only rank 0 enters, twice: the barrier cannot complete in between (with
# both ranks sending, bash's two writes could let the first barrier finish
# before a second line arrived, and the test would hang for 30 s).
test_expect_success BASH 'a request while a barrier is pending ends the job' '
	test_expect_code 1 timeout $T pmi-launch -n 2 \
		bash -c "test \$PMI_RANK = 0 &&
			printf \"cmd=barrier_in\ncmd=barrier_in\n\" >&\$PMI_FD; sleep 30" 2>err &&
	grep "bad PMI request" err
'
test_expect_success BASH 'a task that never reads its answers cannot block the server' '
	test_expect_code 1 timeout $T pmi-launch -n 2 \
		bash -c "yes cmd=get_maxes >&\$PMI_FD; sleep 30" 2>err &&
	grep "does not read its PMI answers" err
'
test_expect_success 'the trace shows both directions' '
	timeout $T pmi-launch -n 2 --trace=trace.log pmi-probe $libpmi check >out &&
	grep -- "-> cmd=init pmi_version=1 pmi_subversion=1" trace.log &&
	grep -- "<- cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024" trace.log &&
	grep -- "<- cmd=barrier_out rc=0" trace.log &&
	grep -- "-- EOF" trace.log &&
	grep "done: exit code 0" trace.log
'

# MPICH: the client is compiled into libmpich, speaking the wire protocol.
test_expect_success MPICH 'compile the MPI hello with mpicc.mpich' '
	mpicc.mpich -o hello_mpich $hello_src
'
test_have_prereq MPICH && test -x hello_mpich && test_set_prereq HELLO_MPICH
for n in 1 2 4 8; do
	test_expect_success HELLO_MPICH "MPICH hello, N=$n, over PMI_FD" "
		UCX_TLS=self,sm timeout $T pmi-launch -n $n ./hello_mpich $n >out &&
		grep 'hello: $n tasks, sum of ranks' out
	"
done
test_expect_success HELLO_MPICH 'MPICH hello over PMI_PORT + PMI_ID' '
	UCX_TLS=self,sm timeout $T pmi-launch -n 4 --port ./hello_mpich 4 >out &&
	grep "hello: 4 tasks" out
'
test_expect_success HELLO_MPICH 'MPICH hello over PMI_PORT + PMI_RANK' '
	UCX_TLS=self,sm timeout $T pmi-launch -n 2 --port=noid ./hello_mpich 2 >out &&
	grep "hello: 2 tasks" out
'
test_expect_success HELLO_MPICH 'MPICH splits values into segments under a small vallen_max' '
	UCX_TLS=self,sm timeout $T pmi-launch -n 4 --vallen-max=256 \
		--trace=seg.log ./hello_mpich 4 >out &&
	grep "hello: 4 tasks" out &&
	grep -- "-> cmd=put .*key=.*-seg-1/" seg.log
'
test_expect_success HELLO_MPICH 'MPICH falls back to host names without PMI_process_mapping' '
	UCX_TLS=self,sm timeout $T pmi-launch -n 4 --clique=none \
		--trace=nomap.log ./hello_mpich 4 >out &&
	grep "hello: 4 tasks" out &&
	grep -- "rc=-1 msg=key_PMI_process_mapping_not_found" nomap.log
'
test_expect_success HELLO_MPICH 'MPICH wire trace: 4 barriers, N finalizes, one per rank' '
	UCX_TLS=self,sm timeout $T pmi-launch -n 2 --trace=mpich.log ./hello_mpich 2 >out &&
	test $(grep -c "barrier .* complete" mpich.log) = 4 &&
	test $(grep -c -- "<- cmd=finalize_ack" mpich.log) = 2 &&
	grep -- "<- cmd=get_result rc=0 msg=success value=(vector,(0,1,2))" mpich.log
'
test_expect_success HELLO_MPICH 'MPI_Abort ends an MPICH job with its code' '
	test_expect_code 7 env UCX_TLS=self,sm timeout $T \
		pmi-launch -n 4 ./hello_mpich 4 abort 7 2 2>err &&
	grep "rank 2 called abort with exit code 7" err
'
test_expect_success HELLO_MPICH 'an MPICH task killed by a signal fails the job' '
	test_expect_code 137 env UCX_TLS=self,sm timeout $T \
		pmi-launch -n 4 ./hello_mpich 4 kill 1 2>err &&
	grep "rank 1" err
'

# OpenMPI: its pmix/flux component dlopens our libpmi.so.
test_expect_success OPENMPI 'compile the MPI hello with mpicc.openmpi' '
	mpicc.openmpi -o hello_ompi $hello_src
'
test_have_prereq OPENMPI,NOSANITIZER && test -x hello_ompi && test_set_prereq HELLO_OMPI
ompi_env="FLUX_JOB_ID=4242 FLUX_PMI_LIBRARY_PATH=$libpmi OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader"
for n in 1 2 4 8; do
	test_expect_success HELLO_OMPI "OpenMPI hello, N=$n, through libpmi.so" "
		env $ompi_env timeout $T pmi-launch -n $n ./hello_ompi $n >out &&
		grep 'hello: $n tasks, sum of ranks' out
	"
done
# (whether a modex value ends in space padding depends on its length, so
# spaces in values are asserted by pmi-probe above, not here)
test_expect_success HELLO_OMPI 'OpenMPI puts ~1 KB modex values and probes missing keys' '
	env $ompi_env timeout $T pmi-launch -n 2 --trace=ompi.log ./hello_ompi 2 >out &&
	grep "hello: 2 tasks" out &&
	grep -- "-> cmd=put kvsname=[^ ]* key=4242-1-key0 " ompi.log |
		awk "length(\$0) > 1050 { found = 1 } END { exit !found }" &&
	grep -- "<- cmd=get_result rc=-1 msg=key_4242-.*_not_found" ompi.log
'
test_expect_success HELLO_OMPI 'MPI_Abort ends an OpenMPI job with its code' '
	test_expect_code 5 env $ompi_env timeout $T \
		pmi-launch -n 4 ./hello_ompi 4 abort 5 3 >out 2>err &&
	grep "rank 3 called abort with exit code 5" err
'
test_done
