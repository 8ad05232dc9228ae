# modellib.sh - shell functions the model scripts share (sourced).
#
# model_find_tools [BUILDDIR]: set CANOPY, CROWD, MODEL and BUILD, from
# BUILDDIR, else from the build tree or installation this script is in
# (build tree: BUILD/kap/model/ beside the scripts' source, or
# CANOPY_BUILD_DIR), and check jq.
#
# model_median_costs OUT COSTS...: write OUT, each number of the COSTS
# files the median of theirs (the mean of the middle two for an even
# count), everything else from the first; "_calibrations" says how many.

model_die () {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

model_find_tools () {
    local b=${1:-${CANOPY_BUILD_DIR:-}}
    local here
    here=$(cd "$(dirname "$0")" && pwd)
    if test -z "$b"; then
        for cand in "$here/../.." "$here/../../build" "$PWD"; do
            if test -x "$cand/kap/model/kap-model" && test -x "$cand/src/cmd/canopy"; then
                b=$cand
                break
            fi
        done
    fi
    if test -n "$b"; then
        BUILD=$(cd "$b" && pwd)
        CANOPY=$BUILD/src/cmd/canopy
        CROWD=$BUILD/kap/kap-crowd
        MODEL=$BUILD/kap/model/kap-model
    else
        # installed: $prefix/share/canopy/kap/model
        BUILD=
        CANOPY=$(command -v canopy || true)
        CROWD=$here/../kap-crowd
        MODEL=$here/kap-model
    fi
    for x in "$CANOPY" "$CROWD" "$MODEL"; do
        test -n "$x" && test -x "$x" || model_die "cannot find $x (give -b BUILDDIR)"
    done
    command -v jq >/dev/null || model_die "jq is needed (apt-get install jq)"
    export CANOPY CROWD MODEL BUILD
}

model_median_costs () {
    local out=$1
    shift
    jq -s '
        . as $all
        | ($all | length) as $n
        | reduce ($all[0] | keys_unsorted[]) as $k ({};
            .[$k] = (if ($all[0][$k] | type) == "number"
                     then ([$all[][$k]] | sort
                           | if $n % 2 == 1 then .[($n - 1) / 2]
                             else (.[$n / 2 - 1] + .[$n / 2]) / 2 end)
                     else $all[0][$k] end))
        | ._calibrations = "each cost the median of \($n) calibrations"
    ' "$@" >"$out.tmp" && mv "$out.tmp" "$out"
}
