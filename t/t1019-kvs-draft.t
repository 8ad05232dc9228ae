#!/bin/sh
test_description='KVS drafts: rank 0 applies an incomplete collective fence ahead

While a fence of several participants is still incomplete and nothing
else is being applied, rank 0 applies the operations it has so far (a
draft) and, when the fence completes, only the rest.  Whatever happens
meanwhile (a commit that changes the root, another fence, an operation
that fails), the outcome is the one without drafts.'

. $(dirname $0)/sharness.sh

test_under_canopy 4 2

# wait_joined NAME N: until rank 0 has N participants of fence NAME
wait_joined () {
	i=0
	while test $i -lt 200; do
		canopy kvs fence-status -j "$1" 2>/dev/null |
			jq -e ".count == $2" >/dev/null 2>&1 && return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "fence $1 never had $2 participants" >&2
	return 1
}
# enter RANK NAME NPROCS JOINED KEY=VAL...: a participant of fence NAME on
# RANK, in the background ($! is its pid), until rank 0 has JOINED of them
enter () {
	_rank=$1 _name=$2 _nprocs=$3 _joined=$4
	shift 4
	canopy kvs --rank $_rank fence $_name $_nprocs "$@" &
	wait_joined $_name $_joined
}
counter () {
	canopy kvs stats | jq ".counters[\"$1\"]"
}

test_expect_success 'participants one after another: the fence starts from a draft' '
	used=$(counter drafts-used) &&
	ops=$(counter drafted-ops) &&
	enter 1 d1 3 1 d1.a=1 d1.dir.x=x &&
	p1=$! &&
	enter 2 d1 3 2 d1.b=2 &&
	p2=$! &&
	canopy kvs --rank 3 fence d1 3 d1.c=3 &&
	wait $p1 && wait $p2 &&
	test "$(canopy kvs --rank 3 get d1.a d1.b d1.c d1.dir.x | tr "\n" " ")" = "1 2 3 x " &&
	test $(counter drafts-used) -gt $used &&
	test $(counter drafted-ops) -ge $((ops + 3))
'
test_expect_success 'a commit between two participants: the draft is not used, nothing is lost' '
	enter 1 d2 2 1 d2.a=1 d2.shared=fence &&
	p1=$! &&
	canopy kvs put d2.c=3 d2.shared=commit &&
	canopy kvs --rank 2 fence d2 2 d2.b=2 &&
	wait $p1 &&
	test "$(canopy kvs --rank 2 get d2.a d2.b d2.c | tr "\n" " ")" = "1 2 3 " &&
	# the fence completed after the commit, so its value is the last
	test "$(canopy kvs get d2.shared)" = fence
'
test_expect_success 'an operation that fails in the draft fails the fence as it would without one' '
	canopy kvs link loop.b loop.a &&
	canopy kvs link loop.a loop.b &&
	{ test_must_fail canopy kvs --rank 1 fence d3 2 loop.a.x=1 2>err1 & } &&
	p1=$! &&
	wait_joined d3 1 &&
	test_must_fail canopy kvs --rank 2 fence d3 2 d3.y=2 2>err2 &&
	wait $p1 &&
	grep -i "too many levels of symbolic links" err2 &&
	test_must_fail canopy kvs get d3.y &&
	# the next fence is fine
	{ canopy kvs --rank 1 fence d4 2 d4.a=1 & } &&
	p1=$! &&
	canopy kvs --rank 2 fence d4 2 d4.b=2 &&
	wait $p1 &&
	test "$(canopy kvs get d4.b)" = 2
'
test_expect_success 'two fences open at once, their participants interleaved' '
	enter 1 e1 2 1 e1.a=1 &&
	p1=$! &&
	enter 2 e2 2 1 e2.a=1 &&
	p2=$! &&
	canopy kvs --rank 3 fence e1 2 e1.b=2 &&
	canopy kvs --rank 0 fence e2 2 e2.b=2 &&
	wait $p1 && wait $p2 &&
	test "$(canopy kvs --rank 1 get e1.a e1.b e2.a e2.b | tr "\n" " ")" = "1 2 1 2 "
'
test_done
