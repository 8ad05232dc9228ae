#!/bin/sh
# The quickstart demo, run inside 'canopy start -n 8'.
set -e
echo "--- the tree of brokers"
canopy overlay status
echo "--- ping every rank (hops = distance from rank 0)"
size=$(canopy getattr size)
r=0
while [ $r -lt "$size" ]; do
    canopy ping --count 1 --rank $r
    r=$((r + 1))
done
