#!/usr/bin/env bash
# `make demo`: build what is needed, boot the VM, record the bundled
# ground-truth workload with spulse.ko + spulse-drain, copy the spool back
# to $DEMO_DIR/demo.spulse with its record-time sidecars (.kallsyms, and
# .vdso: the guest kernel's vdso image, which names the [vdso] frames),
# print the top functions and write the interactive flame graph
# $DEMO_DIR/demo.svg (on the host: the guest ran the host's own
# build/workload/gt over 9p, so its symbols resolve).
# DEMO_DIR defaults to the repository's top directory (suite demos sets it).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
secs=${DEMO_SECONDS:-8}
dd=${DEMO_DIR:-$top}
mkdir -p "$dd"
m() { make --no-print-directory -C "$top" "$@"; }
# shellcheck source=tests/demos/demo-lib.sh
. "$top/tests/demos/demo-lib.sh"

"$top/tests/vm/deps.sh"
# kernel headers etc. for the module (mk/kmod.mk), when that target exists
if m -n deps >/dev/null 2>&1; then m deps; fi
m module "$BUILD/spulse-drain" "$BUILD/spulse" workloads
"$top/tests/vm/fetch-kernel.sh" >/dev/null

out=$BUILD/demo
rm -rf "$out"
mkdir -p "$out"
echo "demo: booting the VM (TCG, ~30 s) and recording $BUILD/workload/gt for ${secs}s"
# no_timer_check: the kernel's IO-APIC timer check panics the boot ("IO-APIC
# + timer doesn't work!") when a loaded host starves the TCG vCPUs
"$top/tests/vm/run-vm.sh" --timeout 300 --append no_timer_check --out "$out" -- \
	"$top/tests/vm/guest-demo.sh" "$BUILD" "$secs" ||
	{ echo "demo: FAILED; see $out/console.log and $out/guest.log" >&2; exit 1; }
copy_spool "$out/demo.spulse" "$dd/demo.spulse"
grep -E '^samples_(taken|written|dropped) ' "$out/stats" | tr '\n' ' '; echo
ls -l "$dd"/demo.spulse*
"$BUILD/spulse" check "$dd/demo.spulse"
"$BUILD/spulse" report "$dd/demo.spulse" --top 15
"$BUILD/spulse" flame "$dd/demo.spulse" -o "$dd/demo.svg" \
	--title "spulse demo: $BUILD/workload/gt in the VM"
echo "demo: flame graph written to $dd/demo.svg (open it in a browser: search, click to zoom)"
