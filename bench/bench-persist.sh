#!/bin/bash
# bench-persist.sh - persistence figures from a running instance:
#  1. restart recovery time vs store size: a store of N random 4 KiB blobs
#     plus a KVS checkpoint is reopened with content.validate=none, quick
#     (PRAGMA quick_check) and full (every blob re-read and re-hashed);
#     reports the check time, blobs per second revalidated, and the wall
#     time of 'canopy start' until the KVS answers;
#  2. YCSB-style mixes of gets and commits (all-read, 95/5, 50/50,
#     all-write; and 50/50 and all-write with KVS_SYNC) from 4 clients on a
#     4-broker instance with a statedir: ops/s, p50/p99 latency, and write
#     amplification (bytes rank 0 wrote to disk per byte committed, from
#     /proc/<broker pid>/io).
# Rounds are interleaved and medians reported (the machine may be shared).
#
# Usage: bench-persist.sh [--full] [-r ROUNDS] [-d DIR]
#   --full     stores up to 1.6 M blobs, 20000 ops per mix, 5 rounds
#              (default: up to 400 k blobs, 4000 ops per mix, 3 rounds)
#   -r ROUNDS  rounds
#   -d DIR     where the stores go (default: $CANOPY_BUILD_DIR/bench-data)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
: "${CANOPY_BUILD_DIR:=$(cd "$here/.." && pwd)/build}"
canopy=$CANOPY_BUILD_DIR/src/cmd/canopy
kfs=$CANOPY_BUILD_DIR/bench/kfs-bench
ycsb=$CANOPY_BUILD_DIR/bench/canopy-ycsb

counts="20000 100000 400000" ops=4000 rounds=3 dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --full) counts="20000 100000 400000 1600000"; ops=20000; rounds=5 ;;
        -r) rounds=$2; shift ;;
        -d) dir=$2; shift ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-persist: unknown argument '$1'" >&2; exit 1 ;;
    esac
    shift
done
for p in "$canopy" "$kfs" "$ycsb"; do
    [ -x "$p" ] || { echo "bench-persist: $p is missing (build first)" >&2; exit 1; }
done
: "${dir:=$CANOPY_BUILD_DIR/bench-data}"
mkdir -p "$dir"
max=0
for n in $counts; do [ "$n" -gt "$max" ] && max=$n; done
need=$(( max * 5 / 1024 * 12 / 10 + 1024 ))     # ~5 KiB per blob on disk, + YCSB
avail=$(( $(df -Pk "$dir" | awk 'NR == 2 { print $4 }') / 1024 ))
if [ "$avail" -lt "$need" ]; then
    echo "bench-persist: needs about $need MiB free in $dir, only $avail MiB available" >&2
    exit 1
fi

median () { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int ((NR + 1) / 2)]; else print 0 }'; }
now () { date +%s.%N; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo
echo "=== restart recovery vs store size (4 KiB random blobs; page cache warm)"
rec=$dir/recovery
rm -rf "$rec"
"$canopy" start --statedir="$rec" -- "$canopy" kvs put --sync warm=1
have=0
printf "%9s %8s %-6s %9s %12s %9s\n" blobs file-MiB check check-s blobs/s start-s
for n in $counts; do
    "$kfs" fill --dir "$rec" --blobs $((n - have)) --size 4096 >/dev/null
    have=$n
    for mode in none quick full; do : >"$dir/rec.$mode"; done
    for r in $(seq 1 "$rounds"); do
        for mode in none quick full; do
            # the start is timed until the KVS answers; the check time is
            # the one content-sqlite logs when it opens the store
            t0=$(now)
            "$canopy" start --statedir="$rec" -S content.validate=$mode -- \
                sh -c "$canopy kvs get warm >/dev/null && $canopy dmesg" >"$dir/rec.log"
            t1=$(now)
            cs=$(sed -n 's/.*content-sqlite.info: opened store.* check in \([0-9.]*\)s.*/\1/p' \
                 "$dir/rec.log")
            fb=$(du -bc "$rec"/content*.sqlite* | tail -1 | cut -f1)
            echo "${cs:-0} $(echo "$t1 - $t0" | bc -l) $fb" >>"$dir/rec.$mode"
        done
    done
    for mode in none quick full; do
        cs=$(awk '{ print $1 }' "$dir/rec.$mode" | median)
        wall=$(awk '{ print $2 }' "$dir/rec.$mode" | median)
        fb=$(awk '{ print $3 }' "$dir/rec.$mode" | median)
        rate=$(awk -v n="$n" -v c="$cs" -v m="$mode" \
            'BEGIN { if (c > 0 && m != "none") printf "%.0f", n / c; else print "-" }')
        printf "%9d %8.0f %-6s %9.3f %12s %9.3f\n" "$n" "$(echo "$fb / 1048576" | bc -l)" \
            "$mode" "$cs" "$rate" "$wall"
    done
done
rm -rf "$rec"

echo
echo "=== YCSB-style mixes: 4 clients on rank 0 of 4 brokers, 10000 keys of 1 KiB,"
echo "    $ops ops per run, $rounds rounds; latency in us; wa = disk bytes / committed bytes"
yd=$dir/ycsb
rm -rf "$yd"
raw=$dir/ycsb.raw
: >"$raw"
cat >"$dir/ycsb.sh" <<INNER
set -e
"$ycsb" --load --keys 10000 --value-size 1024 >/dev/null
pid=\$("$canopy" getattr broker.pid)
for r in \$(seq 1 $rounds); do
    for mix in 100 95 50 0; do
        echo "sync=0 \$("$ycsb" --clients 4 --ops $ops --keys 10000 --read-pct \$mix --broker-pid \$pid)"
    done
    for mix in 50 0; do
        echo "sync=1 \$("$ycsb" --clients 4 --ops $((ops / 4)) --keys 10000 --read-pct \$mix --sync --broker-pid \$pid)"
    done
done
INNER
"$canopy" start -n 4 --statedir="$yd" -- bash "$dir/ycsb.sh" >"$raw"
rm -rf "$yd"
printf "%-4s %-5s %9s %9s %9s %10s %10s %8s %6s\n" sync read% ops/s read-p50 read-p99 \
    write-p50 write-p99 wa-tree wa
for s in 0 1; do
    for mix in 100 95 50 0; do
        grep -q "^sync=$s .*read-pct=$mix " "$raw" || continue
        vals () { grep "^sync=$s .*read-pct=$mix " "$raw" | grep -o " $1=[0-9.]*" | cut -d= -f2 | median; }
        printf "%-4s %-5s %9.0f %9.0f %9.0f %10.0f %10.0f %8.2f %6.2f\n" "$s" "$mix" \
            "$(vals ops/s)" "$(vals read-p50)" "$(vals read-p99)" "$(vals write-p50)" \
            "$(vals write-p99)" "$(vals wa-tree)" "$(vals wa)"
    done
done
echo "raw: $raw"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) at end"
