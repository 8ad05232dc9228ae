#!/bin/sh
test_description='a non-owner is denied and cannot forge credentials (T13)

The broker stamps each local request with the SO_PEERCRED uid of its
connection and a role: owner for the instance owner, user for anyone else.
Handlers admit only the owner unless they say otherwise.  A non-owner may
not present other credentials; the owner may (to test guest access).
The guest is "nobody", run with setpriv, so this needs root.'

. $(dirname $0)/sharness.sh

if test "$(id -u)" != 0 || ! command -v setpriv >/dev/null ||
   ! id nobody >/dev/null 2>&1; then
	skip_all="needs root, setpriv and a 'nobody' user to run a guest client"
	test_done
fi

test_under_canopy 2 2

testmod=$SHARNESS_BUILD_DIRECTORY/t/helpers/.libs/testmod.so
S=$(canopy getattr rundir)/local-0
nobody_uid=$(id -u nobody)
# role bits (canopy/types.h): owner 1, user 2, local 4
guest_creds="{\"userid\":$nobody_uid,\"rolemask\":6}"

as_guest () {
	setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups "$@"
}

test_expect_success 'setup: a secret, testmod, and a run directory guests can enter' '
	canopy kvs put secret=42 &&
	canopy module load $testmod &&
	chmod o+x $(canopy getattr rundir)
'
test_expect_success 'a guest connects and may read attributes' '
	test "$(as_guest canopy getattr size)" = 2
'
test_expect_success 'the broker stamps the guest as uid nobody, role user' '
	as_guest sockabuse creds testmod.creds 0 0 $S >creds.out &&
	test "$(cat creds.out)" = "$guest_creds"
'
test_expect_success 'a guest claiming uid 0 and the owner role is stamped anyway' '
	as_guest sockabuse creds testmod.creds 0 1 $S >forge1.out &&
	test "$(cat forge1.out)" = "$guest_creds" &&
	as_guest sockabuse creds testmod.creds 0 0xffffffff $S >forge2.out &&
	test "$(cat forge2.out)" = "$guest_creds"
'
test_expect_success 'a forged owner request from a guest is denied' '
	as_guest sockabuse creds kvs.lookup 0 1 "{\"key\":\"secret\",\"flags\":0}" $S >forge3.out &&
	grep "^error 1: request denied" forge3.out
'
# Every owner-only service a guest could reach, on both ranks.
test_expect_success 'every owner-only operation is denied to a guest' '
	denied=0 attempted=0 &&
	while read -r cmd; do
		attempted=$((attempted + 1)) &&
		if as_guest $cmd >/dev/null 2>err.guest; then
			echo "NOT DENIED: $cmd"
		elif grep -q "request denied for this user" err.guest; then
			denied=$((denied + 1))
		else
			echo "$cmd: $(cat err.guest)"
		fi
	done <<-EOF &&
	canopy kvs put guest.a=1
	canopy kvs get secret
	canopy kvs ls .
	canopy kvs fence guestfence 1 guest.b=1
	canopy kvs version
	canopy kvs --rank 1 put guest.c=1
	canopy kvs --rank 1 get secret
	canopy setattr test.guest 1
	canopy module list
	canopy module remove testmod
	canopy event pub guest.event
	canopy dmesg
	canopy run -n 1 true
	rpc content.load {}
	rpc content.store {}
	rpc content.flush {}
	rpc kvs.relay {}
	rpc kvs.getroot {}
	rpc kvs.fence-abort {"name":"x","errnum":5}
	rpc kvs.dropcache {}
	rpc exec.signal {"jobid":1,"signum":9}
	rpc testmod.echo {}
	rpc --rank 1 kvs.getroot {}
	canopy shutdown
	EOF
	echo "T13: denied $denied of $attempted owner-only operations" &&
	test $denied -eq $attempted
'
test_expect_success 'the owner may present guest credentials (passed through)' '
	sockabuse creds testmod.creds $nobody_uid 2 $S >own1.out &&
	test "$(cat own1.out)" = "$guest_creds" &&
	sockabuse creds kvs.lookup $nobody_uid 2 "{\"key\":\"secret\",\"flags\":0}" $S >own2.out &&
	grep "^error 1: request denied" own2.out
'
test_expect_success 'the owner without a claim gets its own credentials' '
	sockabuse creds testmod.creds 0 0 $S >own3.out &&
	test "$(cat own3.out)" = "{\"userid\":$(id -u),\"rolemask\":5}"
'
test_expect_success 'the instance is intact: the secret is unchanged, no guest keys' '
	test "$(canopy kvs get secret)" = 42 &&
	test_must_fail canopy kvs get guest.a &&
	test_must_fail canopy kvs get guest.c &&
	canopy module list | grep "^testmod"
'
# Raw tree objects: not even the owner may write references to blobs it
# did not send, directories with content, or hashed directories.
blob=sha256-0000000000000000000000000000000000000000000000000000000000000000
commit_raw () {
	sockabuse kvswire kvs.commit "{\"fences\":[{\"name\":\"c\",\"nprocs\":1,\"flags\":0,\"count\":1,\"ops\":[[\"raw.k\",$1]]}],\"blobs\":[]}" $S
}
test_expect_success 'a raw dirref tree object is refused' '
	commit_raw "{\"ver\":1,\"type\":\"dirref\",\"data\":[\"$blob\"]}" >raw1.out &&
	grep "^error 22: tree objects of type dirref may not be put" raw1.out
'
test_expect_success 'a valref to a blob that was not sent is refused' '
	commit_raw "{\"ver\":1,\"type\":\"valref\",\"data\":[\"$blob\"]}" >raw2.out &&
	grep "^error 71: value of .raw.k. references a missing blob" raw2.out
'
test_expect_success 'a directory with entries is refused' '
	commit_raw "{\"ver\":1,\"type\":\"dir\",\"data\":{\"x\":{\"ver\":1,\"type\":\"val\",\"data\":\"\"}}}" >raw3.out &&
	grep "^error 22: only an empty directory may be put" raw3.out
'
test_expect_success 'a hashed directory is refused' '
	commit_raw "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"count\":0,\"level\":0,\"refs\":[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]}}" >raw4.out &&
	grep "^error 22: tree objects of type hdir may not be put" raw4.out &&
	test_must_fail canopy kvs get raw.k
'
test_expect_success 'a dropped guest connection is logged with its uid' '
	printf "junk" | as_guest rawsock $S >out &&
	grep "closed by broker" out &&
	canopy dmesg | grep "dropped client .*(uid $nobody_uid "
'
test_done
