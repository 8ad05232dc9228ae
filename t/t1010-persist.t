#!/bin/sh
test_description='persistence: restart with a statedir, SYNC and checkpoints,
content flush/stats, dump and restore, fsck, damaged and busy stores, shards'

. $(dirname $0)/sharness.sh

command -v sqlite3 >/dev/null && test_set_prereq SQLITE3

# the version the KVS on rank 0 has
kvs_version () {
	canopy kvs version
}

test_expect_success 'setup: a binary value' '
	dd if=/dev/urandom of=big.bin bs=1024 count=700 2>/dev/null
'
test_expect_success 'keys, values, dirs and symlinks survive a restart' '
	canopy start -n 3 --statedir=s1 -- sh -c "
		canopy kvs put a=1 b.c=2 &&
		canopy kvs put -r big=- <big.bin &&
		canopy kvs mkdir e &&
		canopy kvs link b.c l &&
		canopy kvs version >version.before
	" &&
	test -f s1/content.sqlite &&
	canopy start -n 2 --statedir=s1 -- sh -c "
		canopy kvs get a b.c >get.out &&
		canopy kvs --rank 1 get -r big >big.out &&
		canopy kvs get l >link.out &&
		canopy kvs ls e >e.out &&
		persist-writer ckpt >ckpt.after &&
		canopy dmesg >dmesg.out
	" &&
	printf "1\n2\n" >get.exp &&
	test_cmp get.exp get.out &&
	cmp big.bin big.out &&
	echo 2 >link.exp &&
	test_cmp link.exp link.out &&
	test ! -s e.out &&
	read ck restored <ckpt.after &&
	echo $restored >version.restored &&
	test "$restored" -ge "$(cat version.before)"
'
test_expect_success 'the restart logs which checkpoint it resumed from' '
	grep "restored KVS version $(cat version.restored) from the checkpoint of" dmesg.out
'
test_expect_success 'versions go on from the restored one' '
	canopy start --statedir=s1 -- sh -c "
		canopy kvs put x=1 && canopy kvs version" >v.out &&
	test $(cat v.out) -gt $(cat version.restored)
'
test_expect_success 'without --statedir nothing is kept' '
	canopy start -- canopy kvs put gone=1 &&
	canopy start -- sh -c "! canopy kvs get gone"
'
test_expect_success 'a SYNC commit returns with a checkpoint of its version on disk' '
	canopy start --statedir=s2 -S kvs.checkpoint-period=0 -- sh -c "
		persist-writer write --sync --count 1 k sync.log &&
		canopy content checkpoints >ck.out
	" &&
	read n committed <sync.log &&
	read v rest <ck.out &&
	test "$v" -ge "$committed"
