#!/usr/bin/env bash
# `make demo`: build what is needed, boot the VM, record the bundled
# ground-truth workload with spulse.ko + spulse-drain, copy the spool back
# to $TOP/demo.spulse (+ demo.spulse.kallsyms), print the top functions and
# write the interactive flame graph $TOP/demo.svg (on the host: the guest
# ran the host's own build/workload/gt over 9p, so its symbols resolve).
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
"$BUILD/spulse" flame "$top/demo.spulse" -o "$top/demo.svg" \
	--title "spulse demo: $BUILD/workload/gt in the VM"
echo "demo: flame graph written to $top/demo.svg (open it in a browser: search, click to zoom)"
