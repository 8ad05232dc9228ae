#!/bin/sh
test_description='KAP, the KVS Access Patterns tester

kap runs with 4 and 8 ranks under mpirun.openmpi (brokers from
--uri-file, or CANOPY_URI), under mpiexec.mpich (the MPICH build), and
under canopy run; it exits 0, its JSON parses and holds every phase, and
a consumer that reads a wrong value makes it fail.  No test asserts on
time.'

. $(dirname $0)/sharness.sh

KAP=$SHARNESS_BUILD_DIRECTORY/kap/kap
KAP_MPICH=$SHARNESS_BUILD_DIRECTORY/kap/kap-mpich
EXP=$SHARNESS_BUILD_DIRECTORY/kap/experiments
T=${CANOPY_MPI_TIMEOUT:-120}

if ! test -x "$KAP"; then
	skip_all="kap was not built (mpicc.openmpi not found)"
	test_done
fi
if ! command -v jq >/dev/null; then
	skip_all="jq not found (apt-get install jq)"
	test_done
fi

test_under_canopy 4 2

# MPI libraries keep memory until exit by design: no leak reports from
# sanitizer builds of kap.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

command -v mpirun.openmpi >/dev/null && test_set_prereq OPENMPI
command -v mpiexec.mpich >/dev/null && test -x "$KAP_MPICH" &&
	test_set_prereq MPICH
canopy run --help >/dev/null 2>&1 && test_set_prereq CANOPY_RUN
# OpenMPI's PMI-1 component (mca_pmix_flux, used under canopy run) reads
# freed and out-of-bounds memory in MPI_Init; an ASan build of kap aborts
# there, so those cases need a build without sanitizers.
if ldd "$KAP" 2>/dev/null | grep -q libasan; then
	say "sanitizer build: skipping OpenMPI under canopy run (OpenMPI's own memory errors)"
else
	test_set_prereq OMPI_PMI1
fi
command -v gnuplot >/dev/null && test_set_prereq GNUPLOT

ompi () {
	_np=$1
	shift
	_root=""
	test "$(id -u)" = 0 && _root=--allow-run-as-root
	OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
		timeout $T mpirun.openmpi $_root --oversubscribe -np $_np "$@"
}

# check_json FILE NPROCS PUTS GETS: the document is complete and correct
# (PUTS and GETS are the total operation counts expected).
check_json () {
	jq -e --argjson np $2 --argjson puts $3 --argjson gets $4 '
		.kap == 1 and .ok == true and .errors == 0
		and .config.mpi_size == $np
		and .metrics.put.count == $puts
		and .metrics.get.count == $gets
		and ([.metrics.put, .metrics.commit, .metrics.sync, .metrics.get]
		     | all (has ("count") and has ("max_us") and has ("min_us")
		            and has ("mean_us") and has ("stddev_us")
		            and has ("throughput_ops")
		            and (.rank_mean_us | has ("avg"))))
		and (.metrics.put | has ("bandwidth_Bps"))
		and (.metrics.get | has ("bandwidth_Bps"))
		and ([.wallclock.producer, .wallclock.sync, .wallclock.consumer,
		      .wallclock.total] | all (has ("max_us") and has ("min_us")))
		and .sync_timeline.ranks == .metrics.sync.count
		and .sync_timeline.enter_spread_us >= 0
		and .sync_timeline.answer_spread_us >= 0
		and .reads.shared + .reads.asked == $gets
	' $1 >/dev/null
}

# fence_timeline FILE: a collective fence answers nobody before the last
# rank has entered it (the ranks share this machine's clock), and rank 0's
# record of the fence splits that wait into up, apply and down, in order:
# each part is not negative (the three add up by construction).
fence_timeline () {
	jq -e '.sync_timeline
		| .last_enter_to_first_answer_us >= 0
		  and .last_enter_to_complete_us >= 0
		  and .complete_to_decided_us >= 0
		  and .decided_to_first_answer_us >= 0' $1 >/dev/null
}

test_expect_success OPENMPI 'kap --help describes the options' '
	ompi 1 $KAP --help >help &&
	grep -e "--uri-file" help &&
	grep -e "--iter-commit-type" help &&
	grep -e "--sync-type" help
