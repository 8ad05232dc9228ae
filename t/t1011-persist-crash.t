#!/bin/sh
test_description='kill -9 of rank 0 during a stream of commits from several
clients: every acknowledged SYNC commit is there after a restart (lost = 0);
without SYNC, only commits after the last checkpoint may be lost'

. $(dirname $0)/sharness.sh

command -v sqlite3 >/dev/null && test_set_prereq SQLITE3

# Socket paths must be short: run directories live in a short temp dir.
run=$(mktemp -d "${TMPDIR:-/tmp}/cpcrash.XXXXXX") || exit 1

cat >idle.sh <<-\EOF
	# initial program: say "ready" with our pid, then wait to be killed
	echo $$ >ready.tmp && mv ready.tmp ready
	exec sleep 3600
EOF

# start_bg NAME STATEDIR [OPTIONS...]: a 3-broker instance in the
# background; rank 0 may die without the others taking the instance down
start_bg () {
	name=$1 state=$2
	shift 2
	rm -f ready &&
	canopy start -n 3 --exit-mode=leader --rundir=$run/$name --statedir=$state \
		"$@" -- sh idle.sh &
	echo $! >start.pid &&
	wait_for_file ready 60 &&
	mv ready idle.pid &&
	CANOPY_URI=local://$run/$name/local-0 canopy kvs put warm=1 &&
	CANOPY_URI=local://$run/$name/local-0 canopy getattr broker.pid >broker.pid
}

uri () {
	echo local://$run/$1/local-$2
}

# wait_lines FILE N: until FILE has N lines (bounded)
wait_lines () {
	_i=0
	while test $_i -lt 600; do
		test -f "$1" && test $(wc -l <"$1") -ge $2 && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "$1: fewer than $2 lines" >&2
	return 1
}

# crash: kill -9 rank 0, then collect the writers and the instance
crash () {
	kill -9 $(cat broker.pid) &&
	for p in $(cat writers.pid); do wait $p; done
	wait $(cat start.pid)
	kill $(cat idle.pid) 2>/dev/null
	return 0
}

test_expect_success 'SYNC: start an instance with a statedir' '
	start_bg sync s_sync
'
test_expect_success 'SYNC: four writers on three ranks commit with --sync' '
	: >writers.pid &&
	for w in 0 1 2 3; do
		r=$((w % 3)) &&
		CANOPY_URI=$(uri sync $r) persist-writer write --sync w$w log.sync.$w &
		echo $! >>writers.pid
	done &&
	for w in 0 1 2 3; do wait_lines log.sync.$w 20 || return 1; done
'
test_expect_success 'SYNC: kill -9 rank 0 in the middle of the stream' '
	crash &&
	test $(cat log.sync.* | wc -l) -ge 80
'
test_expect_success 'SYNC: after a restart every acknowledged commit is there (lost = 0)' '
	canopy start -n 2 --statedir=s_sync -- sh -c "
		for w in 0 1 2 3; do
			persist-writer check w\$w log.sync.\$w || exit 1
		done" >check.sync &&
	cat check.sync &&
	test $(grep -c " lost 0 " check.sync) -eq 4
'
test_expect_success 'SYNC: the restarted store has no dangling references' '
	canopy start --statedir=s_sync -- canopy fsck
'
test_expect_success SQLITE3 'SYNC: the SQLite file passes its integrity check' '
	echo ok >integrity.exp &&
	sqlite3 s_sync/content.sqlite "PRAGMA integrity_check" >integrity.out &&
	test_cmp integrity.exp integrity.out
'
test_expect_success 'no SYNC: start an instance checkpointing every 0.2s' '
	start_bg nosync s_nosync -S kvs.checkpoint-period=0.2
'
test_expect_success 'no SYNC: three writers commit without --sync' '
	: >writers.pid &&
	for w in 0 1 2; do
		CANOPY_URI=$(uri nosync $w) persist-writer write n$w log.nosync.$w &
		echo $! >>writers.pid
	done &&
	for w in 0 1 2; do wait_lines log.nosync.$w 50 || return 1; done
'
test_expect_success 'no SYNC: wait for a checkpoint past the 20th commit, then kill -9 rank 0' '
	v=$(sed -n 20p log.nosync.0 | cut -d" " -f2) &&
	i=0 &&
	while test $i -lt 600; do
		CANOPY_URI=$(uri nosync 0) persist-writer ckpt >ckpt.before &&
		read ck restored <ckpt.before &&
		test $ck -ge $v && break
		sleep 0.1
		i=$((i + 1))
	done &&
	test $ck -ge $v &&
	crash
'
test_expect_success 'no SYNC: restart from a checkpoint no older than the one seen' '
	canopy start --statedir=s_nosync -- persist-writer ckpt >ckpt.after &&
	read ck0 r0 <ckpt.before &&
	read ck1 restored <ckpt.after &&
	test $restored -ge $ck0 &&
	echo $restored >restored.version
'
test_expect_success 'no SYNC: every commit up to the restored checkpoint is there' '
	canopy start -n 2 --statedir=s_nosync -- sh -c "
		for w in 0 1 2; do
			persist-writer check --upto $(cat restored.version) n\$w log.nosync.\$w ||
				exit 1
		done" >check.nosync &&
	cat check.nosync &&
	test $(grep -c " lost 0 " check.nosync) -eq 3
'
test_expect_success 'cleanup' '
	rm -rf "$run"
'
test_done
