#!/bin/sh
# overlay-figures.sh - measure the overlay's fault-handling figures (the
# T-table of reliability_storage.md: T3, T9, T11 and lost-peer detection)
# on this machine, and print them as JSON lines.  Not a test: nothing is
# asserted; run it by hand from the build tree:
#
#   t/scripts/overlay-figures.sh [BUILD-DIR] [REPEATS]
#
# Settings: keepalive 0.1 s, torpid 0.5 s, lost 1.5 s (as the sharness
# tests use), 7 brokers, k = 2, leaf rank 6.  Times come from the client
# side: the moment a signal is sent to the moment the instance shows (or
# an event reports) the change, polled every 20 ms where polling is needed.
set -u
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
repeats=${2:-5}
PATH="$build/src/cmd:$build/t/helpers:$PATH"
export PATH

now () { date +%s.%N; }
since () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# stats NAME VALUES... -> {"figure":NAME,"n":..,"min":..,"median":..,"max":..}
stats () {
    name=$1; shift
    printf '%s\n' "$@" | sort -g | awk -v name="$name" '
        { v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
              printf "{\"figure\":\"%s\",\"unit\":\"s\",\"n\":%d,\"min\":%s,\"median\":%.3f,\"max\":%s}\n",
                     name, NR, v[1], m, v[NR] }'
}

inside=$(mktemp)
cat >"$inside" <<'EOF'
set -u
now () { date +%s.%N; }
since () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
wait_state () {     # RANK PATTERN
    while ! canopy overlay status --rank $1 | grep -q "$2"; do sleep 0.02; done
}
n=$REPEATS
torpid= lost= recover= fail= killlost= rejoin=
rundir=$(canopy getattr rundir)
for i in $(seq 1 $n); do
    # T3: SIGSTOP a leaf, then SIGCONT
    pid=$(canopy getattr --rank 6 broker.pid)
    canopy event sub --count=1 --ready-file=$rundir/ready overlay.lost >/dev/null &
    sub=$!
    while ! test -e $rundir/ready; do sleep 0.01; done
    rm -f $rundir/ready
    t0=$(now)
    kill -STOP $pid
    canopy ping --count 1 --rank 6 >/dev/null 2>&1 &
    ping=$!
    wait_state 6 torpid; torpid="$torpid $(since $t0)"
    wait $sub; lost="$lost $(since $t0)"
    wait $ping; fail="$fail $(since $t0)"
    t1=$(now)
    kill -CONT $pid
    canopy overlay status --wait full --timeout 60 >/dev/null
    recover="$recover $(since $t1)"
    # lost-peer detection: kill -9 a leaf; restart it
    pid=$(canopy getattr --rank 5 broker.pid)
    canopy event sub --count=1 --ready-file=$rundir/ready overlay.lost >/dev/null &
    sub=$!
    while ! test -e $rundir/ready; do sleep 0.01; done
    rm -f $rundir/ready
    t0=$(now)
    kill -9 $pid
    wait $sub; killlost="$killlost $(since $t0)"
    t1=$(now)
    $rundir/restart-5
    canopy overlay status --wait full --timeout 60 >/dev/null
    rejoin="$rejoin $(since $t1)"
done
echo "T3_torpid $torpid"
echo "T3_lost $lost"
echo "T3_pending_request_failed $fail"
echo "T3_recovery_after_SIGCONT $recover"
echo "killed_leaf_lost $killlost"
echo "killed_leaf_restart_to_full $rejoin"
EOF

REPEATS=$repeats canopy start -n 7 -k 2 --exit-mode=leader \
    -Stbon.keepalive-period=0.1 -Stbon.torpid-timeout=0.5 -Stbon.lost-timeout=1.5 \
    -- sh "$inside" 2>/dev/null | while read -r name values; do
    stats "$name" $values
done
rm -f "$inside"

# T11 and T9 on TCP with CURVE: three brokers booted from a file
dir=$(mktemp -d)
cd "$dir" || exit 1
canopy keygen "$dir/curve.cert" >pubkey
set -- $(freeport 3)
{
    printf '[broker]\nrundir = "%s/run"\n[security]\ncurve-cert = "%s/curve.cert"\n' "$dir" "$dir"
    printf '[tbon]\nmaxmsgsize = 65536\n'
    for p in "$@"; do
        printf '[[hosts]]\nhost = "h"\naddr = "127.0.0.1"\nbind = "127.0.0.1"\nport = %s\n' $p
    done
} >sys.toml
for r in 2 1 0; do
    "$build/src/broker/canopy-broker" --config=sys.toml --rank=$r --rundir="$dir/r$r" \
        2>/dev/null &
    echo $! >>pids
done
while ! test -e "$dir/r0/local"; do sleep 0.05; done
export CANOPY_URI="local://$dir/r0/local"
canopy overlay status --wait full --timeout 60 >/dev/null
ep=tcp://127.0.0.1:$1
rej= acc=0
for i in $(seq 1 $repeats); do
    zpeer --identity=s$i --server-key="$(cat pubkey)" --random-key --wait=1 $ep >out
    rej="$rej $(awk '/handshake failed/ { print $(NF-1) / 1000; exit }' out)"
    zpeer --identity=n$i --wait=1 $ep >/dev/null
    zpeer --identity=w$i --server-key="$(canopy keygen --force "$dir/other.cert")" \
        --cert="$dir/curve.cert" --wait=1 $ep >/dev/null
done
acc=$(canopy dmesg | grep -c "unknown peer '[snw][0-9]" || true)
stats T11_rejection_handshake $rej
printf '{"figure":"T11_messages_accepted_from_unauthenticated_peers","attempts":%d,"accepted":%d}\n' \
    $((3 * repeats)) $acc
zpeer --identity=big --server-key="$(cat pubkey)" --cert="$dir/curve.cert" --pad=131072 \
    --wait=2 $ep >big.out
printf '{"figure":"T9_oversized_message_peer_disconnected","maxmsgsize":65536,"sent":131072,"disconnected":%s,"accepted":%d}\n' \
    "$(grep -q '^disconnected' big.out && echo true || echo false)" \
    "$(canopy dmesg | grep -c "unknown peer 'big'" || true)"
canopy shutdown
for p in $(cat pids); do wait $p 2>/dev/null; done
cd / && rm -rf "$dir"