'
test_expect_success OPENMPI 'a bad option fails with a clear message' '
	test_must_fail ompi 2 $KAP --sync-type=x 2>err &&
	grep "sync-type must be f (fence) or c (causal)" err
'
test_expect_success OPENMPI 'without CANOPY_URI or --uri-file kap says what to do' '
	test_must_fail env -u CANOPY_URI \
		OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
		timeout $T mpirun.openmpi $(test "$(id -u)" = 0 && echo --allow-run-as-root) \
		--oversubscribe -np 2 $KAP 2>err &&
	grep "no broker to connect to" err
'
test_expect_success OPENMPI 'an unwritable --json fails before the run' '
	test_must_fail ompi 2 $KAP -n 30 --json /nonexistent/dir/k.json \
		>out.nojson 2>err &&
	grep "cannot write /nonexistent/dir/k.json: No such file or directory" err &&
	test_must_fail grep "put" out.nojson
'
test_expect_success 'write the URI list of the brokers' '
	for r in 0 1 2 3; do rank_uri $r || return 1; done >uris &&
	test $(wc -l <uris) = 4
'
for np in 4 8; do
	test_expect_success OPENMPI "mpirun: $np ranks over 4 brokers (--uri-file)" "
		ompi $np $KAP --uri-file uris -n 1$np --json o$np.json >out.$np &&
		grep 'over 4 brokers' out.$np &&
		grep 'values read back were checked and correct' out.$np &&
		check_json o$np.json $np $np $np &&
		fence_timeline o$np.json &&
		grep 'sync timeline: entries spread over' out.$np &&
		jq -e '.uris == 4 and .brokers == 4' o$np.json &&
		grep 'gets: [0-9]* from the brokers.* shared read caches' out.$np
	"
done
test_expect_success OPENMPI 'mpirun: --straggler holds the last rank back that long' '
	ompi 4 $KAP --uri-file uris -n 60 --straggler=50 --json strag.json >out.strag &&
	jq -e ".config.straggler_ms == 50
	       and .sync_timeline.enter_spread_us >= 50000" strag.json &&
	fence_timeline strag.json
'
test_expect_success OPENMPI 'mpirun: after the fence the gets are read from shared memory' '
	jq -e ".reads.shared > 0" o8.json &&
	CANOPY_KVS_SHM=0 ompi 4 $KAP --uri-file uris -n 26 --json noshm.json >out.noshm &&
	jq -e ".reads.shared == 0 and .reads.asked == 4" noshm.json
'

test_expect_success OPENMPI 'mpirun: every rank on the broker in CANOPY_URI' '
	ompi 4 $KAP -n 20 -i 3 -j 3 --json env.json >out.env &&
	check_json env.json 4 12 12 &&
	jq -e ".uris == 0" env.json
'
test_expect_success OPENMPI 'mpirun: causal sync, 1 KiB values, directories' '
	ompi 8 $KAP --uri-file uris -n 21 -s c -p 1k -d 4 -i 2 -j 2 -c 3 \
		--json causal.json >out.causal &&
	check_json causal.json 8 16 48 &&
	jq -e ".config.sync_type == \"causal\" and .metrics.sync.count == 8" causal.json
'
test_expect_success OPENMPI 'mpirun: intermediate fences and serial commits' '
	ompi 4 $KAP --uri-file uris -n 22 -i 4 -j 4 -f 2 --json fc.json &&
	check_json fc.json 4 16 16 &&
	jq -e ".metrics.commit.count == 8" fc.json &&
	ompi 4 $KAP --uri-file uris -n 23 -i 3 -j 3 -f 1 -t s -e --json sc.json &&
	check_json sc.json 4 12 12 &&
	jq -e ".metrics.commit.count == 12 and .config.redundant_val" sc.json
'
test_expect_success OPENMPI 'mpirun: fewer producers and consumers than ranks' '
	ompi 8 $KAP --uri-file uris -n 24 -T 6 -P 3 -C 4 -c 2 -l \
		--json part.json >out.part &&
	grep "^nproducers *= 3" out.part &&
	check_json part.json 8 3 8 &&
	jq -e ".metrics.sync.count == 6" part.json
