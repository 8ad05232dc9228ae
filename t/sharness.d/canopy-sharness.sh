# canopy-sharness.sh - helpers for canopy's sharness tests.
#
# test_under_canopy SIZE [K [START-OPTIONS...]]
#   Re-run this test file inside 'canopy start -n SIZE -k K', so every test
#   can use 'canopy' commands against a live instance (CANOPY_URI set).
#   START-OPTIONS go to canopy start (e.g. --exit-mode=leader -S a=b).
#   The whole run is bounded by CANOPY_TEST_TIMEOUT seconds (default 300).
#
# rank_uri R          the local:// URI of rank R's broker
# on_rank R CMD...    run CMD with CANOPY_URI pointing at rank R
# broker_pid R        rank R's process id
# restart_broker R    ask canopy start to run rank R again (same arguments;
#                     needs --exit-mode=leader so R's death is tolerated)
# fast_liveness       canopy start options for small liveness timeouts

# Commands from the build tree come first.
if test -n "$CANOPY_TEST_INSTALLED"; then
    :
else
    PATH="$SHARNESS_BUILD_DIRECTORY/src/cmd:$SHARNESS_BUILD_DIRECTORY/t/helpers:$PATH"
    export PATH
fi

test_under_canopy () {
    if test -n "$CANOPY_TEST_INSTANCE"; then
        return 0
    fi
    size=${1:-1}
    k=${2:-2}
    if test $# -ge 2; then shift 2; else shift $#; fi
    CANOPY_TEST_INSTANCE=$size
    export CANOPY_TEST_INSTANCE
    if test "$debug" = t || test "$verbose" = t; then
        start_opts="--verbose"
    fi
    # The outer run printed nothing yet: hand the TAP stream to the inner one.
    cd "$SHARNESS_TEST_DIRECTORY" || exit 1
    exec timeout --kill-after=10 ${CANOPY_TEST_TIMEOUT:-300} \
        canopy start $start_opts "$@" -n $size -k $k -- \
        /bin/sh "$SHARNESS_TEST_FILE" $CANOPY_TEST_ARGS
}

rank_uri () {
    rundir=$(canopy getattr rundir) || return 1
    echo "local://$rundir/local-$1"
}

on_rank () {
    _r=$1
    shift
    CANOPY_URI=$(rank_uri $_r) "$@"
}

# Wait up to $2 seconds (default 10) for file $1 to appear.
wait_for_file () {
    _n=$(( ${2:-10} * 10 ))
    while test $_n -gt 0; do
        test -e "$1" && return 0
        sleep 0.1
        _n=$((_n - 1))
    done
    return 1
}

broker_pid () {
    canopy getattr --rank $1 broker.pid
}

restart_broker () {
    "$(canopy getattr rundir)/restart-$1"
}

fast_liveness="-Stbon.keepalive-period=0.1 -Stbon.torpid-timeout=0.5 -Stbon.lost-timeout=1.5"
