#!/bin/sh
# run-fuzz.sh SRCDIR TARGET... - run each libFuzzer target (built as
# ./fuzzer-TARGET) for $FUZZ_SECONDS seconds (default 60) and print a
# summary: executions, executions per second, coverage (libFuzzer's cov =
# edges, ft = features), corpus size and crashes.  Exits 1 if any target
# crashed, leaked or timed out; the input is in fuzz-crashes/TARGET/.
#
# Corpora: fuzz-work/TARGET (written by libFuzzer, in the build tree),
# SRCDIR/corpus/TARGET (committed seeds) and SRCDIR/regressions/TARGET
# (committed crash inputs), the latter two only read.
srcdir=$1
shift
secs=${FUZZ_SECONDS:-60}
mkdir -p fuzz-logs
status=0
summary=fuzz-logs/summary.txt
printf '%-11s %10s %8s %6s %7s %6s %s\n' target execs exec/s cov ft corpus result >$summary
for t in "$@"; do
    mkdir -p fuzz-work/$t fuzz-crashes/$t
    opts="-max_total_time=$secs -print_final_stats=1 -timeout=30 -rss_limit_mb=2048"
    opts="$opts -artifact_prefix=fuzz-crashes/$t/"
    case $t in
        treeobj|kvs_wire) opts="$opts -dict=$srcdir/dict/json.dict" ;;
        pmi_wire) opts="$opts -dict=$srcdir/dict/pmi.dict" ;;
    esac
    case $t in
        msg_stream|kvs_wire) opts="$opts -max_len=16384" ;;
    esac
    dirs="fuzz-work/$t"
    for d in $srcdir/corpus/$t $srcdir/regressions/$t; do
        test -d $d && dirs="$dirs $d"
    done
    echo "fuzzing $t for ${secs}s"
    before=$(ls fuzz-crashes/$t | wc -l)     # kept from earlier runs
    ./fuzzer-$t $opts $dirs >fuzz-logs/$t.log 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' fuzz-logs/$t.log)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' fuzz-logs/$t.log)
    last=$(grep -E '^#[0-9]+.*cov: ' fuzz-logs/$t.log | tail -1)
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
    crashes=$(( $(ls fuzz-crashes/$t | wc -l) - before ))
    if test $rc -eq 0 && test $crashes -eq 0; then
        result=ok
    else
        result="FAILED (exit $rc; $crashes input(s) in fuzz-crashes/$t; see fuzz-logs/$t.log)"
        status=1
    fi
    printf '%-11s %10s %8s %6s %7s %6s %s\n' $t "${execs:-?}" "${rate:-?}" \
        "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result" >>$summary
done
echo
cat $summary
exit $status
