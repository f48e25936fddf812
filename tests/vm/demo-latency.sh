#!/usr/bin/env bash
# `make demo-latency`: the README's "chasing a latency spike" walk-through.
# Boots the VM, runs build/workload/stall (a request loop with one 120 ms
# lock stall) under `spulse record --off-cpu --flight 3 --trigger
# 'offcpu>50ms'`, copies the dump back as $TOP/stall-001.spulse and shows
# what each analysis command says about it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
secs=${DEMO_SECONDS:-6}
m() { make --no-print-directory -C "$top" "$@"; }

"$top/tests/vm/deps.sh"
if m -n deps >/dev/null 2>&1; then m deps; fi
m module "$BUILD/spulse-drain" "$BUILD/spulse" "$BUILD/workload/stall"
"$top/tests/vm/fetch-kernel.sh" >/dev/null

out=$BUILD/demo-latency
rm -rf "$out"
mkdir -p "$out/bin"
# the guest hides the host's /tmp: give it copies under the output dir
cp -p "$top/spulse.ko" "$BUILD/spulse" "$BUILD/spulse-drain" \
	"$BUILD/workload/stall" "$out/bin/"
echo "demo-latency: booting the VM (TCG) and recording stall for ${secs}s twice"
"$top/tests/vm/run-vm.sh" --timeout 300 --out "$out" -- \
	"$top/tests/vm/guest-demo-latency.sh" "$out/bin" "$secs" ||
	{ echo "demo-latency: FAILED; see $out/console.log, $out/guest.log" >&2; exit 1; }
cat "$out/flight.log"
dump=$(ls "$out"/stall-0*.spulse 2>/dev/null | head -1)
[ -n "$dump" ] || { echo "demo-latency: no flight dump (see $out/flight.log)" >&2; exit 1; }
for f in "$dump" "$dump.kallsyms"; do
	[ -f "$f" ] && cp "$f" "$top/"
done
cp "$out/whole.spulse" "$top/stall-whole.spulse"
[ -f "$out/whole.spulse.kallsyms" ] && cp "$out/whole.spulse.kallsyms" "$top/stall-whole.spulse.kallsyms"
d=$top/$(basename "$dump")
S=$BUILD/spulse
run() { echo; echo "\$ spulse $*"; "$S" "$@"; }
cd "$top"
run check "$(basename "$d")"
run latency "$(basename "$d")" --top 3 --frames 8
run report --off-cpu "$(basename "$d")" --by total --top 16
echo; echo "\$ spulse flame --wakers --folded $(basename "$d") | sort -k2 -nr | head -2"
"$S" flame --wakers --folded "$(basename "$d")" | sort -t' ' -k2 -nr | head -2
run report "$(basename "$d")" --top 8
run flame --off-cpu "$(basename "$d")" -o stall-offcpu.svg
run export --format trace-event "$(basename "$d")" -o stall.trace.json
ls -l "$(basename "$d")" stall-offcpu.svg stall.trace.json
