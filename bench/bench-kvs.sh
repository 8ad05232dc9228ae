#!/bin/sh
# bench-kvs.sh - KVS throughput beside Redis, in one run.
#
#   bench/bench-kvs.sh [BUILDDIR] [ROUNDS]
#
# Starts a redis-server on 127.0.0.1 (a free port, no persistence) and a
# 1-broker canopy instance, then alternates, ROUNDS times (default 3):
#   canopy: sequential get (read from the broker's shared read cache, and
#           asked of the KVS with CANOPY_KVS_SHM=0), 16/64 gets in flight,
#           one-key commits into a 1000-key directory (1 client, 8
#           clients), 1000 puts + 1 commit
#   redis:  redis-benchmark GET and SET with 1 and 16 clients
# and prints medians with the ratios the goals are stated in, and the
# reference figures measured for modern flux-core on this machine.
set -eu

build=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
canopy=$build/src/cmd/canopy
bench=$build/bench/kvs-bench
tmp=$(mktemp -d)
redis_pid=
cleanup () {
    test -n "$redis_pid" && kill "$redis_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

command -v redis-server >/dev/null || { echo "bench-kvs: redis-server not installed" >&2; exit 1; }
test -x "$bench" || { echo "bench-kvs: $bench missing (make -C $build/bench)" >&2; exit 1; }
port=$(awk 'BEGIN { srand (); print 20000 + int (rand () * 20000) }')
redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --daemonize no --loglevel warning >"$tmp/redis.log" 2>&1 &
redis_pid=$!
for i in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done

redis_rate () {     # test clients
    redis-benchmark -h 127.0.0.1 -p "$port" -t "$1" -c "$2" -n 100000 -q --csv 2>/dev/null |
        tail -1 | awk -F'"' '{ print $4 }'
}

cat >"$tmp/inner.sh" <<EOS
#!/bin/sh
set -eu
for r in \$(seq $rounds); do
    echo "round \$r/$rounds ..." >&2
    $bench seqget 200000 | sed "s/^/canopy /"
    CANOPY_KVS_SHM=0 $bench seqget 20000 | sed "s/seqget/seqgetkvs/;s/^/canopy /"
    echo "redis get1 \$(redis_rate get 1)"
    $bench inflight 100000 16 | sed "s/inflight/inflight16/;s/^/canopy /"
    $bench inflight 100000 64 | sed "s/inflight/inflight64/;s/^/canopy /"
    echo "redis get16 \$(redis_rate get 16)"
    $bench commit 3000 1000 | sed "s/^/canopy /"
    echo "redis set1 \$(redis_rate set 1)"
    $bench commitpar 4000 1000 8 | sed "s/^/canopy /"
    echo "redis set16 \$(redis_rate set 16)"
    $bench bulk 20 | sed "s/^/canopy /"
done
EOS
sed -i "s|redis_rate|redis_rate_fn|g" "$tmp/inner.sh"
{
    echo "redis_rate_fn () { redis-benchmark -h 127.0.0.1 -p $port -t \"\$1\" -c \"\$2\" -n 100000 -q --csv 2>/dev/null | tail -1 | awk -F'\"' '{ print \$4 }'; }"
    cat "$tmp/inner.sh"
} >"$tmp/inner2.sh"
chmod +x "$tmp/inner2.sh"
"$canopy" start -n 1 -- sh "$tmp/inner2.sh" >"$tmp/results"

med () {    # rows matching $1: median of the rate
    grep "$1" "$tmp/results" | sed 's/.*"rate":\([0-9.]*\).*/\1/; s/^redis [a-z0-9]* //' |
        sort -n | awk '{ v[NR] = $1 } END { if (!NR) { print 0; exit }
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.0f", m }'
}
sg=$(med '"seqget"'); sgk=$(med '"seqgetkvs"'); i16=$(med '"inflight16"'); i64=$(med '"inflight64"')
c1=$(med '"commit"'); c8=$(med '"commitpar"'); bulk=$(med '"bulk"')
rg1=$(med '^redis get1 '); rg16=$(med '^redis get16 '); rs1=$(med '^redis set1 ')
rs16=$(med '^redis set16 ')
ratio () { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo
echo "KVS throughput, operations/s (median of $rounds rounds; 1-broker instance)"
printf "%-36s %10s   %-30s\n" "measurement" "canopy" "compared with"
printf "%-36s %10s   redis GET, 1 client %s: %sx (goal >= 0.5)\n" \
    "sequential get, 1 client" "$sg" "$rg1" "$(ratio "$sg" "$rg1")"
printf "%-36s %10s   redis GET, 1 client %s: %sx; the cache: %sx\n" \
    "... asked of the KVS (no shm cache)" "$sgk" "$rg1" "$(ratio "$sgk" "$rg1")" \
    "$(ratio "$sg" "$sgk")"
printf "%-36s %10s   redis GET, 16 clients %s: %sx (goal >= 1)\n" \
    "gets in flight (16), 1 client" "$i16" "$rg16" "$(ratio "$i16" "$rg16")"
printf "%-36s %10s   redis GET, 16 clients %s: %sx\n" \
    "gets in flight (64), 1 client" "$i64" "$rg16" "$(ratio "$i64" "$rg16")"
printf "%-36s %10s   flux-core 341/s: %sx (goal >= 10); redis SET 1 client %s\n" \
    "one-key commits, 1000-key dir, 1 cl." "$c1" "$(ratio "$c1" 341)" "$rs1"
printf "%-36s %10s   flux-core 540/s: %sx; redis SET 16 clients %s\n" \
    "one-key commits, 8 clients" "$c8" "$(ratio "$c8" 540)" "$rs16"
printf "%-36s %10s   puts/s including the commit\n" "1000 puts then one commit" "$bulk"
