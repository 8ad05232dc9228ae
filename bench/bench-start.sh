#!/bin/bash
# bench-start.sh - wall time of 'canopy start -n N true' for several N.
#
# Each round times every size once, in alternating order (ascending on odd
# rounds, descending on even ones), so that drifts of machine load hit all
# sizes alike; the table gives the median and minimum over rounds.
#
# Beside it, the "spawn floor": the time to fork and exec N canopy-broker
# processes that exit at once ('canopy-broker --help', in parallel, from
# this shell) - what starting N brokers costs before any of them does any
# work.  The ratio start/floor shows what wiring the tree adds.
#
# Usage: bench-start.sh [-r ROUNDS] [-N "N ..."] [-k K]
#   -r  rounds (default 5)   -N  sizes (default "1 16 64 256")   -k  fan-out (2)
# Environment: CANOPY_BUILD_DIR (default: the build tree beside bench/).
set -eu

rounds=5
sizes="1 16 64 256"
k=2
while getopts "r:N:k:h" opt; do
    case $opt in
        r) rounds=$OPTARG ;;
        N) sizes=$OPTARG ;;
        k) k=$OPTARG ;;
        h) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) exit 1 ;;
    esac
done

here=$(cd "$(dirname "$0")" && pwd)
: "${CANOPY_BUILD_DIR:=$(cd "$here/.." && pwd)/build}"
canopy=$CANOPY_BUILD_DIR/src/cmd/canopy
broker=$CANOPY_BUILD_DIR/src/broker/canopy-broker
for p in "$canopy" "$broker"; do
    if [ ! -x "$p" ]; then
        echo "bench-start: $p not found; build first (make -C build/bench bench)" >&2
        exit 1
    fi
done

results=$(mktemp "${TMPDIR:-/tmp}/bench-start.XXXXXX")
trap 'rm -f "$results"' EXIT

now () { echo "$EPOCHREALTIME"; }
elapsed () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }

time_start () {     # N -> seconds
    local t0 t1
    t0=$(now)
    "$canopy" start -n "$1" -k "$k" true
    t1=$(now)
    elapsed "$t0" "$t1"
}

time_floor () {     # N -> seconds
    local t0 t1 i
    t0=$(now)
    for i in $(seq 1 "$1"); do
        "$broker" --help >/dev/null &
    done
    wait
    t1=$(now)
    elapsed "$t0" "$t1"
}

# warm the page cache and the dynamic loader once
"$canopy" start -n 1 true

for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order=$sizes; else order=$(echo $sizes | tr ' ' '\n' | sort -rn); fi
    for n in $order; do
        s=$(time_start "$n")
        f=$(time_floor "$n")
        echo "round $r: n=$n start=$s floor=$f" >&2
        echo "$n $s $f" >>"$results"
    done
done

stat () {   # N column -> "median min"
    awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results" | sort -g |
        awk '{ v[NR] = $1 } END {
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.3f %.3f", m, v[1] }'
}

echo
echo "canopy start -n N -k $k true: wall time; $rounds rounds, interleaved (seconds)"
echo
printf "%-6s | %-8s %-8s | %-12s | %-6s\n" "N" "median" "min" "spawn floor" "ratio"
echo "-------+-------------------+--------------+-------"
for n in $sizes; do
    read -r sm smin <<<"$(stat "$n" 2)"
    read -r fm fmin <<<"$(stat "$n" 3)"
    ratio=$(awk -v a="$sm" -v b="$fm" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "nan" }')
    printf "%-6s | %-8s %-8s | %-12s | %-6s\n" "$n" "$sm" "$smin" "$fm" "$ratio"
done
echo
echo "goals: -n 16 under 0.6 s (a flux-core test instance of 16 brokers: about 3 s"
echo "here), -n 256 under 10 s"
