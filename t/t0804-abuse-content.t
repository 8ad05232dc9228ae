#!/bin/sh
test_description='content.store-local: only local modules may use it, and a
malformed request stores nothing

The KVS hands rank 0'"'"'s new blobs to the content service as blob records
(ref, u32 length, bytes; blobrecs.h).  Every record is checked before any
is stored: a request with one bad record is refused whole (EPROTO, 71 on Linux).  The
requests come from testmod.forward, which sends raw bytes from a module.'

. $(dirname $0)/sharness.sh

test_under_canopy 1

testmod=$SHARNESS_BUILD_DIRECTORY/t/helpers/.libs/testmod.so

hex () {
	od -An -tx1 | tr -d ' \n'
}
ref_of () {
	echo "sha256-$(printf %s "$1" | sha256sum | cut -d" " -f1)"
}
# record DATA [REF]: one blob record of DATA, under its own ref or REF
record () {
	ref=${2:-$(ref_of "$1")}
	printf %s "$ref" | hex
	printf "%08x" ${#1}
	printf %s "$1" | hex
}
forward () {	# TOPIC HEX
	rpc testmod.forward "{\"topic\":\"$1\",\"hex\":\"$2\"}"
}
load () {	# DATA: the outcome of content.load of its ref
	rpc testmod.forward "{\"topic\":\"content.load\",\"string\":\"$(ref_of "$1")\"}"
}

test_expect_success 'load testmod' '
	canopy module load $testmod
'
test_expect_success 'a client may not use content.store-local' '
	test_must_fail rpc content.store-local "{}" 2>err &&
	grep "for local modules" err
'
test_expect_success 'a module stores blob records, and they load' '
	forward content.store-local "$(record first)$(record second)" >out &&
	jq -e ".size > 0" out &&
	load first | jq -e ".size == 5" &&
	load second | jq -e ".size == 6"
'
test_expect_success 'a malformed record refuses the whole request: nothing stored' '
	good=$(record good-blob) &&
	forward content.store-local "${good}$(record bad sha256-nothex)" >out &&
	jq -e ".errnum == 71" out &&
	jq -r .errstr out | grep "malformed content store request" &&
	load good-blob >out2 &&
	jq -e ".errnum" out2 &&
	forward content.store-local "${good}00" >out &&
	jq -e ".errnum == 71" out &&
	forward content.store-local "$(record cut | cut -c1-100)" >out &&
	jq -e ".errnum == 71" out &&
	load good-blob | jq -e ".errnum"
'
test_expect_success 'an empty request stores nothing and succeeds' '
	forward content.store-local "" >out &&
	jq -e ".size > 0" out
'
test_done
