# t/sharness.sh - load Debian's sharness with canopy's extensions.
# Tests start with:  . $(dirname $0)/sharness.sh
CANOPY_TEST_ARGS="$*"
export CANOPY_TEST_ARGS
: ${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")" && pwd)}
export SHARNESS_TEST_SRCDIR
. /usr/share/sharness/sharness.sh
