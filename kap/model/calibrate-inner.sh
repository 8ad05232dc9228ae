#!/bin/bash
# calibrate-inner.sh - the measurements of calibrate.sh, run inside an
# instance (CANOPY_URI set).  "local" is meant for a 1-broker instance,
# "tree" for a larger one.  Prints "name value" lines; times in
# microseconds.  Environment: CANOPY PING KVSB CROWD TMP SCALE (set by
# calibrate.sh).  "grow" runs only the loaded fences and consumer phase,
# on a larger instance: how their CPU grows with the instance; "loaded"
# runs them again on an instance of the size of "tree" (calibrate.sh -r).
set -eu

n=$((20000 / SCALE))
size=$($CANOPY getattr size)
pids=$(for r in $(seq 0 $((size - 1))); do $CANOPY getattr --rank=$r broker.pid; done)

# CPU seconds of every thread of every broker so far (nanosecond counters)
bcpu () {
    for p in $pids; do cat /proc/$p/task/*/schedstat; done |
        awk '{ t += $1 } END { printf "%.6f", t / 1e9 }'
}
# CPU seconds used by the finished children of this shell (user + sys);
# 'times' must run in this shell, not in a command substitution
child_cpu_to () {
    times >"$TMP/times"
    tail -1 "$TMP/times" | awk '{ gsub (/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4 }' >"$1"
}
# measure OPS CMD...: sets wall, bcpu_op, ccpu_op (microseconds per op)
measure () {
    local ops=$1 b0 b1 t0 t1
    shift
    b0=$(bcpu)
    child_cpu_to "$TMP/c0"
    t0=$(date +%s.%N)
    "$@" >"$TMP/out" 2>&1
    t1=$(date +%s.%N)
    child_cpu_to "$TMP/c1"
    b1=$(bcpu)
    wall=$(awk -v a=$t0 -v b=$t1 -v n=$ops 'BEGIN { printf "%.3f", (b - a) * 1e6 / n }')
    bcpu_op=$(awk -v a=$b0 -v b=$b1 -v n=$ops 'BEGIN { printf "%.3f", (b - a) * 1e6 / n }')
    ccpu_op=$(awk -v a=$(cat "$TMP/c0") -v b=$(cat "$TMP/c1") -v n=$ops \
              'BEGIN { printf "%.3f", (b - a) * 1e6 / n }')
}
median_of () {  # the median= field of a benchstat line
    grep -o "median=[0-9.]*" "$TMP/out" | cut -d= -f2
}

if test "$1" = local; then
    # The loops go through the broker thread (CANOPY_DIRECT=0), as the
    # costs are defined: route is the broker thread's, the module costs
    # the module's.  Then kvs.ping on the KVS's direct channel gives what
    # the channel's socket work costs the KVS thread per message.
    nodirect="env CANOPY_DIRECT=0"
    measure $n $nodirect $PING -n $n -w 200 broker
    echo "rtt_broker $(median_of)"
    echo "cpu_ping_broker $bcpu_op"
    echo "cpu_ping_client $ccpu_op"
    measure $n $nodirect $PING -n $n -w 200 kvs
    echo "rtt_kvs $(median_of)"
    echo "cpu_ping_kvs $bcpu_op"
    measure $n $PING -n $n -w 200 kvs
    echo "rtt_kvs_direct $(median_of)"
    echo "cpu_ping_kvs_direct $bcpu_op"
    measure $n $nodirect $PING -n $n -w 200 -s 16384 kvs
    echo "cpu_ping_kvs16k $bcpu_op"
    measure $n $nodirect $PING -n $n -w 200 content
    echo "cpu_ping_content $bcpu_op"
    measure $n $nodirect env CANOPY_KVS_SHM=0 $KVSB seqget $n
    echo "cpu_get $bcpu_op"
    # the same gets read from the broker's shared read cache: the
    # client's CPU alone
    # ten times as many: the client's CPU comes from 'times', in clock
    # ticks of 10 ms, and n gets of a microsecond are less than one
    # (with -q, n = 4000: shm_get came out 0, 2.5 or 7.5 us)
    measure $((n * 10)) $KVSB seqget $((n * 10))
    echo "shm_get_client $ccpu_op"
    # one-key commits, split by the KVS module's own timers
    $CANOPY kvs stats >"$TMP/s0"
    measure $((n / 10)) $nodirect $KVSB commit $((n / 10)) 10
    $CANOPY kvs stats >"$TMP/s1"
    echo "cpu_commit $bcpu_op"
    jq -n -r --slurpfile a "$TMP/s1" --slurpfile b "$TMP/s0" '
        def d(f): ($a[0] | f) - ($b[0] | f);
        def tot(f): ($a[0] | f.count * f.mean) - ($b[0] | f.count * f.mean);
        "apply_us \(tot(.timing.apply) / d(.timing.apply.count))",
        "setroot_us \(tot(.timing."setroot-handle") / d(.timing."setroot-handle".count))"'
    # the client's CPU per put (kap-crowd --progress reports its CPU):
    # from "connected" to "producer phase done", per participant, for
    # 8-byte and 1 KiB values
    for v in 8 1024; do
        $CROWD --progress -N 512 -p $v -C 0 -n $((110 + v % 7)) 2>"$TMP/prog" >/dev/null
        awk -v v=$v '/client CPU/ { gsub (/[()]/, " "); for (i = 1; i <= NF; i++)
                         if ($i == "CPU") c = $(i + 1) }
                     /connected/ { a = c } /producer phase/ { b = c }
                     END { printf "put_%d_us %.3f\n", v, (b - a) * 1000 / 512 }' "$TMP/prog"
    done
    # one fence of 1024 operations
    $CROWD -N 1024 -C 0 -n 101 >/dev/null
    $CANOPY kvs stats | jq -r '"apply_1024_us \(.timing.apply.max)"'
    exit 0
fi

if test "$1" = tree; then
measure $n $PING -n $n -w 200 -r 1 broker
echo "rtt_rank1 $(median_of)"
echo "cpu_ping_rank1 $bcpu_op"
# events published on rank 0 and forwarded down the whole tree
measure $((n / 4)) $CANOPY event pub --count=$((n / 4)) calibrate.event '{}'
echo "cpu_event_all $bcpu_op"
echo "brokers $size"
for i in 1 2 3; do
    $CROWD -N $((size * 16)) -p 64 -C 0 -n $((200 + i)) >/dev/null
done
for r in $(seq 0 $((size - 1))); do $CANOPY kvs --rank $r stats; done >"$TMP/all"
jq -s -r '
    [.[] | select(.rank > 0)] as $r |
    def total(f): $r | map(f.mean * f.count) | add;
    def count(f): $r | map(f.count) | add;
    "relay_decode_us \(total(.timing."relay-decode") / count(.timing."relay-decode"))",
    "relay_encode_us \(total(.timing."relay-encode") / count(.timing."relay-encode"))",
    "relay_bytes \(($r | map(.counters."relay-bytes") | add) / ($r | map(.counters."relays-sent") | add))"' "$TMP/all"
fi

# Under load every message costs more than in the loops above (caches,
# context switches among a hundred threads, ZeroMQ's I/O threads).
# kap-crowd fences of 16 participants per broker, 8-byte and 1 KiB values:
# the CPU of the brokers' own threads (+ ZeroMQ I/O), of their module
# threads and of the client from "connected" to the end of the sync
# phase; calibrate.sh compares them with what the model charges for the
# same runs.
tsnap () {
    for p in $pids; do
        for t in /proc/$p/task/*; do
            read -r comm <"$t/comm"
            read -r ns rest <"$t/schedstat"
            echo "$comm $ns"
        done
    done | awk '{ if ($1 ~ /^m:/) m += $2; else b += $2 }
                END { printf "%.0f %.0f\n", b / 1e3, m / 1e3 }'
}
# the client's CPU (kap-crowd reports it) from its progress line
ccpu () {
    echo "$1" | sed -n 's/.*client CPU \([0-9.]*\) ms.*/\1/p' | awk '{ printf "%.0f\n", $1 * 1000 }'
}
# loaded PREFIX INST FROM TO OPTS...: kap-crowd runs with OPTS, 16
# participants per broker, KAP instances INST+1...; the CPU of each
# thread kind between the progress lines matching FROM and TO, the
# median of $runs runs for each kind (9; 5 with -q): one run's CPU
# differs from the next by up to a third
loaded () {
    local prefix=$1 inst=$2 from=$3 to=$4 i line
    shift 4
    for i in $(seq 1 $runs); do
        while read -r line; do
            case "$line" in
                *"$from"*) tsnap >"$TMP/l0"; ccpu "$line" >"$TMP/c0" ;;
                *"$to"*) tsnap >"$TMP/l1"; ccpu "$line" >"$TMP/c1" ;;
            esac
        done < <($CROWD --progress -N $((size * 16)) "$@" -n $((inst + i)) \
                     2>&1 >/dev/null)
        paste "$TMP/l0" "$TMP/l1" "$TMP/c0" "$TMP/c1" |
            awk '{ print $3 - $1, $4 - $2, $6 - $5 }'
    done | awk -v p=$prefix '{ b[NR] = $1; m[NR] = $2; c[NR] = $3 }
        function med(a,   n, i, j, t) {
            n = NR
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
                    t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
                }
            return a[int ((n + 1) / 2)]
        }
        END { print p "_broker_us", med(b); print p "_module_us", med(m);
              print p "_client_us", med(c) }'
}
runs=$((SCALE > 1 ? 5 : 9))
# a fresh instance's first run costs several times the next (connections,
# first loads): one run unmeasured
if test "$1" != tree; then $CROWD -N $((size * 16)) -p 8 -C 0 -n 300 >/dev/null; fi
# the sync phase: fences of 8-byte and of 1 KiB values
loaded load8 310 connected "sync phase" -p 8 -C 0
loaded load 320 connected "sync phase" -p 1024 -C 0
# the consumer phase: the same 8-byte fence, then 16 gets per participant
# from one directory, to the end of the gets.  A participant starts its
# gets as soon as its own fence is answered, so the gets are not all
# after the last fence's answer: calibrate.sh takes the whole run less
# the fence alone (load8) as the gets' CPU.
loaded get 330 connected "consumer phase" -p 8 -c 16
if test "$1" = grow; then echo "brokers $size"; fi
