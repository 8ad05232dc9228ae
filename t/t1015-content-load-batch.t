#!/bin/sh
test_description='content.load-batch: a broker loads blobs from its parent in batches'

. $(dirname $0)/sharness.sh

test_under_canopy 8 2

# stats field F of rank R's content service
cstat () {
	rpc --rank $1 content.stats | grep -o "\"$2\": *[0-9]*" | grep -o "[0-9]*$"
}
# a blobref nobody stored
unknown_ref () {
	echo "sha256-$(echo never stored $1 | sha256sum | cut -c1-64)"
}

test_expect_success 'setup: 40 values of 1 KiB, each its own blob' '
	for i in $(seq 10 49); do
		printf "%01024d" $i >v$i &&
		canopy kvs put lb.k$i=$(cat v$i) || return 1
	done &&
	for i in $(seq 10 49); do
		rpc kvs.lookup "{\"key\":\"lb.k$i\",\"flags\":4}" |
			grep -o "sha256-[0-9a-f]*" || return 1
	done >refs &&
	test $(sort -u refs | wc -l) = 40 &&
	canopy content flush
'
test_expect_success 'a leaf loads 40 blobs at once: correct, and in fewer requests' '
	for r in 7 3 1; do rpc --rank $r content.dropcache >/dev/null || return 1; done &&
	b0=$(cstat 7 upstream-batches) &&
	l0=$(cstat 7 upstream-loads) &&
	n3=$(cstat 3 batch-loads) &&
	rpc --rank 7 --raw --many content.load $(cat refs) >got &&
	cat $(seq -f v%g 10 49) >want &&
	cmp want got &&
	b=$(($(cstat 7 upstream-batches) - b0)) &&
	l=$(($(cstat 7 upstream-loads) - l0)) &&
	echo "rank 7: $l blobs loaded in $b requests" &&
	test $l = 40 &&
	test $b -lt $l &&
	test $(cstat 3 batch-loads) -gt $n3
'
test_expect_success 'a batch is answered with the blobs the parent has' '
	head -3 refs >req &&
	unknown_ref 1 >>req &&
	rpc --rank 3 --raw content.load-batch - <req >ans &&
	for ref in $(head -3 refs); do grep -c $ref ans || return 1; done &&
	test_must_fail grep -q $(unknown_ref 1) ans &&
	grep -q "$(cat v10)" ans
'
test_expect_success 'a child'"'"'s batch goes up whole, not split by the window' '
	for r in 3 1; do rpc --rank $r content.dropcache >/dev/null || return 1; done &&
	b3=$(cstat 3 upstream-batches) &&
	b1=$(cstat 1 upstream-batches) &&
	rpc --rank 3 --raw content.load-batch - <refs >all &&
	for ref in $(cat refs); do grep -q $ref all || return 1; done &&
	echo "rank 3: $(($(cstat 3 upstream-batches) - b3)) batches, rank 1: $(($(cstat 1 upstream-batches) - b1))" &&
	test $(($(cstat 3 upstream-batches) - b3)) = 1 &&
	test $(($(cstat 1 upstream-batches) - b1)) = 1
'
test_expect_success 'an unknown blob read at a leaf fails with ENOENT' '
	test_must_fail rpc --rank 7 content.load $(unknown_ref 2) 2>err &&
	cat err &&
	grep "unknown blob" err
'
test_expect_success 'malformed batches are refused' '
	echo nonsense >bad1 &&
	test_must_fail rpc --rank 3 --raw content.load-batch - <bad1 2>err1 &&
	grep "one per line" err1 &&
	{ head -1 refs; echo "sha256-xyz$(head -1 refs | cut -c11-)"; } >bad2 &&
	test_must_fail rpc --rank 3 --raw content.load-batch - <bad2 2>err2 &&
	grep "line 2 is not a blobref" err2 &&
	for i in $(seq 1 65); do unknown_ref $i; done >bad3 &&
	test_must_fail rpc --rank 3 --raw content.load-batch - <bad3 2>err3 &&
	grep "1 to 64 blobrefs" err3 &&
	printf "" >bad4 &&
	test_must_fail rpc --rank 3 --raw content.load-batch - <bad4 &&
	rpc --rank 3 content.stats >/dev/null
'
test_expect_success 'the KVS reads through batched loads at every level' '
	canopy kvs dropcache --all &&
	for r in 7 3 1; do rpc --rank $r content.dropcache >/dev/null || return 1; done &&
	n1=$(cstat 1 batch-loads) &&
	for i in $(seq 10 49); do echo $i; done |
		xargs -P 8 -I{} sh -c "canopy kvs --rank 7 get lb.k{} >g{}" &&
	for i in $(seq 10 49); do test "$(cat g$i)" = "$(cat v$i)" || return 1; done &&
	test $(cstat 1 batch-loads) -gt $n1
'
test_done
