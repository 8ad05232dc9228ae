#!/bin/sh
# fence-profile.sh - where the time of a KAP run goes, broker by broker.
#
#   bench/fence-profile.sh [-b BUILDDIR] [-n BROKERS] [-k FANOUT] [-r ROUNDS]
#                          [-S ATTR=VALUE]... [-j FILE] [-- KAP-CROWD OPTIONS]
#
# Starts an instance of BROKERS brokers (default 64, fan-out 2), runs
# kap-crowd ROUNDS times (default 3; each round a fresh KAP instance
# number, so nothing is cached from the round before) and then reads every
# broker's kvs.stats.  Prints, per run, the KAP latencies and the cost
# breakdown the KVS module measured:
#   relays       kvs.relay messages sent up the tree (a perfectly merged
#                fence sends BROKERS-1), and their bytes
#   decode/encode  CPU time spent decoding and re-encoding relays, summed
#                over brokers
#   apply        rank 0's time per applied round, and operations per round
#   setroot lag  time from rank 0's publication of a new root to each
#                broker's handling of it (mean over brokers and events of
#                the round, and the worst seen so far)
#   loads        objects faulted in from parents, and their bytes
#   cpu_s        CPU seconds all brokers used during the round (the
#                figure least disturbed by other load on the machine)
# The default KAP run is 16 participants per broker, 64-byte unique values,
# 4 gets each.  -S sets a broker attribute (e.g. -S kvs.prime-max=0).
# Output: a table on stdout and, with -j FILE, the figures as JSON lines.
set -eu

build=build
size=64
k=2
rounds=3
json=
attrs=
while getopts b:n:k:r:j:S:h opt; do
    case $opt in
        b) build=$OPTARG ;;
        n) size=$OPTARG ;;
        k) k=$OPTARG ;;
        r) rounds=$OPTARG ;;
        j) json=$OPTARG ;;
        S) attrs="$attrs -S $OPTARG" ;;
        h) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "fence-profile: see -h" >&2; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
test "${1:-}" = "--" && shift
build=$(cd "$build" && pwd)
canopy=$build/src/cmd/canopy
crowd=$build/kap/kap-crowd
test -x "$crowd" || { echo "fence-profile: $crowd missing (make -C $build)" >&2; exit 1; }
command -v jq >/dev/null || { echo "fence-profile: jq is needed" >&2; exit 1; }
if test $# -eq 0; then
    set -- -N $((size * 16)) -p 64 -c 4
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/inner.sh" <<EOF
#!/bin/sh
set -e
pids=\$(r=0; while test \$r -lt $size; do "$canopy" getattr --rank=\$r broker.pid; r=\$((r + 1)); done)
# CPU seconds used so far by all brokers (utime + stime, all threads)
cpu () {
    for p in \$pids; do cat /proc/\$p/stat; done |
        awk -v hz=\$(getconf CLK_TCK) '{ sub (/^.*\\) /, ""); t += \$12 + \$13 } END { printf "%.3f", t / hz }'
}
n=0
while test \$n -lt $rounds; do
    n=\$((n + 1))
    # counters are cumulative: read them before and after each round
    r=0; while test \$r -lt $size; do "$canopy" kvs --rank \$r stats; r=\$((r + 1)); done >"$tmp/before"
    c0=\$(cpu)
    "$crowd" -n \$n --json="$tmp/kap.json" "\$@" >/dev/null
    c1=\$(cpu)
    r=0; while test \$r -lt $size; do "$canopy" kvs --rank \$r stats; r=\$((r + 1)); done >"$tmp/after"
    jq -n -c --argjson cpu "\$(awk -v a=\$c0 -v b=\$c1 'BEGIN { printf "%.3f", b - a }')" --slurpfile a "$tmp/after" --slurpfile b "$tmp/before" \\
          --slurpfile kap "$tmp/kap.json" '
        def d(f): ([\$a[] | f] | add) - ([\$b[] | f] | add);
        def tot(f): ([\$a[] | f.count * f.mean] | add) - ([\$b[] | f.count * f.mean] | add);
        def cnt(f): ([\$a[] | f.count] | add) - ([\$b[] | f.count] | add);
        {
          broker_cpu_s: \$cpu,
          sync_ms: (\$kap[0].metrics.sync.mean_us / 1000),
          sync_max_ms: (\$kap[0].metrics.sync.max_us / 1000),
          get_ms: (\$kap[0].metrics.get.mean_us / 1000),
          consumer_max_ms: (\$kap[0].wallclock.consumer.max_us / 1000),
          relays: d(.counters."relays-sent"),
          relay_kb: (d(.counters."relay-bytes") / 1024),
          decode_ms: (tot(.timing."relay-decode") / 1000),
          encode_ms: (tot(.timing."relay-encode") / 1000),
          applies: d(.counters.applies),
          apply_ms: ((tot(.timing.apply) / ([cnt(.timing.apply), 1] | max)) / 1000),
          lag_mean_ms: ((tot(.timing."setroot-lag") / ([cnt(.timing."setroot-lag"), 1] | max)) / 1000),
          lag_max_ms: (([\$a[] | .timing."setroot-lag".max] | max) / 1000),
          loads: d(.counters.loads),
          load_kb: (d(.counters."load-bytes") / 1024)
        }'
done
EOF
chmod +x "$tmp/inner.sh"
echo "fence-profile: $size brokers (k=$k), kap-crowd $*, $rounds rounds" >&2
"$canopy" start -n "$size" -k "$k" $attrs -- "$tmp/inner.sh" "$@" >"$tmp/rows"
test -n "$json" && cp "$tmp/rows" "$json"
printf "%-5s %7s %8s %8s %8s %9s %7s %8s %8s %8s %7s %8s %8s %8s %6s %8s\n" \
    round cpu_s sync_ms sync_max get_ms cons_max relays relay_kb decode encode \
    applies apply_ms lag_mean lag_max loads load_kb
n=0
while read -r row; do
    n=$((n + 1))
    echo "$row" | jq -r --arg n "$n" '[$n, .broker_cpu_s, .sync_ms, .sync_max_ms, .get_ms,
        .consumer_max_ms, .relays, .relay_kb, .decode_ms, .encode_ms, .applies,
        .apply_ms, .lag_mean_ms, .lag_max_ms, .loads, .load_kb] | @tsv' |
    awk -F'\t' '{ printf "%-5s %7.2f %8.1f %8.1f %8.2f %9.1f %7d %8.0f %8.1f %8.1f %7d %8.2f %8.1f %8.1f %6d %8.0f\n",
                  $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 }'
done <"$tmp/rows"