'
test_expect_success OPENMPI 'mpirun: a wrong value read by a consumer fails kap' '
	test_must_fail ompi 4 $KAP --uri-file uris -n 25 --inject-corruption \
		--json bad.json >out.bad 2>err.bad &&
	grep "wrong value" err.bad &&
	grep "FAILED: 1 value read back wrong" out.bad &&
	jq -e ".ok == false and .errors == 1" bad.json
'
test_expect_success MPICH 'mpiexec.mpich: the MPICH build, 4 ranks' '
	timeout $T mpiexec.mpich -n 4 $KAP_MPICH --uri-file uris -n 30 -i 2 -j 2 \
		--json mpich.json >out.mpich &&
	check_json mpich.json 4 8 8
'
test_expect_success MPICH 'mpiexec.mpich: the MPICH build, 8 ranks, wrong value fails' '
	timeout $T mpiexec.mpich -n 8 $KAP_MPICH --uri-file uris -n 31 \
		--json mpich8.json &&
	check_json mpich8.json 8 8 8 &&
	test_must_fail timeout $T mpiexec.mpich -n 8 $KAP_MPICH --uri-file uris \
		-n 32 --inject-corruption 2>err.mpich &&
	grep "wrong value" err.mpich
'
for np in 4 8; do
	test_expect_success CANOPY_RUN,OPENMPI,OMPI_PMI1 "canopy run: $np ranks, each on its own broker" "
		OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader timeout $T \
			canopy run -n $np --test-clique=single $KAP -n 4$np \
			--json run$np.json >out.run$np &&
		check_json run$np.json $np $np $np &&
		jq -e '.uris == 0' run$np.json
	"
done
test_expect_success CANOPY_RUN,OPENMPI,OMPI_PMI1 'canopy run: a wrong value read by a consumer fails kap' '
	OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader test_must_fail timeout $T \
		canopy run -n 8 --test-clique=single $KAP -n 50 --inject-corruption \
		--json runbad.json 2>err.runbad &&
	grep "wrong value" err.runbad &&
	jq -e ".ok == false" runbad.json
'
test_expect_success CANOPY_RUN,MPICH 'canopy run: the MPICH build, causal sync' '
	timeout $T canopy run -n 4 $KAP_MPICH -n 51 -s c --json runm.json &&
	check_json runm.json 4 4 4
'
test_expect_success 'no KVS requests are left pending' '
	for r in 0 1 2 3; do
		rpc --rank $r kvs.stats >s.$r &&
		grep "\"pending-requests\": *0" s.$r || return 1
	done
'
test_expect_success 'kap-sweep and kap-refshape describe themselves' '
	$EXP/kap-sweep --help >sweep.help &&
	grep -e "--quick" sweep.help &&
	$EXP/kap-refshape --help >ref.help &&
	grep "16 keys" ref.help &&
	test_must_fail $EXP/kap-sweep --bogus 2>err &&
	grep "unknown argument" err
'
test_expect_success 'the experiments read stolen CPU time from /proc/stat' '
	. $EXP/kaplib.sh &&
	kap_cpustat >cpu0 &&
	grep -E "^[0-9]+ [0-9]+$" cpu0 &&
	test "$(kap_steal_percent "1000 10" "2000 60")" = 5.0 &&
	test "$(kap_steal_percent "1000 10" "1000 10")" = "?" &&
	p=$(kap_steal_percent "$(cat cpu0)" "$(kap_cpustat)") &&
	echo "stolen: $p%" &&
	echo "$p" | grep -E "^([0-9]+\.[0-9]|\?)$"
