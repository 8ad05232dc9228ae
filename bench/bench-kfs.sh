#!/bin/bash
# bench-kfs.sh - the KFS experiment, scaled to this machine: write, read
# and unlink values of growing sizes (64 KiB chunks) in one SQLite file
# and in sharded files, several trials in sequence while the stores grow;
# mean and standard deviation per size and operation; a plot; and the raw
# write bandwidth of the same disk (dd with fsync) as the physical limit.
#
# Usage: bench-kfs.sh [--full] [-t TRIALS] [-s SIZES] [-S SHARDS] [-d DIR] [-o OUT]
#   --full      sizes 8..512 MiB, 10 trials, 256 MiB of growth per trial
#               (default: 8..128 MiB, 3 trials, 64 MiB growth)
#   -t TRIALS   trials (each: every size, write+read+unlink, both layouts)
#   -s SIZES    comma-separated sizes in MiB
#   -S SHARDS   shard count of the sharded layout (default 16)
#   -d DIR      where the stores go (default: $CANOPY_BUILD_DIR/bench-data);
#               the disk measured is the one holding DIR
#   -o OUT      results directory (default: DIR/kfs-results)
# Environment: CANOPY_BUILD_DIR (default: the build tree beside bench/).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
: "${CANOPY_BUILD_DIR:=$(cd "$here/.." && pwd)/build}"
kfs=$CANOPY_BUILD_DIR/bench/kfs-bench

trials=3 sizes=8,16,32,64,128 grow=64 shards=16 dir="" out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --full) trials=10 sizes=8,16,32,64,128,256,512 grow=256 ;;
        -t) trials=$2; shift ;;
        -s) sizes=$2; shift ;;
        -S) shards=$2; shift ;;
        -d) dir=$2; shift ;;
        -o) out=$2; shift ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-kfs: unknown argument '$1'" >&2; exit 1 ;;
    esac
    shift
done
[ -x "$kfs" ] || { echo "bench-kfs: $kfs is missing (build first)" >&2; exit 1; }
: "${dir:=$CANOPY_BUILD_DIR/bench-data}"
: "${out:=$dir/kfs-results}"
mkdir -p "$dir" "$out"

# Free space: both layouts keep trials*grow of ballast, hold the largest
# value twice (data + WAL) while writing, and dd writes 256 MiB.
max=0
for s in ${sizes//,/ }; do [ "$s" -gt "$max" ] && max=$s; done
need=$(( (2 * trials * grow + 2 * 2 * max + 256) * 12 / 10 ))
avail=$(( $(df -Pk "$dir" | awk 'NR == 2 { print $4 }') / 1024 ))
if [ "$avail" -lt "$need" ]; then
    echo "bench-kfs: needs about $need MiB free in $dir, only $avail MiB available;" \
         "use -d to choose another disk, or fewer trials or sizes" >&2
    exit 1
fi

ddtest () {
    local f=$dir/dd.tmp
    local line
    line=$(dd if=/dev/zero of="$f" bs=1M count=256 conv=fsync 2>&1 | tail -1)
    rm -f "$f"
    # "268435456 bytes (268 MB, 256 MiB) copied, 1.23 s, 218 MB/s"
    echo "$line" | awk -F', ' '{ split ($1, b, " "); split ($(NF-1), s, " ");
                                 printf "%.1f\n", b[1] / 1048576 / s[1] }'
}

raw=$out/raw.txt
: >"$raw"
echo "bench-kfs: sizes $sizes MiB, $trials trials, 1 file vs $shards shards, in $dir"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) at start"
dd1=$(ddtest)
echo "dd (1 MiB blocks, 256 MiB, fsync): $dd1 MiB/s"
rm -rf "$dir/one" "$dir/sharded"
for t in $(seq 1 "$trials"); do
    # alternate the order so that drifts of load hit both alike
    if [ $((t % 2)) -eq 1 ]; then order="1 $shards"; else order="$shards 1"; fi
    for n in $order; do
        if [ "$n" = 1 ]; then d=$dir/one; else d=$dir/sharded; fi
        "$kfs" run --dir "$d" --shards "$n" --trial "$t" --sizes "$sizes" \
            --grow "$grow" >>"$raw"
    done
    echo "  trial $t done (load $(cut -d' ' -f1 /proc/loadavg))"
done
dd2=$(ddtest)
echo "dd again at the end: $dd2 MiB/s"
du -sm "$dir/one" "$dir/sharded" | awk '{ printf "  store %s: %d MiB\n", $2, $1 }'
rm -rf "$dir/one" "$dir/sharded"

# mean and standard deviation per (layout, size, op), seconds and MiB/s
summary=$out/summary.txt
awk '
{ for (i = 2; i <= NF; i++) { split ($i, kv, "="); f[kv[1]] = kv[2] }
  k = f["shards"] " " f["size"] " " f["op"]
  n[k]++; s[k] += f["seconds"]; ss[k] += f["seconds"] ^ 2
  m[k] += f["mbps"]; mm[k] += f["mbps"] ^ 2 }
END {
  for (k in n) {
    mean = s[k] / n[k]; sd = n[k] > 1 ? sqrt ((ss[k] - n[k] * mean ^ 2) / (n[k] - 1)) : 0
    if (sd != sd) sd = 0
    mb = m[k] / n[k]; mbsd = n[k] > 1 ? sqrt ((mm[k] - n[k] * mb ^ 2) / (n[k] - 1)) : 0
    if (mbsd != mbsd) mbsd = 0
    print k, n[k], mean, sd, mb, mbsd
  }
}' "$raw" | sort -k3,3 -k2,2n -k1,1n >"$summary"

echo
printf "%-7s %5s %-7s %3s %10s %9s %10s %9s\n" layout MiB op n mean-s sd-s MiB/s sd
while read -r sh size op n mean sd mb mbsd; do
    if [ "$sh" = 1 ]; then lay="1 file"; else lay="$sh shd"; fi
    printf "%-7s %5s %-7s %3s %10.3f %9.3f %10.1f %9.1f\n" "$lay" "$size" "$op" "$n" \
        "$mean" "$sd" "$mb" "$mbsd"
done <"$summary"
echo "dd limit: $dd1 / $dd2 MiB/s (start / end)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) at end"

if command -v gnuplot >/dev/null; then
    for sh in 1 "$shards"; do
        for op in write read unlink; do
            awk -v sh="$sh" -v op="$op" '$1 == sh && $3 == op { print $2, $5, $6 }' \
                "$summary" >"$out/$op-$sh.dat"
        done
    done
    gnuplot <<GP
set terminal png size 1500,450
set output "$out/kfs.png"
set multiplot layout 1,3 title "KFS experiment: SQLite, 1 file vs $shards shards (mean +- sd of $trials trials; dd fsync limit $dd1 MiB/s)"
set logscale xy 2
set xlabel "value size (MiB, 64 KiB chunks)"
set ylabel "seconds"
set key top left
set grid
do for [op in "write read unlink"] {
    set title op
    plot "$out/".op."-1.dat" using 1:2:3 with yerrorlines title "1 file", \
         "$out/".op."-$shards.dat" using 1:2:3 with yerrorlines title "$shards shards"
}
unset multiplot
GP
    echo "plot: $out/kfs.png"
fi
echo "raw results: $raw"
