#!/usr/bin/env bash
# `make demo`: build what is needed, boot the VM, record the bundled
# ground-truth workload with spulse.ko + spulse-drain, copy the spool back
# to $TOP/demo.spulse (+ demo.spulse.kallsyms) and print the top functions.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
secs=${DEMO_SECONDS:-8}
m() { make --no-print-directory -C "$top" "$@"; }

"$top/tests/vm/deps.sh"
# kernel headers etc. for the module (mk/kmod.mk), when that target exists
if m -n deps >/dev/null 2>&1; then m deps; fi
m module "$BUILD/spulse-drain" "$BUILD/spulse" workloads
"$top/tests/vm/fetch-kernel.sh" >/dev/null

out=$BUILD/demo
rm -rf "$out"
mkdir -p "$out"
echo "demo: booting the VM (TCG, ~30 s) and recording $BUILD/workload/gt for ${secs}s"
"$top/tests/vm/run-vm.sh" --timeout 300 --out "$out" -- \
	"$top/tests/vm/guest-demo.sh" "$BUILD" "$secs" ||
	{ echo "demo: FAILED; see $out/console.log and $out/guest.log" >&2; exit 1; }
cp "$out/demo.spulse" "$top/demo.spulse"
[ -f "$out/demo.spulse.kallsyms" ] && cp "$out/demo.spulse.kallsyms" "$top/demo.spulse.kallsyms"
grep -E '^samples_(taken|written|dropped) ' "$out/stats" | tr '\n' ' '; echo
ls -l "$top/demo.spulse"
"$BUILD/spulse" check "$top/demo.spulse"
"$BUILD/spulse" report "$top/demo.spulse" --top 15
