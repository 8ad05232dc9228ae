#!/bin/sh
# The quickstart demo, run inside 'canopy start -n 8'.
set -e
size=$(canopy getattr size)
echo "--- the tree of brokers"
canopy overlay status
echo
echo "--- ping every rank (hops = distance from rank 0)"
r=0
while [ $r -lt "$size" ]; do
    canopy ping --count 1 --rank $r
    r=$((r + 1))
done
echo
echo "--- put / fence / get: one process per broker puts a key and joins"
echo "    fence 'demo' (nprocs=$size); then every broker reads every key"
r=0
while [ $r -lt "$size" ]; do
    canopy kvs --rank $r fence demo "$size" demo.from-rank-$r="hello from rank $r" &
    r=$((r + 1))
done
wait
r=0
while [ $r -lt "$size" ]; do
    reader=$(( (r + 3) % size ))
    printf "rank %d reads demo.from-rank-%d: %s\n" $reader $r \
        "$(canopy kvs --rank $reader get demo.from-rank-$r)"
    r=$((r + 1))
done
echo "KVS version after the fence: $(canopy kvs version)"
echo
echo "--- the hardware of each broker"
canopy resource list
if [ -x "${CANOPY_KAP_PATH:-}/experiments/kap-sweep" ]; then
    echo
    echo "--- a small KAP run"
    "$CANOPY_KAP_PATH/experiments/kap-sweep" --quick
fi