'
test_expect_success 'a SYNC fence across two ranks returns with its checkpoint on disk' '
	canopy start -n 2 --statedir=s2 -S kvs.checkpoint-period=0 -- sh -c "
		CANOPY_URI=\$(canopy getattr rundir | sed \"s|^|local://|; s|\$|/local-1|\") \
			persist-writer fence --sync f1 2 fence.b >fence.b &
		persist-writer fence --sync f1 2 fence.a >fence.a && wait &&
		canopy content checkpoints >ckf.out
	" &&
	test_cmp fence.a fence.b &&
	read v rest <ckf.out &&
	test "$v" -ge "$(cat fence.a)"
'
test_expect_success 'periodic checkpoints (kvs.checkpoint-period)' '
	canopy start --statedir=s3 -S kvs.checkpoint-period=0.1 -- sh -c "
		canopy kvs put p=1 &&
		v=\$(canopy kvs version) &&
		n=0 &&
		while test \$n -lt 300; do
			c=\$(canopy content checkpoints | head -1 | cut -d\" \" -f1)
			test -n \"\$c\" && test \$c -ge \$v && exit 0
			sleep 0.1; n=\$((n+1))
		done; exit 1
	"
'
test_expect_success 'a clean shutdown writes a last checkpoint' '
	canopy start --statedir=s4 -S kvs.checkpoint-period=0 -- sh -c "
		canopy kvs put q=1 && canopy kvs version >q.version" &&
	canopy start --statedir=s4 -- canopy content checkpoints >q.ck &&
	read v rest <q.ck &&
	test $v -ge $(cat q.version)
'
test_expect_success 'content flush, stats and dropcache' '
	canopy start -n 2 --statedir=s5 -- sh -c "
		canopy kvs put -r big=- <big.bin &&
		canopy content flush &&
		canopy content stats >stats0.out &&
		canopy content --rank 1 stats >stats1.out &&
		canopy content dropcache &&
		canopy kvs dropcache --all &&
		canopy kvs get -r big >big5.out
	" &&
	grep "\"dirty\": 0" stats0.out &&
	grep "\"state\": \"ok\"" stats0.out &&
	grep "\"statedir\": \".*s5\"" stats0.out &&
	grep "\"rank\": 1" stats1.out &&
	cmp big.bin big5.out
'
test_expect_success 'without a backing store, flush and SYNC commits fail with ENOSYS' '
	canopy start -o --modules=content,kvs -- sh -c "
		! canopy content flush 2>flush.err &&
		! canopy kvs put --sync a=1 2>sync.err &&
		canopy kvs put a=1
	" &&
	grep "no backing store" flush.err &&
	grep "no backing store" sync.err
'
test_expect_success 'without a backing store, rank 0 never drops content (regression)' '
	canopy start -o --modules=content,kvs -- sh -c "
		canopy kvs put -r big=- <big.bin &&
		canopy content dropcache &&
		canopy kvs dropcache &&
		canopy kvs get -r big" >nobacking.out &&
	cmp big.bin nobacking.out
'
test_expect_success 'dump, wipe the statedir, restore: identical keys and values' '
	canopy start -n 2 --statedir=s6 -- sh -c "
		canopy kvs put a=1 b.c=2 \"pmi.x-seg-1/2=3\" &&
		canopy kvs put -r big=- <big.bin &&
		canopy kvs mkdir empty.dir &&
		canopy kvs link b.c l &&
		for i in \$(seq 1 300); do echo \"h.k\$i=\$i\"; done | xargs canopy kvs put &&
		canopy dump d1.tar
	" &&
	rm -rf s6 &&
	canopy start -n 2 --statedir=s6 -- canopy restore d1.tar &&
	canopy start --statedir=s6 -- sh -c "
		canopy dump d2.tar &&
		canopy kvs get -r big >big6.out &&
		canopy kvs get h.k300 b.c l \"pmi.x-seg-1/2\" >get6.out
	" &&
	cmp big.bin big6.out &&
	printf "300\n2\n2\n3\n" >get6.exp &&
	test_cmp get6.exp get6.out &&
	# every broker writes its own resource.rank.R at start: compare the rest
	mkdir x1 x2 &&
	tar xf d1.tar -C x1 && tar xf d2.tar -C x2 &&
	rm -rf x1/resource.* x2/resource.* &&
	diff -r x1 x2 &&
	tar tf d1.tar | grep -v "^resource\." >members &&
	grep -x "empty.dir/\{0,1\}" members &&
	grep -x "h.k17" members &&
	test $(wc -l <members) -eq 306
'
test_expect_success 'dump --checkpoint writes the newest checkpoint' '
	canopy start --statedir=s6 -S kvs.checkpoint-period=0 -- sh -c "
		canopy kvs put after=1 &&
		canopy dump --checkpoint d3.tar &&
		canopy dump d4.tar" &&
	! tar tf d3.tar | grep -x after &&
	tar tf d3.tar | grep -x h.k17 &&
	tar tf d4.tar | grep -x after
'
test_expect_success 'restore refuses a file that is not a dump' '
	echo hello >notatar &&
	canopy start -- sh -c "! canopy restore notatar 2>restore.err" &&
	grep "not a tar archive" restore.err
'
test_expect_success 'fsck on a clean store reports nothing' '
	canopy start -n 2 --statedir=s6 -- sh -c "canopy fsck >fsck.out 2>&1" &&
	test_must_be_empty fsck.out
'
test_expect_success SQLITE3 'fsck finds a dangling reference injected into the store' '
	cat >lookup.sh <<-\EOF &&
	rpc kvs.lookup "{\"key\":\"big\",\"flags\":4}"
	EOF
	canopy start --statedir=s6 -- sh lookup.sh >big.treeobj &&
	ref=$(grep -o "sha256-[0-9a-f]*" big.treeobj | sed -n 3p) &&
	test -n "$ref" &&
	echo "DELETE FROM objects WHERE hash = X'\''${ref#sha256-}'\'';" >delete.sql &&
	sqlite3 s6/content.sqlite <delete.sql &&
	test_expect_code 1 canopy start --statedir=s6 -- canopy fsck 2>fsck.err &&
	grep "^big: missing blob $ref" fsck.err &&
	grep "1 problem" fsck.err &&
	canopy start --statedir=s6 -- sh -c "! canopy dump d5.tar 2>dump.err &&
		canopy dump --ignore-missing d5.tar" &&
	grep "use --ignore-missing" dump.err &&
	! tar tf d5.tar | grep -x big
'
test_expect_success 'a garbage store file is refused at start, with the reason' '
	canopy start --statedir=s7 -- canopy kvs put a=1 &&
	dd if=/dev/urandom of=s7/content.sqlite bs=1024 count=8 conv=notrunc 2>/dev/null &&
	test_must_fail canopy start --statedir=s7 -- canopy kvs get a 2>err7 &&
	grep "content store in .*s7 refused" err7
'
test_expect_success 'a truncated store file is refused at start, with the reason' '
	canopy start --statedir=s8 -S kvs.checkpoint-period=0 -- sh -c "
		canopy kvs put -r big=- <big.bin" &&
	size=$(stat -c %s s8/content.sqlite) &&
	truncate -s $((size / 2)) s8/content.sqlite &&
	test_must_fail canopy start --statedir=s8 -- canopy kvs get -r big 2>err8 &&
	grep "refused" err8
'
test_expect_success SQLITE3 'damaged newest checkpoints: the newest usable one is used' '
	canopy start --statedir=s9 -S kvs.checkpoint-period=0 -- sh -c "
		canopy kvs put --sync one=1 && canopy kvs version >v.one &&
		canopy kvs put --sync two=2 && canopy kvs version >v.two" &&
	zero=sha256-0000000000000000000000000000000000000000000000000000000000000000 &&
	echo "UPDATE checkpoints SET rootref = '\''$zero'\''" \
	     "WHERE version >= $(cat v.two);" >damage.sql &&
	sqlite3 s9/content.sqlite <damage.sql &&
	canopy start --statedir=s9 -- sh -c "
		canopy kvs get one && ! canopy kvs get two &&
		persist-writer ckpt >s9.ckpt; canopy dmesg" >s9.out &&
	grep "skipping the checkpoint of version $(cat v.two)" s9.out &&
	read ck restored <s9.ckpt &&
	test $restored -lt $(cat v.two) &&
	grep "restored KVS version $restored from the checkpoint of .*an older checkpoint" s9.out
'
test_expect_success SQLITE3 'only unusable checkpoints: refused rather than started empty' '
	echo "UPDATE checkpoints SET rootref = '\''garbage'\'';" >garbage.sql &&
	sqlite3 s9/content.sqlite <garbage.sql &&
	test_must_fail canopy start --statedir=s9 -- canopy kvs get one 2>err9 &&
	grep "none of the .* KVS checkpoints can be used" err9
'
test_expect_success 'a statedir in use by a running instance is refused' '
	rm -f held &&
	canopy start --statedir=s10 -- sh -c "canopy kvs put x=1 && touch held &&
		while test -e held; do sleep 0.1; done" &
	pid=$! &&
	test_when_finished "rm -f held; wait $pid" &&
	wait_for_file held 30 &&
	test_must_fail canopy start --statedir=s10 -- canopy kvs get x 2>err10 &&
	{ grep "in use by another process" err10 || { cat err10; false; }; }
'
test_expect_success 'a sharded store: 16 files, restart, fsck' '
	canopy start -n 2 --statedir=s11 -S content.shards=16 -- sh -c "
		canopy kvs put -r big=- <big.bin &&
		for i in \$(seq 1 200); do echo \"k\$i=\$i\"; done | xargs canopy kvs put" &&
	ls s11 | grep -c "^content-[0-9a-f][0-9a-f].sqlite$" >nfiles &&
	test $(cat nfiles) = 16 &&
	canopy start --statedir=s11 -S content.validate=full -- sh -c "
		canopy kvs get -r big >big11.out && canopy kvs get k200 &&
		canopy fsck && canopy content stats" >stats11.out &&
	cmp big.bin big11.out &&
	grep "\"shards\": 16" stats11.out &&
	grep "\"validate\": \"full\"" stats11.out
'
test_expect_success 'a shard that reaches its cap fails SYNC commits with ENOSPC; reads go on' '
	canopy start --statedir=s12 -S content.shards=2 -S content.shard-max=128k -- sh -c "
		canopy kvs put --sync small=1 &&
		! canopy kvs put -r --sync big=- <big.bin 2>cap.err &&
		canopy kvs get small &&
		! canopy content flush 2>capflush.err" &&
	grep "size cap" cap.err &&
	grep "size cap" capflush.err
'
test_expect_success 'the write-back thread runs at content.nice (default 10); 0 keeps the priority' '
	canopy start --statedir=s13 -- sh -c "
		canopy kvs put --sync a=1 && canopy content stats" >stats13.out &&
	grep "\"nice\": 10" stats13.out &&
	canopy start --statedir=s13 -S content.nice=0 -- sh -c "
		canopy kvs get a && canopy content stats" >stats13b.out &&
	grep "\"nice\": 0" stats13b.out &&
	canopy start --statedir=s13 -- sh -c "
		for t in /proc/\$(canopy getattr broker.pid)/task/*; do
			echo \$(cat \$t/comm) \$(cut -d\" \" -f19 \$t/stat)
		done" >nice13.out &&
	grep "^m:content-sqlit 10$" nice13.out
'
test_expect_success 'content.nice out of 0..19 is refused' '
	canopy start --statedir=s14 -S content.nice=20 -- true 2>nice.err;
	grep "bad attribute content.nice=20" nice.err
'
test_expect_success 'fsck refuses --checkpoint with --rootref' '
	# regression: --checkpoint was silently ignored
	test_must_fail canopy fsck --checkpoint \
		--rootref=sha1-0000000000000000000000000000000000000000 2>fsck2.err &&
	grep "go separately" fsck2.err
'
test_done
