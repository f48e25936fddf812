#!/usr/bin/env bash
# Test suite "sql" (spulse sql, docs/FLEET.md): run every test_sql_*
# function of tests/sql/test_*.sh against each spulse binary given (the
# -O2 build and the ASan+UBSan build), one line per test, and write
# $BUILD/check/sql.result ("PASSED FAILED"). Queries go through the
# sqlite3 command-line shell (Debian sqlite3), not only through spulse.
#
# usage: run.sh SPULSE [SPULSE ...]
# SQL_TESTS="pattern" runs only the tests whose names match (grep -E);
# SQL_JOBS=N runs N at a time (default 1; runner: tests/run-funcs.sh).
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
# shellcheck source=../run-funcs.sh
. "$top/tests/run-funcs.sh"
for f in "$here"/test_*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

# Private copies: a concurrent `make` elsewhere may relink the originals.
bindir=$(mktemp -d "${TMPDIR:-/tmp}/spulse-sql-bin.XXXXXX")
trap 'rm -rf "$bindir"' EXIT
cp "$SPOOLGEN" "$bindir/spoolgen" || exit 1
SPOOLGEN=$bindir/spoolgen

tests=$(declare -F | awk '$3 ~ /^test_sql_/ {print $3}')
if [ -n "${SQL_TESTS:-}" ]; then
	tests=$(echo "$tests" | grep -E -- "$SQL_TESTS")
fi
# one at a time unless SQL_JOBS says otherwise: the kill-mid-load test
# times its kill against the load
FUNCS_JOBS=${SQL_JOBS:-1} run_funcs sql "$tests" "$@"
