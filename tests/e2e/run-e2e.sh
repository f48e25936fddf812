#!/usr/bin/env bash
# The e2e suite: build what the scenarios need, boot the VM once
# (tests/e2e/guest-e2e.sh), then check the results on the host
# (tests/e2e/check_e2e.py). Writes $BUILD/check/e2e.result.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/e2e
result=$BUILD/check/e2e.result
mkdir -p "$BUILD/check"

# The pieces come from their owners' targets; a failed build is reported
# and the scenarios run anyway (they then fail on what is missing).
make --no-print-directory -C "$top" module >/dev/null ||
	echo "e2e: building spulse.ko (make module) failed"
for t in "$BUILD/spulse-drain" "$BUILD/spulse"; do
	make --no-print-directory -C "$top" "$t" >/dev/null || echo "e2e: building $t failed"
done
make --no-print-directory -C "$top" workloads >/dev/null

rm -rf "$out"
mkdir -p "$out"
"$top/tests/vm/run-vm.sh" --timeout "${E2E_TIMEOUT:-400}" --out "$out" -- \
	"$top/tests/e2e/guest-e2e.sh" "$BUILD"
echo "e2e: vm exit $? (console: $out/console.log)"
python3 "$top/tests/e2e/check_e2e.py" "$out" "$BUILD" "$result"
read -r p f < "$result"
[ "$f" -eq 0 ]
