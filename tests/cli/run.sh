#!/usr/bin/env bash
# CLI test suite "cli": run every test_* function of tests/cli/test_*.sh once
# against each spulse binary given (normally the -O2 build and the
# ASan+UBSan build), print one line per test and write
# $BUILD/check/cli.result ("PASSED FAILED").
#
# usage: run.sh SPULSE [SPULSE ...]
# CLI_TESTS="pattern" runs only the tests whose names match (grep -E).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
export CC=${CC:-cc}
SPOOLGEN=$BUILD/tests/cli/spoolgen
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# shellcheck source=lib.sh
. "$here/lib.sh"
for f in "$here"/test_*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

# Private copies: a concurrent `make` elsewhere may relink the originals.
bindir=$(mktemp -d "${TMPDIR:-/tmp}/spulse-cli-bin.XXXXXX")
trap 'rm -rf "$bindir"' EXIT
cp "$SPOOLGEN" "$bindir/spoolgen" || exit 1
SPOOLGEN=$bindir/spoolgen

pass=0
fail=0
tests=$(declare -F | awk '$3 ~ /^test_/ {print $3}')
if [ -n "${CLI_TESTS:-}" ]; then
	tests=$(echo "$tests" | grep -E -- "$CLI_TESTS")
fi
for bin in "$@"; do
	case $bin in
	*san*) flavour=san; TRUNC_STRIDE=17 ;;
	*) flavour=opt; TRUNC_STRIDE=1 ;;
	esac
	cp "$bin" "$bindir/spulse-$flavour" || exit 1
	bin=$bindir/spulse-$flavour
	export SP=$bin TRUNC_STRIDE
	for t in $tests; do
		WORK=$(mktemp -d "${TMPDIR:-/tmp}/spulse-cli.XXXXXX")
		export WORK
		log=$WORK/log
		if (cd "$WORK" && "$t") >"$log" 2>&1; then
			echo "PASS $flavour ${t#test_}"
			pass=$((pass + 1))
		else
			echo "FAIL $flavour ${t#test_}"
			sed 's/^/    /' "$log" | tail -n 25
			fail=$((fail + 1))
		fi
		rm -rf "$WORK"
	done
done
mkdir -p "$BUILD/check"
echo "$pass $fail" >"$BUILD/check/cli.result"
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
