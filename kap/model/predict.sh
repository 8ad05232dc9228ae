#!/bin/bash
# predict.sh - the KAP curves at 1024 to 16384 nodes, predicted by the
# model, beside the ones measured on this machine.
#
#   kap/model/predict.sh [-b BUILDDIR] [-c COSTS] [-o OUTDIR] [-n "N1 N2 ..."]
#                        [-k "K1 K2 ..."] [-p PPN] [--no-plot]
#
# For each fan-out K (default "2 8 32") and node count N (default "1024
# 2048 4096 8192 16384"), one broker per node and PPN participants per node
# (default 16, as on the paper's 16-core nodes), kap-model predicts the
# three cases of validate.sh (unique and redundant 1 KiB fences, 8-byte
# gets from one directory) with a core per thread and a client process
# per participant (--clients mpi --cores 0): a cluster built of this
# machine's per-message costs.  The producer phase is local (a put only
# writes the client's cache), so its curve is the put cost KAP measured,
# flat at every size.
#
# Plots, one per phase, x = participants (log): the measured means from
# OUTDIR/validate.tsv (run validate.sh first; points), the model at the
# measured sizes on this machine (dashed), and the predictions per K
# (lines):  OUTDIR/predict-sync-unique.png, predict-sync-redundant.png,
# predict-consumer.png, predict-producer.png; the numbers in
# OUTDIR/predict.tsv; OUTDIR/predict-report.md judges the curves' shapes
# by stated rules.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=
costs=
out=model-results
nodes="1024 2048 4096 8192 16384"
ks="2 8 32"
ppn=16
plot=yes
while test $# -gt 0; do
    case $1 in
        -b) build=$2; shift ;;
        -c) costs=$2; shift ;;
        -o) out=$2; shift ;;
        -n) nodes=$2; shift ;;
        -k) ks=$2; shift ;;
        -p) ppn=$2; shift ;;
        --no-plot) plot=no ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "predict: unknown argument $1 (see -h)" >&2; exit 1 ;;
    esac
    shift
done
. "$here/modellib.sh"
model_find_tools "$build"
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
costs=${costs:-$out/costs.json}
test -s "$costs" || model_die "no costs in $costs: run calibrate.sh (or validate.sh) first"
if test $plot = yes && ! command -v gnuplot >/dev/null; then
    echo "predict: gnuplot not found (apt-get install gnuplot-nox): no plots" >&2
    plot=no
fi

cases="unique:-p 1024 -C 0
redundant:-p 1024 -e -C 0
consumer:-p 8 -c 4"

printf 'k\tnodes\tparticipants\tcase\tsync_mean_ms\tsync_max_ms\tget_mean_ms\tconsumer_max_ms\trelays\tloads\tmodel_s\n' \
    >"$out/predict.tsv"
for k in $ks; do
    for n in $nodes; do
        echo "$cases" | while IFS=: read -r name opts; do
            t0=$(date +%s.%N)
            "$MODEL" --brokers "$n" -k "$k" -N $((n * ppn)) --placement=block $opts \
                --clients mpi --cores 0 --costs "$costs" \
                --json "$out/raw/k$k-n$n-$name.json" >/dev/null ||
                model_die "kap-model failed for k=$k n=$n $name"
            t1=$(date +%s.%N)
            jq -r --arg k $k --arg n $n --arg p $((n * ppn)) --arg c $name \
                  --arg s "$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.1f", b - a }')" \
                '[$k, $n, $p, $c, .metrics.sync.mean_us / 1000, .metrics.sync.max_us / 1000,
                  .metrics.get.mean_us / 1000, .wallclock.consumer.max_us / 1000,
                  .counters.relays, .counters.loads, $s] | @tsv' \
                "$out/raw/k$k-n$n-$name.json" >>"$out/predict.tsv"
            echo "predict: k=$k $n nodes $name done" >&2
        done
    done
done

