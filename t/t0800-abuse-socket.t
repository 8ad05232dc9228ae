#!/bin/sh
test_description='abuse of the local socket: bursts, malformed and oversized frames, a live fuzzer

Complements t0005-errors.t (garbage, a 4 GiB claim, random junk): here
every malformed-message case the decoder knows is sent once (T10), a frame
of twice the size limit and one just under it are claimed (T9), and 10^5
mutated requests are sent by sockabuse fuzz while the broker RSS is watched
(T8, live).  Figures are printed in the verbose output (-v).'

. $(dirname $0)/sharness.sh

# fences left open by mutated kvs.fence requests fail when their client
# is dropped; the timeout only bounds the ones a mutation made valid
test_under_canopy 2 2 -S kvs.fence-timeout=10

testmod=$SHARNESS_BUILD_DIRECTORY/t/helpers/.libs/testmod.so
S=$(canopy getattr rundir)/local-0

# RSS growth allowed during the live fuzzer, in KiB.  ASan keeps up to
# 256 MiB of freed memory in quarantine, so a sanitized broker gets more.
if test -n "$CANOPY_TEST_SANITIZED"; then
	rss_bound=$((512 * 1024))
else
	rss_bound=$((64 * 1024))
fi
fuzz_count=${CANOPY_TEST_FUZZ_COUNT:-100000}

field () {
	sed -n "s/^$1 //p" "$2"
}

test_expect_success 'load testmod (its echo service is one of the fuzz targets)' '
	canopy module load $testmod
'
# Regression: the connector handled at most 256 messages per wake-up and
# left the rest of a burst in its buffer until the client sent more, so a
# client waiting for all its answers hung.
test_expect_success 'one write of 1000 requests is answered in full' '
	sockabuse burst 1000 $S >burst.out &&
	grep "^answers 1000$" burst.out
'
test_expect_success 'one write of 5000 requests is answered in full' '
	sockabuse burst 5000 $S >burst.out &&
	grep "^answers 5000$" burst.out
'
for kind in bad-magic bad-version bad-type unknown-flag topic-flag-no-topic \
	    empty-payload payload-len-too-big routes-too-deep route-empty-id \
	    nul-in-topic trailing-bytes event control; do
	test_expect_success "malformed ($kind): dropped; the broker keeps serving" "
		sockabuse malformed $kind \$S >out.$kind &&
		grep '^closed by broker$' out.$kind &&
		canopy ping --count 1 >/dev/null
	"
done
test_expect_success 'a well-formed request without a topic is answered EPROTO' '
	sockabuse malformed no-topic $S >out &&
	grep "^answer 71: request has no topic" out
'
test_expect_success 'invalid JSON in a request payload is answered EPROTO' '
	sockabuse malformed bad-json $S >out &&
	grep "^answer 71" out
'
test_expect_success 'a response sent by a client is ignored (the connection stays)' '
	sockabuse malformed response $S >out &&
	grep "^no answer, still open$" out
'
test_expect_success 'every drop is logged with the client and the reason' '
	canopy dmesg >dmesg.out &&
	test $(grep -c "dropped client .*: malformed message" dmesg.out) -ge 11 &&
	grep "dropped client .*: sent an event or control message" dmesg.out
'
# T9 on the client socket: the limit is CANOPY_MSG_SIZE_MAX (256 MiB).
test_expect_success 'a frame claiming twice the size limit is dropped at once' '
	sockabuse claim 536870912 $S >claim2x.out &&
	cat claim2x.out &&
	grep "^closed by broker$" claim2x.out &&
	grep "^other-client-answered yes$" claim2x.out
'
# Regression: the whole claimed size used to be allocated on the header.
test_expect_success 'a frame claiming just under the limit costs only what arrived' '
	sockabuse claim 268435455 $S >claim.out &&
	cat claim.out &&
	grep "^still open$" claim.out &&
	test $(field vmsize-growth-kib claim.out) -lt 65536
'
test_expect_success "live fuzzer: $fuzz_count mutated requests, the broker survives" '
	sockabuse fuzz --count $fuzz_count $S >fuzz.out &&
	cat fuzz.out &&
	test $(field sent fuzz.out) -eq $fuzz_count &&
	grep "^alive yes$" fuzz.out
'
test_expect_success "live fuzzer: broker RSS grew by less than $rss_bound KiB" '
	before=$(field rss-before-kib fuzz.out) &&
	after=$(field rss-after-kib fuzz.out) &&
	echo "rss growth: $((after - before)) KiB" &&
	test $((after - before)) -lt $rss_bound
'
test_expect_success 'after the fuzzer: both ranks answer and the KVS works' '
	canopy ping --count 1 --rank 1 >/dev/null &&
	canopy kvs put after.fuzz=ok &&
	test "$(canopy kvs --rank 1 get after.fuzz)" = ok
'
test_expect_success 'after the fuzzer: no client state is left in the kvs module' '
	n=0 &&
	while ! rpc kvs.stats | grep -q "\"pending-requests\": *0"; do
		n=$((n + 1)) && test $n -lt 1200 || return 1
		sleep 0.1
	done
'
test_done
