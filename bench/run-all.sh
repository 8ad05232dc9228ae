#!/bin/bash
# run-all.sh - run every benchmark in bench/ and print their tables.
#
# Usage: run-all.sh [--quick]
#   --quick   fewer rounds and round trips (a smoke run, not a measurement)
# Environment: CANOPY_BUILD_DIR (default: the build tree beside bench/);
# 'make -C build/bench bench' sets it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
: "${CANOPY_BUILD_DIR:=$(cd "$here/.." && pwd)/build}"
export CANOPY_BUILD_DIR

ping_opts=""
start_opts=""
rounds=3
case "${1:-}" in
    --quick) ping_opts="-r 2 -n 300"; start_opts="-r 2"; rounds=1 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "run-all: unknown argument '$1'" >&2; exit 1 ;;
esac

echo "=== canopy benchmarks"
echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "host:    $(uname -srm), $(nproc) cores"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) at start"
if rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null); then
    echo "commit:  $rev"
fi
echo "note:    the machine may be shared; every benchmark interleaves its"
echo "         measurements in rounds and reports medians"

echo
echo "=== ping (bench-ping.sh)"
# shellcheck disable=SC2086
bash "$here/bench-ping.sh" $ping_opts
echo
echo "=== start (bench-start.sh)"
# shellcheck disable=SC2086
bash "$here/bench-start.sh" $start_opts
echo
echo "=== KVS beside Redis (bench-kvs.sh)"
sh "$here/bench-kvs.sh" "$CANOPY_BUILD_DIR" "$rounds"
echo
echo "=== MPI start-up and PMI barrier (bench-run.sh)"
sh "$here/bench-run.sh" "$CANOPY_BUILD_DIR" "$((rounds + 2))"
echo
echo "=== JSON decoding beside jansson (json-bench)"
if test "$rounds" = 1; then
    "$CANOPY_BUILD_DIR/bench/json-bench" -r 3 -n 200
else
    "$CANOPY_BUILD_DIR/bench/json-bench"
fi
echo
echo "=== SHA-256 batches beside libsodium (hash-bench)"
if test "$rounds" = 1; then
    "$CANOPY_BUILD_DIR/bench/hash-bench" -r 3 -n 20
else
    "$CANOPY_BUILD_DIR/bench/hash-bench"
fi
echo
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) at end"