# the put cost: what kap-crowd measured in validate.sh's runs, if any
put_us=$(cat "$out"/raw/B*-consumer-r*.json 2>/dev/null |
         jq -s 'if length > 0 then (map(.metrics.put.mean_us) | add / length) else 3 end')

if test $plot = yes; then
    # measured and machine-model series from validate.tsv: P, value
    for c in unique redundant consumer; do
        awk -F'\t' -v c=$c 'NR > 1 && $3 == c && $4 == "sync" { print $2, $5, $6 }' \
            "$out/validate.tsv" 2>/dev/null >"$out/meas-$c-sync.dat" || true
    done
    awk -F'\t' 'NR > 1 && $3 == "consumer" && $4 == "get" { print $2, $5, $6 }' \
        "$out/validate.tsv" 2>/dev/null >"$out/meas-consumer-get.dat" || true
    for k in $ks; do
        for c in unique redundant consumer; do
            awk -F'\t' -v k=$k -v c=$c 'NR > 1 && $1 == k && $4 == c { print $3, $5, $7 }' \
                "$out/predict.tsv" >"$out/pred-k$k-$c.dat"
        done
    done
    plot_phase () {    # file title ylabel measured-file column pred-case column
        local png=$1 title=$2 ylab=$3 meas=$4 pc=$5 col=$6
        {
            echo "set terminal pngcairo size 900,560 font 'sans,10'"
            echo "set output '$out/$png'"
            echo "set title '$title'"
            echo "set xlabel 'participants ($ppn per node; measured: per broker)'"
            echo "set ylabel '$ylab'"
            echo "set logscale x 2"
            echo "set logscale y 10"
            echo "set grid"
            echo "set key top left"
            printf "plot "
            if test -s "$out/$meas"; then
                printf "'%s' using 1:2 with points pt 7 ps 1.2 title 'measured here (2 cores)', " "$out/$meas"
                printf "'%s' using 1:3 with linespoints dt 2 pt 6 title 'model, this machine', " "$out/$meas"
            fi
            local sep=
            for k in $ks; do
                printf "%s'%s' using 1:%d with linespoints lw 2 title 'predicted, k=%s (a core per thread)'" \
                    "$sep" "$out/pred-k$k-$pc.dat" "$col" "$k"
                sep=", "
            done
            echo
        } | gnuplot
    }
    plot_phase predict-sync-unique.png "Sync phase: fence of unique 1 KiB values" \
        "mean fence latency (ms)" meas-unique-sync.dat unique 2
    plot_phase predict-sync-redundant.png "Sync phase: fence of redundant 1 KiB values" \
        "mean fence latency (ms)" meas-redundant-sync.dat redundant 2
    plot_phase predict-consumer.png "Consumer phase: 4 gets of 8-byte values, one directory" \
        "mean get latency (ms)" meas-consumer-get.dat consumer 3
    {
        echo "set terminal pngcairo size 900,560 font 'sans,10'"
        echo "set output '$out/predict-producer.png'"
        echo "set title 'Producer phase: kvs_put is local (write-back), the same at every size'"
        echo "set xlabel 'participants'"
        echo "set ylabel 'mean put latency (us)'"
        echo "set logscale x 2"
        echo "set yrange [0:*]"
        echo "set grid"
        echo "plot '-' using 1:2 with linespoints lw 2 title 'measured here and predicted (put cost)'"
        for p in 128 1024 16384 262144; do echo "$p $put_us"; done
        echo "e"
    } | gnuplot
