#!/bin/bash
# bench-ping.sh - canopy ping round trips side by side with a bare libzmq
# DEALER/ROUTER ping-pong (the floor for one hop), reported as ratios.
#
# Starts a 16-broker instance (canopy start -n 16 -k 2) and, inside it,
# runs ROUNDS rounds; each round times, for every payload size,
#   zmq     zmq-pingpong: two processes, one ipc:// hop
#   local   canopy-pingbench to the local broker (rank 0): one hop
#   rank15  canopy-pingbench to rank 15: the local hop, then 0->1->3->7->15
# in alternating order (forward on odd rounds, reversed on even ones) so
# that slow drifts of machine load hit all three alike.  The table gives
# the median over rounds of each round's median (and of its p99), and the
# ratios canopy/zmq.  "per hop" divides the rank-15 ratio by its 5 hops.
#
# Usage: bench-ping.sh [-r ROUNDS] [-n COUNT] [-s "SIZE ..."] [-o FILE]
#   -r  rounds (default 5)         -n  round trips per measurement (2000)
#   -s  payload sizes in bytes ("0 1024 16384")
#   -o  also write the raw summary lines to FILE
# Environment: CANOPY_BUILD_DIR (default: the build tree beside bench/).
set -eu

rounds=5
count=2000
sizes="0 1024 16384"
rawout=""

if [ "${1:-}" = "--inner" ]; then
    inner=yes
    shift
else
    inner=no
fi
while getopts "r:n:s:o:h" opt; do
    case $opt in
        r) rounds=$OPTARG ;;
        n) count=$OPTARG ;;
        s) sizes=$OPTARG ;;
        o) rawout=$OPTARG ;;
        h) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) exit 1 ;;
    esac
done

here=$(cd "$(dirname "$0")" && pwd)
: "${CANOPY_BUILD_DIR:=$(cd "$here/.." && pwd)/build}"
canopy=$CANOPY_BUILD_DIR/src/cmd/canopy
zmqpp=$CANOPY_BUILD_DIR/bench/zmq-pingpong
pingbench=$CANOPY_BUILD_DIR/bench/canopy-pingbench
for p in "$canopy" "$zmqpp" "$pingbench"; do
    if [ ! -x "$p" ]; then
        echo "bench-ping: $p not found; build first (make -C build/bench bench)" >&2
        exit 1
    fi
done

# The far rank and its hop count (client->broker plus its depth in the tree).
far=15
far_hops=5

if [ $inner = no ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/bench-ping.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    export BENCH_PING_RESULTS=$work/results
    : >"$BENCH_PING_RESULTS"
    "$canopy" start -n 16 -k 2 -- \
        bash "$0" --inner -r "$rounds" -n "$count" -s "$sizes"
    [ -n "$rawout" ] && cp "$BENCH_PING_RESULTS" "$rawout"

    # median of the numbers on stdin
    median () { sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        printf "%.1f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    # field F (median|p99) of the lines labelled L with size S
    pick () { awk -v l="$1:" -v s="size=$2" -v f="$3=" '$1 == l && $3 == s {
        for (i = 4; i <= NF; i++) if (index ($i, f) == 1) print substr ($i, length (f) + 1) }' \
        "$BENCH_PING_RESULTS" | median; }
    ratio () { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { if (b > 0) printf "%.2f", a / b / d; else print "nan" }'; }

    echo
    echo "ping round trips: 16 brokers, k=2; $rounds rounds x $count round trips, interleaved"
    echo "(microseconds; median over rounds of each round's median / p99)"
    echo
    printf "%-7s | %-15s | %-15s %-5s | %-15s %-5s %-8s\n" \
        "payload" "zmq 1 hop" "canopy local" "ratio" "canopy rank $far" "ratio" "per hop"
    printf "%-7s | %-15s | %-15s %-5s | %-15s %-5s %-8s\n" \
        "bytes" "med / p99" "med / p99" "" "med / p99" "" "($far_hops hops)"
    echo "--------+-----------------+-----------------------+--------------------------------"
    for s in $sizes; do
        zm=$(pick zmq "$s" median); zp=$(pick zmq "$s" p99)
        lm=$(pick local "$s" median); lp=$(pick local "$s" p99)
        fm=$(pick rank$far "$s" median); fp=$(pick rank$far "$s" p99)
        printf "%-7s | %6s / %-6s | %6s / %-6s %-5s | %6s / %-6s %-5s %-8s\n" \
            "$s" "$zm" "$zp" "$lm" "$lp" "$(ratio "$lm" "$zm")" \
            "$fm" "$fp" "$(ratio "$fm" "$zm")" "$(ratio "$fm" "$zm" $far_hops)"
    done
    echo
    echo "goal: canopy local ping within 2x the bare zmq round trip"
    exit 0
fi

# Inside the instance: CANOPY_URI points at rank 0.
run_one () {    # kind size
    case $1 in
        zmq) "$zmqpp" -n "$count" -s "$2" -l zmq ;;
        local) "$pingbench" -n "$count" -s "$2" -l local ;;
        rank$far) "$pingbench" -n "$count" -s "$2" -r $far -l rank$far ;;
    esac
}
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="zmq local rank$far"; else order="rank$far local zmq"; fi
    for s in $sizes; do
        for kind in $order; do
            line=$(run_one "$kind" "$s")
            echo "round $r: $line" >&2
            echo "$line" >>"$BENCH_PING_RESULTS"
        done
    done
done
