#!/bin/bash
# calibrate.sh - measure the model's per-message costs on this machine.
#
#   kap/model/calibrate.sh [-b BUILDDIR] [-o COSTS.json] [-n BROKERS]
#                          [-g BROKERS] [-r ROUNDS] [-q] [-f RAW]
#
# Every cost of costs.h is derived from a small measurement on a live
# instance, with CPU time read from /proc (brokers) and from the shell's
# child accounting (clients), so that other load on the machine inflates
# latencies rather than costs.  The loops run on one core (taskset), the
# loaded runs on every core:
#   client_msg, route, ipc_lat   broker.ping to the local broker: client and
#                                broker CPU per ping, the rest of the round
#                                trip is the wire
#   net_lat                      broker.ping to rank 1, minus the local one
#   direct_msg                   kvs.ping on the KVS's direct channel: the
#                                KVS thread's CPU per message beyond the
#                                ping handler (the loops above and below
#                                go through the broker, CANOPY_DIRECT=0)
#   lookup                       kvs_get of a cached key asked of the KVS
#                                (CANOPY_KVS_SHM=0; walk: 1 us per path
#                                component, assumed)
#   shm_get                      the same kvs_get read from the broker's
#                                shared read cache: the client's CPU
#   relay_byte, load_byte        the extra broker CPU per byte of a 16 KiB
#                                kvs.ping payload, per thread crossing
#   load_serve, load_send, ack   the content and KVS module ping handlers
#   fence_req, apply, setroot,   one-key commits on one broker, split by the
#   respond                      KVS module's own timers (kvs.stats timing)
#   apply_op                     rank 0's apply time for 1024 operations
#   put, put_byte                kap-crowd's own CPU per put (--progress),
#                                8-byte and 1 KiB values
#   relay_send, relay_recv       the relay timers of a 7-broker kap-crowd run
#   event_fwd                    broker CPU per event published on rank 0
#                                and forwarded down the second instance
#   cores                        the machine's processor count
# Then, because a fence under load costs more per message than these
# loops (a hundred threads waking one another on two cores, ZeroMQ's I/O
# threads), kap-crowd fences on the second instance (16 participants per
# broker, the median of 9 runs) are measured per thread kind (broker +
# I/O, modules, the client):
#   sync_broker, sync_module,    measured CPU / the model's charge for the
#   sync_client                  fence of 8-byte values (at least 0.25):
#                                factors for the sync phase's messages.
#                                The broker's is large (x12-19: messages
#                                between brokers cross ZeroMQ and its I/O
#                                threads, the loops' local ones do not),
#                                the modules' and the client's 1.3-2
#   route_byte, kvs_byte         what the fence of 1 KiB values (kvs.prime
#                                off: the model leaves that event out) cost beyond
#                                the model's charge with those factors, per
#                                byte of the messages the broker threads
#                                and the KVS threads handled (not the
#                                setroot event on the KVS: scanned lazily)
#   get_module, get_client       the same for the consumer phase: a loaded
#                                run of the 8-byte fence and 16 gets per
#                                participant less the fence alone
#                                (kap-crowd sends gets in bursts, read and
#                                answered together, cheaper per message
#                                than the loops), measured CPU / what the
#                                model charges for its gets (at least
#                                0.1).  Separate from the sync factors:
#                                scaling gets by the fence's made them 2-3x
#                                slow.  No broker factor: with the direct
#                                channel gets do not cross the broker
#                                thread, whose CPU in that phase is other
#                                work
#   get_grow_module,             the same two factors measured again on a
#   get_grow_client,             third, larger instance: the exponent x of
#   grow_brokers                 (brokers / grow_brokers)^x that takes one
#                                to the other (0 to 1), and the second
#                                instance's size
#   sync_grow                    the same for the 8-byte fence's CPU, the
#                                brokers' threads together (broker, I/O
#                                and modules): measured over the model's
#                                charge on the third instance and on the
#                                second
#   sync_grow_client             the same for the client's CPU alone (one
#                                process: per participant it grows far
#                                less than a broker's threads do)
#   byte_grow                    the same for route_byte and kvs_byte: what
#                                the fence of 1 KiB values cost on the
#                                third instance beyond the model's charge
#                                without byte costs (the messages grown by
#                                sync_grow), over what those byte costs
#                                charge for its bytes; -1 to 1, negative
#                                when a byte costs less there
# -n sets the size of the second instance, where the tree costs and the
# loaded runs are measured (default 15 brokers, k=2); -g the size of the
# third (default 127; 0 skips it: no growth).  -r measures in ROUNDS
# rounds (default 3, 1 with -q: the first, then after the third
# instance, then once more), each the one-core loops followed at once by
# the loaded runs of the second size, and keeps the round whose 8-byte
# fence cost the least CPU, all its measurements together, loops
# included: the load factors are the loaded CPU over the loops', so both
# must come from one state of the machine (a calibration whose loops ran
# 1.8x faster than its loaded runs a minute later doubled the factors),
# and the gets' CPU is a difference of two loaded figures.  Other load
# on a shared machine only adds CPU, and on this one the loaded 8-byte
# fence of 15 brokers cost 5.7, 9.7 and 11.4 ms of broker CPU in three
# calibrations minutes apart (2026-11-29, 15:08-15:27Z).  The third
# instance's runs are not repeated: their 8-byte fence cost 125-130 ms
# of broker CPU in the four calibrations of 15:08-15:27Z and 88-144 ms
# in the ten of 17:19-17:55Z, but running them in every round and
# keeping the cheapest made the calibrations worse, not steadier
# (kap/model/README.md).
# With -q the counts are cut by 5 and there is one round unless -r says
# otherwise (a rough calibration in about ten seconds).
# With -f RAW nothing is measured: the costs are derived again from the
# measurements an earlier calibration saved (COSTS.raw beside its
# COSTS.json), with this build's model, for when the model changed and
# the machine's state of then is the one to compare with.  -n and -g
# must be the sizes it measured.
# Writes COSTS.json (default: costs.json here) and prints it.
set -eu

