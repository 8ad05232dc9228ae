# kaplib.sh - shell functions shared by kap-sweep and kap-refshape
# (sourced, POSIX sh).
#
# kap_find_tools      set KAP (the kap program) and CANOPY (the front end):
#                     $KAP / $CANOPY if set; else $CANOPY_BUILD_DIR; else an
#                     installed layout ($pkgdatadir/kap/kap beside these
#                     scripts); else ./build of the source tree.
# kap_write_uris F    inside an instance: write every broker's URI to F
# kap_mpirun NP ARGS  run kap on NP ranks with mpirun.openmpi (shared
#                     memory transport, oversubscribed, no binding)
# kap_now             seconds since the epoch, with fractions
# kap_median          median of the numbers on stdin (one per line)
# kap_quantile Q      their Q-quantile (nearest rank)

kap_die () {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

kap_find_tools () {
    KAP=${KAP:-}
    CANOPY=${CANOPY:-}
    _here=$(cd "$(dirname "$0")" && pwd)
    if test -z "$KAP" && test -n "${CANOPY_BUILD_DIR:-}"; then
        KAP=$CANOPY_BUILD_DIR/kap/kap
        CANOPY=${CANOPY:-$CANOPY_BUILD_DIR/src/cmd/canopy}
    fi
    if test -z "$KAP" && test -x "$_here/../kap"; then
        KAP=$_here/../kap       # build tree (kap/experiments) or installed
        if test -z "$CANOPY" && test -x "$_here/../../src/cmd/canopy"; then
            CANOPY=$_here/../../src/cmd/canopy
        elif test -z "$CANOPY" && test -x "$_here/../../../../bin/canopy"; then
            CANOPY=$_here/../../../../bin/canopy
        fi
    fi
    if test -z "$KAP" && test -x "$_here/../../build/kap/kap"; then
        _b=$(cd "$_here/../../build" && pwd)
        KAP=$_b/kap/kap         # the source tree, built in ./build
        CANOPY=${CANOPY:-$_b/src/cmd/canopy}
    fi
    test -n "$KAP" && test -x "$KAP" ||
        kap_die "cannot find the kap program: build canopy (./quickstart), or set CANOPY_BUILD_DIR or KAP"
    if test -z "$CANOPY"; then
        CANOPY=$(command -v canopy) ||
            kap_die "cannot find the canopy command: set CANOPY_BUILD_DIR or CANOPY"
    fi
    test -x "$CANOPY" || kap_die "$CANOPY is not executable"
    MPIRUN=${MPIRUN:-mpirun.openmpi}
    command -v "$MPIRUN" >/dev/null ||
        kap_die "$MPIRUN not found (apt-get install openmpi-bin)"
    command -v jq >/dev/null || kap_die "jq not found (apt-get install jq)"
    export KAP CANOPY MPIRUN
}

kap_write_uris () {
    _rundir=$(canopy getattr rundir) || return 1
    _size=$(canopy getattr size) || return 1
    _r=0
    : >"$1" || return 1
    while test $_r -lt "$_size"; do
        echo "local://$_rundir/local-$_r" >>"$1"
        _r=$((_r + 1))
    done
}

kap_mpirun () {
    _np=$1
    shift
    _root=""
    test "$(id -u)" = 0 && _root=--allow-run-as-root
    OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
    OMPI_MCA_btl_vader_single_copy_mechanism=none \
    OMPI_MCA_rmaps_base_oversubscribe=1 \
        "$MPIRUN" $_root --oversubscribe --bind-to none -np "$_np" "$KAP" "$@"
}

# "TOTAL STEAL": jiffies of all CPUs since boot, and those the hypervisor
# stole (ran something else while this VM wanted the CPU); 0 0 without
# /proc/stat.
kap_cpustat () {
    awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9; exit }' \
        /proc/stat 2>/dev/null || echo 0 0
}

# "MODEL; AVX-512F yes|no, SHA-NI yes|no": the processor, and the two
# features that decide how canopy hashes blobs (src/common/libutil/sha256.c),
# so that figures from different machines are not compared blindly.
kap_cpuinfo () {
    awk -F': *' '
        /^model name/ && !m { m = $2 }
        /^flags/ && !f { f = " " $2 " " }
        END {
            if (m == "") m = "unknown processor"
            printf "%s; AVX-512F %s, SHA-NI %s\n", m,
                (f ~ / avx512f /) ? "yes" : "no", (f ~ / sha_ni /) ? "yes" : "no"
        }' /proc/cpuinfo 2>/dev/null || echo "unknown processor"
}

# Percent of the CPU time between two kap_cpustat readings that was
# stolen: "?" when nothing was counted.
kap_steal_percent () {
    echo "$1 $2" | awk '{ dt = $3 - $1; ds = $4 - $2
        if (dt <= 0) print "?"; else printf "%.1f\n", 100 * ds / dt }'
}

kap_now () {
    date +%s.%N
}

# kap_quantile Q: the Q-quantile (0..1, nearest rank: the value of rank
# round(Q * (n - 1)) + 1 in increasing order) of the numbers on stdin,
# "?" for none; report.sh's quartiles are taken the same way
kap_quantile () {
    sort -g | awk -v q="$1" '{ v[NR] = $1 } END {
        if (NR == 0) { print "?"; exit }
        print v[int(q * (NR - 1) + 0.5) + 1]
    }'
}

kap_median () {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "?"; exit }
        if (NR % 2) print v[(NR + 1) / 2]
        else print (v[NR / 2] + v[NR / 2 + 1]) / 2
    }'
}
