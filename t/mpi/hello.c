/* hello.c - the MPI program of the PMI tests, built at test time with
 * mpicc.mpich or mpicc.openmpi.
 *
 * Usage: hello [NTASKS] [abort CODE RANK | kill RANK]
 *   Checks MPI_Comm_size == NTASKS (catching a silent singleton fallback),
 *   does an MPI_Allreduce of the ranks and an MPI_Barrier, and prints one
 *   line from rank 0.  "abort": RANK calls MPI_Abort(CODE); "kill": RANK
 *   kills itself with SIGKILL; the others wait in a barrier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <mpi.h>

int main (int argc, char *argv[])
{
    int rank, size, sum = 0, expect = -1;

    MPI_Init (&argc, &argv);
    MPI_Comm_rank (MPI_COMM_WORLD, &rank);
    MPI_Comm_size (MPI_COMM_WORLD, &size);
    if (argc > 1)
        expect = atoi (argv[1]);
    if (expect > 0 && size != expect) {
        fprintf (stderr, "hello: rank %d: MPI_Comm_size is %d, expected %d\n",
                 rank, size, expect);
        return 1;
    }
    if (argc > 4 && !strcmp (argv[2], "abort") && rank == atoi (argv[4]))
        MPI_Abort (MPI_COMM_WORLD, atoi (argv[3]));
    if (argc > 3 && !strcmp (argv[2], "kill") && rank == atoi (argv[3]))
        raise (SIGKILL);
    MPI_Allreduce (&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier (MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        fprintf (stderr, "hello: rank %d: allreduce gave %d\n", rank, sum);
        return 1;
    }
    if (rank == 0)
        printf ("hello: %d tasks, sum of ranks %d\n", size, sum);
    MPI_Finalize ();
    return 0;
}
