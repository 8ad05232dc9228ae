#!/bin/sh
test_description='KVS guest access: kvs.guest-access=none|read|own

Users other than the instance owner ("guests") get what kvs.guest-access
allows: none (the default), read (the whole namespace, read-only) or own
(read, and writes under u.<uid>. only).  The guest is "nobody", run with
setpriv, so this needs root.'

. $(dirname $0)/sharness.sh

if test "$(id -u)" != 0 || ! command -v setpriv >/dev/null ||
   ! id nobody >/dev/null 2>&1; then
	skip_all="needs root, setpriv and a nobody user to run a guest client"
	test_done
fi
as_guest () {
	setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups "$@"
}
if ! as_guest canopy --help >/dev/null 2>&1; then
	skip_all="user nobody cannot run canopy from this build directory"
	test_done
fi

test_under_canopy 3 2 -S kvs.guest-access=own

U=$(id -u nobody)

test_expect_success 'setup: data of the owner, a run directory guests can enter' '
	canopy kvs put secret=42 other.a=1 &&
	chmod o+x $(canopy getattr rundir)
'
test_expect_success 'own: a guest reads anything' '
	test "$(as_guest canopy kvs get secret)" = 42 &&
	test "$(on_rank 2 as_guest canopy kvs get other.a)" = 1
'
test_expect_success 'own: a guest reads from the shared read cache too' '
	a0=$(canopy kvs stats | jq .shm.attaches) &&
	as_guest kvs-read --attach secret >guest-read.out &&
	cat guest-read.out &&
	grep "^attach: ok" guest-read.out &&
	grep "^secret=42$" guest-read.out &&
	tail -n 1 guest-read.out | grep "hits=1 .* rpc=0 attaches=1" &&
	test $(canopy kvs stats | jq .shm.attaches) -eq $((a0 + 1))
'
test_expect_success 'own: a guest commits under its namespace, on every rank' '
	as_guest canopy kvs put u.$U.x=1 &&
	on_rank 2 as_guest canopy kvs put u.$U.y=2 &&
	test "$(canopy kvs get u.$U.x)" = 1 &&
	test "$(canopy kvs get u.$U.y)" = 2
'
test_expect_success 'own: a guest may not write elsewhere (EPERM, nothing written)' '
	test_must_fail as_guest canopy kvs put secret=0 2>put1.err &&
	grep "only write under u.$U" put1.err &&
	test_must_fail on_rank 1 as_guest canopy kvs put u.$U.z=1 u.0.z=1 2>put2.err &&
	grep "only write under u.$U" put2.err &&
	test "$(canopy kvs get secret)" = 42 &&
	test_must_fail canopy kvs get u.$U.z &&
	test_must_fail as_guest canopy kvs unlink other.a &&
	canopy kvs get other.a
'
test_expect_success 'own: a guest may not make symlinks' '
	test_must_fail as_guest canopy kvs link secret u.$U.l 2>link.err &&
	grep -i symlink link.err
'
test_expect_success 'own: a guest fences under its namespace, with a fence name there' '
	{ as_guest canopy kvs fence u.$U.f1 2 u.$U.a=1 & } && pid=$! &&
	on_rank 2 as_guest canopy kvs fence u.$U.f1 2 u.$U.b=2 &&
	wait $pid &&
	test "$(canopy kvs get u.$U.b)" = 2
'
test_expect_success 'own: a guest cannot join or name fences outside it' '
	test_must_fail as_guest canopy kvs fence job.f1 1 u.$U.c=1 2>f.err &&
	grep "fences are named under u.$U" f.err &&
	test_must_fail canopy kvs get u.$U.c
'
test_expect_success 'own: the owner still writes anywhere' '
	canopy kvs put u.$U.byowner=1 secret=43
'

# Fresh instances with the other settings
guest_instance () {
	canopy start -n 2 "$@" -- sh -c "
		chmod o+x \$(canopy getattr rundir) &&
		canopy kvs put secret=42 &&
		. '$PWD/probe.sh'"
}
test_expect_success 'none (the default): a guest may not read or write' '
	cat >probe.sh <<-EOT &&
	g () { setpriv --reuid=nobody --regid=\$(id -g nobody) --clear-groups "\$@"; }
	g canopy kvs get secret >get.out 2>get.err; echo "get \$?"
	g canopy kvs put u.$U.x=1 >put.out 2>put.err; echo "put \$?"
	g kvs-read --attach secret >kr.out 2>&1; echo "kr \$?"
	EOT
	guest_instance >none.out &&
	grep "get 1" none.out && grep "put 1" none.out &&
	grep "request denied" get.err && grep "request denied" put.err &&
	grep "kr 1" none.out &&
	grep "^attach: 1 Operation not permitted" kr.out &&
	grep "^secret: .*request denied" kr.out
'
test_expect_success 'read: a guest reads but may not write' '
	cat >probe.sh <<-EOT &&
	g () { setpriv --reuid=nobody --regid=\$(id -g nobody) --clear-groups "\$@"; }
	g canopy kvs get secret >get.out 2>get.err; echo "get \$?"
	g canopy kvs put u.$U.x=1 >put.out 2>put.err; echo "put \$?"
	EOT
	guest_instance -S kvs.guest-access=read >read.out &&
	grep "get 0" read.out && test "$(cat get.out)" = 42 &&
	grep "put 1" read.out && grep "request denied" put.err
'
test_expect_success 'a bad kvs.guest-access value stops the KVS with a clear error' '
	test_must_fail canopy start -n 1 -S kvs.guest-access=all -- \
		canopy kvs get x 2>bad.err &&
	grep "kvs.guest-access=all" bad.err
'
test_done
