#!/usr/bin/env bash
# Test suite "clickhouse": a private clickhouse-server (tests/clickhouse/
# server.sh: its own config and data directory, loopback, free ports) is
# started once, every test_* function of tests/clickhouse/test_*.sh runs
# against each spulse binary given in a database of its own, and the
# server is stopped at the end (trap). Writes $BUILD/check/clickhouse.result.
#
# usage: run.sh SPULSE [SPULSE ...]
# CH_TESTS="pattern" runs only the tests whose names match (grep -E).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
export TOP=$top
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$BUILD/check"
result=$BUILD/check/clickhouse.result

# shellcheck source=server.sh
. "$here/server.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
for f in "$here"/test_*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

if ! command -v clickhouse-server >/dev/null; then
	echo "FAIL clickhouse-server is not installed (scripts/install-deps.sh" \
	     "installs clickhouse-server and clickhouse-client)"
	echo "0 1" > "$result"
	exit 1
fi
chdir=$(mktemp -d "${TMPDIR:-/tmp}/spulse-ch.XXXXXX")
bindir=$chdir/bin
mkdir -p "$bindir"
trap 'ch_stop; rm -rf "$chdir"' EXIT
if ! ch_start "$chdir/server"; then
	echo "FAIL clickhouse-server did not start"
	echo "0 1" > "$result"
	exit 1
fi
export CH_URL
echo "clickhouse-server $(ch_post "$CH_URL/" "SELECT version()" 2>/dev/null) at $CH_URL (pid $CH_PID)"

pass=0
fail=0
tests=$(declare -F | awk '$3 ~ /^test_/ {print $3}')
if [ -n "${CH_TESTS:-}" ]; then
	tests=$(echo "$tests" | grep -E -- "$CH_TESTS")
fi
n=0
for bin in "$@"; do
	case $bin in
	*san*) flavour=san ;;
	*) flavour=opt ;;
	esac
	cp "$bin" "$bindir/spulse-$flavour" || exit 1
	export SP=$bindir/spulse-$flavour
	for t in $tests; do
		n=$((n + 1))
		WORK=$(mktemp -d "$chdir/work.XXXXXX")
		export WORK
		export DB="t${n}_${flavour}"
		log=$WORK/log
		(cd "$WORK" && "$t") >"$log" 2>&1
		rc=$?
		if [ "$rc" -eq 0 ]; then
			echo "PASS $flavour ${t#test_}"
			pass=$((pass + 1))
		elif [ "$rc" -eq 77 ]; then
			echo "SKIP $flavour ${t#test_}: $(tail -n 1 "$log")"
		else
			echo "FAIL $flavour ${t#test_}"
			sed 's/^/    /' "$log" | tail -n 25
			fail=$((fail + 1))
		fi
		rm -rf "$WORK"
	done
done
echo "clickhouse: $pass passed, $fail failed"
echo "$pass $fail" > "$result"
[ "$fail" -eq 0 ]
