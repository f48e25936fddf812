#!/usr/bin/env bash
# `make demo-latency`: the README's "chasing a latency spike" walk-through.
# Boots the VM, runs build/workload/stall (a request loop with one 120 ms
# lock stall) under `spulse record --off-cpu --flight 3 --trigger
# 'offcpu>90ms'` (the options below, printed as run), copies the dump that
# holds the stall back to $DEMO_DIR (default: the repository's top) with
# its sidecars, and shows what each analysis command says about it.
#
# Which dump: every trigger cuts one unless it comes within --min-gap of
# the last; --min-gap = --post, so an interval over the threshold whose
# trigger was suppressed still lies inside the dump before. The threshold
# is well above what a loaded 2-core host makes of the workload's normal
# waits (50 ms fired on 51 ms pipe waits), but a starved TCG guest can still
# stretch a 20 ms sleep past the stall's 120 ms (150-309 ms seen), so the
# dump analysed is the one that holds the stall itself
# (tests/demos/stall_check.py pick: the flusher's 120 ms slow_disk_write
# sleep and main's lock wait it ended), not the first nor the one with the
# longest interval.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
secs=${DEMO_SECONDS:-6}
dd=${DEMO_DIR:-$top}
m() { make --no-print-directory -C "$top" "$@"; }
# shellcheck source=tests/demos/demo-lib.sh
. "$top/tests/demos/demo-lib.sh"
rec=(-F 499 --off-cpu --flight 3 --post 0.5 --min-gap 0.5 --trigger 'offcpu>90ms')

"$top/tests/vm/deps.sh"
if m -n deps >/dev/null 2>&1; then m deps; fi
m module "$BUILD/spulse-drain" "$BUILD/spulse" "$BUILD/workload/stall"
"$top/tests/vm/fetch-kernel.sh" >/dev/null
mkdir -p "$dd"

out=$BUILD/demo-latency
rm -rf "$out"
mkdir -p "$out/bin"
# the guest hides the host's /tmp: give it copies under the output dir
cp -p "$top/spulse.ko" "$BUILD/spulse" "$BUILD/spulse-drain" \
	"$BUILD/workload/stall" "$out/bin/"
echo "demo-latency: booting the VM (TCG) and recording stall for ${secs}s twice"
# no_timer_check: the kernel's IO-APIC timer check panics the boot ("IO-APIC
# + timer doesn't work!") when a loaded host starves the TCG vCPUs
"$top/tests/vm/run-vm.sh" --timeout 300 --append no_timer_check --out "$out" -- \
	"$top/tests/vm/guest-demo-latency.sh" "$out/bin" "$secs" "${rec[@]}" ||
	{ echo "demo-latency: FAILED; see $out/console.log, $out/guest.log" >&2; exit 1; }
# the command as typed (the trigger quoted for the shell)
shown=
for a in "${rec[@]}"; do
	case $a in *'>'*) shown="$shown '$a'" ;; *) shown="$shown $a" ;; esac
done
echo "\$ spulse record$shown -o stall.spulse -- ./stall $secs"
cat "$out/flight.log"
dumps=("$out"/stall-0*.spulse)
[ -f "${dumps[0]}" ] || { echo "demo-latency: no flight dump (see $out/flight.log)" >&2; exit 1; }
S=$BUILD/spulse
why="the one that holds the stall"
dump=$(python3 "$top/tests/demos/stall_check.py" "$S" pick "${dumps[@]}") ||
	why="NOT the stall: no dump holds it (see above)"
name=$(basename "$dump")
echo "demo-latency: ${#dumps[@]} dump(s); analysing $name, $why"
# every dump (an earlier run's extra dumps go first), and the whole recording
rm -f "$dd"/stall-0*.spulse "$dd"/stall-0*.spulse.*
for f in "${dumps[@]}"; do
	copy_spool "$f" "$dd/${f##*/}"
done
copy_spool "$out/whole.spulse" "$dd/stall-whole.spulse"
run() { echo; echo "\$ spulse $*"; "$S" "$@"; }
cd "$dd"
rm -f stall-offcpu.svg stall.trace.json
run check "$name"
run latency "$name" --top 3 --frames 8
run report --off-cpu "$name" --by total --top 16
# sed -n 1,2p reads to the end: no reader quits early, so no writer in the
# pipeline dies of SIGPIPE (head -2 killed sort once the folded output
# passed a pipe buffer: make demo-latency stopped with Error 141 here)
echo; echo "\$ spulse flame --wakers --folded $name | sort -t' ' -k2 -nr | sed -n 1,2p"
"$S" flame --wakers --folded "$name" | sort -t' ' -k2 -nr | sed -n 1,2p
run report "$name" --top 8
run flame --off-cpu "$name" -o stall-offcpu.svg
run export --format trace-event "$name" -o stall.trace.json
ls -l "$name" stall-offcpu.svg stall.trace.json
