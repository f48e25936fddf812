#!/usr/bin/env bash
# Test suite "sql" (spulse sql, docs/FLEET.md): run every test_sql_*
# function of tests/sql/test_*.sh against each spulse binary given (the
# -O2 build and the ASan+UBSan build), one line per test, and write
# $BUILD/check/sql.result ("PASSED FAILED"). Queries go through the
# sqlite3 command-line shell (Debian sqlite3), not only through spulse.
#
# usage: run.sh SPULSE [SPULSE ...]
# SQL_TESTS="pattern" runs only the tests whose names match (grep -E).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
export CC=${CC:-cc}
SPOOLGEN=$BUILD/tests/cli/spoolgen
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export SQL_HERE=$here SQL_TOP=$top

command -v sqlite3 >/dev/null || {
	echo "sql: the sqlite3 shell is missing (Debian package sqlite3)"
	mkdir -p "$BUILD/check"; echo "0 1" >"$BUILD/check/sql.result"; exit 1
}

# the CLI suite's helpers (expect_rc, die, record_offsets, patch_byte,
# error_offset) and its ELF spool with known functions (build_known)
# shellcheck source=../cli/lib.sh
. "$top/tests/cli/lib.sh"
# shellcheck source=../cli/test_report.sh
. "$top/tests/cli/test_report.sh"
. "$here/lib.sh"
for f in "$here"/test_*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

# Private copies: a concurrent `make` elsewhere may relink the originals.
bindir=$(mktemp -d "${TMPDIR:-/tmp}/spulse-sql-bin.XXXXXX")
trap 'rm -rf "$bindir"' EXIT
cp "$SPOOLGEN" "$bindir/spoolgen" || exit 1
SPOOLGEN=$bindir/spoolgen

pass=0
fail=0
skip=0
tests=$(declare -F | awk '$3 ~ /^test_sql_/ {print $3}')
if [ -n "${SQL_TESTS:-}" ]; then
	tests=$(echo "$tests" | grep -E -- "$SQL_TESTS")
fi
for bin in "$@"; do
	case $bin in
	*san*) flavour=san ;;
	*) flavour=opt ;;
	esac
	cp "$bin" "$bindir/spulse-$flavour" || exit 1
	export SP=$bindir/spulse-$flavour FLAVOUR=$flavour
	for t in $tests; do
		WORK=$(mktemp -d "${TMPDIR:-/tmp}/spulse-sql.XXXXXX")
		export WORK
		log=$WORK/log
		(cd "$WORK" && "$t") >"$log" 2>&1
		rc=$?
		if [ $rc -eq 0 ]; then
			echo "PASS $flavour ${t#test_}"
			pass=$((pass + 1))
		elif [ $rc -eq 77 ]; then
			echo "SKIP $flavour ${t#test_}: $(tail -n 1 "$log")"
			skip=$((skip + 1))
		else
			echo "FAIL $flavour ${t#test_}"
			sed 's/^/    /' "$log" | tail -n 25
			fail=$((fail + 1))
		fi
		rm -rf "$WORK"
	done
done
mkdir -p "$BUILD/check"
echo "$pass $fail" >"$BUILD/check/sql.result"
echo "sql: $pass passed, $fail failed ($skip skipped)"
[ "$fail" -eq 0 ]
