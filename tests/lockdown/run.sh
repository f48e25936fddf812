#!/usr/bin/env bash
# Suite lockdown (make check-lockdown): spulse.ko on a kernel in lockdown
# (integrity, as under UEFI Secure Boot), through /proc/spulse, the procfs
# twin of the debugfs directory (docs/KERNEL.md "Lockdown").
#
#   1. signing (host, no VM): tests/kernels/sign.sh signs a copy of the
#      built spulse.ko with a throw-away key (the headers' scripts/sign-file)
#      and checks it with modinfo -F signer / sig_hashalgo / sig_key;
#   2. boot 1 (tests/lockdown/guest-switch.sh): one session read through
#      debugfs, lockdown raised, then read on through /proc/spulse; the
#      debugfs files refused (EPERM), the procfs ones root-only (EACCES for
#      nobody); the bytes of both parts must be the whole streams;
#   3. boot 2 (tests/lockdown/guest-record.sh): module loaded, lockdown
#      raised, spulse record --flight --off-cpu with unwind tables (no
#      flags: it finds /proc/spulse by itself).
# Two boots: lockdown cannot be lowered and refuses loading the unsigned
# module again, and a session's streams can be read whole only once. Checked
# on the host by tests/lockdown/check.py; writes $BUILD/check/lockdown.result.
#
# Environment: BUILD (default <repo>/build), LOCKDOWN_KO (spulse.ko to test,
# default <repo>/spulse.ko built by make module), KDIR (headers for sign-file;
# default: as mk/kmod.mk), LOCKDOWN_TIMEOUT (s per boot, default 300).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/lockdown
result=$BUILD/check/lockdown.result
mkdir -p "$BUILD/check"
rm -f "$result"

ko=${LOCKDOWN_KO:-$top/spulse.ko}
if [ -z "${LOCKDOWN_KO:-}" ]; then
	flock /tmp/spulse-kmod.lock make --no-print-directory -C "$top" module >/dev/null ||
		echo "lockdown: building spulse.ko (make module) failed"
fi
for t in "$BUILD/spulse-drain" "$BUILD/spulse" "$BUILD/workload/gt" "$BUILD/workload/pingpong"; do
	make --no-print-directory -C "$top" BUILD="$BUILD" "$t" >/dev/null ||
		echo "lockdown: building $t failed"
done
if [ -z "${KDIR:-}" ]; then
	KDIR=/lib/modules/$(uname -r)/build
	[ -f "$KDIR/Makefile" ] || KDIR=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1)
fi

rm -rf "$out"
mkdir -p "$out"
# the guest sees only its output directory (and the repository): each boot
# gets the binaries in its own
for b in switch record; do
	mkdir -p "$out/$b/bin/workload"
	for f in "$ko" "$BUILD/spulse" "$BUILD/spulse-drain" "$top/tests/lockdown/rawread.py" \
		"$top/tests/lockdown/probe.py"; do
		[ -f "$f" ] && cp -p "$f" "$out/$b/bin/" || echo "lockdown: missing $f"
	done
	for f in gt pingpong; do
		cp -p "$BUILD/workload/$f" "$out/$b/bin/workload/" || echo "lockdown: missing workload $f"
	done
done

"$top/tests/kernels/sign.sh" "$KDIR" "$ko" > "$out/sign.log" 2>&1
echo "sign rc=$?" >> "$out/sign.log"

t0=$(date +%s)
"$top/tests/vm/run-vm.sh" --timeout "${LOCKDOWN_TIMEOUT:-300}" --out "$out/switch" -- \
	"$top/tests/lockdown/guest-switch.sh" "$out/switch/bin"
echo "lockdown: boot 1 (switch) exit $? after $(( $(date +%s) - t0 )) s (console: $out/switch/console.log)"
t0=$(date +%s)
"$top/tests/vm/run-vm.sh" --timeout "${LOCKDOWN_TIMEOUT:-300}" --out "$out/record" -- \
	"$top/tests/lockdown/guest-record.sh" "$out/record/bin"
echo "lockdown: boot 2 (record) exit $? after $(( $(date +%s) - t0 )) s (console: $out/record/console.log)"
python3 "$top/tests/lockdown/check.py" "$out" "$BUILD" "$result"
read -r p f < "$result" || { p=0; f=1; }
echo "lockdown: $p passed, $f failed"
[ "$f" -eq 0 ]
