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
# kvs_settled         wait until every broker's start-up commit (the resource
#                     module's resource.rank.R) is in the KVS and rank 0 has
#                     no open fence: tests that count one user's fences must
#                     not race those commits (they count against the owner)
#
# Cluster instances booted from a configuration file (canopy-broker --config):
# canopy_broker ARGS...        run the canopy-broker under test
# loopback_config FILE SIZE [K] [EXTRA-TOML]
#                              write FILE: SIZE brokers on 127.0.0.1 (free
#                              ports, loopback only), fast liveness, CURVE with
#                              ./curve.cert
#                              (made if missing)
# config_start FILE RANK [ARGS...]  start rank RANK in the background, run
#                              directory $CONFIG_RUNDIR/run.RANK (pid in
#                              ./pid.RANK; 'cleanup config_cleanup' stops it)
# config_wait RANK             wait until rank RANK answers locally
# wait_broker PATH             wait until the broker at socket PATH answers
# config_uri RANK              the local:// URI of rank RANK
# always_cleanup CMD           run CMD when the script exits, pass or fail
#                              (sharness's 'cleanup' runs only if all pass)

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

# Wait up to 30 s until file $1 exists and has at least $2 lines (a
# watch's output, before the next change is made).
wait_lines () {
    _i=0
    while ! test -f "$1" || test $(wc -l <"$1") -lt $2; do
        _i=$((_i + 1)) && test $_i -lt 300 || return 1
        sleep 0.1
    done
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

kvs_settled () {
    _size=$(canopy getattr size) || return 1
    _i=0
    for _r in $(seq 0 $((_size - 1))); do
        while ! canopy kvs get resource.rank.$_r >/dev/null 2>&1; do
            _i=$((_i + 1)) && test $_i -lt 600 || return 1
            sleep 0.1
        done
    done
    while ! canopy kvs stats | grep -q "\"open\": *0,"; do
        _i=$((_i + 1)) && test $_i -lt 600 || return 1
        sleep 0.1
    done
}

fast_liveness="-Stbon.keepalive-period=0.1 -Stbon.torpid-timeout=0.5 -Stbon.lost-timeout=1.5"

canopy_broker () {
    "${CANOPY_TEST_BROKER:-$SHARNESS_BUILD_DIRECTORY/src/broker/canopy-broker}" "$@"
}

# A short directory for sockets (UNIX socket paths are limited in length).
config_rundir () {
    if test -z "$CONFIG_RUNDIR"; then
        CONFIG_RUNDIR=$(mktemp -d "${TMPDIR:-/tmp}/cnp-XXXXXX") || return 1
    fi
}

loopback_config () {
    _file=$1 _size=$2 _k=${3:-2} _extra=$4
    config_rundir || return 1
    test -e curve.cert || canopy keygen "$PWD/curve.cert" >/dev/null || return 1
    {
        printf '[tbon]\nk = %s\n' $_k
        printf 'keepalive-period = "100ms"\ntorpid-timeout = "500ms"\n'
        printf 'lost-timeout = "1.5s"\ntcp-user-timeout = "3s"\n'
        printf '[broker]\nrundir = "%s/run"\nlog-level = "info"\n' "$CONFIG_RUNDIR"
        printf '[security]\ncurve-cert = "%s/curve.cert"\n' "$PWD"
        test -z "$_extra" || printf '%s\n' "$_extra"
        for _p in $(freeport $_size); do
            printf '[[hosts]]\nhost = "localhost"\naddr = "127.0.0.1"\n'
            printf 'bind = "127.0.0.1"\nport = %s\n' $_p
        done
    } >"$_file"
}

config_start () {
    _file=$1 _rank=$2
    shift 2
    config_rundir || return 1
    rm -f "$CONFIG_RUNDIR/run.$_rank/local"
    # not through canopy_broker: $! must be the broker itself
    "${CANOPY_TEST_BROKER:-$SHARNESS_BUILD_DIRECTORY/src/broker/canopy-broker}" \
        --config="$_file" --rank=$_rank --rundir="$CONFIG_RUNDIR/run.$_rank" "$@" \
        2>>broker.$_rank.err &
    echo $! >pid.$_rank
    CONFIG_PIDS="$CONFIG_PIDS $!"
}

config_uri () {
    echo "local://$CONFIG_RUNDIR/run.$1/local"
}

# Wait (30 s at most) until the broker at local socket PATH answers.
wait_broker () {
    _n=300
    while test $_n -gt 0; do
        CANOPY_URI="local://$1" canopy getattr rank >/dev/null 2>&1 && return 0
        sleep 0.1
        _n=$((_n - 1))
    done
    return 1
}

# Wait (30 s at most) until rank R answers on its local socket.
config_wait () {
    wait_broker "$CONFIG_RUNDIR/run.$1/local"
}

# Stop what config_start started (at the end of a test file).
config_cleanup () {
    for _p in $CONFIG_PIDS; do
        kill -9 $_p 2>/dev/null
    done
    test -z "$CONFIG_RUNDIR" || rm -rf "$CONFIG_RUNDIR"
    return 0
}

always_cleanup () {
    # keep the exit status for sharness's die()
    trap "_rc=\$?; $1; (exit \$_rc); die" EXIT
}
