#!/bin/sh
# pmi-bench.sh - MPICH start-up under canopy's PMI-1 server vs hydra.
#
#   bench/pmi-bench.sh [BUILDDIR] [RUNS]
#
# 1. Wall time of an MPI hello (MPI_Init, Allreduce, Barrier, Finalize),
#    built with mpicc.mpich, for N = 2, 8, 16: under t/helpers/pmi-launch
#    (canopy's pmi_server over PMI_FD) and under mpiexec.mpich (hydra),
#    the two launchers interleaved, RUNS runs each (default 5); prints
#    min and median, and the ratio of medians.
# 2. PMI barrier round trip at 16 tasks: pmi-probe (dlopens libpmi.so)
#    runs 1000 barriers under each launcher; prints the mean.
# UCX_TLS=self,sm keeps MPICH off the network.  Needs a built tree
# (make && make check, for the helpers) and the mpich package.
set -eu

build=$(cd "${1:-build}" && pwd)
runs=${2:-5}
launch=$build/t/helpers/pmi-launch
probe=$build/t/helpers/pmi-probe
libpmi=$build/src/lib/libpmi/.libs/libpmi.so
src=$(cd "$(dirname "$0")/.." && pwd)/t/mpi/hello.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for p in "$launch" "$probe" "$libpmi"; do
    test -e "$p" || { echo "pmi-bench: $p is missing (run make check first)" >&2; exit 1; }
done
command -v mpicc.mpich >/dev/null || { echo "pmi-bench: mpicc.mpich not found" >&2; exit 1; }
mpicc.mpich -o "$tmp/hello" "$src"
export UCX_TLS=self,sm

now () { date +%s.%N; }
elapsed () {
    t0=$(now)
    timeout 120 "$@" >/dev/null
    t1=$(now)
    echo "$t1 - $t0" | bc
}
stats () {    # min median of the numbers on stdin
    sort -n | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
        printf "%.3f %.3f", v[1], m }'
}

echo "MPICH hello wall time (s), $runs runs each, launchers interleaved"
printf "%4s  %-22s  %-22s  %s\n" N "pmi-launch min/median" "hydra min/median" "median ratio"
for n in 2 8 16; do
    : >"$tmp/a"; : >"$tmp/b"
    for i in $(seq "$runs"); do
        elapsed "$launch" -n "$n" "$tmp/hello" "$n" >>"$tmp/a"
        elapsed mpiexec.mpich -n "$n" "$tmp/hello" "$n" >>"$tmp/b"
    done
    a=$(stats <"$tmp/a"); b=$(stats <"$tmp/b")
    ratio=$(echo "${a#* } ${b#* }" | awk '{ printf "%.2f", $1 / $2 }')
    printf "%4d  %-22s  %-22s  %s\n" "$n" "${a% *} / ${a#* }" "${b% *} / ${b#* }" "$ratio"
done

echo
echo "PMI barrier round trip, 16 tasks, 1000 barriers (pmi-probe via libpmi.so)"
for i in 1 2 3; do
    printf "  pmi-launch: "
    timeout 120 "$launch" -n 16 "$probe" "$libpmi" barrier 1000 | sed 's/^barrier: //'
    printf "  hydra:      "
    timeout 120 mpiexec.mpich -n 16 "$probe" "$libpmi" barrier 1000 | sed 's/^barrier: //'
done