build=build
out=costs.json
scale=1
nb=15
ng=127
rounds=
from=
while getopts b:o:n:g:r:f:qh opt; do
    case $opt in
        b) build=$OPTARG ;;
        o) out=$OPTARG ;;
        n) nb=$OPTARG ;;
        g) ng=$OPTARG ;;
        r) rounds=$OPTARG ;;
        q) scale=5 ;;
        f) from=$OPTARG ;;
        h) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "calibrate: see -h" >&2; exit 1 ;;
    esac
done
build=$(cd "$build" && pwd)
canopy=$build/src/cmd/canopy
ping=$build/bench/canopy-pingbench
kvsb=$build/bench/kvs-bench
crowd=$build/kap/kap-crowd
for x in "$canopy" "$ping" "$kvsb" "$crowd"; do
    test -x "$x" || { echo "calibrate: $x missing (make -C $build)" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "calibrate: jq is needed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

inner=$(dirname "$0")/calibrate-inner.sh
case $nb$ng in
    *[!0-9]*) echo "calibrate: -n and -g take a number of brokers" >&2; exit 1 ;;
esac
# -q: one round unless -r says otherwise
test -n "$rounds" || rounds=$((scale > 1 ? 1 : 3))
case $rounds in
    ''|*[!0-9]*) rounds=0 ;;
esac
if test "$((10#$rounds))" -lt 1; then
    echo "calibrate: -r takes a number of rounds, at least 1" >&2
    exit 1
