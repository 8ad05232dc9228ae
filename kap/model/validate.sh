#!/bin/bash
# validate.sh - measure KAP runs on this machine and put the model's
# predictions for the same runs beside them.
#
#   kap/model/validate.sh [-b BUILDDIR] [-c COSTS] [-s "B1 B2 ..."] [-p PPB]
#                         [-r REPEAT] [-R ROUNDS] [-o OUTDIR] [-k FANOUT] [-i] [-m]
#                         [-C "CALIBRATE-ARGS"]
#
# For each instance size B (default "8 16 32 64 128 256" brokers, k=2) it
# starts B brokers and runs kap-crowd REPEAT times (default 3) for each
# case, with PPB participants per broker (default 16; every one a
# producer and a consumer, as in the paper):
#   unique     1 KiB values, each its own; sync phase only (-C 0)
#   redundant  1 KiB values, all the same (-e); sync phase only
#   consumer   8-byte values in one directory, 4 gets per consumer
# then runs kap-model on the same configuration with the machine's cores
# shared and one client process (--clients crowd --cores NPROC), with the
# costs of COSTS (default: calibrate.sh's output in OUTDIR, made first if
# missing).  Compared: mean sync latency (unique, redundant, consumer runs)
# and mean get latency (consumer runs), medians over the repeats.
# With -R ROUNDS (default 1) the whole sweep of sizes is run ROUNDS times
# and the medians are taken over ROUNDS x REPEAT runs: on a shared machine
# the speed drifts by tens of percent within minutes, and rounds spread
# that drift over every size instead of giving it to whichever size ran
# while the machine was slow.  Without -c, and with no costs in OUTDIR
# yet, each round first calibrates (OUTDIR/costs-rN.json, calibrate.sh)
# and the model runs with each cost the median of the rounds'
# (OUTDIR/costs.json): the calibration drifts with the machine as the
# measurements do, so it is spread over the same minutes.  A median
# takes out a calibration that strays, not a state of the machine that
# lasts through every round: five sets, each calibrated once, scored
# 19-24 of 24 against the five pooled and the median of their five
# calibrations 24 (6.4%), but the first -R 5 run with a calibration per
# round scored 18 (its five calibrations all came out dear;
# kap/model/README.md, 2026-11-29 17:21-17:55Z).  -C passes arguments
# to every calibrate.sh run (-C "-q -g 31": rough and quick).
# With -i each case runs in an instance of its own, as the model has it:
# in one instance the 8-byte consumer runs come after six runs of 1 KiB
# values and their caches (2.6 MB a broker at 256 brokers), and at 256
# brokers they measured 310-480 ms where a fresh instance gave 200-265.
# The instances run without the shared read cache (kvs.shm-size=0):
# kap-crowd never reads it.
# Each instance first runs its first case once, unmeasured: canopy's
# relay hold learns the participants' layout from a first fence, and the
# model holds every fence (in a fresh instance the first run was 2-3x
# slower than the next at 128-256 brokers).
# With -m the runs are not measured again: the model is run against the
# measured runs already in OUTDIR/raw (after a new calibration, say).
# Writes OUTDIR/validate.tsv (B, participants, case, metric, measured,
# predicted, error %) and prints it; OUTDIR defaults to ./model-results.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=
costs=
sizes="8 16 32 64 128 256"
ppb=16
repeat=3
rounds=1
out=model-results
k=2
measure=yes
isolate=no
calargs=
while getopts b:c:s:p:r:R:o:k:C:imh opt; do
    case $opt in
        b) build=$OPTARG ;;
        c) costs=$OPTARG ;;
        s) sizes=$OPTARG ;;
        p) ppb=$OPTARG ;;
        r) repeat=$OPTARG ;;
        R) rounds=$OPTARG ;;
        o) out=$OPTARG ;;
        k) k=$OPTARG ;;
        i) isolate=yes ;;
        m) measure=no ;;
        C) calargs=$OPTARG ;;
        h) sed -n '2,50p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "validate: see -h" >&2; exit 1 ;;
    esac
done
. "$here/modellib.sh"
model_find_tools "$build"
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
# calibrate: once (here), or in every round (below) when measuring
# rounds, then each cost's median
calround=no
if test -z "$costs"; then
    costs=$out/costs.json
    if ! test -s "$costs"; then
        if test $measure = yes && test "$rounds" -gt 1; then
            calround=yes
            rm -f "$out"/costs-r*.json "$out"/costs-r*.raw
        else
            "$here/calibrate.sh" $calargs -b "$BUILD" -o "$costs" >/dev/null
        fi
    fi
fi
cores=$(nproc)

