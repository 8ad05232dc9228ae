#!/bin/sh
test_description='a full disk: SYNC commits and content flush fail with ENOSPC
while the instance keeps serving reads; once space is freed they work again'

. $(dirname $0)/sharness.sh

mnt=$PWD/full
mkdir -p "$mnt"
if mount -t tmpfs -o size=1m tmpfs "$mnt" 2>mount.err; then
	test_set_prereq TMPFS
else
	skip_all="cannot mount a 1 MiB tmpfs here ($(cat mount.err)): skipping the ENOSPC tests"
	test_done
fi

cat >enospc.sh <<-\EOF
	set -x
	canopy kvs put --sync a=1 || exit 1
	# fill the file system, then leave a little room
	dd if=/dev/zero of=full/filler bs=4096 2>/dev/null
	truncate -s -48k full/filler || exit 1
	# 400 KiB of random data cannot fit
	if canopy kvs put -r --sync big=- <big.bin 2>sync.err; then exit 1; fi
	# reads go on; a plain commit is accepted (it stays in memory)
	test "$(canopy kvs get a)" = 1 || exit 1
	canopy kvs put b=2 || exit 1
	test "$(canopy kvs get b)" = 2 || exit 1
	if canopy content flush 2>flush.err; then exit 1; fi
	canopy content stats >stats.full || exit 1
	# free the space: flush and SYNC work again
	rm -f full/filler
	canopy content flush || exit 1
	canopy kvs put -r --sync big2=- <big.bin || exit 1
	canopy kvs get -r big2 >big2.out || exit 1
EOF

test_expect_success TMPFS 'setup: 400 KiB of random data' '
	dd if=/dev/urandom of=big.bin bs=1024 count=400 2>/dev/null
'
test_expect_success TMPFS 'on a full statedir, SYNC and flush fail with ENOSPC; reads go on' '
	canopy start -n 2 --statedir=full/state -S kvs.checkpoint-period=0 -- \
		sh enospc.sh 2>trace &&
	grep "No space left on device" sync.err &&
	grep "could not be made durable" sync.err &&
	grep "No space left on device" flush.err &&
	grep "\"state\": \"failing\"" stats.full &&
	cmp big.bin big2.out
'
test_expect_success TMPFS 'the store is consistent and keeps everything that was synced' '
	canopy start --statedir=full/state -- sh -c "
		canopy kvs get a b && canopy kvs get -r big2 >big2.again && canopy fsck" >after.out &&
	printf "1\n2\n" >after.exp &&
	test_cmp after.exp after.out &&
	cmp big.bin big2.again
'
test_expect_success TMPFS 'cleanup: unmount' '
	umount "$mnt"
'
test_done