'
test_expect_success 'the experiments take medians and quartiles by nearest rank' '
	. $EXP/kaplib.sh &&
	test "$(printf "5\n1\n3\n" | kap_median)" = 3 &&
	test "$(printf "4\n1\n3\n2\n" | kap_median)" = 2.5 &&
	test "$(printf "" | kap_median)" = "?" &&
	# 8 runs: ranks 3 and 6 of the sorted values (0.25 * 7 = 1.75, 0.75 * 7 = 5.25)
	test "$(printf "8\n7\n6\n5\n4\n3\n2\n1\n" | kap_quantile 0.25)" = 3 &&
	test "$(printf "8\n7\n6\n5\n4\n3\n2\n1\n" | kap_quantile 0.75)" = 6 &&
	test "$(printf "0.5\n10\n2\n" | kap_quantile 0)" = 0.5 &&
	test "$(printf "0.5\n10\n2\n" | kap_quantile 1)" = 10 &&
	test "$(printf "" | kap_quantile 0.5)" = "?"
'
test_expect_success 'the experiments name the processor and its hashing features' '
	. $EXP/kaplib.sh &&
	kap_cpuinfo >cpuinfo &&
	cat cpuinfo &&
	grep -E "; AVX-512F (yes|no), SHA-NI (yes|no)$" cpuinfo
'
test_expect_success OPENMPI 'a tiny sweep writes results, medians, a report (and plots)' '
	CANOPY_BUILD_DIR=$SHARNESS_BUILD_DIRECTORY \
	$EXP/kap-sweep --procs "2 4" --sizes 8 --redundant-sizes 64 --gets 2 \
		--dir-keys 2 --repeat 1 --out sweep >sweep.out &&
	grep "^\[10/10\] P=4" sweep.out &&
	test $(grep -vc "^#" sweep/results.tsv) = 10 &&
	test $(awk -F"	" "NR > 1 && \$7 == 1" sweep/results.tsv | wc -l) = 10 &&
	grep "^## Figure 1" sweep/report.md &&
	grep "^## Figure 2" sweep/report.md &&
	grep "^## Figure 3" sweep/report.md &&
	test $(grep -vc "^#" sweep/fig3.dat) = 2 &&
	# the redundant KVS part with its quartiles: median, q1, q3 per size
	test $(grep -vc "^#" sweep/fig2-kvs-spread.dat) = 2 &&
	awk "!/^#/ && (NF != 4 || \$3 > \$2 || \$2 > \$4) { exit 1 }" sweep/fig2-kvs-spread.dat &&
	if test_have_prereq GNUPLOT; then
		test -s sweep/fig1-put.png &&
		test -s sweep/fig2-fence.png &&
		test -s sweep/fig2-kvs.png &&
		test -s sweep/fig3-get.png &&
		# (regression: a directory with a space kept these two from being drawn)
		test -s sweep/fig3-mean.png
	fi