fi
# The report: the curves, and the shapes issue 6 asks for, judged by
# stated rules on the predictions and on the measurements.
{
    echo "# KAP at 1 024 to 16 384 nodes: predicted by kap-model"
    echo
    echo "Costs: \`$(basename "$costs")\` ($(jq -r '._source // "defaults"' "$costs" 2>/dev/null)),"
    echo "$ppn participants per node, one broker per node, a core per thread"
    echo "(\`--clients mpi --cores 0\`), block placement.  Cases: fences of"
    echo "unique and of redundant 1 KiB values (sync phase), and 4 gets of 8-byte"
    echo "values from one directory (consumer phase).  Mean latencies in ms."
    echo
    echo "| k | nodes | participants | unique fence | redundant fence | get | consumer phase max |"
    echo "|---:|---:|---:|---:|---:|---:|---:|"
    awk -F'\t' 'NR > 1 { v[$1 " " $2 " " $4] = $5; g[$1 " " $2] = $7; c[$1 " " $2] = $8; p[$1 " " $2] = $3; if (!($1 " " $2 in seen)) { seen[$1 " " $2] = 1; order[n++] = $1 " " $2 } }
         END { for (i = 0; i < n; i++) { split (order[i], a, " ");
                 printf "| %s | %s | %s | %.2f | %.2f | %.3f | %.2f |\n", a[1], a[2], p[order[i]],
                        v[order[i] " unique"], v[order[i] " redundant"], g[order[i]], c[order[i]] } }' \
        "$out/predict.tsv"
    echo
    echo "## Shapes"
    echo
    echo "Rules: *at most logarithmic*: from the fewest to the most participants"
    echo "the latency grows by no more than 1.25 times the growth of log2"
    echo "(participants); *flat within noise*: largest / smallest <= 1.25;"
    echo "*per participant falls*: latency / participants decreases at every step."
    echo
    for k in $ks; do
        awk -F'\t' -v k=$k 'NR > 1 && $1 == k {
                P[$2] = $3; if ($4 == "unique") u[$2] = $5; if ($4 == "redundant") r[$2] = $5;
                if ($4 == "consumer") g[$2] = $7; if (!($2 in seen)) { seen[$2] = 1; ns[n++] = $2 } }
            END {
                lo = ns[0]; hi = ns[n - 1]
                lg = log (P[hi]) / log (P[lo]); gr = g[hi] / g[lo]
                printf "- k=%s, consumer: get latency x%.2f while log2(participants) x%.2f: %s\n", k, gr, lg,
                       gr <= 1.25 * lg ? "**at most logarithmic**" : "**grows faster than logarithmically**"
                mx = 0; mn = 1e99; for (i = 0; i < n; i++) { if (r[ns[i]] > mx) mx = r[ns[i]]; if (r[ns[i]] < mn) mn = r[ns[i]] }
                printf "- k=%s, redundant fence: largest/smallest %.2f: %s\n", k, mx / mn,
                       mx / mn <= 1.25 ? "**flat within noise**" : "**not flat**"
                falls = 1; for (i = 1; i < n; i++) if (u[ns[i]] / P[ns[i]] >= u[ns[i-1]] / P[ns[i-1]]) falls = 0
                printf "- k=%s, unique fence per participant: %.4f ms at %d, %.4f ms at %d: %s\n", k,
                       u[lo] / P[lo], P[lo], u[hi] / P[hi], P[hi], falls ? "**falls**" : "**does not fall at every step**"
            }' "$out/predict.tsv"
    done
    if test -s "$out/validate.tsv"; then
        echo
        echo "## Measured on this machine (validate.sh), and the model's error"
        echo
        echo "| brokers | participants | case | metric | measured ms | model ms | error |"
        echo "|---:|---:|---|---|---:|---:|---:|"
        awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s | %.2f | %.2f | %+.1f%% |\n", $1, $2, $3, $4, $5, $6, $7 }' \
            "$out/validate.tsv"
        awk -F'\t' 'NR > 1 { n++; e = $7 < 0 ? -$7 : $7; if (e <= 25) ok++; s += e }
            END { if (n) printf "\n%d of %d predictions of measured runs within 25%% (mean |error| %.1f%%).\n", ok, n, s / n }' \
            "$out/validate.tsv"
    fi
    echo
    echo "Plots: predict-sync-unique.png, predict-sync-redundant.png,"
    echo "predict-consumer.png, predict-producer.png."
} >"$out/predict-report.md"
column -t "$out/predict.tsv" 2>/dev/null || cat "$out/predict.tsv"
echo "predict: report in $out/predict-report.md"
