#!/bin/sh
test_description='MPICH and OpenMPI programs start under canopy run'

. $(dirname $0)/sharness.sh

if ! command -v mpicc.mpich >/dev/null && ! command -v mpicc.openmpi >/dev/null; then
	skip_all="no MPI compiler (mpicc.mpich, mpicc.openmpi)"
	test_done
fi

test_under_canopy 4 2

cat >hello.c <<'EOF2'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main (int argc, char **argv)
{
    int rank, size, sum, expect;
    MPI_Init (&argc, &argv);
    MPI_Comm_rank (MPI_COMM_WORLD, &rank);
    MPI_Comm_size (MPI_COMM_WORLD, &size);
    expect = argc > 1 ? atoi (argv[1]) : size;
    MPI_Allreduce (&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (size != expect || sum != size * (size - 1) / 2) {
        fprintf (stderr, "rank %d: size %d sum %d\n", rank, size, sum);
        return 1;
    }
    MPI_Barrier (MPI_COMM_WORLD);
    if (argc > 2 && rank == atoi (argv[2]))
        MPI_Abort (MPI_COMM_WORLD, 7);
    if (argc > 3)
        sleep (atoi (argv[3]));     /* stay alive in the middle of the job */
    printf ("rank %d of %d\n", rank, size);
    MPI_Finalize ();
    return 0;
}
EOF2

command -v mpicc.mpich >/dev/null && test_set_prereq MPICH
# OpenMPI dlopens libpmi.so; an ASan-built one aborts in an uninstrumented
# program ("ASan runtime does not come first").  MPICH speaks the wire
# protocol and runs under sanitizers.
command -v mpicc.openmpi >/dev/null && test_have_prereq NO_SANITIZER &&
	test_set_prereq OPENMPI
if test -n "$CANOPY_TEST_SANITIZED" && command -v mpicc.openmpi >/dev/null; then
	say "sanitized build: skipping the OpenMPI tests (OpenMPI cannot dlopen an ASan-built libpmi.so)"
fi

test_expect_success MPICH 'build the MPI hello with mpicc.mpich' '
	mpicc.mpich -o hello_mpich hello.c
'
for n in 1 2 4 8 16; do
	test_expect_success MPICH "MPICH: $n tasks, every rank reports size $n" "
		UCX_TLS=self,sm timeout 120 canopy run -n $n ./hello_mpich $n >out.$n &&
		test \$(grep -c \"of $n\$\" out.$n) = $n
	"
done
test_expect_success MPICH 'MPICH: MPI_Abort ends the job with its code' '
	UCX_TLS=self,sm test_expect_code 7 timeout 120 canopy run -n 4 ./hello_mpich 4 2 2>err &&
	grep "abort" err
'
test_expect_success OPENMPI 'build the MPI hello with mpicc.openmpi' '
	mpicc.openmpi -o hello_ompi hello.c
'
for n in 1 2 4 8 16; do
	test_expect_success OPENMPI "OpenMPI: $n tasks, every rank reports size $n" "
		OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
		timeout 120 canopy run -n $n --test-clique=single ./hello_ompi $n >out.o$n &&
		test \$(grep -c \"of $n\$\" out.o$n) = $n
	"
done
# Regression: the mapping used to give each broker its own node, and
# OpenMPI crashed (SIGSEGV in its vader transport) when the brokers of a
# job shared a host, as every test instance's do.
test_expect_success OPENMPI 'OpenMPI: 4 brokers on one host, no option needed' '
	OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
	timeout 120 canopy run -n 8 ./hello_ompi 8 >out.host &&
	test $(grep -c "of 8$" out.host) = 8
'
test_expect_success 'the brokers of one host are one node to MPI' '
	canopy run -v -n 8 true 2>err.map &&
	grep "mapping (vector,(0,1,8))" err.map &&
	canopy run -v -n 8 --test-clique=per-broker true 2>err.map2 &&
	grep "mapping (vector,(0,4,2))" err.map2 &&
	canopy run -v -n 8 --test-clique=single true 2>err.map3 &&
	grep "mapping (vector,(0,1,8))" err.map3 &&
	test_must_fail canopy run -n 2 --test-clique=bogus true 2>err.bogus &&
	grep "per-host" err.bogus
'
test_expect_success OPENMPI 'OpenMPI: one broker, no test clique needed' '
	OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
	timeout 120 canopy run -n 4 -N 1 ./hello_ompi 4 >out.one &&
	test $(grep -c "of 4$" out.one) = 4
'
test_expect_success OPENMPI 'OpenMPI: MPI_Abort ends the job with its code' '
	OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
	test_expect_code 7 timeout 120 canopy run -n 4 --test-clique=single ./hello_ompi 4 1 2>err &&
	grep "abort" err
'
test_expect_success MPICH 'a killed MPI task fails the job instead of hanging' '
	cat >killer.sh <<-EOF &&
	#!/bin/sh
	test "\$PMI_RANK" = 3 && (sleep 1; kill -9 \$\$) &
	exec ./hello_mpich 4 -1 30
	EOF
	chmod +x killer.sh &&
	UCX_TLS=self,sm test_expect_code 137 timeout 120 canopy run -n 4 ./killer.sh 2>err &&
	grep "task 3.*killed by signal KILL" err
'
test_expect_success 'PMI keys of a job are in its KVS directory' '
	id=$(canopy kvs ls job | tr -d . | sort -n | head -1) &&
	canopy kvs ls job.$id >ls &&
	grep "^info$" ls && grep "^exit$" ls
'
test_expect_success 'no KVS or exec requests are left pending' '
	for r in 0 1 2 3; do
		rpc --rank $r kvs.stats >s.$r &&
		grep "\"pending-requests\": *0" s.$r || return 1
	done
'
test_done