'
test_expect_success OPENMPI 'kap-sweep --pool takes the medians over the runs of earlier sweeps of the same points' '
	cp -r sweep pooled &&
	CANOPY_BUILD_DIR=$SHARNESS_BUILD_DIRECTORY \
	$EXP/kap-sweep --report-only --no-plot --out pooled --pool sweep >pool.out &&
	test $(grep -vc "^#" pooled/results.tsv) = 20 &&
	test $(awk -F"	" "NR > 1 && \$6 == 2" pooled/results.tsv | wc -l) = 10 &&
	grep "^2 run(s) per point" pooled/report.md &&
	grep "those of 1 earlier sweep(s) of the same points, pooled" pooled/report.md &&
	grep "20 runs (with the pooled sweeps" pooled/report.md &&
	# the same runs twice: the same medians (to the digits a median of
	# two prints)
	for f in sweep pooled; do
		awk "/^#/ { print; next }
		     { s = \$1; for (i = 2; i <= NF; i++) s = s sprintf(\" %.4g\", \$i); print s }" \
			$f/fig2.dat >$f.fig2 || return 1
	done &&
	test_cmp sweep.fig2 pooled.fig2 &&
	# without --pool the report is this sweep alone again
	$EXP/kap-sweep --report-only --no-plot --out pooled >pool.out &&
	test $(grep -vc "^#" pooled/results.tsv) = 10 &&
	! grep "earlier sweep" pooled/report.md
'
test_expect_success OPENMPI 'kap-sweep --pool refuses another configuration, itself, and a non-sweep' '
	cp -r sweep other &&
	sed -i "s/^gets: .*/gets: 1 2/" other/meta.txt &&
	test_must_fail $EXP/kap-sweep --report-only --no-plot --out pooled --pool other 2>err &&
	grep "its gets (1 2) are not this sweep" err &&
	test_must_fail $EXP/kap-sweep --report-only --no-plot --out pooled --pool pooled 2>err &&
	grep "that is this sweep" err &&
	test_must_fail $EXP/kap-sweep --report-only --out pooled --pool /nonexistent 2>err &&
	grep "not a sweep" err &&
	test_must_fail $EXP/kap-sweep --pool 2>err &&
	grep "needs a directory" err
'
# sweep_refuses OPTION MESSAGE VALUE...: each value of OPTION fails with
# MESSAGE before anything runs
sweep_refuses () {
	opt=$1 msg=$2
	shift 2
	for v in "$@"; do
		test_must_fail $EXP/kap-sweep $opt "$v" --out never 2>err &&
		grep "$msg" err &&
		! test -e never || return 1
	done
}
# pool_refused DIR WHAT: pooling DIR into the sweep "pooled" fails on WHAT
pool_refused () {
	test_must_fail $EXP/kap-sweep --report-only --no-plot --out pooled --pool "$1" 2>err &&
	grep "$2 are not this sweep" err
}
test_expect_success OPENMPI 'kap-sweep --fanout: the tree of its instances, in the meta, the report and pooling' '
	grep "^fanout: 2$" sweep/meta.txt &&
	grep "brokers, k=2, broker CPU affinity subtree, per rank count" sweep/report.md &&
	sweep_refuses --fanout "at least 1" 0 x 08 "" &&
	# a sweep of another tree is another configuration
	cp -r sweep tree8 &&
	sed -i "s/^fanout: .*/fanout: 8/" tree8/meta.txt &&
	pool_refused tree8 "its fanout (8)" &&
	# a sweep from before --fanout ran k=2: it pools with k=2, and its
	# report says k=2
	sed -i "/^fanout: /d" tree8/meta.txt &&
	$EXP/kap-sweep --report-only --no-plot --out pooled --pool tree8 >pool.out &&
	$EXP/kap-sweep --report-only --no-plot --out tree8 >pool.out &&
	grep "brokers, k=2, broker CPU affinity subtree, per rank count" tree8/report.md
'
test_expect_success OPENMPI 'kap-sweep --brokers: one instance size for every rank count, in the meta, the report, the plots and pooling' '
	grep "^brokers: 0$" sweep/meta.txt &&
	sweep_refuses --brokers "at least 1" 0 x 08 "" &&
	CANOPY_BUILD_DIR=$SHARNESS_BUILD_DIRECTORY \
	$EXP/kap-sweep --procs "2 4" --brokers 5 --sizes 8 --redundant-sizes 64 \
		--gets 2 --dir-keys 2 --repeat 1 --out fixed >fixed.out &&
	grep "5 brokers each, ranks placed spread" fixed.out &&
	grep "^\[5/10\] P=2 B=5 " fixed.out &&
	grep "^\[10/10\] P=4 B=5 " fixed.out &&
	test $(awk -F"	" "NR > 1 && \$7 == 1" fixed/results.tsv | wc -l) = 10 &&
	grep "^brokers: 5$" fixed/meta.txt &&
	grep "^place: spread$" fixed/meta.txt &&
	# spread: 2 ranks on brokers 0 and 2 of 5, not on the first two
	sed "s/.*local-//" fixed/uris.2 >placed.2 &&
	printf "0\n2\n" >placed.expect &&
	test_cmp placed.expect placed.2 &&
	jq -e ".uris == 2 and .brokers == 5" fixed/raw/P2-red-V64-c1-d1-r1.json &&
	grep "on an instance of 5 brokers for every rank count" fixed/report.md &&
	grep "ranks spread evenly" fixed/report.md &&
	if test_have_prereq GNUPLOT; then
		test -s fixed/fig2-fence.png && test -s fixed/fig2-kvs.png
	fi &&
	pool_refused fixed "its brokers (5)" &&
	sweep_refuses --place "spread or cyclic" "" random &&
	# sweeps from before --place put the ranks on the first brokers
	cp -r fixed cyc &&
	sed -i "/^place: /d" cyc/meta.txt &&
	$EXP/kap-sweep --report-only --no-plot --out cyc >cyc.out &&
	grep "ranks placed cyclically" cyc/report.md &&
	test_must_fail $EXP/kap-sweep --report-only --no-plot --out fixed --pool cyc 2>err &&
	grep "its place (cyclic) are not this sweep" err &&
	# a sweep from before --brokers sized its instances by ranks
	cp -r sweep older &&
	sed -i "/^brokers: /d" older/meta.txt &&
	$EXP/kap-sweep --report-only --no-plot --out pooled --pool older >pool.out &&
	$EXP/kap-sweep --report-only --no-plot --out older >older.out &&
	grep "ranks per broker (one instance" older/report.md
'
# the quartiles of the runs decide whether the redundant fence is flat
# within noise; a single run a point cannot say
test_expect_success 'the report compares the spread of the runs at both ends of the redundant fence' '
	cp -r "$SHARNESS_TEST_SRCDIR/../kap/experiments/results-k8" quart &&
	chmod -R u+w quart &&
	sh $EXP/report.sh quart &&
	grep "KVS part, redundant 64 B: .* (quartiles .* and .*: apart)\.$" quart/report.md &&
	grep "^\*\*Within noise: no\*\*" quart/report.md &&
	# the runs at 128 ranks made as fast as those at 8: their quartiles overlap
	awk -F"	" -v OFS="	" "NR > 1 && \$1 == 128 && \$2 == \"red\" { \$14 = 0.7 } { print }" \
		quart/results.tsv >quart/r.tsv &&
	mv quart/r.tsv quart/results.tsv &&
	sh $EXP/report.sh quart &&
	grep "^\*\*Within noise: yes\*\*" quart/report.md &&
	grep "KVS part, redundant 64 B: .*: overlap)\.$" quart/report.md &&
	# two runs at 128 ranks: too few for quartiles
	awk -F"	" "!(\$1 == 128 && \$2 == \"red\" && \$6 > 2)" quart/results.tsv >quart/r.tsv &&
	mv quart/r.tsv quart/results.tsv &&
	sh $EXP/report.sh quart &&
	grep "^Too few runs" quart/report.md &&
	! grep "Within noise" quart/report.md
'
test_expect_success OPENMPI 'kap-sweep --cpu-affinity: the brokers CPUs, in the meta, the report and pooling' '
	grep "^cpu affinity: subtree$" sweep/meta.txt &&
	sweep_refuses --cpu-affinity "takes subtree or none" "" pinned 0-1 &&
	cp -r sweep unpinned &&
	sed -i "s/^cpu affinity: .*/cpu affinity: none/" unpinned/meta.txt &&
	pool_refused unpinned "its cpu affinity (none)" &&
	# a sweep from before --cpu-affinity left the brokers unpinned
	sed -i "/^cpu affinity: /d" unpinned/meta.txt &&
	pool_refused unpinned "its cpu affinity (none)" &&
	$EXP/kap-sweep --report-only --no-plot --out unpinned >unpinned.out &&
	grep "brokers, k=2, broker CPU affinity none, per rank count" unpinned/report.md
'
# the full sweep kept in the source tree has the redundant fence, whose
# verdict names the brokers' affinity
test_expect_success 'the report says how the brokers of a sweep were pinned' '
	cp -r "$SHARNESS_TEST_SRCDIR/../kap/experiments/results" full &&
	chmod -R u+w full &&
	$EXP/kap-sweep --report-only --no-plot --out full >full.out &&
	grep "The brokers ran with broker.cpu-affinity=subtree: each on one CPU" full/report.md &&
	sed -i "s/^cpu affinity: .*/cpu affinity: none/" full/meta.txt &&
	$EXP/kap-sweep --report-only --no-plot --out full >full.out &&
	grep "The brokers ran unpinned" full/report.md
'
test_done