# the cases: name, kap options
cases="unique:-p 1024 -C 0
redundant:-p 1024 -e -C 0
consumer:-p 8 -c 4"

cat >"$out/inner.sh" <<EOF
#!/bin/sh
# inside an instance of \$1 brokers, round \$2: every case, $repeat times
B=\$1
round=\$2
n=\$((round * 100))
# one run first, not measured, with the first case's options: the relay
# hold learns the participants' layout from it (the model holds every
# fence), and the brokers' heaps and caches grow once
first=\$(echo "\$CASES" | head -1)
"$CROWD" -N \$((B * $ppb)) -n \$((1090 + n)) \${first#*:} >/dev/null ||
    echo "validate: B=\$B round \$round warm-up run failed" >&2
echo "\$CASES" | while IFS=: read -r name opts; do
    rep=1
    while test \$rep -le $repeat; do
        n=\$((n + 1))
        "$CROWD" -N \$((B * $ppb)) -n \$((1000 + n)) \$opts \\
            --json="$out/raw/B\$B-\$name-r\$round.\$rep.json" >/dev/null ||
            echo "validate: B=\$B \$name round \$round rep \$rep failed" >&2
        rep=\$((rep + 1))
    done
done
EOF
chmod +x "$out/inner.sh"

if test $measure = no; then
    ls "$out"/raw/B*-r*.json >/dev/null 2>&1 ||
        model_die "-m: no measured runs in $out/raw"
    rounds=0
else
    rm -f "$out"/raw/B*-r*.json
fi
# kap-crowd's gets are asynchronous lookups, which never read the
# brokers' shared read caches, and the model has none: without one
# (kvs.shm-size=0) no broker copies every primed directory into a
# segment nobody reads.  With it, on these two cores, 256 brokers made
# the 1 KiB fences of 4 096 participants 2-3x slower, more with every
# run as the segments filled.
noshm="-S kvs.shm-size=0"
round=1
while test $round -le $rounds; do
    if test $calround = yes; then
        echo "validate: round $round of $rounds, calibrating..." >&2
        "$here/calibrate.sh" $calargs -b "$BUILD" -o "$out/costs-r$round.json" >/dev/null
    fi
    for B in $sizes; do
        if test $isolate = yes; then
            echo "$cases" | while read -r c; do
                echo "validate: round $round of $rounds, $B brokers, $((B * ppb)) participants, ${c%%:*} in an instance of its own..." >&2
                CASES=$c "$CANOPY" start -n "$B" -k "$k" $noshm -- "$out/inner.sh" "$B" "$round" </dev/null
            done
        else
            echo "validate: round $round of $rounds, $B brokers, $((B * ppb)) participants..." >&2
            CASES=$cases "$CANOPY" start -n "$B" -k "$k" $noshm -- "$out/inner.sh" "$B" "$round"
        fi
    done
    round=$((round + 1))
done

if test $calround = yes; then
    model_median_costs "$costs" "$out"/costs-r*.json ||
        model_die "cannot merge the rounds' calibrations into $costs"
fi
printf 'B\tparticipants\tcase\tmetric\tmeasured_ms\tpredicted_ms\terror_pct\n' >"$out/validate.tsv"
for B in $sizes; do
    echo "$cases" | while IFS=: read -r name opts; do
        "$MODEL" --brokers "$B" -k "$k" -N $((B * ppb)) $opts --clients crowd \
            --cores "$cores" --costs "$costs" --json "$out/raw/B$B-$name-model.json" >/dev/null
        for metric in sync get; do
            test $name != consumer && test $metric = get && continue
            meas=$(for f in "$out"/raw/B$B-$name-r*.json; do
                       jq ".metrics.$metric.mean_us / 1000" "$f"
                   done | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int ((NR + 1) / 2)] }')
            pred=$(jq ".metrics.$metric.mean_us / 1000" "$out/raw/B$B-$name-model.json")
            awk -v B=$B -v P=$((B * ppb)) -v c=$name -v m=$metric -v a="$meas" -v p="$pred" 'BEGIN {
                    printf "%d\t%d\t%s\t%s\t%.3f\t%.3f\t%+.1f\n", B, P, c, m, a, p,
                           (a > 0 ? (p - a) / a * 100 : 0) }' >>"$out/validate.tsv"
        done
    done
done
column -t "$out/validate.tsv" 2>/dev/null || cat "$out/validate.tsv"
awk -F'\t' 'NR > 1 { n++; e = $7 < 0 ? -$7 : $7; if (e <= 25) ok++; s += e }
            END { if (n) printf "validate: %d of %d predictions within 25%% (mean |error| %.1f%%)\n", ok, n, s / n }' \
    "$out/validate.tsv"
