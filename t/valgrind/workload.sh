#!/bin/sh
# workload.sh - what t5000-valgrind.t runs inside a 2-broker instance whose
# brokers are under valgrind.  Touches the KVS (put, get, fence, watch,
# unlink, big values; a client reading the shared read cache, under
# memcheck too), modules, pings across ranks, malformed input on the
# local socket, events, the log, and canopy run jobs.  Prints
# "workload done" at the end; any failing step exits non-zero.
set -e
set -x

rundir=$(canopy getattr rundir)
sock=$rundir/local-0

# KVS, both ranks
canopy kvs put a.b=1 a.c=hello
test "$(canopy kvs get a.b)" = 1
test "$(canopy kvs --rank 1 get a.c)" = hello
canopy kvs put --json j='{"x":[1,2,3]}'
canopy kvs get --json j >/dev/null
canopy kvs link a.b l
test "$(canopy kvs get l)" = 1
canopy kvs mkdir d.e
canopy kvs ls -R >/dev/null
canopy kvs dir a >/dev/null
head -c 300000 /dev/urandom >big.bin
canopy kvs put --raw big=- <big.bin
canopy kvs --rank 1 get --raw big | cmp - big.bin
for i in $(seq 1 200); do echo "k$i=v$i"; done | xargs canopy kvs put
canopy kvs unlink -R a d
test_must_fail () { if "$@"; then return 1; fi; }
test_must_fail canopy kvs get a.b
# a client reading the shared read cache, under memcheck itself
valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
    kvs-read --attach k1 k200 big k1 >vg-read.out
grep "^attach: ok" vg-read.out
grep "^k200=v200" vg-read.out
tail -n 1 vg-read.out | grep "hits=[1-9]"

# a fence across both ranks
canopy kvs fence f1 2 f.r0=0 &
pid=$!
canopy kvs --rank 1 fence f1 2 f.r1=1
wait $pid
test "$(canopy kvs get f.r1)" = 1
# a fence that fails: mismatched nprocs
canopy kvs fence bad 2 2>/dev/null &
pid=$!
test_must_fail canopy kvs --rank 1 fence bad 3 2>/dev/null
test_must_fail wait $pid

# watch: the initial value, then one change
canopy kvs --rank 1 watch --count 2 w.key >watch.out &
pid=$!
n=0
while ! grep -q absent watch.out 2>/dev/null; do
    n=$((n + 1)); test $n -lt 6000; sleep 0.1
done
canopy kvs put w.key=changed
wait $pid
grep -q changed watch.out

# version and wait on the other rank
v=$(canopy kvs version)
canopy kvs --rank 1 wait $v
canopy kvs dropcache --all
canopy kvs stats >/dev/null

# modules
canopy module load $testmod
canopy ping --count 2 testmod
canopy module load --rank 1 $testmod
canopy module list --rank all >/dev/null
canopy module remove testmod
canopy module remove --rank 1 testmod

# pings across ranks
canopy ping --count 3 --interval 0 --rank 1
canopy ping --batch --count 200 --rank 1 --pad 1000
canopy ping --count 2 --interval 0 --rank any kvs

# malformed input on the socket, then keep going
printf 'not a message at all' | rawsock $sock >/dev/null
printf '\000\000\000\005hello' | rawsock $sock >/dev/null
sockabuse malformed routes-too-deep $sock
sockabuse malformed event $sock
sockabuse fuzz --count 2000 $sock
sockabuse burst 500 $sock

# events, attributes, the log
canopy event pub test.event
canopy setattr --rank 1 test.attr x
canopy getattr --rank 1 test.attr
canopy lsattr >/dev/null
canopy dmesg >/dev/null

# jobs
canopy run -n 2 true
canopy run -n 4 --label sh -c 'echo $PMI_RANK'
test_must_fail canopy run -n 2 sh -c 'exit 3'
canopy kvs ls job >/dev/null

echo "workload done"
