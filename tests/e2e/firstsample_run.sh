#!/usr/bin/env bash
# Suite first-sample (make check-first-sample): whole stacks from the first
# sample (issue 22) in the stock-kernel VM. Builds spulse.ko (make module,
# under the kmod lock), spulse and the workloads of mk/firstsample.mk,
# copies them into the VM output directory, boots once
# (tests/e2e/firstsample_guest.sh) with an EMPTY table cache (the tables
# are built while `spulse record` holds the command), and checks on the
# host (tests/e2e/firstsample_check.py). Writes
# $BUILD/check/first-sample.result.
#
# Environment: BUILD (default <repo>/build), FS_KO (spulse.ko to test,
# default <repo>/spulse.ko), FS_VM_TIMEOUT (s, default 900), FS_FREQ (Hz,
# 499), FS_ROUNDS (wrapinj rounds, 40: ~1.2 s of sleeps), FS_CLOCK_SECS
# (clockloop seconds, 3), FS_DL_N (libraries dlwait opens, 8).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/first-sample
result=$BUILD/check/first-sample.result
mkdir -p "$BUILD/check"
rm -f "$result"

ko=${FS_KO:-$top/spulse.ko}
if [ -z "${FS_KO:-}" ]; then
	flock /tmp/spulse-kmod.lock make --no-print-directory -C "$top" module >/dev/null ||
		echo "first-sample: building spulse.ko (make module) failed"
fi
for t in "$BUILD/spulse" first-sample-tools; do
	make --no-print-directory -C "$top" BUILD="$BUILD" "$t" >/dev/null ||
		echo "first-sample: building $t failed"
done

rm -rf "$out"
mkdir -p "$out/bin"
for f in "$ko" "$BUILD/spulse" "$BUILD"/first-sample-bin/*; do
	[ -f "$f" ] && cp -p "$f" "$out/bin/" || echo "first-sample: missing $f"
done
cat > "$out/params" <<P
FREQ=${FS_FREQ:-499}
ROUNDS=${FS_ROUNDS:-40}
CLOCK_SECS=${FS_CLOCK_SECS:-3}
DL_N=${FS_DL_N:-8}
P
t0=$(date +%s)
"$top/tests/vm/run-vm.sh" --timeout "${FS_VM_TIMEOUT:-900}" --mem 1G --out "$out" -- \
	"$top/tests/e2e/firstsample_guest.sh" "$out/bin"
echo "first-sample: vm exit $? after $(( $(date +%s) - t0 )) s (console: $out/console.log)"
python3 "$top/tests/e2e/firstsample_check.py" "$out" "$BUILD/spulse" "$result"
read -r p f < "$result" || { p=0; f=1; }
echo "first-sample: $p passed, $f failed"
[ "$f" -eq 0 ]
