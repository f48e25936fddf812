#!/usr/bin/env bash
# CLI test suite "cli": run every test_* function of tests/cli/test_*.sh once
# against each spulse binary given (normally the -O2 build and the
# ASan+UBSan build), print one line per test and write
# $BUILD/check/cli.result ("PASSED FAILED").
#
# usage: run.sh SPULSE [SPULSE ...]
# CLI_TESTS="pattern" runs only the tests whose names match (grep -E);
# CLI_JOBS=N runs N at a time (default: the CPUs, at most 4; the runner is
# tests/run-funcs.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
export CC=${CC:-cc}
SPOOLGEN=$BUILD/tests/cli/spoolgen
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# shellcheck source=../run-funcs.sh
. "$top/tests/run-funcs.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
for f in "$here"/test_*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

# Private copy: a concurrent `make` elsewhere may relink the original.
bindir=$(mktemp -d "${TMPDIR:-/tmp}/spulse-cli-bin.XXXXXX")
trap 'rm -rf "$bindir"' EXIT
cp "$SPOOLGEN" "$bindir/spoolgen" || exit 1
SPOOLGEN=$bindir/spoolgen

# the sanitizer build checks every 17th truncation point, the -O2 build all
funcs_env() {
	case $1 in
	san) export TRUNC_STRIDE=17 ;;
	*) export TRUNC_STRIDE=1 ;;
	esac
}

tests=$(declare -F | awk '$3 ~ /^test_/ {print $3}')
if [ -n "${CLI_TESTS:-}" ]; then
	tests=$(echo "$tests" | grep -E -- "$CLI_TESTS")
fi
FUNCS_JOBS=${CLI_JOBS:-${FUNCS_JOBS:-}} run_funcs cli "$tests" "$@"