fi
rounds=$((10#$rounds))
if test "$ng" -gt 0 && test "$ng" -le "$nb"; then
    echo "calibrate: -g must be 0 or more than -n ($nb)" >&2
    exit 1
fi
pin=
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
    pin="taskset -c 0"
fi
if test -n "$from"; then
    cp "$from" "$tmp/raw" || exit 1
    grep -q "^cpu_commit [0-9]" "$tmp/raw" || {
        echo "calibrate: $from is not a calibration's measurements" >&2
        exit 1
    }
    rounds=1
else
echo "calibrate: measuring on 1 broker, then on $nb (k=2)..." >&2
export CANOPY=$canopy PING=$ping KVSB=$kvsb CROWD=$crowd TMP=$tmp SCALE=$scale
# The loops run on one core.  Left to the scheduler, a loop's client and
# broker land on one core or on two from one run to the next, and on two
# every round trip wakes an idle processor (on this virtual machine
# 13-24 us of broker CPU per ping instead of 3.3-3.5, and 40-70 us of
# wall instead of 8): the costs came out 2-5x apart between runs.  Under
# load no core idles, and the loaded runs below stand for the rest.
test -n "$pin" ||
    echo "calibrate: taskset cannot pin the loops to one core; the costs will vary more" >&2
$pin "$canopy" start -n 1 -- "$inner" local >"$tmp/raw"
# kvs.prime off: after a collective fence canopy sends the new values in
# their own event, after the setroot and off the fence's path, and the
# model leaves that event out; its CPU must not be charged to the bytes
# of the fence's messages (route_byte, kvs_byte)
# and no shared read cache: kap-crowd's lookups never read it, so its
# instances run without one (validate.sh), and the model has none to
# publish into
loaded_attrs="-S kvs.prime-values=0 -S kvs.shm-size=0"
"$canopy" start -n "$nb" -k 2 $loaded_attrs -- "$inner" tree >>"$tmp/raw"
if test "$ng" -gt 0; then
    echo "calibrate: the loaded runs again on $ng brokers..." >&2
    "$canopy" start -n "$ng" -k 2 $loaded_attrs -- "$inner" grow | sed 's/^/grow_/' >>"$tmp/raw"
fi
# more rounds: the loops on one core, then at once the loaded runs on
# $nb brokers; the round whose 8-byte fence cost the least CPU (broker,
# modules and client) gives every measurement a round makes, loops and
# loaded runs together (the first round's values kept as round1_NAME,
# the others' as roundN_NAME; "loaded_round N" says which)
if test "$rounds" -gt 1; then
    r=2
    while test $r -le "$rounds"; do
        echo "calibrate: round $r of $rounds: the loops on 1 broker, the loaded runs on $nb..." >&2
        $pin "$canopy" start -n 1 -- "$inner" local | sed "s/^/round${r}_/" >>"$tmp/raw"
        grep -q "^round${r}_cpu_commit [0-9]" "$tmp/raw" || {
            echo "calibrate: round $r of the loops on 1 broker failed" >&2
            exit 1
        }
        "$canopy" start -n "$nb" -k 2 $loaded_attrs -- "$inner" loaded |
            sed "s/^/round${r}_/" >>"$tmp/raw"
        grep -q "^round${r}_get_client_us [0-9]" "$tmp/raw" || {
            echo "calibrate: round $r of the loaded runs on $nb brokers failed" >&2
            exit 1
        }
        r=$((r + 1))
    done
    awk -v R="$rounds" '
        function load8 (p) {
            return v[p "load8_broker_us"] + v[p "load8_module_us"] + v[p "load8_client_us"]
        }
        { line[NR] = $0; v[$1] = $2 }
        END {
            best = 1
            low = load8("")
            for (r = 2; r <= R; r++)
                if (load8("round" r "_") < low) {
                    low = load8("round" r "_")
                    best = r
                }
            for (i = 1; i <= NR; i++) {
                split (line[i], f, " ")
                k = f[1]
                if (k !~ /^round[0-9]/ && ("round2_" k) in v) {
                    print "round1_" k, v[k]
                    print k, (best == 1 ? v[k] : v["round" best "_" k])
                }
                else
                    print line[i]
            }
            print "loaded_round", best
        }' "$tmp/raw" >"$tmp/raw.best" && mv "$tmp/raw.best" "$tmp/raw"
fi
fi     # measured (not -f)

# Derive the costs (all microseconds).
awk -v cores=$(nproc) -v k=2 -v when="$(date -u +%Y-%m-%dT%H:%MZ)" '
    { v[$1] = $2 }
    END {
        client = v["cpu_ping_client"] / 2
        route = v["cpu_ping_broker"]
        ipc = (v["rtt_broker"] - 2 * client - route) / 2
        if (ipc < 1) ipc = 1
        # kvs.ping: broker routes twice, the module handles it once
        kvsmsg = v["cpu_ping_kvs"] - 2 * route
        if (kvsmsg < 1) kvsmsg = 1
        # the same ping on the direct channel: no route; the socket work
        # of the KVS thread for the request and for the answer
        dmsg = (v["cpu_ping_kvs_direct"] - kvsmsg) / 2
        if (dmsg < 0.5) dmsg = 0.5
        perbyte = (v["cpu_ping_kvs16k"] - v["cpu_ping_kvs"]) / (16384 * 2 * 3)
        if (perbyte < 0) perbyte = 0
        loadserve = v["cpu_ping_content"] - 2 * route
        if (loadserve < 1) loadserve = 1
        # rank 1: rank 0 routes request and response, rank 1 answers
        net = (v["rtt_rank1"] - v["rtt_broker"] - 2 * route) / 2
        if (net < 1) net = 1
        lookup = v["cpu_get"] - 2 * route
        if (lookup < kvsmsg) lookup = kvsmsg
        walk = 1.0
        apply = v["apply_us"]
        setroot = v["setroot_us"]
        # a commit: 2 routes for the request and answer, 1 for the event,
        # the fence request, apply, setroot; the content store and its
        # answer count as two module messages
        fence = v["cpu_commit"] - 3 * route - apply - setroot - 2 * kvsmsg
        if (fence < kvsmsg) fence = kvsmsg
        applyop = (v["apply_1024_us"] - apply) / 1024
        if (applyop < 0.1) applyop = 0.1
        rbytes = v["relay_bytes"]
        rsend = v["relay_encode_us"] - perbyte * rbytes
        if (rsend < kvsmsg) rsend = kvsmsg
        rrecv = v["relay_decode_us"] - perbyte * rbytes
        if (rrecv < kvsmsg) rrecv = kvsmsg
        # an event costs every broker a route, rank 0 one more for the
        # publish request, and each sending to a child one forward
        nb = v["brokers"]
        fwd = (v["cpu_event_all"] - (nb + 1) * route) / (nb - 1)
        if (fwd < 0.5) fwd = 0.5
        printf "{\n"
        printf "  \"_source\": \"kap/model/calibrate.sh on %s\",\n", when
        printf "  \"ipc_lat\": %.3f,\n  \"net_lat\": %.3f,\n  \"net_bw\": %.1f,\n", ipc, net, 1000
        printf "  \"route\": %.3f,\n  \"event_fwd\": %.3f,\n", route, fwd
        printf "  \"lookup\": %.3f,\n  \"walk\": %.3f,\n", lookup, walk
        printf "  \"fence_req\": %.3f,\n  \"op_encode\": %.3f,\n", fence, applyop / 2
        printf "  \"relay_send\": %.3f,\n  \"relay_recv\": %.3f,\n  \"relay_byte\": %.5f,\n", rsend, rrecv, perbyte
        printf "  \"ack\": %.3f,\n  \"apply\": %.3f,\n  \"apply_op\": %.3f,\n", kvsmsg, apply, applyop
        printf "  \"store_byte\": %.5f,\n  \"setroot\": %.3f,\n  \"respond\": %.3f,\n", perbyte, setroot, client
        printf "  \"direct_msg\": %.3f,\n", dmsg
        shmget = v["shm_get_client"]
        if (shmget < 0.1) shmget = 0.1
        printf "  \"shm_get\": %.3f,\n", shmget
        printf "  \"load_send\": %.3f,\n  \"load_serve\": %.3f,\n  \"load_byte\": %.5f,\n", client, loadserve, perbyte
        # a put (client only: write-back): fixed + per value byte
        putb = (v["put_1024_us"] - v["put_8_us"]) / 1016
        if (putb < 0) putb = 0
        put = v["put_8_us"] - 8 * putb
        if (put < 0.1) put = 0.1
        printf "  \"put\": %.3f,\n  \"put_byte\": %.5f,\n", put, putb
        printf "  \"client_msg\": %.3f,\n  \"cores\": %d\n}\n", client, cores
    }' "$tmp/raw" >"$out"
if test -n "$pin"; then loops="loops on one core ($pin)"; else loops="loops not pinned (no taskset)"; fi
loops="$loops; the loaded runs with kvs.prime-values=0"
best_round=$(awk '$1 == "loaded_round" { print $2 }' "$tmp/raw")
test -z "$best_round" || test -n "$from" ||
    loops="$loops; loops and loaded runs of round $best_round of $rounds"
test -z "$from" || loops="$loops; derived again from $from, measured earlier"
jq --arg l "$loops" '._loops = $l' "$out" >"$tmp/loops.json" && mv "$tmp/loops.json" "$out"
# Scale for load: what the model charges for the loaded runs of
# calibrate-inner.sh (the second instance, 16 participants per broker)
# against the CPU the threads really used, thread kind by thread kind.
model=$build/kap/model/kap-model
raw () { awk -v k=$1 '$1 == k { print $2 }' "$tmp/raw"; }
if test -x "$model"; then
    "$model" --brokers "$nb" -k 2 -N $((nb * 16)) -p 8 -C 0 --clients crowd \
        --cores "$(nproc)" --costs "$out" --json "$tmp/model8.json" >/dev/null
    jq --slurpfile m "$tmp/model8.json" \
       --argjson lb "$(raw load8_broker_us)" --argjson lm "$(raw load8_module_us)" \
       --argjson lc "$(raw load8_client_us)" '
        ($m[0].counters) as $c |
        def r3: . * 1000 | round / 1000;
        .sync_broker = ([($lb / $c.cpu_broker_us), 0.25] | max | r3) |
        .sync_module = ([($lm / ($c.cpu_kvs_us + $c.cpu_content_us)), 0.25] | max | r3) |
        .sync_client = ([($lc / $c.cpu_client_us), 0.25] | max | r3)
    ' "$out" >"$tmp/scaled.json" && mv "$tmp/scaled.json" "$out"
    "$model" --brokers "$nb" -k 2 -N $((nb * 16)) -p 1024 -C 0 --clients crowd \
        --cores "$(nproc)" --costs "$out" --json "$tmp/model1k.json" >/dev/null
    jq --slurpfile m "$tmp/model1k.json" --argjson nb "$nb" \
       --argjson lb "$(raw load_broker_us)" --argjson lm "$(raw load_module_us)" '
        ($m[0].counters) as $c |
        def r6: . * 1e6 | round / 1e6;
        .route_byte = ([(($lb - $c.cpu_broker_us) / $c.bytes_broker), 0] | max | r6) |
        .kvs_byte = ([(($lm - $c.cpu_kvs_us - $c.cpu_content_us) / $c.bytes_kvs), 0] | max | r6) |
        ._load_scale = "sync phase: broker x\(.sync_broker), modules x\(.sync_module), client x\(.sync_client) (loaded 8-byte fence on \($nb) brokers); bytes: broker \(.route_byte) us, KVS \(.kvs_byte) us (loaded 1 KiB fence)"
    ' "$out" >"$tmp/scaled.json" && mv "$tmp/scaled.json" "$out"
    # the consumer phase: the model's charge for it is what a run with
    # gets costs beyond the same run without (the same sync phase), as
    # measured; here with factor 1, and on the third instance without
    # growth, so each size gives its own factor
    getcharge () {  # BROKERS: "module client" microseconds of the gets
        "$model" --brokers "$1" -k 2 -N $(($1 * 16)) -p 8 -c 16 --clients crowd \
            --cores "$(nproc)" --costs "$out" --json "$tmp/modelget.json" >/dev/null
        "$model" --brokers "$1" -k 2 -N $(($1 * 16)) -p 8 -C 0 --clients crowd \
            --cores "$(nproc)" --costs "$out" --json "$tmp/modelnoget.json" >/dev/null
        jq -n -r --slurpfile g "$tmp/modelget.json" --slurpfile s "$tmp/modelnoget.json" '
            ($g[0].counters) as $g | ($s[0].counters) as $s |
            "\(($g.cpu_kvs_us + $g.cpu_content_us) - ($s.cpu_kvs_us + $s.cpu_content_us)) \($g.cpu_client_us - $s.cpu_client_us)"'
    }
    # FACTOR MEASURED CHARGE: measured / charge, at least 0.1
    factor () { awk -v m="$1" -v c="$2" 'BEGIN { f = m / (c > 1 ? c : 1); printf "%.3f", (f > 0.1 ? f : 0.1) }'; }
    # the 8-byte fence's measured CPU over the model's (the run without
    # gets getcharge just made), the brokers' threads together: PREFIX
    syncratio () { jq -n -r --slurpfile s "$tmp/modelnoget.json" \
        --argjson b "$(raw ${1}load8_broker_us)" --argjson m "$(raw ${1}load8_module_us)" '
            ($s[0].counters) as $s |
            ($b + $m) / ($s.cpu_broker_us + $s.cpu_kvs_us + $s.cpu_content_us)'; }
    # ... and the client's, apart: one process, whose CPU per participant
    # grows much less with the instance than a broker's (x1.14 against
    # x2.1 from 15 to 127 brokers, 2026-11-29)
    syncratio_client () { jq -n -r --slurpfile s "$tmp/modelnoget.json" \
        --argjson c "$(raw ${1}load8_client_us)" '
            ($s[0].counters) as $s | $c / $s.cpu_client_us'; }
    # PREFIX KIND CHARGE: the gets' CPU on KIND (module, client), the run
    # with gets less the fence alone, over the model's charge
    getfactor () { factor "$(awk -v a="$(raw ${1}get_${2}_us)" -v b="$(raw ${1}load8_${2}_us)" \
                                 'BEGIN { print a - b }')" "$3"; }
    # the exponent taking the first ratio to the second, 0 to 1
    grow () { awk -v a="$1" -v b="$2" -v n1="$nb" -v n2="$ng" 'BEGIN {
                  x = log (b / a) / log (n2 / n1); if (x < 0) x = 0; if (x > 1) x = 1
                  printf "%.3f", x }'; }
    set -- $(getcharge "$nb")
    sr=$(syncratio "")
    src=$(syncratio_client "")
    gm=$(getfactor "" module "$1")
    gc=$(getfactor "" client "$2")
    xm=0 xc=0 xs=0 xsc=0
    if test "$ng" -gt 0; then
        set -- $(getcharge "$ng")
        sr2=$(syncratio grow_)
        src2=$(syncratio_client grow_)
        gm2=$(getfactor grow_ module "$1")
        gc2=$(getfactor grow_ client "$2")
        xm=$(grow "$gm" "$gm2")
        xc=$(grow "$gc" "$gc2")
        xs=$(grow "$sr" "$sr2")
        xsc=$(grow "$src" "$src2")
        grew="; on $ng brokers modules x$gm2, client x$gc2: grown by (brokers / $nb)^$xm and ^$xc; the 8-byte fence's CPU over the model's, the brokers' threads x$(printf %.3f "$sr") on $nb brokers, x$(printf %.3f "$sr2") on $ng: the sync phase grown by ^$xs; the client's x$(printf %.3f "$src") and x$(printf %.3f "$src2"): grown by ^$xsc"
    fi
    jq --argjson gm "$gm" --argjson gc "$gc" --argjson xm "$xm" --argjson xc "$xc" \
       --argjson xs "$xs" --argjson xsc "$xsc" --argjson nb "$nb" --arg grew "${grew:-}" '
        .get_module = $gm | .get_client = $gc |
        .get_grow_module = $xm | .get_grow_client = $xc | .sync_grow = $xs |
        .sync_grow_client = $xsc |
        .byte_grow = 0 | .grow_brokers = $nb |
        ._load_scale += "; consumer phase: modules x\(.get_module), client x\(.get_client) (loaded fence and 16 gets less the fence alone, on \($nb) brokers)\($grew)"
    ' "$out" >"$tmp/scaled.json" && mv "$tmp/scaled.json" "$out"
fi
# The byte costs' growth, apart from the messages': on the third
# instance, the fence of 1 KiB values as measured (broker + I/O threads
# and modules) less the model's charge for it without byte costs (its
# messages grown by sync_grow), over what the byte costs measured on the
# second instance charge for its bytes.  Copying and parsing a byte need
# not grow as waking a thread among more threads does.
if test -x "$model" && test "$ng" -gt 0; then
    bcharge () {    # COSTS: broker + module CPU of the 1 KiB fence on $ng
        rm -f "$tmp/modelb.json"
        "$model" --brokers "$ng" -k 2 -N $((ng * 16)) -p 1024 -C 0 --clients crowd \
            --cores "$(nproc)" --costs "$1" --json "$tmp/modelb.json" >/dev/null || return 1
        jq -r '.counters | .cpu_broker_us + .cpu_kvs_us + .cpu_content_us' "$tmp/modelb.json"
    }
    jq '.route_byte = 0 | .kvs_byte = 0' "$out" >"$tmp/nobytes.json"
    c0=$(bcharge "$tmp/nobytes.json")
    c1=$(bcharge "$out")
    m=$(awk -v a="$(raw grow_load_broker_us)" -v b="$(raw grow_load_module_us)" \
            'BEGIN { print a + b }')
    xb=$(awk -v m="$m" -v c0="$c0" -v c1="$c1" -v n1="$nb" -v n2="$ng" 'BEGIN {
             # no byte cost left in the measurement: the least growth
             x = 0
             if (c1 - c0 > 0) {
                 x = -1
                 if (m - c0 > 0)
                     x = log ((m - c0) / (c1 - c0)) / log (n2 / n1)
                 if (x < -1) x = -1; if (x > 1) x = 1
             }
             printf "%.3f", x }')
    jq --argjson xb "$xb" --argjson c0 "$c0" --argjson c1 "$c1" --argjson m "$m" \
       --argjson ng "$ng" '
        def r0: round;
        .byte_grow = $xb |
        ._load_scale += "; the 1 KiB fence on \($ng) brokers: \($m | r0) us of broker and module CPU, the model \($c0 | r0) us without byte costs and \($c1 | r0) us with them: the byte costs grown by ^\($xb)"
    ' "$out" >"$tmp/scaled.json" && mv "$tmp/scaled.json" "$out"
fi
cp "$tmp/raw" "${out%.json}.raw"
cat "$out"
