#!/bin/sh
# bench-run.sh - MPI start-up: canopy run vs mpiexec.mpich (hydra) vs
# mpirun.openmpi, interleaved in one run; and the PMI barrier round trip.
#
#   bench/bench-run.sh [BUILDDIR] [RUNS]
#
# 1. Wall time of an MPI hello (MPI_Init, Allreduce, Barrier, Finalize) for
#    N = 2, 8, 16:
#      MPICH:   canopy run (1-broker instance) | mpiexec.mpich
#      OpenMPI: canopy run (1-broker instance) | mpirun.openmpi
#    and canopy run on a 4-broker instance for both.  Launchers alternate
#    round by round; RUNS rounds (default 5); medians and ratios.
# 2. PMI barrier round trip at 16 tasks (1000 PMI_Barrier calls through
#    libpmi.so, t/helpers/pmi-probe) under canopy run and under hydra.
# UCX_TLS=self,sm and OMPI_MCA_pml=ob1/btl=self,vader keep MPI off the
# network.  Timings on a shared 2-core machine are noisy: read medians.
set -eu

build=$(cd "${1:-build}" && pwd)
runs=${2:-5}
canopy=$build/src/cmd/canopy
probe=$build/t/helpers/pmi-probe
libpmi=$build/src/lib/libpmi/.libs/libpmi.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for p in "$canopy" "$probe" "$libpmi"; do
    test -e "$p" || { echo "bench-run: $p is missing (make && make check)" >&2; exit 1; }
done
cat >"$tmp/hello.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
int main (int argc, char **argv)
{
    int rank, size, sum;
    MPI_Init (&argc, &argv);
    MPI_Comm_rank (MPI_COMM_WORLD, &rank);
    MPI_Comm_size (MPI_COMM_WORLD, &size);
    MPI_Allreduce (&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier (MPI_COMM_WORLD);
    MPI_Finalize ();
    return sum == size * (size - 1) / 2 ? 0 : 1;
}
EOC
mpicc.mpich -o "$tmp/hello_mpich" "$tmp/hello.c"
mpicc.openmpi -o "$tmp/hello_ompi" "$tmp/hello.c"

cat >"$tmp/inner.sh" <<'EOS'
#!/bin/sh
# runs inside 'canopy start': measure every launcher, interleaved
set -eu
tmp=$1; runs=$2; tag=$3
export UCX_TLS=self,sm OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
clique=""
test "$(canopy getattr size)" -gt 1 && clique="--test-clique=single"
t () {  # label command...
    label=$1; shift
    t0=$(date +%s.%N)
    timeout 120 "$@" >/dev/null 2>&1 || echo "bench-run: $label failed" >&2
    t1=$(date +%s.%N)
    echo "$t1 $t0" | awk -v l="$label" '{ printf "%s %.4f\n", l, $1 - $2 }' >>"$tmp/times"
}
for n in 2 8 16; do
    for i in $(seq "$runs"); do
        t "$tag-canopy-mpich-$n" canopy run -n $n $clique "$tmp/hello_mpich"
        if [ "$tag" = 1 ]; then
            t "hydra-mpich-$n" mpiexec.mpich -n $n "$tmp/hello_mpich"
        fi
        t "$tag-canopy-ompi-$n" canopy run -n $n $clique "$tmp/hello_ompi"
        if [ "$tag" = 1 ]; then
            t "mpirun-ompi-$n" mpirun.openmpi --oversubscribe -np $n "$tmp/hello_ompi"
        fi
    done
done
EOS
chmod +x "$tmp/inner.sh"
: >"$tmp/times"
echo "running MPI hello: $runs rounds x N=2,8,16 (1-broker instance, with hydra/mpirun)..." >&2
"$canopy" start -n 1 -- "$tmp/inner.sh" "$tmp" "$runs" 1
echo "running MPI hello on a 4-broker instance..." >&2
"$canopy" start -n 4 -- "$tmp/inner.sh" "$tmp" "$runs" 4

med () { grep "^$1 " "$tmp/times" | awk '{ print $2 }' | sort -n |
         awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
              m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
              printf "%.3f", m }'; }
ratio () { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "nan" }'; }

echo
echo "MPI hello wall time, seconds (median of $runs), ratio = canopy / peer"
printf "%3s | %-8s %-8s %-8s %-6s | %-8s %-8s %-8s %-6s\n" N \
    "hydra" "canopy-1" "canopy-4" "ratio1" "mpirun" "canopy-1" "canopy-4" "ratio1"
for n in 2 8 16; do
    h=$(med hydra-mpich-$n); c1=$(med 1-canopy-mpich-$n); c4=$(med 4-canopy-mpich-$n)
    m=$(med mpirun-ompi-$n); o1=$(med 1-canopy-ompi-$n); o4=$(med 4-canopy-ompi-$n)
    printf "%3d | %-8s %-8s %-8s %-6s | %-8s %-8s %-8s %-6s\n" $n \
        "$h" "$c1" "$c4" "$(ratio $c1 $h)" "$m" "$o1" "$o4" "$(ratio $o1 $m)"
done

echo
echo "PMI barrier round trip, 16 tasks, mean of 1000 PMI_Barrier calls (us)"
b1=$("$canopy" start -n 1 -- canopy run -n 16 "$probe" "$libpmi" barrier 1000 2>/dev/null |
     grep -o "mean [0-9.]*" | awk '{ print $2 }')
b4=$("$canopy" start -n 4 -- canopy run -n 16 "$probe" "$libpmi" barrier 1000 2>/dev/null |
     grep -o "mean [0-9.]*" | awk '{ print $2 }')
bh=$(mpiexec.mpich -n 16 "$probe" "$libpmi" barrier 1000 2>/dev/null |
     grep -o "mean [0-9.]*" | awk '{ print $2 }')
printf "canopy (1 broker) %s   canopy (4 brokers) %s   hydra %s   ratio(1)=%s\n" \
    "${b1:-?}" "${b4:-?}" "${bh:-?}" "$(ratio "${b1:-0}" "${bh:-1}")"
