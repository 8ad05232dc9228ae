# canopy-sharness.sh - helpers for canopy's sharness tests.
#
# test_under_canopy SIZE [K [START-OPTIONS...]]
#   Re-run this test file inside 'canopy start -n SIZE -k K [OPTIONS]', so
#   every test can use 'canopy' commands against a live instance
#   (CANOPY_URI set).  The whole run is bounded by CANOPY_TEST_TIMEOUT
#   seconds (default 300).
#
# rank_uri R          the local:// URI of rank R's broker
# on_rank R CMD...    run CMD with CANOPY_URI pointing at rank R

# Commands from the build tree come first.
if test -n "$CANOPY_TEST_INSTALLED"; then
    :
else
    PATH="$SHARNESS_BUILD_DIRECTORY/src/cmd:$SHARNESS_BUILD_DIRECTORY/t/helpers:$PATH"
    export PATH
fi

# Sanitized builds (./configure --enable-sanitizer, ./quickstart check
# --sanitize).  quickstart exports CANOPY_TEST_SANITIZED=1; a build tree
# whose broker links libasan is detected too, so 'make check' run by hand in
# build-sanitize behaves the same.  Tests that cannot work under ASan (an
# uninstrumented program such as OpenMPI dlopening the ASan-built libpmi.so,
# valgrind on ASan binaries) use the NO_SANITIZER prerequisite and say why
# they skip.
if test -z "$CANOPY_TEST_SANITIZED" && test -z "$CANOPY_TEST_INSTALLED" &&
   ldd "$SHARNESS_BUILD_DIRECTORY/src/broker/canopy-broker" 2>/dev/null |
	grep -q libasan; then
    CANOPY_TEST_SANITIZED=1
fi
if test -n "$CANOPY_TEST_SANITIZED"; then
    export CANOPY_TEST_SANITIZED
else
    test_set_prereq NO_SANITIZER
fi

test_under_canopy () {
    if test -n "$CANOPY_TEST_INSTANCE"; then
        return 0
    fi
    size=${1:-1}
    k=${2:-2}
    shift 2 2>/dev/null || shift $#
    CANOPY_TEST_INSTANCE=$size
    export CANOPY_TEST_INSTANCE
    if test "$debug" = t || test "$verbose" = t; then
        start_opts="--verbose"
    fi
    # The outer run printed nothing yet: hand the TAP stream to the inner one.
    cd "$SHARNESS_TEST_DIRECTORY" || exit 1
    exec timeout --kill-after=10 ${CANOPY_TEST_TIMEOUT:-300} \
        canopy start $start_opts -n $size -k $k "$@" -- \
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
